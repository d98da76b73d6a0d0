// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty;

import java.net.InetSocketAddress;

import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.metaroce.core.engine.DatagramEndpoint;
import org.metaroce.core.engine.TransmitSink;

/**
 * Stands between the receive path and the endpoint: records every packet handed to the endpoint
 * into a {@link PcapWriter} (each GRO segment alone), then passes it on. Owning thread only.
 */
final class CapturingEndpoint implements DatagramEndpoint {
    private final DatagramEndpoint endpoint;
    private final PcapWriter writer;
    private final PeerTable peers;
    private int localPort;
    private final UnsafeBuffer local = new UnsafeBuffer(new byte[PeerTable.MAX_ADDRESS_BYTES]);
    private final UnsafeBuffer remote = new UnsafeBuffer(new byte[PeerTable.MAX_ADDRESS_BYTES]);

    CapturingEndpoint(final DatagramEndpoint endpoint, final PcapWriter writer, final PeerTable peers) {
        this.endpoint = endpoint;
        this.writer = writer;
        this.peers = peers;
    }

    /**
     * Sets the destination recorded for received packets once the endpoint socket is bound (the
     * receive path is built before).
     *
     * @param localAddress the endpoint socket's address
     */
    void localAddress(final InetSocketAddress localAddress) {
        CapturedAddress.write(localAddress, local);
        this.localPort = localAddress.getPort();
    }

    @Override
    public void onDatagram(final long nowNs, final DirectBuffer buffer, final int offset, final int length,
                           final int peerId, final int ecn) {
        onDatagram(nowNs, nowNs, buffer, offset, length, peerId, ecn);
    }

    @Override
    public void onDatagram(final long nowNs, final long arrivalNs, final DirectBuffer buffer, final int offset,
                           final int length, final int peerId, final int ecn) {
        if (peers.addressBytes(peerId, remote, 0) == PeerTable.MAX_ADDRESS_BYTES) {
            writer.record(remote, 0, remote.getShort(16, java.nio.ByteOrder.BIG_ENDIAN) & 0xFFFF, local, 0, localPort,
                buffer, offset, length);
        }
        endpoint.onDatagram(nowNs, arrivalNs, buffer, offset, length, peerId, ecn);
    }

    @Override
    public int poll(final long nowNs, final TransmitSink sink) {
        return endpoint.poll(nowNs, sink);
    }

    @Override
    public long nextDeadlineNs() {
        return endpoint.nextDeadlineNs();
    }
}
