// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.engine;

import org.metaroce.core.reliability.Psn;

/**
 * The requester's PSN window and the responder's credit (specification 6.2, 6.5): the oldest PSN
 * not yet resolved ({@code sndUna}), the next PSN to assign ({@code sndNxt}), and the latest
 * non-stale Cumulative PSN and Credit, the responder's admission limit [REL-019]. The requester's
 * emission moves {@code sndNxt}; its {@link ResponseHandler} moves {@code sndUna} and the credit;
 * both read all four. Plain values: the counts per PSN state are the {@link Scoreboard}'s.
 */
final class SendWindow {
    /** Credit assumed before the first ACK [REL-019]. */
    static final long INITIAL_CREDIT = 64;

    private int sndUna;
    private int sndNxt;
    private int creditCumulative;
    private long creditLimit = INITIAL_CREDIT;

    /** Called on RTR→RTS: nothing outstanding from {@code initialPsn}, the initial credit. */
    void start(final int initialPsn) {
        sndUna = initialPsn;
        sndNxt = initialPsn;
        creditCumulative = initialPsn;
        creditLimit = INITIAL_CREDIT;
    }

    /** @return the oldest PSN not yet resolved (delivered, or failed by a flush) */
    int sndUna() {
        return sndUna;
    }

    /** @return the next PSN to assign */
    int sndNxt() {
        return sndNxt;
    }

    /** @return the Cumulative PSN of the latest non-stale ACK (the initial PSN before one) */
    int creditCumulative() {
        return creditCumulative;
    }

    /** @return the Credit of the latest non-stale ACK: PSNs from {@link #creditCumulative} the responder admits */
    long creditLimit() {
        return creditLimit;
    }

    /** @return whether {@code psn} is outstanding or resolved-but-unpassed: in [sndUna, sndNxt) */
    boolean contains(final int psn) {
        return Psn.beforeOrEqual(sndUna, psn) && Psn.before(psn, sndNxt);
    }

    /** {@code count} new PSNs were assigned. */
    void assigned(final int count) {
        sndNxt += count;
    }

    /** The oldest PSN was resolved: the window's start passes it. */
    void passOldest() {
        sndUna++;
    }

    /** A flush resolved everything: nothing is outstanding. */
    void flush() {
        sndUna = sndNxt;
    }

    /** Records a non-stale ACK's Cumulative PSN and Credit [REL-019]. */
    void credit(final int cumulative, final long limit) {
        creditCumulative = cumulative;
        creditLimit = limit;
    }
}
