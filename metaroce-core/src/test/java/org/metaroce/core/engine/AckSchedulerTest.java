// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.engine;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.metaroce.core.AllocationMeter;
import org.metaroce.core.wire.AckHeader;
import org.metaroce.core.wire.Flags;
import org.metaroce.core.wire.NackReason;

/**
 * The responder's acknowledgement schedule on its own: each rule of specification 6.4.1 — the
 * immediate triggers [REL-008], the packet-count and delay limits [REL-009], the own queue of
 * ACKs and NACKs with their own trigger and its overflow [REL-010], the choice of trigger with and
 * without ACK_REQ [REL-011] — and the arrival times ACK Delay runs from [REL-066]; and that none of
 * it allocates, since it runs for every packet.
 */
class AckSchedulerTest {
    private static final int EVERY = 4;
    private static final long DELAY = 10_000;
    /** Just before the PSN wrap. */
    private static final int BASE = 0xFFFF_FFFE;

    private static AckScheduler scheduler() {
        return new AckScheduler(new EndpointConfig().receiveWindowPackets(64).ackCoalescePackets(EVERY)
            .ackCoalesceDelayNs(DELAY));
    }

    /** An in-order new packet: no gap before or after it, credit left. */
    private static void inOrder(final AckScheduler s, final long nowNs, final int psn, final int flags) {
        s.accepted(nowNs, psn, flags, 1000 + psn, psn & 7, nowNs - 5, false, 0, false, false, false);
    }

    private static void assertDueAtOnce(final AckScheduler s, final long nowNs) {
        assertThat(s.ackPending()).isTrue();
        assertThat(s.ackDue(nowNs)).isTrue();
        assertThat(s.ackDeadlineNs()).isEqualTo(Long.MIN_VALUE);
    }

    private static void assertWaitsUntil(final AckScheduler s, final long deadlineNs) {
        assertThat(s.ackPending()).isTrue();
        assertThat(s.ackDeadlineNs()).isEqualTo(deadlineNs);
        assertThat(s.ackDue(deadlineNs - 1)).isFalse();
        assertThat(s.ackDue(deadlineNs)).isTrue();
    }

    @Test
    void nothingIsPendingAtFirst() {
        final AckScheduler s = scheduler();
        assertThat(s.ackPending()).isFalse();
        assertThat(s.ackDue(Long.MAX_VALUE)).isFalse();
        assertThat(s.ackDeadlineNs()).isEqualTo(Long.MAX_VALUE);
        assertThat(s.hasOwn()).isFalse();
    }

    /**
     * A QP that flushed or was reset with an ACK pending whose trigger had ACK_REQ: the next
     * packet, of the QP's next life, becomes the trigger and waits its own delay (kept until the
     * scheduler was split out: the old trigger, PSN and echo of the previous life, stayed).
     */
    @Test
    void cancellingForgetsTheCountAndTheTriggerOfThePreviousLife() {
        final AckScheduler s = scheduler();
        inOrder(s, 100, BASE, Flags.ACK_REQ);
        inOrder(s, 110, BASE + 1, 0);
        s.cancelAck();
        assertThat(s.ackPending()).isFalse();
        assertThat(s.unackedPackets()).isZero();
        inOrder(s, 500, BASE + 7, 0);
        assertThat(s.triggerPsn()).isEqualTo(BASE + 7);
        assertThat(s.unackedPackets()).isEqualTo(1);
        assertWaitsUntil(s, 500 + DELAY);
    }

    @Test
    void aPlainInOrderPacketWaitsForTheDelay() {
        final AckScheduler s = scheduler();
        inOrder(s, 100, BASE, 0);
        assertWaitsUntil(s, 100 + DELAY);
        assertThat(s.unackedPackets()).isEqualTo(1);
    }

    @Test
    void ackReqIsAnsweredAtOnce() {
        final AckScheduler s = scheduler();
        inOrder(s, 100, BASE, Flags.ACK_REQ);
        assertDueAtOnce(s, 100);
    }

    @Test
    void lastIsAnsweredAtOnce() {
        final AckScheduler s = scheduler();
        inOrder(s, 100, BASE, Flags.LAST);
        assertDueAtOnce(s, 100);
    }

    @Test
    void aPacketThatCreatesOrExtendsAGapIsAnsweredAtOnce() {
        final AckScheduler s = scheduler();
        s.accepted(100, BASE + 3, 0, 0, 0, 100, false, 3, false, false, false);
        assertDueAtOnce(s, 100);
    }

    @Test
    void aPacketThatFillsAGapIsAnsweredAtOnce() {
        final AckScheduler s = scheduler();
        // In order (distance 0), but later PSNs had arrived: it advances ePSN over them.
        s.accepted(100, BASE, 0, 0, 0, 100, false, 0, true, false, false);
        assertDueAtOnce(s, 100);
    }

    @Test
    void aPacketThatUsesUpTheCreditIsAnsweredAtOnce() {
        final AckScheduler s = scheduler();
        s.accepted(100, BASE, 0, 0, 0, 100, false, 0, false, true, false);
        assertDueAtOnce(s, 100);
    }

    @Test
    void aDuplicateOfAHeldReadIsAnsweredAtOnceWithTheDuplicateFlag() {
        final AckScheduler s = scheduler();
        s.duplicateOfHeld(BASE, 0, 77, 3, 90, true);
        assertDueAtOnce(s, 100);
        assertThat(s.triggerPsn()).isEqualTo(BASE);
        assertThat(s.triggerAckFlags()).isEqualTo(AckHeader.FLAG_DUPLICATE | AckHeader.FLAG_ECN_ECHO);
    }

    @Test
    void ackFlagsEchoCongestionAndDuplicates() {
        assertThat(AckScheduler.ackFlags(false, false)).isZero();
        assertThat(AckScheduler.ackFlags(true, false)).isEqualTo(AckHeader.FLAG_ECN_ECHO);
        assertThat(AckScheduler.ackFlags(false, true)).isEqualTo(AckHeader.FLAG_DUPLICATE);
    }

    @Test
    void theAckIsDueAfterCoalescePacketsAcceptedPackets() {
        final AckScheduler s = scheduler();
        for (int i = 0; i < EVERY - 1; i++) {
            inOrder(s, 100 + i, BASE + i, 0);
            assertThat(s.ackDue(100 + i)).as("after %d packets", i + 1).isFalse();
        }
        inOrder(s, 100 + EVERY, BASE + EVERY - 1, 0);
        assertThat(s.unackedPackets()).isEqualTo(EVERY);
        assertDueAtOnce(s, 100 + EVERY);
    }

    @Test
    void theDelayRunsFromTheOldestUnacknowledgedPacket() {
        final AckScheduler s = scheduler();
        inOrder(s, 100, BASE, 0);
        inOrder(s, 5_000, BASE + 1, 0);
        inOrder(s, 9_000, BASE + 2, 0);
        // Later packets do not push the deadline back.
        assertWaitsUntil(s, 100 + DELAY);
    }

    @Test
    void aZeroDelayMeansEveryPacketIsAnsweredAtOnce() {
        final AckScheduler s = new AckScheduler(new EndpointConfig().ackCoalesceDelayNs(0));
        inOrder(s, 100, BASE, 0);
        assertDueAtOnce(s, 100);
    }

    @Test
    void sendingTheAckStartsAfresh() {
        final AckScheduler s = scheduler();
        inOrder(s, 100, BASE, Flags.ACK_REQ);
        inOrder(s, 200, BASE + 1, 0);
        s.ackSent();
        assertThat(s.ackPending()).isFalse();
        assertThat(s.ackDue(Long.MAX_VALUE)).isFalse();
        assertThat(s.ackDeadlineNs()).isEqualTo(Long.MAX_VALUE);
        assertThat(s.unackedPackets()).isZero();

        // A new count, a new deadline, and the ACK_REQ trigger no longer holds.
        inOrder(s, 20_000, BASE + 2, 0);
        assertWaitsUntil(s, 20_000 + DELAY);
        assertThat(s.unackedPackets()).isEqualTo(1);
        assertThat(s.triggerPsn()).isEqualTo(BASE + 2);
    }

    @Test
    void withoutAckReqTheTriggerIsTheLatestPacket() {
        final AckScheduler s = scheduler();
        s.accepted(100, BASE, 0, 11, 1, 95, false, 0, false, false, false);
        s.accepted(200, BASE + 1, 0, 22, 2, 195, true, 0, false, false, false);
        assertThat(s.triggerPsn()).isEqualTo(BASE + 1);
        assertThat(s.triggerTimestamp()).isEqualTo(22);
        assertThat(s.triggerPathId()).isEqualTo(2);
        assertThat(s.triggerArrivalNs()).as("ACK Delay runs from the arrival passed in [REL-066]").isEqualTo(195);
        assertThat(s.triggerAckFlags()).isEqualTo(AckHeader.FLAG_ECN_ECHO);
    }

    @Test
    void withAckReqTheTriggerIsTheLatestPacketWithAckReq() {
        final AckScheduler s = scheduler();
        s.accepted(100, BASE, 0, 11, 1, 95, false, 0, false, false, false);
        s.accepted(200, BASE + 1, Flags.ACK_REQ, 22, 2, 195, false, 0, false, false, false);
        s.accepted(300, BASE + 2, 0, 33, 3, 295, true, 0, false, false, false);
        assertThat(s.triggerPsn()).isEqualTo(BASE + 1);
        assertThat(s.triggerTimestamp()).isEqualTo(22);
        assertThat(s.triggerPathId()).isEqualTo(2);
        assertThat(s.triggerArrivalNs()).isEqualTo(195);
        assertThat(s.triggerAckFlags()).isZero();

        // A later packet with ACK_REQ takes over.
        s.accepted(400, BASE + 3, Flags.ACK_REQ, 44, 4, 395, false, 0, false, false, false);
        assertThat(s.triggerPsn()).isEqualTo(BASE + 3);
        assertThat(s.triggerArrivalNs()).isEqualTo(395);
        assertThat(s.unackedPackets()).isEqualTo(4);
    }

    @Test
    void aReadRequestWaitsForTheDelayUnlessItTouchesAGap() {
        final AckScheduler s = scheduler();
        // ACK_REQ and LAST do not hurry the ACK of a READ: its responses answer it.
        s.acceptedRead(100, BASE, Flags.ACK_REQ | Flags.LAST, 5, 1, 90, false, false, 0, false);
        assertWaitsUntil(s, 100 + DELAY);
        assertThat(s.triggerPsn()).isEqualTo(BASE);

        final AckScheduler gap = scheduler();
        gap.acceptedRead(100, BASE + 2, 0, 5, 1, 90, false, false, 2, false);
        assertDueAtOnce(gap, 100);
        final AckScheduler fill = scheduler();
        fill.acceptedRead(100, BASE, 0, 5, 1, 90, false, true, 0, true);
        assertDueAtOnce(fill, 100);
        assertThat(fill.triggerAckFlags()).as("a repeated READ").isEqualTo(AckHeader.FLAG_DUPLICATE);
    }

    @Test
    void cancellingDropsThePendingAck() {
        final AckScheduler s = scheduler();
        inOrder(s, 100, BASE, Flags.ACK_REQ);
        s.cancelAck();
        assertThat(s.ackPending()).isFalse();
        assertThat(s.ackDue(Long.MAX_VALUE)).isFalse();
        assertThat(s.ackDeadlineNs()).isEqualTo(Long.MAX_VALUE);
    }

    @Test
    void ownAcknowledgementsLeaveInOrderWithTheirOwnTriggers() {
        final AckScheduler s = scheduler();
        s.queue(0, 0, 0, BASE + 70, 700, 5, 1_000, AckScheduler.ackFlags(false, false));
        s.queue(NackReason.RNR.code(), BASE + 1, 12, BASE + 1, 100, 6, 2_000, AckScheduler.ackFlags(true, true));
        // Own acknowledgements do not touch the coalesced one.
        assertThat(s.ackPending()).isFalse();
        assertThat(s.ownCount()).isEqualTo(2);

        assertThat(s.hasOwn()).isTrue();
        assertThat(s.ownReason()).isZero();
        assertThat(s.ownTriggerPsn()).isEqualTo(BASE + 70);
        assertThat(s.ownTimestamp()).isEqualTo(700);
        assertThat(s.ownPathId()).isEqualTo(5);
        assertThat(s.ownArrivalNs()).isEqualTo(1_000);
        assertThat(s.ownAckFlags()).isZero();
        s.ownSent();

        assertThat(s.ownReason()).isEqualTo(NackReason.RNR.code());
        assertThat(s.ownNackPsn()).isEqualTo(BASE + 1);
        assertThat(s.ownRnrUnits()).isEqualTo(12);
        assertThat(s.ownTriggerPsn()).isEqualTo(BASE + 1);
        assertThat(s.ownTimestamp()).isEqualTo(100);
        assertThat(s.ownPathId()).isEqualTo(6);
        assertThat(s.ownArrivalNs()).isEqualTo(2_000);
        assertThat(s.ownAckFlags()).isEqualTo(AckHeader.FLAG_ECN_ECHO | AckHeader.FLAG_DUPLICATE);
        s.ownSent();
        assertThat(s.hasOwn()).isFalse();
    }

    @Test
    void aFullOwnQueueDropsItsOldestEntry() {
        final AckScheduler s = scheduler();
        final int capacity = s.ownCapacity();
        assertThat(capacity).as("sized to the receive window, at least 64").isEqualTo(64);
        // Two rounds past full, so that the ring also wraps after some have left.
        s.queue(0, 0, 0, -1, 0, 0, 0, 0);
        s.ownSent();
        for (int i = 0; i < capacity + 2; i++) {
            s.queue(0, 0, 0, BASE + i, i, 0, i, 0);
        }
        assertThat(s.ownCount()).isEqualTo(capacity);
        for (int i = 2; i < capacity + 2; i++) {
            assertThat(s.ownTriggerPsn()).isEqualTo(BASE + i);
            assertThat(s.ownArrivalNs()).isEqualTo(i);
            s.ownSent();
        }
        assertThat(s.hasOwn()).isFalse();
    }

    @Test
    void keepOnlyLatestLeavesTheLatestEntryWithTheReason() {
        final AckScheduler s = scheduler();
        final int fatal = NackReason.REMOTE_ACCESS.code();
        s.queue(fatal, BASE, 0, BASE, 0, 0, 1, 0);
        s.queue(0, 0, 0, BASE + 1, 0, 0, 2, 0);
        s.queue(fatal, BASE, 0, BASE, 0, 0, 3, 0);
        s.queue(0, 0, 0, BASE + 2, 0, 0, 4, 0);
        s.keepOnlyLatest(fatal);
        assertThat(s.ownCount()).isEqualTo(1);
        assertThat(s.ownReason()).isEqualTo(fatal);
        assertThat(s.ownArrivalNs()).isEqualTo(3);

        s.keepOnlyLatest(NackReason.RNR.code());
        assertThat(s.hasOwn()).isFalse();

        s.queue(0, 0, 0, BASE, 0, 0, 5, 0);
        s.clearOwn();
        assertThat(s.hasOwn()).isFalse();
    }

    @Test
    void theDataPathDoesNotAllocate() {
        final AckScheduler s = scheduler();
        final long[] sink = new long[1];
        final int rounds = 200_000;
        final AllocationMeter.Measurement m = AllocationMeter.fewestBytes(rounds, i -> exercise(s, i, sink));
        assertThat(m.fewest()).as("bytes allocated by %d rounds of calls: %s", rounds, m).isZero();
        assertThat(sink[0]).isNotZero();
    }

    /** One packet's worth of calls: accept or queue, ask what is due, write it out. */
    private static void exercise(final AckScheduler s, final int i, final long[] sink) {
        final long now = 1_000L * i;
        if ((i & 7) == 0) {
            s.queue(i & 3, i, 0, i, i, i & 7, now, AckScheduler.ackFlags((i & 16) == 0, (i & 32) == 0));
        } else if ((i & 7) == 1) {
            s.acceptedRead(now, i, 0, i, 1, now, false, false, 0, false);
        } else {
            s.accepted(now, i, (i & 15) == 3 ? Flags.ACK_REQ : 0, i, 2, now, false, (i & 31) == 5 ? 2 : 0,
                false, false, false);
        }
        long acc = s.ackDeadlineNs();
        while (s.hasOwn()) {
            acc += s.ownTriggerPsn() + s.ownArrivalNs() + s.ownReason() + s.ownAckFlags();
            s.ownSent();
        }
        if (s.ackDue(now)) {
            acc += s.triggerPsn() + s.triggerArrivalNs() + s.triggerAckFlags();
            s.ackSent();
        }
        sink[0] += acc;
    }
}
