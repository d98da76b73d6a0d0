// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.engine;

import org.metaroce.core.reliability.Psn;

/**
 * Tells whether an ACK says the responder still lacks a PSN the requester took as received, and
 * was generated after the requester took it so [REL-068]. A responder never takes back a PSN it
 * has acknowledged [REL-005], so its Cumulative PSN, the first PSN it lacks, never again equals one
 * it has reported received. An ACK generated before that report may still say so (ACKs are
 * reordered, READ responses overtake them): the echo tells the two apart. It names a transmission
 * of this requester; one that left after the requester took the PSN as received reached the
 * responder after the responder had reported the PSN, so the ACK it triggered carries the
 * responder's state from after the report.
 *
 * <p>It reads the {@link Scoreboard}'s records (when each PSN was sent and resolved) and the
 * {@link SendWindow}; it owns only the time and PSN field of the latest KEEPALIVE, whose answers
 * echo it.
 */
final class DeliveryContradiction {
    private final SendWindow sendWindow;
    private final Scoreboard scoreboard;
    private int probePsn;
    private long probeSentNs = Long.MIN_VALUE;

    DeliveryContradiction(final SendWindow sendWindow, final Scoreboard scoreboard) {
        this.sendWindow = sendWindow;
        this.scoreboard = scoreboard;
    }

    /** Called on RTR→RTS: no KEEPALIVE of the new connection has been sent. */
    void start() {
        probeSentNs = Long.MIN_VALUE;
    }

    /** A KEEPALIVE with PSN field {@code psn} left at {@code nowNs}. */
    void onProbeSent(final long nowNs, final int psn) {
        probePsn = psn;
        probeSentNs = nowNs;
    }

    /**
     * @param cumulative the ACK's Cumulative PSN
     * @param trigger its triggering PSN (Base Header)
     * @param echo its Echoed Timestamp
     * @return whether the ACK contradicts a delivery the requester already took [REL-068]
     */
    boolean contradicts(final int cumulative, final int trigger, final int echo) {
        if (!recorded(cumulative)) {
            return false;
        }
        final boolean takenAsReceived = Psn.before(cumulative, sendWindow.sndUna())
            || scoreboard.state(cumulative) == Scoreboard.DELIVERED;
        if (!takenAsReceived) {
            return false;
        }
        final long resolvedNs = scoreboard.resolvedNs(cumulative);
        if (recorded(trigger) && (int) scoreboard.sentNs(trigger) == echo && scoreboard.sentNs(trigger) > resolvedNs) {
            return true;
        }
        return trigger == probePsn && probeSentNs > resolvedNs && (int) probeSentNs == echo;
    }

    /** @return whether {@code psn} was sent and its slot still holds its record (within one window of the next PSN) */
    boolean recorded(final int psn) {
        return Psn.before(psn, sendWindow.sndNxt()) && sendWindow.sndNxt() - psn <= scoreboard.capacity();
    }
}
