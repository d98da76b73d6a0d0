// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty;

import java.io.IOException;
import java.net.InetSocketAddress;

import org.metaroce.core.connection.CmEventType;

/**
 * A connection could not be made: the server did not answer within CONNECT_TIMEOUT
 * ({@link CmEventType#UNREACHABLE}), the handshake failed ({@link CmEventType#CONNECT_ERROR}),
 * the connection ended before it was established ({@link CmEventType#DISCONNECTED}), no queue
 * pair could be allocated, or the caller's timeout passed ({@link #event()} is then null).
 * Thrown by the blocking forms of {@link ConnectionService}; the asynchronous forms complete
 * their future exceptionally with it.
 */
public class ConnectionFailedException extends IOException {
    private static final long serialVersionUID = 1L;

    private final InetSocketAddress peer;
    private final long serviceId;
    private final CmEventType event;
    private final boolean timedOut;

    /**
     * @param message what failed, naming the peer and the cause
     * @param peer the remote endpoint address, or null if unknown
     * @param serviceId the Service ID
     * @param event the connection-manager event that ended the attempt, or null (timeout, local failure)
     */
    public ConnectionFailedException(final String message, final InetSocketAddress peer, final long serviceId,
                                     final CmEventType event) {
        this(message, peer, serviceId, event, false);
    }

    /**
     * @param message what failed, naming the peer and the cause
     * @param peer the remote endpoint address, or null if unknown
     * @param serviceId the Service ID
     * @param event the connection-manager event that ended the attempt, or null
     * @param timedOut whether the caller's timeout passed first
     */
    public ConnectionFailedException(final String message, final InetSocketAddress peer, final long serviceId,
                                     final CmEventType event, final boolean timedOut) {
        super(message);
        this.peer = peer;
        this.serviceId = serviceId;
        this.event = event;
        this.timedOut = timedOut;
    }

    /** @return the remote endpoint address (the server for a client), or null if unknown */
    public InetSocketAddress peer() {
        return peer;
    }

    /** @return the Service ID of the attempt */
    public long serviceId() {
        return serviceId;
    }

    /**
     * @return the event that ended the attempt (UNREACHABLE, CONNECT_ERROR, REJECTED,
     *     DISCONNECTED), or null when the caller's timeout passed or a local step failed
     */
    public CmEventType event() {
        return event;
    }

    /** @return whether the caller's timeout passed before the connection manager decided */
    public boolean isTimeout() {
        return timedOut;
    }
}
