// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.connection;

/**
 * One connection-manager event (rdma_cm's {@code rdma_cm_event}). Immutable; events are created
 * only on the handshake and teardown paths, never per data packet.
 */
public final class CmEvent {
    private static final byte[] NONE = new byte[0];

    private final CmEventType type;
    private final Connection connection;
    private final Listener listener;
    private final int reason;
    private final byte[] privateData;

    CmEvent(final CmEventType type, final Connection connection, final Listener listener, final int reason,
            final byte[] privateData) {
        this.type = type;
        this.connection = connection;
        this.listener = listener;
        this.reason = reason;
        this.privateData = privateData == null ? NONE : privateData;
    }

    /** @return what happened */
    public CmEventType type() {
        return type;
    }

    /**
     * @return the connection the event is about; for {@link CmEventType#CONNECT_REQUEST} the
     *     pending connection to pass to {@link ConnectionManager#accept} or
     *     {@link ConnectionManager#reject}
     */
    public Connection connection() {
        return connection;
    }

    /** @return the listener a server-side connection belongs to, or null on the client side */
    public Listener listener() {
        return listener;
    }

    /**
     * @return the reason code ({@link CmReason}) of REJECTED (from CONNECT_REJECT, unknown codes
     *     passed through [CM-018]), DISCONNECTED (from DISCONNECT_REQUEST, or the local cause) and
     *     CONNECT_ERROR; {@link CmReason#NORMAL} otherwise
     */
    public int reason() {
        return reason;
    }

    /**
     * @return the peer's private data carried by the event (CONNECT_REQUEST: the client's;
     *     ESTABLISHED on the client: the server's; REJECTED: the server application's); empty if
     *     none. A copy the caller may keep.
     */
    public byte[] privateData() {
        return privateData.clone();
    }

    /** @return length of {@link #privateData()} without copying it */
    public int privateDataLength() {
        return privateData.length;
    }

    @Override
    public String toString() {
        return "CmEvent{" + type + ", reason=" + CmReason.name(reason) + ", privateData=" + privateData.length
            + "B, " + connection + '}';
    }
}
