// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty;

import java.io.IOException;

/**
 * Opens the {@link UdpSocket}s of one transport kind (Netty epoll or NIO, the JDK's
 * {@code DatagramChannel}, a native binding) and provides the memory the driver writes packets
 * into before they are sent from those sockets.
 *
 * <p>Owning thread only.
 */
public interface UdpTransport {
    /**
     * Opens and binds a socket.
     *
     * @param options address, buffers and traffic class
     * @param receiver where the socket delivers what it reads, or null for a socket that only sends
     *     (it then never reads)
     * @return the bound socket
     * @throws IOException if the socket cannot be opened or bound
     */
    UdpSocket open(SocketOptions options, DatagramReceiver receiver) throws IOException;

    /**
     * Allocates off-heap memory that packets are written into and then sent from this transport's
     * sockets (whole or as runs of {@link SendBatch} entries).
     *
     * @param capacity bytes
     * @return a chunk of at least {@code capacity} bytes; {@link SendChunk#release()} it when done
     */
    SendChunk allocateChunk(int capacity);

    /** @return a short name for logs ("epoll", "nio", "jdk", ...) */
    String name();
}
