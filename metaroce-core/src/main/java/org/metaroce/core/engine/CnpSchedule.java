// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.engine;

/**
 * When a responder sends a CNP [CC-020]: for a CE-marked request of a queue pair with ECN, unless
 * one is already waiting or one left within CNP_INTERVAL, so that a burst of marked packets costs
 * the requester one rate cut per interval. At most one CNP waits, carrying the PSN of the packet
 * that caused it.
 */
final class CnpSchedule {
    private boolean pending;
    private int psn;
    /** When the latest CNP was scheduled, MIN_VALUE before any: the interval runs from there. */
    private long lastNs = Long.MIN_VALUE;

    /**
     * A CE-marked request with {@code markedPsn} arrived at {@code nowNs}.
     *
     * @param intervalNs CNP_INTERVAL, read from the endpoint's configuration at each packet
     */
    void marked(final long nowNs, final int markedPsn, final long intervalNs) {
        if (pending || (lastNs != Long.MIN_VALUE && nowNs - lastNs < intervalNs)) {
            return;
        }
        pending = true;
        psn = markedPsn;
        lastNs = nowNs;
    }

    /** @return whether a CNP waits to be sent */
    boolean isPending() {
        return pending;
    }

    /** @return the PSN the waiting CNP carries */
    int psn() {
        return psn;
    }

    /** The waiting CNP left, or is dropped (flush to ERR); the interval still runs. */
    void done() {
        pending = false;
    }

    /** Forgets everything (modify to RESET): the next marked packet gets a CNP at once. */
    void reset() {
        pending = false;
        lastNs = Long.MIN_VALUE;
    }
}
