// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.metaroce.core.engine.Scoreboard.DELIVERED;
import static org.metaroce.core.engine.Scoreboard.FREE;
import static org.metaroce.core.engine.Scoreboard.IN_FLIGHT;
import static org.metaroce.core.engine.Scoreboard.KIND_DATA;
import static org.metaroce.core.engine.Scoreboard.KIND_READ;
import static org.metaroce.core.engine.Scoreboard.LOST;
import static org.metaroce.core.engine.Scoreboard.RNR_WAIT;

import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The requester's per-PSN scoreboard on its own: each legal transition and the counts after it,
 * illegal ones rejected with the PSN and both states, and the counts balanced over random runs
 * [REL-017, REL-023, REL-034, REL-039, REL-059, REL-061].
 */
class ScoreboardTest {
    private static final int CAPACITY = 64;
    /** Just before the PSN wrap, so that masking and the messages are checked across it. */
    private static final int BASE = 0xFFFF_FFF0;

    private static void assertCounts(final Scoreboard sb, final int inFlight, final int lost, final int rnrWait) {
        assertThat(sb.inFlight()).as("in flight").isEqualTo(inFlight);
        assertThat(sb.lostCount()).as("lost").isEqualTo(lost);
        assertThat(sb.rnrWaitCount()).as("waiting RNR").isEqualTo(rnrWait);
    }

    @Test
    void aPacketIsSentLostResentAndDeliveredWithTheCountsFollowing() {
        final Scoreboard sb = new Scoreboard(CAPACITY);
        final int psn = BASE + 3;
        sb.assign(psn, 7, 2, KIND_DATA);
        assertThat(sb.state(psn)).isEqualTo(FREE);
        assertThat(sb.wqe(psn)).isEqualTo(7);
        assertThat(sb.index(psn)).isEqualTo(2);
        assertThat(sb.transmissions(psn)).isZero();
        assertCounts(sb, 0, 0, 0);

        sb.sent(psn, 1_000, 0, 3, false);
        assertThat(sb.state(psn)).isEqualTo(IN_FLIGHT);
        assertThat(sb.isOutstanding(psn)).isTrue();
        assertThat(sb.transmissions(psn)).isEqualTo(1);
        assertThat(sb.firstSentNs(psn)).isEqualTo(1_000);
        assertThat(sb.sentNs(psn)).isEqualTo(1_000);
        assertThat(sb.path(psn)).isEqualTo((short) 3);
        assertThat(sb.retransmittedOutstanding()).isZero();
        assertCounts(sb, 1, 0, 0);

        sb.lost(psn, EndpointCounter.RETRANSMITS_LOSS_DETECTED);
        assertThat(sb.state(psn)).isEqualTo(LOST);
        assertThat(sb.lossCause(psn)).isEqualTo(EndpointCounter.RETRANSMITS_LOSS_DETECTED);
        // A lost packet no longer counts as in flight [REL-034].
        assertCounts(sb, 0, 1, 0);

        sb.sent(psn, 5_000, 1, 1, true);
        assertThat(sb.state(psn)).isEqualTo(IN_FLIGHT);
        assertThat(sb.transmissions(psn)).isEqualTo(2);
        assertThat(sb.firstSentNs(psn)).as("the first transmission stays the first [REL-030]").isEqualTo(1_000);
        assertThat(sb.sentNs(psn)).isEqualTo(5_000);
        assertThat(sb.txSeq(psn)).isEqualTo(1);
        assertThat(sb.isProbeTwin(psn)).isTrue();
        assertThat(sb.retransmittedOutstanding()).isEqualTo(1);
        assertCounts(sb, 1, 0, 0);

        sb.delivered(psn, 0L);
        assertThat(sb.state(psn)).isEqualTo(DELIVERED);
        assertThat(sb.isOutstanding(psn)).isFalse();
        assertThat(sb.retransmittedOutstanding()).isZero();
        assertCounts(sb, 0, 0, 0);

        sb.free(psn);
        assertThat(sb.state(psn)).isEqualTo(FREE);
        // The record stays until the PSN one window later reuses the slot [REL-064].
        assertThat(sb.transmissions(psn)).isEqualTo(2);
        assertThat(sb.transmissions(psn + CAPACITY)).as("same slot").isEqualTo(2);
        assertCounts(sb, 0, 0, 0);
    }

    @Test
    void rnrWaitIsNeitherInFlightNorLostAndEndsLostOrDelivered() {
        final Scoreboard sb = new Scoreboard(CAPACITY);
        sb.assign(BASE, 1, 0, KIND_DATA);
        sb.assign(BASE + 1, 1, 1, KIND_DATA);
        sb.sent(BASE, 10, 0, 0, false);
        sb.sent(BASE + 1, 10, 1, 0, false);
        assertCounts(sb, 2, 0, 0);

        // From IN_FLIGHT and from LOST [REL-039].
        sb.heldForRnr(BASE);
        sb.lost(BASE + 1, EndpointCounter.RETRANSMITS_LOSS_DETECTED);
        assertCounts(sb, 0, 1, 1);
        sb.heldForRnr(BASE + 1);
        assertThat(sb.state(BASE)).isEqualTo(RNR_WAIT);
        assertThat(sb.state(BASE + 1)).isEqualTo(RNR_WAIT);
        assertThat(sb.isOutstanding(BASE)).isTrue();
        assertCounts(sb, 0, 0, 2);

        // The RNR delay ends: lost, to be sent again; or an ACK delivers it meanwhile.
        sb.lost(BASE, EndpointCounter.RETRANSMITS_RNR);
        assertCounts(sb, 0, 1, 1);
        sb.delivered(BASE + 1, 0L);
        assertCounts(sb, 0, 1, 0);
        sb.rnrRetransmitted(BASE);
        sb.sent(BASE, 20, 2, 0, false);
        assertThat(sb.rnrRetransmissions(BASE)).isEqualTo(1);
        assertCounts(sb, 1, 0, 0);
        // LOST -> DELIVERED too: the original arrived after all.
        sb.lost(BASE, EndpointCounter.RETRANSMITS_TIMEOUT);
        sb.delivered(BASE, 0L);
        assertCounts(sb, 0, 0, 0);
    }

    @Test
    void aReadRequestCoversItsResponseSlotsWithItsOwnTransmission() {
        final Scoreboard sb = new Scoreboard(CAPACITY);
        for (int i = 0; i < 4; i++) {
            sb.assign(BASE + 14 + i, 9, i, KIND_READ); // across the PSN wrap
        }
        sb.sent(BASE + 14, 500, 42, 2, false);
        for (int i = 1; i < 4; i++) {
            sb.sentWith(BASE + 14 + i, BASE + 14);
            assertThat(sb.sentNs(BASE + 14 + i)).isEqualTo(500);
            assertThat(sb.firstSentNs(BASE + 14 + i)).isEqualTo(500);
            assertThat(sb.txSeq(BASE + 14 + i)).isEqualTo(42);
            assertThat(sb.path(BASE + 14 + i)).isEqualTo((short) 2);
            assertThat(sb.transmissions(BASE + 14 + i)).isEqualTo(1);
        }
        assertCounts(sb, 4, 0, 0);

        // Two responses lost: one re-request covers both [REL-046].
        sb.lost(BASE + 16, EndpointCounter.RETRANSMITS_TAIL_PROBE);
        sb.lost(BASE + 17, EndpointCounter.RETRANSMITS_TAIL_PROBE);
        assertCounts(sb, 2, 2, 0);
        sb.sent(BASE + 16, 900, 43, 1, false);
        sb.sentWith(BASE + 17, BASE + 16);
        assertThat(sb.firstSentNs(BASE + 17)).isEqualTo(500);
        assertThat(sb.sentNs(BASE + 17)).isEqualTo(900);
        assertThat(sb.txSeq(BASE + 17)).isEqualTo(43);
        assertThat(sb.transmissions(BASE + 17)).isEqualTo(2);
        assertThat(sb.retransmittedOutstanding()).isEqualTo(2);
        assertCounts(sb, 4, 0, 0);
    }

    @Test
    void aLostReadRequestTakesTheSlotsItsTransmissionCoversAndNoOthers() {
        final Scoreboard sb = new Scoreboard(CAPACITY);
        // READ 9: slots BASE+14..17 requested by one transmission, BASE+18 by a later one; then a
        // WRITE at BASE+19. Across the PSN wrap.
        for (int i = 0; i < 5; i++) {
            sb.assign(BASE + 14 + i, 9, i, KIND_READ);
        }
        sb.assign(BASE + 19, 10, 0, KIND_DATA);
        sb.sent(BASE + 14, 500, 42, 2, false);
        for (int i = 1; i < 4; i++) {
            sb.sentWith(BASE + 14 + i, BASE + 14);
        }
        sb.sent(BASE + 18, 600, 43, 2, false);
        sb.sent(BASE + 19, 700, 44, 2, false);
        sb.delivered(BASE + 16, 0L);

        // The run stops at the answered slot: one re-request covers BASE+14..15 [REL-046].
        sb.lostWithRequest(BASE + 14, EndpointCounter.RETRANSMITS_TIMEOUT, BASE + 20);
        assertThat(sb.state(BASE + 14)).isEqualTo(LOST);
        assertThat(sb.state(BASE + 15)).isEqualTo(LOST);
        assertThat(sb.lossCause(BASE + 15)).isEqualTo(EndpointCounter.RETRANSMITS_TIMEOUT);
        assertThat(sb.state(BASE + 17)).isEqualTo(IN_FLIGHT);
        assertCounts(sb, 3, 2, 0);

        // A slot of another transmission of the same READ, and a WRITE, are lost alone.
        sb.lostWithRequest(BASE + 17, EndpointCounter.RETRANSMITS_TAIL_PROBE, BASE + 20);
        assertThat(sb.state(BASE + 18)).isEqualTo(IN_FLIGHT);
        sb.lostWithRequest(BASE + 18, EndpointCounter.RETRANSMITS_TAIL_PROBE, BASE + 19);
        sb.lostWithRequest(BASE + 19, EndpointCounter.RETRANSMITS_TAIL_PROBE, BASE + 20);
        assertCounts(sb, 0, 5, 0);
    }

    @Test
    void aPsnWindowNackIsRecordedOnceAndClearedByLossOrDelivery() {
        final Scoreboard sb = new Scoreboard(CAPACITY);
        sb.assign(BASE, 1, 0, KIND_DATA);
        sb.assign(BASE + 1, 1, 1, KIND_DATA);
        sb.sent(BASE, 10, 0, 0, false);
        sb.sent(BASE + 1, 10, 1, 0, false);
        sb.windowNacked(BASE, 100);
        sb.windowNacked(BASE, 200); // further NACKs change nothing [REL-061]
        sb.windowNacked(BASE + 1, 300);
        assertThat(sb.windowNacked()).isEqualTo(2);
        assertThat(sb.isWindowNacked(BASE)).isTrue();
        assertThat(sb.windowNackCumulative(BASE)).isEqualTo(100);
        assertCounts(sb, 2, 0, 0);

        sb.lost(BASE, EndpointCounter.RETRANSMITS_PSN_WINDOW);
        assertThat(sb.isWindowNacked(BASE)).isFalse();
        sb.delivered(BASE + 1, 0L);
        assertThat(sb.windowNacked()).isZero();
    }

    @Test
    void clearFreesEverySlot() {
        final Scoreboard sb = new Scoreboard(CAPACITY);
        for (int i = 0; i < 4; i++) {
            sb.assign(BASE + i, 1, i, KIND_DATA);
            sb.sent(BASE + i, 10, i, 0, false);
        }
        sb.lost(BASE + 1, EndpointCounter.RETRANSMITS_TIMEOUT);
        sb.sent(BASE + 1, 20, 4, 0, false);
        sb.heldForRnr(BASE + 2);
        sb.windowNacked(BASE + 3, 0);
        sb.lost(BASE, EndpointCounter.RETRANSMITS_TIMEOUT);
        sb.clear();
        assertCounts(sb, 0, 0, 0);
        assertThat(sb.windowNacked()).isZero();
        assertThat(sb.retransmittedOutstanding()).isZero();
        for (int i = 0; i < CAPACITY; i++) {
            assertThat(sb.state(BASE + i)).isEqualTo(FREE);
        }
        sb.assign(BASE, 2, 0, KIND_DATA);
    }

    @Test
    void illegalTransitionsAreRejectedNamingThePsnAndBothStates() {
        final Scoreboard sb = new Scoreboard(CAPACITY);
        final int psn = BASE + 5; // 4294967285
        sb.assign(psn, 1, 0, KIND_DATA);

        // Delivering what was never sent.
        assertThatThrownBy(() -> sb.delivered(psn, 0L)).isInstanceOf(IllegalStateException.class)
            .hasMessageContaining("PSN 4294967285").hasMessageContaining("FREE -> DELIVERED")
            .hasMessageContaining("IN_FLIGHT, LOST or RNR_WAIT");
        // A packet in flight is not sent again without being declared lost first.
        sb.sent(psn, 10, 0, 0, false);
        assertThatThrownBy(() -> sb.sent(psn, 20, 1, 0, false)).isInstanceOf(IllegalStateException.class)
            .hasMessageContaining("PSN 4294967285").hasMessageContaining("IN_FLIGHT -> IN_FLIGHT")
            .hasMessageContaining("FREE or LOST");
        // Freeing before delivery, and reassigning a slot in use.
        assertThatThrownBy(() -> sb.free(psn)).isInstanceOf(IllegalStateException.class)
            .hasMessageContaining("IN_FLIGHT -> FREE");
        assertThatThrownBy(() -> sb.assign(psn + CAPACITY, 2, 0, KIND_DATA)).isInstanceOf(IllegalStateException.class)
            .hasMessageContaining("PSN 53").hasMessageContaining("IN_FLIGHT -> FREE (assign)");
        // Declaring lost twice, or a delivered packet lost.
        sb.lost(psn, EndpointCounter.RETRANSMITS_LOSS_DETECTED);
        assertThatThrownBy(() -> sb.lost(psn, EndpointCounter.RETRANSMITS_TIMEOUT))
            .isInstanceOf(IllegalStateException.class).hasMessageContaining("LOST -> LOST");
        assertThatThrownBy(() -> sb.windowNacked(psn, 0)).isInstanceOf(IllegalStateException.class)
            .hasMessageContaining("LOST -> IN_FLIGHT (windowNacked)");
        sb.delivered(psn, 0L);
        assertThatThrownBy(() -> sb.lost(psn, EndpointCounter.RETRANSMITS_TIMEOUT))
            .isInstanceOf(IllegalStateException.class).hasMessageContaining("PSN 4294967285")
            .hasMessageContaining("DELIVERED -> LOST").hasMessageContaining("IN_FLIGHT or RNR_WAIT");
        assertThatThrownBy(() -> sb.heldForRnr(psn)).isInstanceOf(IllegalStateException.class)
            .hasMessageContaining("DELIVERED -> RNR_WAIT");
        // A rejected move changes nothing.
        assertThat(sb.state(psn)).isEqualTo(DELIVERED);
        assertThat(sb.lossCause(psn)).isEqualTo(EndpointCounter.RETRANSMITS_LOSS_DETECTED);
        assertCounts(sb, 0, 0, 0);
    }

    @Test
    void theCountsMatchTheSlotsOverRandomLegalTransitions() {
        final long seed = Long.getLong("metaroce.scoreboard.seed", 0x5C0_12EL);
        System.out.println("ScoreboardTest seed=" + seed + " (-Dmetaroce.scoreboard.seed=" + seed + " repeats it)");
        final Random random = new Random(seed);
        final Scoreboard sb = new Scoreboard(CAPACITY);
        long txSeq = 0;
        int moves = 0;
        for (int step = 0; step < 200_000; step++) {
            final int psn = BASE + random.nextInt(CAPACITY);
            final int choice = random.nextInt(4);
            switch (sb.state(psn)) {
                case FREE -> {
                    sb.assign(psn, step, 0, choice == 0 ? KIND_READ : KIND_DATA);
                    sb.sent(psn, step, txSeq++, random.nextInt(4), random.nextInt(16) == 0);
                }
                case IN_FLIGHT -> {
                    switch (choice) {
                        case 0 -> sb.lost(psn, EndpointCounter.RETRANSMITS_LOSS_DETECTED);
                        case 1 -> sb.heldForRnr(psn);
                        case 2 -> sb.windowNacked(psn, step);
                        default -> sb.delivered(psn, 0L);
                    }
                }
                case LOST -> {
                    switch (choice) {
                        case 0 -> sb.heldForRnr(psn);
                        case 1 -> sb.delivered(psn, 0L);
                        default -> {
                            // Sent again, alone or with the next slot when that is lost too (a READ run).
                            sb.sent(psn, step, txSeq++, random.nextInt(4), false);
                            if (sb.state(psn + 1) == LOST) {
                                sb.sentWith(psn + 1, psn);
                            }
                        }
                    }
                }
                case RNR_WAIT -> {
                    if (choice < 2) {
                        sb.lost(psn, EndpointCounter.RETRANSMITS_RNR);
                    } else {
                        sb.delivered(psn, 0L);
                    }
                }
                case DELIVERED -> sb.free(psn);
                default -> throw new AssertionError("unknown state " + sb.state(psn));
            }
            if (random.nextInt(50_000) == 0) {
                sb.clear();
            }
            moves++;
            assertBalanced(sb, seed, step);
        }
        assertThat(moves).isEqualTo(200_000);
    }

    /**
     * The invariant the requester relies on: each count equals the slots in its state; the
     * PSN_WINDOW count equals the flagged slots, and the retransmitted count the outstanding slots
     * sent more than once.
     */
    private static void assertBalanced(final Scoreboard sb, final long seed, final int step) {
        int inFlight = 0;
        int lost = 0;
        int rnrWait = 0;
        int nacked = 0;
        int retransmitted = 0;
        for (int i = 0; i < CAPACITY; i++) {
            final int psn = BASE + i;
            switch (sb.state(psn)) {
                case IN_FLIGHT -> inFlight++;
                case LOST -> lost++;
                case RNR_WAIT -> rnrWait++;
                default -> {
                }
            }
            if (sb.isWindowNacked(psn)) {
                nacked++;
            }
            if (sb.isOutstanding(psn) && sb.transmissions(psn) > 1) {
                retransmitted++;
            }
        }
        if (sb.inFlight() != inFlight || sb.lostCount() != lost || sb.rnrWaitCount() != rnrWait
            || sb.windowNacked() != nacked || sb.retransmittedOutstanding() != retransmitted) {
            throw new AssertionError("seed " + seed + ", step " + step + ": counts " + sb.inFlight() + "/"
                + sb.lostCount() + "/" + sb.rnrWaitCount() + "/" + sb.windowNacked() + "/"
                + sb.retransmittedOutstanding() + ", slots " + inFlight + "/" + lost + "/" + rnrWait + "/" + nacked
                + "/" + retransmitted);
        }
    }
}
