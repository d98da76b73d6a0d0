// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.connection;

import org.metaroce.core.engine.QueuePair;
import org.metaroce.core.verbs.QpState;

/**
 * Everything {@link ConnectionManager#connect} needs: whom to connect to (the server endpoint's
 * peer id and the Service ID), this side's proposal (c in [CM-019]), private data, and either the
 * resources of a queue pair to create or an existing one in RESET or INIT [CM-005].
 */
public final class ConnectParams extends QpParams<ConnectParams> {
    int peerId = -1;
    long serviceId;
    boolean serviceSet;
    byte[] privateData = new byte[0];
    long connectTimeoutNs;
    QueuePair queuePair;

    /**
     * @param peerId the driver's identifier of the server's endpoint address (IP address and
     *     endpoint port, [ENC-002])
     * @return this
     */
    public ConnectParams peer(final int peerId) {
        this.peerId = range("peerId", peerId, 0, Integer.MAX_VALUE);
        return this;
    }

    /**
     * @param serviceId the 64-bit Service ID to connect to (like an rdma_cm port)
     * @return this
     */
    public ConnectParams serviceId(final long serviceId) {
        this.serviceId = serviceId;
        this.serviceSet = true;
        return this;
    }

    /**
     * @param data opaque bytes for the server application, at most 256 [CM-021]; copied
     * @return this
     */
    public ConnectParams privateData(final byte[] data) {
        this.privateData = checkPrivateData(data);
        return this;
    }

    /**
     * @param ns CONNECT_TIMEOUT for this connection; 0 (the default) takes
     *     {@link CmConfig#connectTimeoutNs()}
     * @return this
     */
    public ConnectParams connectTimeoutNs(final long ns) {
        if (ns < 0) {
            throw new IllegalArgumentException("connectTimeoutNs must be >= 0, got " + ns);
        }
        this.connectTimeoutNs = ns;
        return this;
    }

    /**
     * Uses an existing queue pair instead of creating one. It must be in RESET (the connection
     * manager moves it to INIT with {@link #accessFlags}) or INIT, and belong to the manager's
     * endpoint; {@link #resources} is then not needed, and {@code caps} should describe it.
     *
     * @param qp the queue pair
     * @return this
     */
    public ConnectParams queuePair(final QueuePair qp) {
        if (qp == null || (qp.state() != QpState.RESET && qp.state() != QpState.INIT)) {
            throw new IllegalArgumentException("queuePair must be in RESET or INIT [CM-005], got "
                + (qp == null ? "null" : qp.state()));
        }
        this.queuePair = qp;
        return this;
    }

    ConnectParams copy() {
        final ConnectParams c = new ConnectParams();
        copyTo(c);
        c.peerId = peerId;
        c.serviceId = serviceId;
        c.serviceSet = serviceSet;
        c.privateData = privateData.clone();
        c.connectTimeoutNs = connectTimeoutNs;
        c.queuePair = queuePair;
        return c;
    }

    void validate() {
        validate(queuePair == null);
        if (peerId < 0) {
            throw new IllegalArgumentException("peer(peerId) of the server endpoint must be set");
        }
        if (!serviceSet) {
            throw new IllegalArgumentException("serviceId must be set");
        }
    }
}
