// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.connection;

/** Where a {@link Connection} is in its life (specification 9.1). */
public enum ConnectionState {
    /** Client: CONNECT_REQUEST sent, waiting for CONNECT_CHALLENGE, CONNECT_REPLY or CONNECT_REJECT. */
    CONNECTING,
    /** Server: a verified request was delivered to the application, which has not decided yet. */
    REQUEST_PENDING,
    /** Server: accepted; QP in RTR, CONNECT_REPLY sent, waiting for READY_TO_USE or the first request. */
    ACCEPTED,
    /** Both: the QP is in RTS and the connection is usable. */
    ESTABLISHED,
    /** This side sent DISCONNECT_REQUEST and waits for DISCONNECT_REPLY; the QP is in ERR. */
    DISCONNECTING,
    /** Disconnected; the identity is kept for QPN_QUARANTINE to answer duplicate DISCONNECT_REQUESTs. */
    TIMEWAIT,
    /** Over: rejected, unreachable, failed, or out of time-wait. */
    CLOSED
}
