// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.engine;

import org.metaroce.core.reliability.Psn;

/**
 * The asking tail probe [REL-069]: a KEEPALIVE with ACK_REQ sent in place of a copy as the first
 * probe of an episode, and what its answer proves. A requester whose answers stop cannot tell a
 * lost tail from a peer that paused (descheduled, collecting garbage, a cold JIT); a copy repairs
 * the first at once but arrives twice in the second, which on a path that loses nothing is every
 * time. The answer to the question — the responder's state when the KEEPALIVE reached it [CM-028] —
 * tells them apart one round trip later: everything sent well before the KEEPALIVE that the answer
 * does not show received was lost, and a paused peer's answer shows it all received.
 *
 * <p>It holds the one open question (the KEEPALIVE's PSN field, Transmit Timestamp and send time)
 * and, when an ACK answers it, marks in the {@link Scoreboard} what the answer proves lost. Primitive
 * fields only: nothing is allocated per probe or per ACK.
 */
final class AskingProbe {
    /** PSNs the SACK bitmap reports after the Cumulative PSN [WIRE-060]: beyond them an answer says nothing. */
    private static final int REPORTED_AFTER_CUMULATIVE = 64;

    private final Scoreboard scoreboard;
    private final LossDetector.Losses losses;
    private boolean open;
    private int psn;
    private int timestamp;
    private long sentNs;
    /**
     * The requester's latest transmission before the first question of the series still open: an
     * answer that proves nothing lost shows the peer's answers took this long since [REL-065].
     */
    private long tailSentNs;
    /** READ or atomic slots the latest answer reported requested but that still await their responses. */
    private int awaitingResponses;

    /**
     * @param scoreboard the requester's scoreboard, where proven losses are marked
     * @param losses where a proven loss of a request packet goes (its path and congestion control learn of it)
     */
    AskingProbe(final Scoreboard scoreboard, final LossDetector.Losses losses) {
        this.scoreboard = scoreboard;
        this.losses = losses;
    }

    /**
     * A KEEPALIVE with ACK_REQ and PSN field {@code nextPsn} left at {@code nowNs} as the asking
     * probe; it replaces an unanswered one (the later question's answer tells the same and more).
     *
     * @param lastTransmitNs the requester's latest transmission before it
     */
    void sent(final long nowNs, final int nextPsn, final long lastTransmitNs) {
        if (!open) {
            tailSentNs = lastTransmitNs;
        }
        open = true;
        psn = nextPsn;
        timestamp = (int) nowNs;
        sentNs = nowNs;
    }

    /** The queue pair was reset or flushed: no question is open. */
    void reset() {
        open = false;
    }

    /**
     * @return READ or atomic slots that the latest answer reported requested and that were still
     *     waiting for their responses ({@link #declareLosses})
     */
    int awaitingResponses() {
        return awaitingResponses;
    }

    /** @return the latest transmission before the first question of the series just answered */
    long tailSentNs() {
        return tailSentNs;
    }

    /**
     * @param trigger an ACK's triggering PSN (Base Header)
     * @param echoedTimestamp its Echoed Timestamp
     * @return whether the ACK answers the open question [CM-028]: its trigger is the KEEPALIVE's PSN
     *     field and its echo the KEEPALIVE's Transmit Timestamp. The question is closed then.
     */
    boolean answeredBy(final int trigger, final int echoedTimestamp) {
        if (!open || trigger != psn || echoedTimestamp != timestamp) {
            return false;
        }
        open = false;
        return true;
    }

    /**
     * Applies an answer, after its delivery information [REL-069]: every request packet still in
     * flight that was sent at least {@code reorderWindowNs} before the KEEPALIVE (so that it cannot
     * have been overtaken on another path) and that the answer could have reported — before the
     * KEEPALIVE's PSN field and within the SACK bitmap's reach — is lost: a WRITE or SEND packet the
     * answer neither covers nor SACKs, and a READ or atomic slot whose PSN the answer neither covers
     * nor SACKs. A slot the answer reports had its request delivered [REL-017]; its response is late,
     * not lost, and is left to the next probe.
     *
     * @param sndUna the oldest outstanding PSN
     * @param sndNxt the next PSN to send (the end of a READ's re-requested range)
     * @param cumulative the answer's Cumulative PSN
     * @param bitmap the answer's SACK bitmap
     * @param reorderWindowNs the current reorder window of time-based loss detection [REL-024]
     * @return packets declared lost
     */
    int declareLosses(final long nowNs, final int sndUna, final int sndNxt, final int cumulative, final long bitmap,
                      final long reorderWindowNs) {
        int end = psn;
        final int reach = cumulative + REPORTED_AFTER_CUMULATIVE + 1;
        if (Psn.before(reach, end)) {
            end = reach;
        }
        int lost = 0;
        awaitingResponses = 0;
        for (int p = sndUna; Psn.before(p, end); p++) {
            if (scoreboard.state(p) != Scoreboard.IN_FLIGHT || scoreboard.sentNs(p) > sentNs - reorderWindowNs) {
                continue;
            }
            if (scoreboard.kind(p) != Scoreboard.KIND_DATA && reported(p, cumulative, bitmap)) {
                awaitingResponses++;
                continue;
            }
            scoreboard.lostWithRequest(p, EndpointCounter.RETRANSMITS_TAIL_PROBE, sndNxt);
            losses.lostByTime(nowNs, p);
            lost++;
        }
        return lost;
    }

    /** @return whether an ACK with this Cumulative PSN and SACK bitmap reports {@code p} received [REL-017] */
    private static boolean reported(final int p, final int cumulative, final long bitmap) {
        if (Psn.before(p, cumulative)) {
            return true;
        }
        final int bit = p - cumulative - 1;
        return bit >= 0 && bit < REPORTED_AFTER_CUMULATIVE && (bitmap & (1L << bit)) != 0;
    }
}
