// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.sim;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.metaroce.core.engine.EndpointCounter;
import org.metaroce.sim.net.FabricConfig;
import org.metaroce.sim.net.Host;
import org.metaroce.sim.net.Link;
import org.metaroce.sim.net.LoadBalancing;
import org.metaroce.sim.net.Network;
import org.metaroce.sim.net.Port;
import org.metaroce.sim.net.Switch;
import org.metaroce.sim.net.TopologyBuilder;
import org.metaroce.sim.transport.TransportProfile;
import org.metaroce.sim.workload.Flow;
import org.metaroce.sim.workload.Traffic;

/** Switch features end to end through the real endpoints: trimming, PFC, tail drop, faults, ECMP. */
class FabricFeaturesTest {
    private static final long SEED = 5;

    private record Run(Network net, Traffic traffic, List<Flow> flows) {
        long fabric(final java.util.function.ToLongFunction<Port> f) {
            return net.allPorts().stream().mapToLong(f).sum();
        }

        long endpoints(final EndpointCounter c) {
            return net.hosts().stream().mapToLong(h -> h.endpoint().counters().get(c)).sum();
        }

        long retransmits() {
            return net.hosts().stream().mapToLong(h -> h.endpoint().counters().retransmits()).sum();
        }
    }

    /** 8:1 incast of 512 KB per sender on one switch with a small buffer. */
    private static Run incast(final TransportProfile profile, final FabricConfig fabric) {
        System.out.println("seed=" + SEED + " profile=" + profile + " fabric=" + fabric);
        final Simulator sim = new Simulator(SEED);
        final Network net = new TopologyBuilder(sim, fabric, profile.endpointConfig()).singleSwitch(9);
        final Traffic traffic = new Traffic(net, profile);
        for (int s = 1; s <= 8; s++) {
            traffic.startFlow(0, s, 0, 512 * 1024, "incast", null);
        }
        sim.run(200_000_000);
        return new Run(net, traffic, traffic.flows());
    }

    private static FabricConfig smallBuffer(final TransportProfile profile) {
        // 10 ports x 40 KB = 400 KB shared: far less than 8 windows of 1 BDP.
        return profile.applyTo(new FabricConfig().bufferBytesPerPort(40_000));
    }

    @Test
    @DisplayName("WIRE-042 / REL-035 / REL-036: trimming turns overflow into NACK TRIMMED and prompt retransmission")
    void trimmingReplacesDropsWithTrimNacks() {
        final TransportProfile profile = TransportProfile.metaroce().withTrimming(true);
        final Run r = incast(profile, smallBuffer(profile));
        assertThat(r.flows).allMatch(Flow::isDone);
        final long trims = r.fabric(Port::trims);
        System.out.printf("trims %d, tail drops %d, NACKs TRIMMED %d, retransmits TRIMMED %d, timeouts %d%n", trims,
            r.fabric(Port::tailDrops), r.endpoints(EndpointCounter.NACKS_OUT_TRIMMED),
            r.endpoints(EndpointCounter.RETRANSMITS_TRIMMED), r.endpoints(EndpointCounter.TIMEOUTS));
        assertThat(trims).isPositive();
        assertThat(r.endpoints(EndpointCounter.NACKS_OUT_TRIMMED)).isPositive();
        assertThat(r.endpoints(EndpointCounter.RETRANSMITS_TRIMMED)).isPositive();
        assertThat(r.endpoints(EndpointCounter.MALFORMED)).as("trimmed packets pass validation").isZero();
    }

    @Test
    @DisplayName("without trimming or PFC the small buffer tail-drops and the endpoints recover every loss")
    void tailDropIsRecovered() {
        final TransportProfile profile = TransportProfile.metaroce();
        final Run r = incast(profile, smallBuffer(profile));
        assertThat(r.flows).allMatch(Flow::isDone);
        final long drops = r.fabric(Port::tailDrops);
        System.out.printf("tail drops %d, retransmits %d (spurious %d)%n", drops, r.retransmits(),
            r.endpoints(EndpointCounter.SPURIOUS_RETRANSMITS));
        assertThat(drops).isPositive();
        assertThat(r.fabric(Port::trims)).isZero();
        assertThat(r.retransmits()).isGreaterThanOrEqualTo(1);
    }

    @Test
    @DisplayName("PFC keeps the same incast lossless: pauses instead of drops")
    void pfcIsLossless() {
        final TransportProfile profile = TransportProfile.rocev2();
        final FabricConfig fabric = profile.applyTo(new FabricConfig().bufferBytesPerPort(40_000))
            .pfc(true, 30_000, 15_000);
        final Run r = incast(profile, fabric);
        assertThat(r.flows).allMatch(Flow::isDone);
        System.out.printf("pauses %d, tail drops %d, retransmits %d%n", r.fabric(Port::pausesSent),
            r.fabric(Port::tailDrops), r.retransmits());
        assertThat(r.fabric(Port::pausesSent)).isPositive();
        assertThat(r.fabric(Port::pausesReceived)).isEqualTo(r.fabric(Port::pausesSent));
        assertThat(r.fabric(Port::tailDrops)).isZero();
        assertThat(r.retransmits()).isZero();
    }

    @Test
    @DisplayName("random loss on a link and a failed link are recovered; routing avoids the failed link once detected")
    void faultsAreRecovered() {
        System.out.println("seed=" + SEED);
        final TransportProfile profile = TransportProfile.metaroce();
        final Simulator sim = new Simulator(SEED);
        final Network net = new TopologyBuilder(sim, profile.applyTo(new FabricConfig()), profile.endpointConfig())
            .leafSpineWithSpines(8, 4, 2);
        final Traffic traffic = new Traffic(net, profile);
        final List<Link> fabricLinks = net.links().stream()
            .filter(l -> l.a().owner() instanceof Switch && l.b().owner() instanceof Switch).toList();
        net.randomLoss(fabricLinks.get(0), 0.01);
        final Link failing = fabricLinks.get(1);
        net.failLink(failing, 20_000, 50_000);
        for (int i = 0; i < 4; i++) {
            traffic.startFlow(0, i, 4 + i, 1 << 20, "cross", null);
            traffic.startFlow(0, 4 + i, i, 1 << 20, "cross", null);
        }
        sim.run(500_000_000);
        assertThat(traffic.flows()).allMatch(Flow::isDone);
        final long random = net.allPorts().stream().mapToLong(Port::randomLosses).sum();
        final long down = net.allPorts().stream().mapToLong(Port::linkDownLosses).sum();
        final long retransmits = net.hosts().stream().mapToLong(h -> h.endpoint().counters().retransmits()).sum();
        System.out.printf("random losses %d, link-down losses %d, retransmits %d%n", random, down, retransmits);
        assertThat(random).isPositive();
        assertThat(down).isPositive();
        assertThat(retransmits).isGreaterThanOrEqualTo(1);
        assertThat(failing.isUp()).isFalse();
        // After detection no switch routes over the failed link.
        for (final Switch s : net.switches()) {
            for (int h = 0; h < net.hosts().size(); h++) {
                for (final int p : s.route(h)) {
                    assertThat(s.ports().get(p).isUp()).isTrue();
                }
            }
        }
    }

    @Test
    @DisplayName("ECMP keeps a single-path flow on one spine; spraying entropies or switch spraying use all of them")
    void ecmpAndSpraying() {
        System.out.println("seed=" + SEED);
        assertThat(spinesUsed(TransportProfile.rocev2().withPfc(false))).isEqualTo(1);
        assertThat(spinesUsed(TransportProfile.metaroce())).isEqualTo(4);
        assertThat(spinesUsed(TransportProfile.rocev2().withPfc(false).withLoadBalancing(LoadBalancing.SPRAY)))
            .isEqualTo(4);
    }

    private static int spinesUsed(final TransportProfile profile) {
        final Simulator sim = new Simulator(SEED);
        final Network net = new TopologyBuilder(sim, profile.applyTo(new FabricConfig()), profile.endpointConfig())
            .leafSpineWithSpines(2, 1, 4);
        final Traffic traffic = new Traffic(net, profile);
        final Flow f = traffic.startFlow(0, 0, 1, 1 << 20, "one", null);
        sim.run(100_000_000);
        assertThat(f.isDone()).isTrue();
        final Host src = net.hosts().get(0);
        final Switch leaf = (Switch) src.nic().peer().owner();
        int used = 0;
        for (final Port p : leaf.ports()) {
            if (p.peer().owner().name().startsWith("spine") && p.txPackets() > 10) {
                used++;
            }
        }
        return used;
    }

    @Test
    @DisplayName("a k=4 fat-tree has 20 switches, 4 equal-cost paths between pods, and carries a permutation")
    void fatTree() {
        System.out.println("seed=" + SEED);
        final TransportProfile profile = TransportProfile.metaroce();
        final Simulator sim = new Simulator(SEED);
        final Network net = new TopologyBuilder(sim, profile.applyTo(new FabricConfig()), profile.endpointConfig())
            .fatTree(16, TopologyBuilder.fatTreeArityFor(16), 2);
        assertThat(net.switches()).hasSize(20);
        assertThat(net.hosts()).hasSize(16);
        final Switch edge0 = (Switch) net.hosts().get(0).nic().peer().owner();
        assertThat(edge0.route(15)).hasSize(2); // up to either aggregation switch of the pod
        final Switch agg = (Switch) edge0.ports().get(edge0.route(15)[0]).peer().owner();
        assertThat(agg.route(15)).hasSize(2); // up to either of its two cores
        assertThat(edge0.route(1)).hasSize(1); // same edge: straight down
        final Traffic traffic = new Traffic(net, profile);
        for (int i = 0; i < 16; i++) {
            traffic.startFlow(0, i, (i + 5) % 16, 256 * 1024, "perm", null);
        }
        sim.run(100_000_000);
        assertThat(traffic.flows()).allMatch(Flow::isDone);
    }

    @Test
    @DisplayName("ENC-015 / ENC-016: switches mark ECT packets CE, the responder echoes it, the requester's paths see the echoes")
    void ecnMarksReachTheEngine() {
        for (final boolean ecn : new boolean[] {true, false}) {
            final TransportProfile profile = TransportProfile.metaroce().withEcn(ecn);
            System.out.println("seed=" + SEED + " ecn=" + ecn);
            final Simulator sim = new Simulator(SEED);
            final Network net = new TopologyBuilder(sim, profile.applyTo(new FabricConfig()), profile.endpointConfig())
                .singleSwitch(9);
            final Traffic traffic = new Traffic(net, profile);
            for (int s = 1; s <= 8; s++) {
                traffic.startFlow(0, s, 0, 512 * 1024, "incast", null);
            }
            sim.run(200_000_000);
            assertThat(traffic.flows()).allMatch(Flow::isDone);
            final long marks = net.allPorts().stream().mapToLong(Port::ecnMarks).sum();
            long echoes = 0;
            for (int s = 1; s <= 8; s++) {
                final var paths = traffic.senderQueuePair(s, 0).paths();
                for (int p = 0; p < paths.pathCount(); p++) {
                    echoes += paths.ecnEchoes(p);
                }
            }
            System.out.printf("ecn=%s: %d CE marks, %d ECN echoes seen by requesters%n", ecn, marks, echoes);
            if (ecn) {
                assertThat(marks).isPositive();
                assertThat(echoes).isPositive();
            } else {
                assertThat(marks).isZero();
                assertThat(echoes).isZero();
            }
        }
    }
}
