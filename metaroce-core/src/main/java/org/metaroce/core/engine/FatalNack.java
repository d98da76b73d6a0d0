// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.engine;

/**
 * The NACK that put a responder's queue pair in ERR, kept so that retransmissions of the offending
 * request are answered with it again, a bounded number of times, and a lost NACK still reaches the
 * requester [REL-052]. Kept apart from the responder because it outlives everything else the
 * responder holds: a flush drops the rest, and only this NACK may still leave.
 */
final class FatalNack {
    /** Answers to retransmissions at most; the requester's retries are bounded too, so is this. */
    static final int MAX_REPEATS = 8;

    /** The NACK reason code, 0 while the queue pair has not failed on a request. */
    private int reason;
    private int psn;
    private int repeats;

    /** Keeps the NACK the queue pair fails with: {@code reason} for the request at {@code psn}. */
    void set(final int reason, final int psn) {
        this.reason = reason;
        this.psn = psn;
        this.repeats = 0;
    }

    /** @return whether a request with {@code requestPsn}, received in ERR, gets the NACK again */
    boolean answersAgain(final int requestPsn) {
        return reason != 0 && requestPsn == psn && repeats < MAX_REPEATS;
    }

    /** Counts one more answer to a retransmission. */
    void repeated() {
        repeats++;
    }

    /** @return whether the queue pair failed on a request (and a NACK may still leave) */
    boolean isSet() {
        return reason != 0;
    }

    /** @return the NACK reason code, 0 when none */
    int reason() {
        return reason;
    }

    /** @return the NACK PSN */
    int psn() {
        return psn;
    }

    /** Forgets it (modify to RESET). */
    void clear() {
        reason = 0;
        repeats = 0;
    }
}
