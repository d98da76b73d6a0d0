// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.engine;

/**
 * How the requester's parts hand a loss or a path's feedback to the queue pair's congestion
 * control and path selector, and trace what a signal shrank: a congestion window
 * ({@link TraceEvent#CWND_REDUCED}) or a path's weight ({@link TraceEvent#PATH_PENALTY}). Growth
 * is not traced: it happens on every ACK and would flood the trace ring.
 *
 * <p>The ACK, NACK and timer paths of the requester all give such signals; this class is what
 * they share, so that none of them needs the others. It holds no state of its own.
 */
final class CongestionSignals {
    private final RequesterContext qp;

    CongestionSignals(final RequesterContext qp) {
        this.qp = qp;
    }

    /**
     * A loss to the congestion control; a window it shrinks goes to the trace.
     *
     * @param tracePsn the PSN the trace record names (the oldest outstanding)
     */
    void onLoss(final long nowNs, final int pathId, final boolean trimmed, final int tracePsn) {
        final int window = qp.congestionControl().windowPackets();
        qp.congestionControl().onLoss(nowNs, pathId, trimmed);
        traceWindow(nowNs, tracePsn, window, trimmed ? TraceEvent.CAUSE_TRIM : TraceEvent.CAUSE_LOSS);
    }

    /** A loss attributed to a path; the penalty goes to the trace. */
    void penalise(final long nowNs, final int pathId) {
        final double weight = weightOf(pathId);
        qp.paths().onLoss(nowNs, pathId);
        tracePenalty(nowNs, pathId, weight, TraceEvent.CAUSE_LOSS);
    }

    /**
     * Traces a window a congestion signal shrank from {@code before}.
     *
     * @param psn the PSN the trace record names (the oldest outstanding)
     */
    void traceWindow(final long nowNs, final int psn, final int before, final int cause) {
        final int after = qp.congestionControl().windowPackets();
        if (after < before) {
            qp.trace(nowNs, TraceEvent.CWND_REDUCED, psn, before, after, cause);
        }
    }

    /** Traces a path whose weight a signal lowered from {@code before}. */
    void tracePenalty(final long nowNs, final int pathId, final double before, final int cause) {
        final double after = weightOf(pathId);
        if (after < before) {
            qp.trace(nowNs, TraceEvent.PATH_PENALTY, 0, pathId, (int) Math.round(after * 1000), cause);
        }
    }

    /** @return a path's weight, 1 for an id the selector does not know (it ignores signals about those) */
    double weightOf(final int pathId) {
        return pathId >= 0 && pathId < qp.paths().pathCount() ? qp.paths().weight(pathId) : 1.0;
    }
}
