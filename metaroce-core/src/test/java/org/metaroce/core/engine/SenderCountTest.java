// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.metaroce.core.congestion.CongestionControlAlgorithm;
import org.metaroce.core.congestion.DelayBasedCongestionControl;
import org.metaroce.core.testwire.LinkProfile;
import org.metaroce.core.wire.ConnectHeader;

/** The responder's Sender Count and the announcement to requesters connected ahead of their traffic [CC-038], [CC-039]. */
class SenderCountTest {
    private static final int MTU = 4096;
    private static final long RATE = 100_000_000_000L;
    private static final int SENDERS = 8;
    private static final int MESSAGE = 256 * 1024;
    /** W0 = 100 Gb/s x BASE_RTT_INIT (10 us) [CC-010]. */
    private static final double W0 = 125_000;

    private static IncastFixture connected(final int caps) {
        final EndpointConfig config = new EndpointConfig().linkRateBitsPerSecond(RATE);
        final IncastFixture f = new IncastFixture(9101, SENDERS, config, caps, CongestionControlAlgorithm.DEFAULT, MTU,
            MESSAGE, LinkProfile.builder().delayNs(2_000).build());
        f.wire.bottleneck(f.receiverNode, RATE, 64L << 20, 64L << 20);
        // Connected ahead of the traffic: time for anything sent at connection to arrive.
        f.wire.runFor(50_000);
        return f;
    }

    private static double window(final IncastFixture.Sender s) {
        return ((DelayBasedCongestionControl) s.qp.congestionControl()).windowBytes();
    }

    @Test
    @DisplayName("[CC-038] [CC-039] connected ahead, the receiver announces its 8 waiting QPs; each sender starts at W0 / 8 and the burst's queue is an eighth")
    void requestersConnectedAheadShareTheFirstWindow() {
        final IncastFixture told = connected(ConnectHeader.CAP_ECN | ConnectHeader.CAP_SENDER_COUNT);
        final IncastFixture untold = connected(ConnectHeader.CAP_ECN);

        // One announcement per waiting receiver QP (made due by each later connection, sent once);
        // a sender's own endpoint has one waiting QP, a count of 1, which is not announced.
        assertThat(told.receiver.counters().get(EndpointCounter.ACKS_OUT)).isEqualTo(SENDERS);
        assertThat(untold.receiver.counters().get(EndpointCounter.ACKS_OUT)).isZero();
        for (int i = 0; i < SENDERS; i++) {
            assertThat(told.senders.get(i).endpoint.counters().get(EndpointCounter.ACKS_OUT)).isZero();
            assertThat(window(told.senders.get(i))).as("sender " + i).isCloseTo(W0 / SENDERS, within(1.0));
            assertThat(window(untold.senders.get(i))).as("sender " + i).isCloseTo(W0, within(1.0));
        }

        told.postWrites(1, MESSAGE);
        untold.postWrites(1, MESSAGE);
        assertThat(told.runUntilDone(1_000_000_000L)).isTrue();
        assertThat(untold.runUntilDone(1_000_000_000L)).isTrue();
        assertThat(told.dataIntact(MESSAGE)).isTrue();
        assertThat(untold.senders).noneMatch(s -> s.failed);
        assertThat(told.senders).noneMatch(s -> s.failed);
        final long toldPeak = told.wire.stats().maxQueueBytes();
        final long untoldPeak = untold.wire.stats().maxQueueBytes();
        System.out.println("seed 9101, 8:1 at 100 Gb/s, peak queue: with SENDER_COUNT " + toldPeak + " B, without "
            + untoldPeak + " B");
        // Without the count 8 windows of W0 meet at the port; with it 8 of W0 / 8.
        assertThat(untoldPeak).isGreaterThan(SENDERS * (long) W0 / 2);
        assertThat(toldPeak * 4).isLessThan(untoldPeak);
    }

    @Test
    @DisplayName("[CC-038] a requester that has sent keeps its window when a later announcement comes; a count of 1 is never announced")
    void onlyRequestersThatHaveNotSentAreSized() {
        final EndpointConfig config = new EndpointConfig().linkRateBitsPerSecond(RATE);
        final IncastFixture f = new IncastFixture(9102, 1, config, ConnectHeader.CAP_ECN | ConnectHeader.CAP_SENDER_COUNT,
            CongestionControlAlgorithm.DEFAULT, MTU, MESSAGE, LinkProfile.builder().delayNs(2_000).build());
        f.wire.runFor(50_000);
        // One QP on each side: the count is 1 everywhere, nothing is announced.
        assertThat(f.receiver.counters().get(EndpointCounter.ACKS_OUT)).isZero();
        assertThat(window(f.senders.get(0))).isCloseTo(W0, within(1.0));
        f.postWrites(1, MESSAGE);
        assertThat(f.runUntilDone(1_000_000_000L)).isTrue();
        assertThat(f.dataIntact(MESSAGE)).isTrue();
    }
}
