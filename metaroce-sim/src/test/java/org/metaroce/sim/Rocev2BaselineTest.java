// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.sim;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.metaroce.core.congestion.CongestionControlAlgorithm;
import org.metaroce.core.congestion.DcqcnCongestionControl;
import org.metaroce.core.engine.EndpointCounter;
import org.metaroce.core.engine.QueuePair;
import org.metaroce.sim.net.FabricConfig;
import org.metaroce.sim.net.Network;
import org.metaroce.sim.net.Port;
import org.metaroce.sim.net.TopologyBuilder;
import org.metaroce.sim.transport.TransportProfile;
import org.metaroce.sim.workload.Flow;
import org.metaroce.sim.workload.Traffic;

/**
 * The rocev2 profile runs the engine's real RoCEv2 baseline, chosen through the QP attributes:
 * DCQCN (8.7) reacting to CNPs the responders generate from CE marks, and go-back-N loss recovery
 * (6.11) on a single path.
 */
class Rocev2BaselineTest {
    private static final long SEED = 42;

    private static long sum(final Network net, final EndpointCounter counter) {
        return net.hosts().stream().mapToLong(h -> h.endpoint().counters().get(counter)).sum();
    }

    @Test
    @DisplayName("[CC-008] [CC-024] [REL-056] rocev2 QPs negotiate ECN and GO_BACK_N and run DCQCN on one path")
    void profileSelectsTheBaselineThroughQpAttributes() {
        System.out.println("seed=" + SEED);
        final TransportProfile profile = TransportProfile.rocev2();
        final Simulator sim = new Simulator(SEED);
        final Network net = new TopologyBuilder(sim, profile.applyTo(new FabricConfig()), profile.endpointConfig())
            .singleSwitch(2);
        final Traffic traffic = new Traffic(net, profile);
        traffic.startFlow(0, 1, 0, 64 * 1024, "one", null);
        sim.run(10_000_000);
        final QueuePair qp = traffic.senderQueuePair(1, 0);
        assertThat(qp.isGoBackN()).isTrue();
        assertThat(qp.congestionControlAlgorithm()).isEqualTo(CongestionControlAlgorithm.DCQCN);
        assertThat(qp.congestionControl()).isInstanceOf(DcqcnCongestionControl.class);
        assertThat(qp.paths().pathCount()).isEqualTo(1);
        assertThat(sum(net, EndpointCounter.CC_FALLBACKS)).isZero();
        assertThat(traffic.flows()).allMatch(Flow::isDone);
    }

    @Test
    @DisplayName("[CC-020] [CC-021] 8:1 incast under rocev2: CE marks become CNPs and DCQCN cuts the senders' rates")
    void dcqcnCutsRatesOnCnps() {
        System.out.println("seed=" + SEED);
        final TransportProfile profile = TransportProfile.rocev2();
        final Simulator sim = new Simulator(SEED);
        final Network net = new TopologyBuilder(sim, profile.applyTo(new FabricConfig()), profile.endpointConfig())
            .singleSwitch(9);
        final Traffic traffic = new Traffic(net, profile);
        for (int s = 1; s <= 8; s++) {
            traffic.startFlow(0, s, 0, 1 << 20, "incast", null);
        }
        sim.run(100_000_000);
        assertThat(traffic.flows()).allMatch(Flow::isDone);
        final long marks = net.allPorts().stream().mapToLong(Port::ecnMarks).sum();
        final long cnpsOut = net.hosts().get(0).endpoint().counters().get(EndpointCounter.CNPS_OUT);
        final long cnpsIn = sum(net, EndpointCounter.CNPS_IN);
        final List<Double> rates = new ArrayList<>();
        long cnpsApplied = 0;
        for (int s = 1; s <= 8; s++) {
            final DcqcnCongestionControl cc = (DcqcnCongestionControl) traffic.senderQueuePair(s, 0).congestionControl();
            rates.add(cc.currentRate() / 1e9);
            cnpsApplied += cc.cnps();
        }
        System.out.printf("ECN marks %d, CNPs sent %d, received %d, applied %d, rates after (Gb/s) %s, pauses %d%n",
            marks, cnpsOut, cnpsIn, cnpsApplied, rates, net.allPorts().stream().mapToLong(Port::pausesSent).sum());
        assertThat(marks).isPositive();
        assertThat(cnpsOut).isPositive();
        assertThat(cnpsApplied).isEqualTo(cnpsIn).isPositive();
        // Each CNP cuts Rc by alpha / 2 from line rate: every sender ends below it.
        assertThat(rates).allMatch(r -> r < 100.0);
        assertThat(net.allPorts().stream().mapToLong(Port::tailDrops).sum()).as("PFC: lossless").isZero();
    }

    private static long[] lossRun(final TransportProfile profile) {
        final Simulator sim = new Simulator(SEED);
        final Network net = new TopologyBuilder(sim, profile.applyTo(new FabricConfig()), profile.endpointConfig())
            .singleSwitch(2);
        final Traffic traffic = new Traffic(net, profile);
        // 1 % loss both ways on the sender's link: data and ACKs are lost.
        net.randomLoss(net.links().get(1), 0.01);
        traffic.startFlow(0, 1, 0, 4L << 20, "lossy", null);
        sim.run(1_000_000_000);
        assertThat(traffic.flows()).allMatch(Flow::isDone);
        final long losses = net.allPorts().stream().mapToLong(Port::randomLosses).sum();
        final long retransmits = net.hosts().get(1).endpoint().counters().retransmits();
        System.out.printf("%s: random losses %d, retransmits %d (go-back-N %d, RACK %d), sequence-gap NACKs %d, "
                + "out-of-order drops %d%n", profile.name(), losses, retransmits,
            sum(net, EndpointCounter.RETRANSMITS_GO_BACK_N), sum(net, EndpointCounter.RETRANSMITS_LOSS_DETECTED),
            sum(net, EndpointCounter.NACKS_OUT_SEQUENCE_GAP), sum(net, EndpointCounter.SEQUENCE_GAP));
        return new long[] {losses, retransmits, sum(net, EndpointCounter.RETRANSMITS_GO_BACK_N),
            sum(net, EndpointCounter.RETRANSMITS_LOSS_DETECTED), sum(net, EndpointCounter.NACKS_OUT_SEQUENCE_GAP),
            sum(net, EndpointCounter.SEQUENCE_GAP)};
    }

    @Test
    @DisplayName("[REL-053] [REL-054] 1% loss under rocev2: gaps are NACKed, later packets dropped, the window tail resent")
    void goBackNResendsTheWindowTail() {
        System.out.println("seed=" + SEED);
        final long[] gbn = lossRun(TransportProfile.rocev2());
        final long[] sr = lossRun(TransportProfile.metaroce());
        assertThat(gbn[0]).as("losses").isPositive();
        assertThat(gbn[2]).as("go-back-N retransmissions").isPositive();
        assertThat(gbn[3]).as("no RACK in go-back-N mode [REL-054]").isZero();
        assertThat(gbn[4]).as("NACK SEQUENCE_GAP").isPositive();
        assertThat(gbn[5]).as("out-of-order packets dropped [REL-053]").isPositive();
        // Each loss of a data packet costs the whole tail behind it: every packet the responder
        // dropped out of order is sent again, several per loss, where selective repeat on the
        // same losses resends about one per lost packet.
        assertThat(gbn[1]).isGreaterThanOrEqualTo(gbn[5]);
        assertThat(gbn[1]).isGreaterThan(2 * sr[1]);
        assertThat(sr[2]).isZero();
        assertThat(sr[1]).isLessThanOrEqualTo(2 * sr[0] + 4);
    }
}
