// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty;

import java.net.InetSocketAddress;

import org.metaroce.core.connection.CmEventType;
import org.metaroce.core.connection.Connection;
import org.metaroce.core.connection.Listener;

/**
 * A verified connection request ({@link CmEventType#CONNECT_REQUEST}) handed out by
 * {@link ConnectionService#awaitRequest}: the pending connection, the Service ID, the client's
 * endpoint address and private data. Decide on it with {@link ConnectionService#accept} or
 * {@link ConnectionService#reject} before the handshake entry expires (COOKIE_LIFETIME).
 */
public final class IncomingRequest {
    private final Connection connection;
    private final Listener listener;
    private final InetSocketAddress client;
    private final byte[] privateData;

    IncomingRequest(final Connection connection, final Listener listener, final InetSocketAddress client,
                    final byte[] privateData) {
        this.connection = connection;
        this.listener = listener;
        this.client = client;
        this.privateData = privateData;
    }

    /**
     * @return the pending connection; its fields belong to the device's owning thread (read them
     *     there, or after the connection was accepted through the service)
     */
    public Connection connection() {
        return connection;
    }

    /** @return the listener the request arrived on */
    public Listener listener() {
        return listener;
    }

    /** @return the Service ID requested */
    public long serviceId() {
        return connection.serviceId();
    }

    /** @return the client's endpoint address (IP address and endpoint port), or null if unknown */
    public InetSocketAddress client() {
        return client;
    }

    /** @return the client's private data (empty if none); a copy */
    public byte[] privateData() {
        return privateData.clone();
    }

    @Override
    public String toString() {
        return "IncomingRequest{service=" + connection.serviceId() + ", client=" + client + ", privateData="
            + privateData.length + "B}";
    }
}
