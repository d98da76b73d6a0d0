// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty;

import java.net.InetSocketAddress;

import org.metaroce.core.connection.CmEventType;
import org.metaroce.core.connection.CmReason;

/**
 * The server answered the connection request with CONNECT_REJECT ({@link CmEventType#REJECTED}):
 * {@link #reason()} says why ({@link CmReason}: NO_LISTENER, REJECTED_BY_APPLICATION,
 * NO_RESOURCES, ...) and {@link #privateData()} carries the server application's private data.
 */
public final class ConnectionRejectedException extends ConnectionFailedException {
    private static final long serialVersionUID = 1L;

    private final int reason;
    private final byte[] privateData;

    /**
     * @param server the server's endpoint address
     * @param serviceId the Service ID
     * @param reason the reject reason code ({@link CmReason})
     * @param privateData the server's private data (kept; not copied)
     */
    public ConnectionRejectedException(final InetSocketAddress server, final long serviceId, final int reason,
                                       final byte[] privateData) {
        super("connection to " + server + " (service " + serviceId + ") rejected: " + CmReason.name(reason)
            + (privateData.length > 0 ? " with " + privateData.length + " bytes of private data" : ""),
            server, serviceId, CmEventType.REJECTED);
        this.reason = reason;
        this.privateData = privateData;
    }

    /** @return the reason code of the CONNECT_REJECT ({@link CmReason}; unknown codes passed through) */
    public int reason() {
        return reason;
    }

    /** @return {@link CmReason#name(int)} of {@link #reason()} */
    public String reasonName() {
        return CmReason.name(reason);
    }

    /** @return the server application's private data (empty if none); a copy */
    public byte[] privateData() {
        return privateData.clone();
    }
}
