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
    WR_FAILED;

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
        };
    }

    private static <T extends Enum<T>> String name(final T[] values, final int ordinal) {
        return ordinal >= 0 && ordinal < values.length ? values[ordinal].name() : Integer.toString(ordinal);
    }
}
