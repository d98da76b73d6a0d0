// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.engine;

/** Everything an endpoint counts. Names are stable: tools and tests refer to them. */
public enum EndpointCounter {
    /** Datagrams handed to {@code onDatagram}. */
    PACKETS_IN,
    /** Bytes handed to {@code onDatagram}. */
    BYTES_IN,
    /** Datagrams committed to a sink. */
    PACKETS_OUT,
    /** Bytes committed to a sink. */
    BYTES_OUT,
    /** Request packets (SEND..CMP_SWAP) sent for the first time. */
    REQUEST_PACKETS_OUT,
    /** READ_RESPONSE packets sent. */
    READ_RESPONSES_OUT,
    /** ATOMIC_RESPONSE packets sent. */
    ATOMIC_RESPONSES_OUT,
    /** ACK packets sent (bare; attached ones are {@link #ACKS_ATTACHED_OUT}). */
    ACKS_OUT,
    /** NACK packets sent (all reasons). */
    NACKS_OUT,
    /** ACK packets received (bare; attached ones are {@link #ACKS_ATTACHED_IN}). */
    ACKS_IN,
    /** NACK packets received (all reasons). */
    NACKS_IN,
    /** Packets reported received by a selective-ack bitmap before the cumulative point passed them. */
    SACKED_PACKETS,
    /** Retransmissions because reordering-tolerant (RACK-style) loss detection declared a loss. */
    RETRANSMITS_LOSS_DETECTED,
    /** Retransmissions after the retransmission timer fired. */
    RETRANSMITS_TIMEOUT,
    /** Tail-loss probes sent. */
    RETRANSMITS_TAIL_PROBE,
    /** Retransmissions requested by a TRIMMED NACK. */
    RETRANSMITS_TRIMMED,
    /** Retransmissions after a PSN_WINDOW NACK. */
    RETRANSMITS_PSN_WINDOW,
    /** Retransmissions after an RNR NACK's timer expired. */
    RETRANSMITS_RNR,
    /** Retransmissions that turned out unnecessary (the responder saw a duplicate). */
    SPURIOUS_RETRANSMITS,
    /** Retransmission timer expiries. */
    TIMEOUTS,
    /** Retransmission-timer expiries found spurious: a transmission from before the expiry was delivered [REL-058]. */
    SPURIOUS_TIMEOUTS,
    /** RNR NACKs sent by the responder. */
    RNR_NACKS_OUT,
    /** RNR NACKs received by the requester. */
    RNR_NACKS_IN,
    /** Request packets the responder had already received (never delivered twice). */
    DUPLICATE_REQUESTS,
    /** New request packets the responder accepted ahead of its expected PSN (reordering or loss before them). */
    OUT_OF_ORDER_REQUESTS,
    /** Atomic results replayed from the responder's cache for a retransmitted atomic. */
    ATOMIC_REPLAYS,
    /** NACKs sent for remote access violations. */
    NACKS_OUT_REMOTE_ACCESS,
    /** NACKs sent for invalid requests. */
    NACKS_OUT_INVALID_REQUEST,
    /** NACKs sent for remote operation errors. */
    NACKS_OUT_REMOTE_OPERATION,
    /** NACKs sent for PSNs beyond the receive window. */
    NACKS_OUT_PSN_WINDOW,
    /** NACKs sent for trimmed packets. */
    NACKS_OUT_TRIMMED,
    /** Datagrams dropped by the wire-format checks (the wire counters hold the reason, table 3.7). */
    MALFORMED,
    /** Datagrams for a QPN that does not exist here [QP-024]. */
    UNKNOWN_QPN,
    /** Datagrams the QP's state does not accept (table 4.5) [QP-011]. */
    INVALID_QP_STATE,
    /** Datagrams whose source host or source QPN is not the QP's peer [QP-025]. */
    PEER_MISMATCH,
    /** Data packets whose payload exceeds the QP's path MTU [QP-026]. */
    OVERSIZE,
    /** Request packets whose PSN is 2^30 or more away from the expected PSN [REL-002]. */
    PSN_OUT_OF_RANGE,
    /** Requests dropped because the responder's READ/atomic resources were busy [OPS-024]. */
    RESPONDER_BUSY,
    /** ACKs, NACKs or responses that refer to PSNs the requester never sent [WIRE-062], [REL-016]. */
    ACK_FOR_UNSENT_PSN,
    /** Responses inconsistent with the request they answer (offset, length, kind). */
    BAD_RESPONSE,
    /** Responses for a PSN already delivered [REL-043]. */
    DUPLICATE_RESPONSE,
    /** Packets of a kind the receiving side has no use for in its role. */
    UNEXPECTED_RESPONSE,
    /** Trimmed packets that carry no usable loss signal (not new, or not a missing response) [REL-035], [REL-037]. */
    TRIMMED_IGNORED,
    /** CNPs received by a requester that does not run DCQCN. */
    CNP_IGNORED,
    /** Connection-manager packets arriving at an endpoint without a connection manager. */
    NO_CONNECTION_MANAGER,
    /** KEEPALIVE probes sent: keepalive [CM-027] and requests for a fresh credit [REL-019]. */
    KEEPALIVES_OUT,
    /** Peers declared dead after unanswered KEEPALIVE probes [CM-030]. */
    PEERS_DEAD,
    /** Completions that could not be queued because a CQ overflowed. */
    CQ_OVERFLOWS,
    /** Queue pairs that moved to ERR. */
    QP_ERRORS,
    /** Go-back-N: out-of-order request packets dropped unaccepted [REL-053]. */
    SEQUENCE_GAP,
    /** Go-back-N: NACK SEQUENCE_GAP sent, one per value of ePSN [REL-053]. */
    NACKS_OUT_SEQUENCE_GAP,
    /** Go-back-N: packets resent because a NACK SEQUENCE_GAP or an RTO sent the requester back [REL-054]. */
    RETRANSMITS_GO_BACK_N,
    /** CNPs sent by a responder on CE-marked packets [CC-020]. */
    CNPS_OUT,
    /** CNPs a DCQCN requester reacted to [CC-021]. */
    CNPS_IN,
    /** Queue pairs that run another algorithm than they asked for, with a reason [CC-008], [CC-034]. */
    CC_FALLBACKS,
    /** Request packets a responder received CE-marked on a QP with ECN negotiated [CC-020], [REL-018]. */
    CE_MARKED_IN,
    /** ACKs whose ECN_ECHO flag or grown CE Count told a requester of marks [REL-018]. */
    ECN_ECHOES_IN,
    /**
     * Tail probes sent as a new packet beyond the congestion window rather than as a retransmission
     * [REL-026]: a pause of the peer then costs no copy.
     */
    TAIL_PROBES_NEW,
    /**
     * Tail probes sent as a KEEPALIVE that asks for an ACK rather than as a retransmission
     * [REL-069]: a pause of the peer then costs no copy, a lost tail one round trip.
     */
    TAIL_PROBES_ASKED,
    /**
     * ACKs a responder attached to its queue pair's own request packet instead of sending them bare
     * [REL-071] (v1.0.15); {@link #ACKS_OUT} counts the bare ones only.
     */
    ACKS_ATTACHED_OUT,
    /** Attached ACKs a requester processed [REL-070]; {@link #ACKS_IN} counts the bare ones only. */
    ACKS_ATTACHED_IN,
    /** Packets with ATTACHED_ACK dropped whole on a queue pair without that capability [REL-070]. */
    ATTACHED_ACK_NOT_NEGOTIATED;

    private static final EndpointCounter[] VALUES = values();

    static EndpointCounter ofOrdinal(final int ordinal) {
        return VALUES[ordinal];
    }

    static int count() {
        return VALUES.length;
    }
}
