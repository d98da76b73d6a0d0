// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.sim;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.metaroce.core.congestion.CongestionControlAlgorithm;
import org.metaroce.core.wire.Opcode;
import org.metaroce.core.wire.WireConstants;
import org.metaroce.sim.net.Network;
import org.metaroce.sim.net.Packet;
import org.metaroce.sim.net.TopologyBuilder;
import org.metaroce.sim.transport.TransportProfile;
import org.metaroce.sim.workload.Flow;
import org.metaroce.sim.workload.Traffic;

/** The sanity checks of the simulator that issue 5 asks for, run on the real core endpoints. */
class FabricSanityTest {
    private static final long SEED = 42;

    private static Network leafSpine(final Simulator sim, final TransportProfile profile, final long hostRate,
                                      final long fabricRate) {
        return new TopologyBuilder(sim, profile.applyTo(new org.metaroce.sim.net.FabricConfig()), profile.endpointConfig())
            .hostRate(hostRate).fabricRate(fabricRate).hostPropagation(500).fabricPropagation(1_000)
            .leafSpineWithSpines(4, 2, 2);
    }

    @Test
    @DisplayName("a lone packet's latency is exactly the sum of propagation and serialization over its 4 hops")
    void lonePacketLatencyIsPropagationPlusSerialization() {
        System.out.println("seed=" + SEED);
        for (final long fabricRate : new long[] {100_000_000_000L, 400_000_000_000L}) {
            final Simulator sim = new Simulator(SEED);
            final TransportProfile profile = TransportProfile.metaroce();
            final Network net = leafSpine(sim, profile, 100_000_000_000L, fabricRate);
            final Traffic traffic = new Traffic(net, profile);
            // Host 0 is on leaf0, host 3 on leaf1: host link, leaf->spine, spine->leaf, host link.
            final Flow flow = traffic.startFlow(0, 0, 3, 1, "lone", null);
            sim.run(1_000_000);
            assertThat(flow.isDone()).isTrue();
            final int wire = Opcode.WRITE_WITH_IMM.headerLength() + 1 + WireConstants.INTEGRITY_CHECK_LENGTH
                + Packet.FRAME_OVERHEAD_BYTES;
            final long hostSer = ceilDiv(wire * 8L * 1_000_000_000L, 100_000_000_000L);
            final long fabricSer = ceilDiv(wire * 8L * 1_000_000_000L, fabricRate);
            final long expected = 2 * (500 + hostSer) + 2 * (1_000 + fabricSer);
            System.out.printf("fabric %d Gb/s: %d wire bytes, latency %d ns, expected %d ns%n", fabricRate / 1_000_000_000L,
                wire, flow.fctNs(), expected);
            assertThat(flow.fctNs()).isEqualTo(expected);
            assertThat(flow.idealNs()).isEqualTo(expected);
        }
    }

    private static long ceilDiv(final long a, final long b) {
        return (a + b - 1) / b;
    }

    @Test
    @DisplayName("one flow reaches at least 95% of line rate")
    void oneFlowReachesLineRate() {
        for (final TransportProfile profile : List.of(TransportProfile.metaroce(), TransportProfile.rocev2())) {
            final Simulator sim = new Simulator(SEED);
            final Network net = leafSpine(sim, profile, 100_000_000_000L, 100_000_000_000L);
            final Traffic traffic = new Traffic(net, profile);
            final long bytes = 8L << 20;
            final Flow flow = traffic.startFlow(0, 0, 3, bytes, "single", null);
            sim.run(100_000_000);
            assertThat(flow.isDone()).isTrue();
            final double gbps = bytes * 8.0 / flow.fctNs();
            System.out.printf("%s: %d bytes in %d ns = %.2f Gb/s (slowdown %.3f), counters %s%n", profile.name(), bytes,
                flow.fctNs(), gbps, flow.slowdown(), net.hosts().get(0).endpoint().counters());
            assertThat(gbps).isGreaterThanOrEqualTo(95.0);
        }
    }

    @Test
    @DisplayName("four flows into one port share it within 10% (max/min of per-flow rate) and fill it")
    void flowsIntoOnePortShareFairly() {
        System.out.println("seed=" + SEED);
        // The fabric with window-based senders (the RoCEv2 fabric, PFC and one path, with a fixed
        // 48-packet window) and MetaRoCE. DCQCN is not expected to pass: from line rate its
        // synchronized CNP cuts leave the flows far below their shares for milliseconds
        // (Rocev2BaselineTest measures it).
        final TransportProfile fixedWindow = TransportProfile.rocev2()
            .withCongestionControl("FIXED, window 48", CongestionControlAlgorithm.FIXED, 48).withName("rocev2-fixed48");
        for (final TransportProfile profile : List.of(fixedWindow, TransportProfile.metaroce())) {
            final Simulator sim = new Simulator(SEED);
            final Network net = new TopologyBuilder(sim, profile.applyTo(new org.metaroce.sim.net.FabricConfig()),
                profile.endpointConfig()).singleSwitch(5);
            final Traffic traffic = new Traffic(net, profile);
            final long bytes = 2L << 20;
            final List<Flow> flows = new java.util.ArrayList<>();
            for (int s = 1; s <= 4; s++) {
                flows.add(traffic.startFlow(0, s, 0, bytes, "fair", null));
            }
            sim.run(100_000_000);
            double min = Double.MAX_VALUE;
            double max = 0;
            double sum = 0;
            double sumSq = 0;
            long last = 0;
            for (final Flow f : flows) {
                assertThat(f.isDone()).as("flow %d done", f.id()).isTrue();
                final double rate = bytes * 8.0 / f.fctNs();
                min = Math.min(min, rate);
                max = Math.max(max, rate);
                sum += rate;
                sumSq += rate * rate;
                last = Math.max(last, f.endNs());
            }
            final double jain = sum * sum / (flows.size() * sumSq);
            final double aggregate = 4 * bytes * 8.0 / last;
            System.out.printf("%s: per-flow Gb/s min %.2f max %.2f (max/min %.3f), Jain %.4f, aggregate %.2f Gb/s%n",
                profile.name(), min, max, max / min, jain, aggregate);
            assertThat(max / min).isLessThanOrEqualTo(1.10);
            assertThat(aggregate).isGreaterThanOrEqualTo(90.0);
        }
    }
}
