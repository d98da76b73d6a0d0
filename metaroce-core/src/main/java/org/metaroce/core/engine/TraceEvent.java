// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.engine;

import org.metaroce.core.verbs.QpState;

/**
 * What an {@link EventTrace} record says happened to a queue pair. Each record carries a PSN and
 * three arguments whose meaning depends on the event; {@link #describe} turns them into text.
 * Names are stable: tools print them.
 */
public enum TraceEvent {
    /** The QP moved to a state: a = the {@link QpState} ordinal, b = the async event ordinal when automatic (else -1). */
    STATE,
    /** A packet was retransmitted: a = the {@link EndpointCounter} ordinal of the cause, b = its transmissions, c = the congestion window. */
    RETRANSMIT,
    /** The retransmission timer expired: psn = oldest unacknowledged, a = consecutive expiries, b = packets in flight, c = the new RTO in ns. */
    RTO_EXPIRED,
    /** A tail-loss probe was sent: psn = the probed PSN, a = probes in this episode. */
    TAIL_PROBE,
    /** An RNR NACK was received: a = consecutive RNR episodes, c = the wait before resending, ns. */
    RNR_NACK,
    /** The peer stopped answering keepalives: a = probes sent, c = silence in ns. */
    PEER_DEAD,
    /** A work request failed: a = the {@code WcStatus} ordinal. */
    WR_FAILED,
    /** A congestion signal shrank the window: psn = oldest unacknowledged, a = before, b = after (packets), c = the cause ({@link #CAUSE_LOSS}...). */
    CWND_REDUCED,
    /** A path's weight dropped: a = the Path ID, b = its weight after, in thousandths, c = the cause. */
    PATH_PENALTY,
    /** A connection-manager event for the connection of this QP: a = the {@code CmEventType} ordinal, b = the reason code. */
    CM_EVENT;

    /** Cause of a window or path penalty: a loss (RACK, NACK, go-back-N). */
    public static final int CAUSE_LOSS = 0;
    /** Cause: a trimmed packet. */
    public static final int CAUSE_TRIM = 1;
    /** Cause: the retransmission timer. */
    public static final int CAUSE_RTO = 2;
    /** Cause: ECN marks or a CNP. */
    public static final int CAUSE_ECN = 3;
    /** Cause: RTT or ECN feedback about a path (slow or marked). */
    public static final int CAUSE_FEEDBACK = 4;
    private static final String[] CAUSES = {"loss", "trim", "RTO", "ECN", "slow or marked path"};
    private static final String[] CM_EVENTS = {"CONNECT_REQUEST", "ESTABLISHED", "REJECTED", "UNREACHABLE",
        "CONNECT_ERROR", "DISCONNECTED", "TIMEWAIT_EXIT"};

    private static final TraceEvent[] VALUES = values();
    private static final QpState[] STATES = QpState.values();
    private static final EndpointCounter[] COUNTERS = EndpointCounter.values();
    private static final AsyncEventType[] ASYNC = AsyncEventType.values();
    private static final org.metaroce.core.verbs.WcStatus[] STATUSES = org.metaroce.core.verbs.WcStatus.values();

    /**
     * @param ordinal a recorded ordinal
     * @return its event, or null for one this version does not know
     */
    public static TraceEvent ofOrdinal(final int ordinal) {
        return ordinal >= 0 && ordinal < VALUES.length ? VALUES[ordinal] : null;
    }

    /**
     * @param psn the record's PSN
     * @param a its first argument
     * @param b its second argument
     * @param c its third argument
     * @return the event in words, e.g. "RETRANSMIT psn 1234 (RETRANSMITS_TIMEOUT, transmission 2, cwnd 10)"
     */
    public String describe(final int psn, final int a, final int b, final long c) {
        final String p = Integer.toUnsignedString(psn);
        return switch (this) {
            case STATE -> "STATE " + name(STATES, a) + (b >= 0 ? " (" + name(ASYNC, b) + ")" : "");
            case RETRANSMIT -> "RETRANSMIT psn " + p + " (" + name(COUNTERS, a) + ", transmission " + b + ", cwnd " + c + ")";
            case RTO_EXPIRED -> "RTO_EXPIRED psn " + p + " (expiry " + a + " in a row, " + b + " in flight, RTO now "
                + c / 1000 + " us)";
            case TAIL_PROBE -> "TAIL_PROBE psn " + p + " (probe " + a + ")";
            case RNR_NACK -> "RNR_NACK psn " + p + " (episode " + a + ", resend in " + c / 1000 + " us)";
            case PEER_DEAD -> "PEER_DEAD (" + a + " keepalives unanswered, silent " + c / 1_000_000 + " ms)";
            case WR_FAILED -> "WR_FAILED psn " + p + " (" + name(STATUSES, a) + ")";
            case CWND_REDUCED -> "CWND_REDUCED " + a + " -> " + b + " packets (" + cause(c) + ", psn " + p + ")";
            case PATH_PENALTY -> String.format(java.util.Locale.ROOT, "PATH_PENALTY path %d weight %.3f (%s)", a,
                b / 1000.0, cause(c));
            case CM_EVENT -> "CM_EVENT " + (a >= 0 && a < CM_EVENTS.length ? CM_EVENTS[a] : Integer.toString(a))
                + " (reason " + b + ")";
        };
    }

    private static String cause(final long c) {
        return c >= 0 && c < CAUSES.length ? CAUSES[(int) c] : Long.toString(c);
    }

    private static <T extends Enum<T>> String name(final T[] values, final int ordinal) {
        return ordinal >= 0 && ordinal < values.length ? values[ordinal].name() : Integer.toString(ordinal);
    }
}
