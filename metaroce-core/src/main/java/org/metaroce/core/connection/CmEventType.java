// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

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
     * parameters unacceptable [CM-009], the server never heard READY_TO_USE nor traffic
     * [CM-024], or the queue pair failed before the connection was established.
     */
    CONNECT_ERROR,
    /**
     * Both sides: the connection is over and its queue pair in ERR: after a disconnect exchange
     * [CM-031, CM-032], at once when keepalive declared the peer dead or this side sent a fatal NACK
     * (reason QP_ERROR) [CM-030, CM-033], or after DISCONNECT_REQUEST QP_ERROR when the queue pair
     * failed otherwise.
     */
    DISCONNECTED,
    /** The QPN quarantine of a finished connection ended; the connection is forgotten [CM-034]. */
    TIMEWAIT_EXIT
}
