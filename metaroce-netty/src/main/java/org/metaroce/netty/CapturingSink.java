// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty;

import java.net.InetSocketAddress;

import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.metaroce.core.engine.TransmitSink;

/**
 * A {@link TransmitSink} that records every packet the engine commits into a {@link PcapWriter},
 * then hands it to the device's sink: the capture sees each packet alone, as it leaves after
 * segmentation offload, with the source port the sink sends it from. Owning thread only.
 */
final class CapturingSink implements TransmitSink {
    private final PcapWriter writer;
    private final PeerTable peers;
    private final int[] entropyPorts;
    private final int endpointPort;
    private final UnsafeBuffer local = new UnsafeBuffer(new byte[PeerTable.MAX_ADDRESS_BYTES]);
    private final UnsafeBuffer remote = new UnsafeBuffer(new byte[PeerTable.MAX_ADDRESS_BYTES]);
    private TransmitSink delegate;

    CapturingSink(final PcapWriter writer, final PeerTable peers, final InetSocketAddress localAddress,
                  final int[] entropyPorts) {
        this.writer = writer;
        this.peers = peers;
        this.entropyPorts = entropyPorts.clone();
        this.endpointPort = localAddress.getPort();
        CapturedAddress.write(localAddress, local);
    }

    /**
     * @param sink the device's sink, for this duty cycle
     * @return this
     */
    CapturingSink wrap(final TransmitSink sink) {
        this.delegate = sink;
        return this;
    }

    @Override
    public MutableDirectBuffer buffer() {
        return delegate.buffer();
    }

    @Override
    public int claim(final int maxLength) {
        return delegate.claim(maxLength);
    }

    @Override
    public int claim(final int maxLength, final int entropy) {
        return delegate.claim(maxLength, entropy);
    }

    @Override
    public void commit(final int offset, final int length, final int peerId, final int entropy) {
        // Recorded before the commit: the bytes stay in the claimed chunk until the sink flushes.
        if (peers.addressBytes(peerId, remote, 0) == PeerTable.MAX_ADDRESS_BYTES) {
            writer.record(local, 0, sourcePort(entropy), remote, 0, remote.getShort(16, java.nio.ByteOrder.BIG_ENDIAN)
                & 0xFFFF, delegate.buffer(), offset, length);
        }
        delegate.commit(offset, length, peerId, entropy);
    }

    /** The port the sink sends from: the entropy value if it is one of the device's ports, else the endpoint port. */
    private int sourcePort(final int entropy) {
        for (final int port : entropyPorts) {
            if (port == entropy) {
                return port;
            }
        }
        return endpointPort;
    }
}
