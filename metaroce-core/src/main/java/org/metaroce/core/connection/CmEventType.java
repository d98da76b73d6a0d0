package org.metaroce.core.connection;

/** Connection-manager events, with the rdma_cm names of specification 9.13. */
public enum CmEventType {
    /** Server: a verified connection request for a service this side listens on; accept or reject it. */
    CONNECT_REQUEST,
    /** Both sides: the connection is up and its queue pair is in RTS; carries the peer's private data. */
    ESTABLISHED,
    /** Client: the server refused; {@link CmEvent#reason()} says why, with the server's private data. */
    REJECTED,
    /** Client: no CONNECT_REPLY or CONNECT_REJECT within CONNECT_TIMEOUT [CM-023]. */
    UNREACHABLE,
    /**
     * The handshake failed after parameters were exchanged: the client found the reply's
     * parameters unacceptable [CM-009], or the server never heard READY_TO_USE nor traffic
     * [CM-024].
     */
    CONNECT_ERROR,
    /** Both sides: the connection is over and its queue pair in ERR [CM-031, CM-032]. */
    DISCONNECTED,
    /** The QPN quarantine of a finished connection ended; the connection is forgotten [CM-034]. */
    TIMEWAIT_EXIT
}
