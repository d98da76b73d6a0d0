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
    /** ACK packets sent. */
    ACKS_OUT,
    /** NACK packets sent (all reasons). */
    NACKS_OUT,
    /** ACK packets received. */
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
    /** RNR NACKs sent by the responder. */
    RNR_NACKS_OUT,
    /** RNR NACKs received by the requester. */
    RNR_NACKS_IN,
    /** Request packets the responder had already received (never delivered twice). */
    DUPLICATE_REQUESTS,
    /** Duplicate responses the requester ignored. */
    DUPLICATE_RESPONSES,
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
    /** Datagrams dropped by the wire-format checks (see the wire counters for the reason). */
    DROP_MALFORMED,
    /** Datagrams for a QPN that does not exist here. */
    DROP_UNKNOWN_QPN,
    /** Datagrams for a QP whose state does not accept them (RESET, INIT, RTR for responses). */
    DROP_QP_STATE,
    /** Datagrams whose source address or source QPN is not the QP's peer. */
    DROP_WRONG_PEER,
    /** Request packets whose PSN is 2^30 or more away from the expected PSN [REL-002]. */
    DROP_PSN_OUT_OF_RANGE,
    /** Datagrams whose opcode makes no sense for the receiving side (e.g. a response at a responder). */
    DROP_UNEXPECTED_OPCODE,
    /** Responses or ACKs that refer to PSNs the requester never sent [WIRE-062]. */
    DROP_ACK_FOR_UNSENT_PSN,
    /** Data packets larger than the QP's path MTU, or inconsistent with the request they answer. */
    DROP_BAD_LENGTH,
    /** Requests dropped because the responder's read/atomic resources were busy. */
    DROP_RESPONDER_BUSY,
    /** Connection-manager packets (handled by the connection manager, not the engine). */
    DROP_CONNECTION_MANAGER,
    /** Completions that could not be queued because a CQ overflowed. */
    CQ_OVERFLOWS,
    /** Queue pairs that moved to ERR. */
    QP_ERRORS;

    private static final EndpointCounter[] VALUES = values();

    static EndpointCounter ofOrdinal(final int ordinal) {
        return VALUES[ordinal];
    }

    static int count() {
        return VALUES.length;
    }
}
