// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.multipath;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import org.junit.jupiter.api.Test;

/** Weights, decay and smooth weighted round-robin of specification 7.4–7.5. */
class PathSelectorTest {
    private static final int[] FOUR = {50000, 50001, 50002, 50003};

    @Test
    void equalWeightsRotateEvenlyAndDeterministically() {
        final PathSelector a = new PathSelector(FOUR);
        final PathSelector b = new PathSelector(FOUR);
        for (int i = 0; i < 400; i++) {
            assertThat(a.next(i)).isEqualTo(b.next(i)).isEqualTo(i % 4);
        }
        for (int p = 0; p < 4; p++) {
            assertThat(a.sent(p)).isEqualTo(100);
        }
    }

    /**
     * [MP-022] the responder's packets follow a sequence of their own: requests alternating with
     * ACKs still take every path in turn (with one shared counter they would take paths 0 and 2
     * only), and the responder's packets rotate over all paths too [MP-017].
     */
    @Test
    void responderPacketsDoNotAdvanceTheRequestSequence() {
        final PathSelector s = new PathSelector(FOUR);
        final int[] requests = new int[4];
        final int[] acks = new int[4];
        for (int i = 0; i < 400; i++) {
            final int r = s.next(i);
            assertThat(r).isEqualTo(i % 4);
            requests[r]++;
            acks[s.nextForResponder(i)]++;
        }
        assertThat(requests).containsOnly(100);
        assertThat(acks).containsOnly(100);
    }

    /** [MP-022] with penalties the responder's sequence uses the same weights as the requester's [MP-017]. */
    @Test
    void responderSequenceFollowsTheSameWeights() {
        final PathSelector s = new PathSelector(new int[] {1, 2});
        s.onLoss(0, 1);
        s.onLoss(0, 1);
        final int[] requests = new int[2];
        final int[] responses = new int[2];
        for (int i = 0; i < 1000; i++) {
            requests[s.next(0)]++;
            responses[s.nextForResponder(0)]++;
        }
        // Weights 1 and 1/4, time frozen: 800 and 200 in both sequences.
        assertThat(requests).containsExactly(800, 200);
        assertThat(responses).containsExactly(800, 200);
    }

    /**
     * [MP-004] per path: entropy value, weight, smoothed RTT (EWMA with gain 1/8 of the samples
     * attributed to it) and minimum RTT, time of the latest sample, counts of losses, trims and ECN
     * echoes; a sample on one path changes nothing on another [MP-005].
     */
    @Test
    void keepsTheStateOfEachPath() {
        final PathSelector s = new PathSelector(FOUR);
        assertThat(s.entropy(2)).isEqualTo(50002);
        s.onFeedback(1_000, 1, 80_000, false);
        assertThat(s.srttNs(1)).as("the first sample").isEqualTo(80_000);
        s.onFeedback(2_000, 1, 160_000, false);
        assertThat(s.srttNs(1)).as("7/8 x 80 + 1/8 x 160 us").isEqualTo(90_000);
        s.onFeedback(3_000, 1, 40_000, false);
        assertThat(s.srttNs(1)).isEqualTo(90_000 - (50_000 >> 3));
        assertThat(s.minRttNs(1)).isEqualTo(40_000);
        assertThat(s.lastSampleNs(1)).isEqualTo(3_000);
        assertThat(s.srttNs(0)).isZero();
        assertThat(s.minRttNs(0)).isZero();
        assertThat(s.lastSampleNs(0)).isZero();
        s.onLoss(4_000, 2);
        s.onTrim(4_000, 3);
        s.onFeedback(4_000, 0, 0, true);
        assertThat(new long[] {s.losses(2), s.trims(3), s.ecnEchoes(0)}).containsExactly(1, 1, 1);
        assertThat(new long[] {s.losses(0), s.trims(0), s.ecnEchoes(1)}).containsExactly(0, 0, 0);
        assertThat(s.weight(2)).isEqualTo(0.5);
        assertThat(s.weight(1)).isEqualTo(1.0);
    }

    /** [MP-009] penalty factors and [MP-011] the floor. */
    @Test
    void penaltiesMultiplyAndNeverGoBelowTheFloor() {
        final PathSelector s = new PathSelector(FOUR);
        s.onLoss(0, 1);
        assertThat(s.weight(1)).isEqualTo(0.5);
        s.onTrim(0, 2);
        assertThat(s.weight(2)).isEqualTo(0.75);
        for (int i = 0; i < 20; i++) {
            s.onLoss(0, 1);
        }
        assertThat(s.weight(1)).isEqualTo(PathSelector.W_MIN);
        assertThat(s.losses(1)).isEqualTo(21);
    }

    /** [MP-010] w ← 1 − (1 − w) · 2^(−Δt/H), H = 200 µs without RTT samples. */
    @Test
    void penaltiesDecayWithAHalfLife() {
        final PathSelector s = new PathSelector(FOUR);
        s.onLoss(1_000_000, 3);
        assertThat(s.weight(3)).isEqualTo(0.5);
        s.next(1_200_000); // one half-life later
        assertThat(s.weight(3)).isCloseTo(0.75, within(1e-9));
        s.next(1_400_000);
        assertThat(s.weight(3)).isCloseTo(0.875, within(1e-9));
    }

    /** [MP-013] shares follow the weights: a path at weight 1/4 carries a quarter of a full path's traffic. */
    @Test
    void sharesFollowTheWeights() {
        final PathSelector s = new PathSelector(new int[] {1, 2});
        s.onLoss(0, 1);
        s.onLoss(0, 1);
        // Time frozen at 0: no decay, weights 1 and 1/4.
        for (int i = 0; i < 1000; i++) {
            s.next(0);
        }
        assertThat(s.sent(0)).isEqualTo(800);
        assertThat(s.sent(1)).isEqualTo(200);
    }

    /** [MP-014] a retransmission avoids the path of the lost transmission. */
    @Test
    void retransmissionTakesTheHeaviestOtherPath() {
        // [REL-033] a retransmission uses another path than the lost transmission.
        final PathSelector s = new PathSelector(FOUR);
        s.onLoss(0, 0);
        s.onTrim(0, 1);
        assertThat(s.forRetransmission(0, 0)).isEqualTo(2);
        assertThat(s.forRetransmission(0, 2)).isEqualTo(3);
        assertThat(new PathSelector(new int[] {9}).forRetransmission(0, 0)).isZero();
    }

    /** [MP-009] ECN penalties at most once per path SRTT. */
    @Test
    void ecnPenaltyAtMostOncePerSrtt() {
        final PathSelector s = new PathSelector(FOUR);
        s.onFeedback(0, 0, 10_000, false);
        s.onFeedback(100, 0, 0, true);
        s.onFeedback(200, 0, 0, true);
        assertThat(s.weight(0)).isCloseTo(0.875, within(1e-3));
        assertThat(s.ecnEchoes(0)).isEqualTo(2);
    }

    /** [MP-019] the median ignores one congested path. */
    @Test
    void medianIsRobustToOneSlowPath() {
        final PathSelector s = new PathSelector(FOUR);
        s.onFeedback(0, 0, 10_000, false);
        s.onFeedback(0, 1, 11_000, false);
        s.onFeedback(0, 2, 12_000, false);
        s.onFeedback(0, 3, 900_000, false);
        assertThat(s.medianSrttNs()).isEqualTo(12_000);
    }

    /** [MP-020] bursts keep a path for several packets, and the shares still follow the rotation. */
    @Test
    void burstSprayingKeepsAPathForABurst() {
        final PathSelector s = new PathSelector(FOUR, 4);
        for (int i = 0; i < 64; i++) {
            assertThat(s.next(i)).as("packet %d", i).isEqualTo((i / 4) % 4);
        }
        for (int p = 0; p < 4; p++) {
            assertThat(s.sent(p)).isEqualTo(16);
        }
    }

    /**
     * [MP-023] with burst spraying an ACK follows the requester's latest new packet once per new
     * packet, without advancing the responder's sequence; with no new packet since, it takes the
     * responder's sequence (MP-022).
     */
    @Test
    void anAckFollowsTheLatestRequestOncePerRequest() {
        final PathSelector s = new PathSelector(FOUR, 4);
        // Ping-pong: each reply is followed by the ACK of the request it answers.
        for (int i = 0; i < 8; i++) {
            final int reply = s.next(i);
            assertThat(s.nextForAck(i)).as("ACK %d", i).isEqualTo(reply);
        }
        // The requester falls silent: ACKs go back to the responder's own rotation, from its start.
        assertThat(s.nextForAck(100)).isEqualTo(0);
        assertThat(s.nextForAck(101)).isEqualTo(1);
        assertThat(s.nextForAck(102)).isEqualTo(2);
        // One new packet lets exactly one ACK follow it.
        final int request = s.next(103);
        assertThat(s.nextForAck(104)).isEqualTo(request);
        assertThat(s.nextForAck(105)).isEqualTo(3);
    }

    /** [MP-023] applies to burst spraying only: with per-packet spraying ACKs keep MP-022's sequence. */
    @Test
    void perPacketSprayingAcksKeepTheirOwnSequence() {
        final PathSelector s = new PathSelector(FOUR);
        for (int i = 0; i < 8; i++) {
            assertThat(s.next(i)).isEqualTo(i % 4);
            assertThat(s.nextForAck(i)).isEqualTo(i % 4);
        }
        final PathSelector t = new PathSelector(FOUR);
        t.next(0);
        t.next(1);
        assertThat(t.nextForAck(2)).as("not the request's path 1").isEqualTo(0);
    }
}
