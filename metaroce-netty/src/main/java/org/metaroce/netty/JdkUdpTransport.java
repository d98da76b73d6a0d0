// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty;

import java.io.IOException;

/**
 * The JDK's {@code DatagramChannel} as a {@link UdpTransport}: polled sockets
 * ({@link JdkPolledUdpSocket}) that send synchronously, and chunks of plain direct memory reused
 * once released. Portable; no GSO, GRO or ECN.
 *
 * <p>Owning thread only.
 */
final class JdkUdpTransport implements UdpTransport {
    private final int maxDatagramBytes;
    private final DirectSendChunks chunks = new DirectSendChunks();

    /** @param maxDatagramBytes largest datagram its sockets read whole */
    JdkUdpTransport(final int maxDatagramBytes) {
        this.maxDatagramBytes = maxDatagramBytes;
    }

    @Override
    public PolledUdpSocket open(final SocketOptions options, final DatagramReceiver receiver) throws IOException {
        return new JdkPolledUdpSocket(options, maxDatagramBytes, receiver);
    }

    @Override
    public SendChunk allocateChunk(final int capacity) {
        return chunks.allocate(capacity);
    }

    @Override
    public String name() {
        return "jdk";
    }
}
