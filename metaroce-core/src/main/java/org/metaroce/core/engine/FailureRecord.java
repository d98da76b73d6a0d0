// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.engine;

import java.util.List;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * Why a queue pair entered ERR by itself, and the events of its trace that led there: kept on the
 * (cold) failure path by the owning thread, read by any thread, so that an application reporting
 * a flushed completion can say what failed.
 */
final class FailureRecord {
    /** Events kept with a failure: enough to see the retransmissions and timer expiries that led to it. */
    static final int TRACE_EVENTS = 24;

    /** The first reason given, root cause first; volatile for the application thread that reads it. */
    private volatile String reason;
    /**
     * The records of {@link #TRACE_EVENTS} kept at the failure, put into words only when
     * {@link #trace()} is asked: formatting them on the failure path cost more than the rest of a
     * short-lived QP's work (a quarter of the engine fuzz target's time). Null until captured;
     * written once, after {@link #traceNs}, which a reader that sees it therefore sees too.
     */
    private volatile byte[] records;
    /** The time the trace's lines are relative to (written before {@link #records}). */
    private long traceNs;
    /** The lines, once made from {@link #records} (any thread may make them; they are equal). */
    private volatile List<String> lines;

    /** Keeps {@code why} unless a reason was kept before: the first one is the root cause. */
    void reason(final String why) {
        if (reason == null) {
            reason = why;
        }
    }

    /**
     * Copies this QP's last events out of the endpoint's trace before later events of other QPs
     * overwrite them.
     */
    void capture(final EventTrace trace, final int qpn, final long nowNs) {
        traceNs = nowNs;
        records = trace.copyLast(qpn, TRACE_EVENTS);
    }

    /** @return the first reason kept, or null */
    String reason() {
        return reason;
    }

    /** @return the captured events as lines, oldest first, relative to the capture; empty before it */
    List<String> trace() {
        List<String> made = lines;
        if (made == null) {
            final byte[] copied = records;
            if (copied == null) {
                return List.of();
            }
            made = EventTrace.describeAll(new UnsafeBuffer(copied), copied.length / EventTrace.RECORD_BYTES, traceNs);
            lines = made;
        }
        return made;
    }
}
