// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.metaroce.core.engine.Scoreboard.KIND_ATOMIC;
import static org.metaroce.core.engine.Scoreboard.KIND_DATA;
import static org.metaroce.core.engine.Scoreboard.LOST;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.metaroce.core.multipath.PathSelector;
import org.metaroce.core.reliability.RttEstimator;

/**
 * The requester's time-based loss detection on its own, over a bare {@link Scoreboard}: the rule
 * of a later delivery [REL-023] and of a later response [REL-045], the deadline it arms, the
 * reorder window's adaptation [REL-024] and the episode report that halves PROBE_WAIT [REL-065].
 */
class LossDetectorTest {
    private static final long RTT_NS = 100_000;
    /** RTO_MIN of the QP: reoWnd starts at a quarter of it [REL-024]. */
    private static final long MIN_RTO_NS = 100_000;

    private final Scoreboard sb = new Scoreboard(64);
    private final RttEstimator rtt = new RttEstimator(1_000_000, MIN_RTO_NS, 10_000_000);
    /** One path: no SRTT spread. */
    private final PathSelector paths = new PathSelector(new int[] {1});
    /** The PSNs handed to the sink, each checked to be already marked lost when it arrives. */
    private final List<Integer> lost = new ArrayList<>();
    private final LossDetector detector = new LossDetector(sb, new EndpointConfig(), (nowNs, psn) -> {
        assertThat(sb.state(psn)).as("PSN %d when reported", psn).isEqualTo(LOST);
        assertThat(sb.lossCause(psn)).isEqualTo(EndpointCounter.RETRANSMITS_LOSS_DETECTED);
        lost.add(psn);
    });
    private long seq;

    @BeforeEach
    void start() {
        detector.start(rtt, MIN_RTO_NS);
    }

    private void send(final int psn, final byte kind, final long nowNs) {
        sb.assign(psn, psn, 0, kind);
        sb.sent(psn, nowNs, seq++, 0, false);
    }

    private void sample(final long rttNs) {
        rtt.onSample(rttNs);
        detector.onRttSample(rttNs);
    }

    private void deliver(final int psn, final boolean proven) {
        sb.delivered(psn, 0L);
        detector.onDelivered(psn, proven);
    }

    @Test
    void nothingIsLostBeforeALaterPacketIsDelivered() {
        assertThat(detector.reorderWindowNs(paths)).isEqualTo(MIN_RTO_NS / 4);
        send(0, KIND_DATA, 0);
        send(1, KIND_DATA, 1_000);
        assertThat(detector.detectLosses(10_000_000, 0, 2, paths)).isFalse();
        assertThat(lost).isEmpty();
        assertThat(detector.deadlineNs()).isEqualTo(Long.MAX_VALUE);
    }

    @Test
    void aPacketSentBeforeADeliveredOneIsLostAfterTheRttAndTheReorderWindow() {
        sample(RTT_NS);
        final long window = detector.reorderWindowNs(paths);
        assertThat(window).isEqualTo(RTT_NS / 4);
        send(0, KIND_DATA, 0);
        send(1, KIND_DATA, 1_000);
        send(2, KIND_DATA, 2_000);
        send(3, KIND_DATA, 3_000);
        deliver(2, false);

        detector.detectLosses(RTT_NS + window - 1, 0, 4, paths);
        assertThat(lost).isEmpty();
        // The timer is armed for the earliest packet that would become lost [REL-023].
        assertThat(detector.deadlineNs()).isEqualTo(RTT_NS + window);

        detector.detectLosses(RTT_NS + window, 0, 4, paths);
        assertThat(lost).containsExactly(0);
        assertThat(detector.deadlineNs()).isEqualTo(1_000 + RTT_NS + window);

        // PSN 3 was sent after the delivered one: never lost by this rule.
        detector.detectLosses(10_000_000, 0, 4, paths);
        assertThat(lost).containsExactly(0, 1);
        assertThat(detector.deadlineNs()).isEqualTo(Long.MAX_VALUE);
    }

    @Test
    void aRetransmissionMovesTheRuleOnlyWhenTheAckProvesItArrived() {
        sample(RTT_NS);
        send(0, KIND_DATA, 0);
        send(1, KIND_DATA, 1_000);
        sb.lost(0, EndpointCounter.RETRANSMITS_TAIL_PROBE);
        sb.sent(0, 2_000, seq++, 0, false);
        // Delivered by a cumulative or SACK report: the original may have arrived [REL-023].
        deliver(0, false);
        detector.detectLosses(10_000_000, 0, 2, paths);
        assertThat(lost).isEmpty();

        send(2, KIND_DATA, 4_000);
        sb.lost(1, EndpointCounter.RETRANSMITS_TAIL_PROBE);
        sb.sent(1, 5_000, seq++, 0, false);
        // Proven by the trigger's echo: PSN 2, sent before that copy, is overdue.
        deliver(1, true);
        detector.detectLosses(10_000_000, 0, 3, paths);
        assertThat(lost).containsExactly(2);
    }

    @Test
    void aResponseWithALaterPsnDeclaresTheEarlierSlotLostAfterTheReorderWindow() {
        sample(RTT_NS);
        final long window = detector.reorderWindowNs(paths);
        send(0, KIND_ATOMIC, 0);
        send(1, KIND_ATOMIC, 1_000);
        assertThat(detector.respondedAtOrAfter(0)).isFalse();
        detector.onResponse(50_000, 1);
        deliver(1, false);
        assertThat(detector.respondedAtOrAfter(0)).isTrue();
        assertThat(detector.respondedAtOrAfter(2)).isFalse();

        detector.detectLosses(50_000, 0, 2, paths);
        assertThat(detector.deadlineNs()).isEqualTo(50_000 + window);
        detector.detectLosses(50_000 + window, 0, 2, paths);
        assertThat(lost).containsExactly(0);
    }

    @Test
    void aResetDetectsNothing() {
        sample(RTT_NS);
        send(0, KIND_DATA, 0);
        send(1, KIND_DATA, 1_000);
        deliver(1, false);
        detector.onResponse(2_000, 1);

        detector.reset();
        assertThat(detector.respondedAtOrAfter(0)).isFalse();
        detector.detectLosses(10_000_000, 0, 2, paths);
        assertThat(lost).isEmpty();
        assertThat(detector.deadlineNs()).isEqualTo(Long.MAX_VALUE);
    }

    @Test
    void aResetForgetsTheOldConnectionsRoundTrip() {
        // The old connection's latest RTT: 1 ms.
        sample(1_000_000);
        detector.reset();
        sb.clear();
        // The new connection: 100 us, not (yet) sampled by an ACK the detector saw.
        final RttEstimator fresh = new RttEstimator(1_000_000, MIN_RTO_NS, 10_000_000);
        fresh.onSample(RTT_NS);
        detector.start(fresh, MIN_RTO_NS);
        send(0, KIND_DATA, 0);
        send(1, KIND_DATA, 1_000);
        deliver(1, false);
        final long window = detector.reorderWindowNs(paths);
        detector.detectLosses(RTT_NS + window, 0, 2, paths);
        assertThat(lost).as("judged with the new SRTT, not the old connection's 1 ms").containsExactly(0);
    }

    @Test
    void aSpuriousRetransmissionWidensTheWindowAndSixteenEpisodesShrinkIt() {
        sample(RTT_NS);
        final long floor = RTT_NS / 4;
        assertThat(detector.reorderWindowNs(paths)).isEqualTo(floor);
        detector.onSpuriousRetransmission();
        assertThat(detector.reorderWindowNs(paths)).isEqualTo(2 * floor);
        for (int i = 0; i < 10; i++) {
            detector.onSpuriousRetransmission();
        }
        // Never beyond SRTT [REL-024].
        assertThat(detector.reorderWindowNs(paths)).isEqualTo(RTT_NS);

        for (int episode = 1; episode <= LossDetector.EPISODES_TO_SHRINK; episode++) {
            final int psn = 2 * episode;
            send(psn, KIND_DATA, 0);
            send(psn + 1, KIND_DATA, 0);
            deliver(psn + 1, false);
            final boolean shrank = detector.detectLosses(10_000_000, psn, psn + 2, paths);
            // The 16th episode without a spurious retransmission: the requester halves PROBE_WAIT [REL-065].
            assertThat(shrank).as("episode %d", episode).isEqualTo(episode == LossDetector.EPISODES_TO_SHRINK);
            assertThat(detector.reorderWindowNs(paths)).isEqualTo(shrank ? floor : RTT_NS);
        }
        assertThat(lost).hasSize(LossDetector.EPISODES_TO_SHRINK);
    }
}
