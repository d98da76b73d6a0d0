// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty;

import java.io.IOException;
import java.net.InetSocketAddress;

/**
 * One bound UDP socket as the driver sees it: the seam between the transport-independent send and
 * receive logic ({@link NettySink}, {@link ReceiveDispatcher}) and a transport (Netty epoll or NIO,
 * the JDK's {@code DatagramChannel}, a native binding). A transport implements this and
 * {@link UdpTransport}; run grouping, UDP GSO decisions, send order, backpressure and error
 * handling stay in the shared code.
 *
 * <p>Sending: the sink queues runs of datagrams in the socket's {@link SendBatch} and hands the
 * batch over with {@link #send(SendBatch)}. A transport that sends synchronously (one
 * {@code sendmmsg} per batch) may reuse nothing of the batch's memory after the call returns; one
 * that queues (Netty's pipeline) must keep what it needs of the memory alive itself (a retained
 * slice of the chunk).
 *
 * <p>Receiving: a socket opened with a {@link DatagramReceiver} hands every datagram it reads to
 * it; a {@link PolledUdpSocket} reads when told to, others (Netty) when their event loop finds the
 * socket readable.
 *
 * <p>Owning thread only.
 */
public interface UdpSocket extends AutoCloseable {
    /** @return the bound address (its port is the socket's port: an entropy value or the endpoint port) */
    InetSocketAddress localAddress();

    /** @return what this socket can do (fixed for its life) */
    SocketCapabilities capabilities();

    /**
     * Hands the batch's datagrams, in order, to the kernel (or to the transport's own queue). A
     * segmented entry ({@link SendBatch#segmented(int)}) is one UDP GSO message, taken whole or
     * not at all; the datagrams of another entry may be taken one by one.
     *
     * <p>When the socket takes fewer datagrams than the batch holds, it tells why with
     * {@link SendBatch#stopBecause(SendFailure)}: {@link SendFailure#WOULD_BLOCK} when the
     * socket's buffer is full (the caller keeps the rest and tries again later), any other value
     * when the datagram after the taken ones failed (the caller drops it and hands over the rest
     * again). A socket that stops for a limit of its own (say the longest vector of one system
     * call) states no reason and is called again at once.
     *
     * @param batch runs to send; the socket does not change it (the caller removes what was taken)
     * @return datagrams taken from the front of the batch, 0..{@link SendBatch#datagrams()}
     */
    int send(SendBatch batch);

    /** @return whether datagrams wait in the transport's own queue (a socket that sends synchronously: {@link OutboundState#IDLE}) */
    OutboundState outboundState();

    /**
     * Connects the socket to {@code peer}: datagrams to it then go without an address
     * ({@link SendBatch} entries with a null recipient). Only sockets whose
     * {@link SocketCapabilities#connect()} is true are asked.
     *
     * @param peer the remote address
     * @return whether the socket is now connected
     * @throws IOException if the kernel refuses
     */
    boolean connect(InetSocketAddress peer) throws IOException;

    /** Closes the socket; what it still queues is dropped. Idempotent. */
    @Override
    void close();
}
