// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty;

/**
 * How a device reads its endpoint socket, where every datagram for it arrives [ENC-002].
 */
public enum ReceivePath {
    /**
     * POLLED, unless the device asks for UDP GRO or its driver thread idles by blocking in the event
     * loop ({@link EventLoopIdleStrategy}): those need the socket in Netty's event loop.
     */
    AUTO,
    /**
     * The owning thread reads the socket in every duty cycle through a non-blocking JDK datagram
     * channel: one {@code recvfrom} per datagram, no readiness poll before it, and no allocation
     * per datagram (a sender address object only when the source port changes between datagrams).
     * Lowest latency; the choice for threads that spin or back off.
     */
    POLLED,
    /**
     * The socket is a Netty channel read when the event loop reports it readable: with epoll,
     * {@code recvmmsg} into fixed slots ({@link DeviceConfig#receiveBatch}) or UDP GRO; with NIO, one
     * datagram per read. Netty allocates a packet object and a sender address per datagram. Needed to
     * block in the event loop until a datagram arrives.
     */
    BATCHED
}
