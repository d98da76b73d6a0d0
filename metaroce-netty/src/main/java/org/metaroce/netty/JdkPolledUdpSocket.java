// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.StandardProtocolFamily;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.DatagramChannel;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

import org.agrona.BufferUtil;
import org.agrona.concurrent.UnsafeBuffer;
import org.metaroce.core.engine.DatagramEndpoint;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A {@link PolledUdpSocket} on a non-blocking JDK {@link DatagramChannel}: the endpoint socket of
 * the POLLED receive path ({@link ReceivePath}). The owning thread reads it in each duty cycle,
 * one {@code recvfrom} per datagram, into one reused direct buffer. No readiness poll precedes a
 * read and nothing is allocated per datagram: the JDK keeps the last sender's address and returns
 * the same object while the sender does not change, so a new address object appears only when
 * consecutive datagrams come from different source ports. The JDK cannot read the ECN field:
 * datagrams are reported Not-ECT. Sends are synchronous, one {@code sendto} per datagram.
 *
 * <p>Owning thread only, except {@link #wakeup()}.
 */
final class JdkPolledUdpSocket implements PolledUdpSocket {
    private static final Logger LOG = LoggerFactory.getLogger(JdkPolledUdpSocket.class);
    /** Readiness is the whole answer of a wait: no key is looked at. */
    private static final Consumer<SelectionKey> IGNORE_KEY = key -> { };
    private static final SocketCapabilities CAPABILITIES = new SocketCapabilities(false, false, false, false);

    private final DatagramChannel channel;
    private final DatagramReceiver receiver;
    private final ByteBuffer receiveBuffer;
    private final UnsafeBuffer receiveView;
    private final SourceAddress source = new SourceAddress();
    private final InetSocketAddress localAddress;
    private final int maxDatagramBytes;
    /** Opened on the first {@link #awaitReadable}: a device that never blocks needs none. */
    private volatile Selector selector;

    /**
     * Opens and binds the socket.
     *
     * @param options address, buffers, traffic class
     * @param maxDatagramBytes largest datagram read whole (longer ones arrive truncated and fail validation)
     * @param receiver where datagrams go, or null for a socket that only sends
     * @throws IOException if the socket cannot be opened or bound
     */
    JdkPolledUdpSocket(final SocketOptions options, final int maxDatagramBytes, final DatagramReceiver receiver)
        throws IOException {
        this.receiver = receiver;
        this.maxDatagramBytes = maxDatagramBytes;
        final InetSocketAddress bind = options.bind();
        final DatagramChannel opened = DatagramChannel.open(bind.getAddress() instanceof java.net.Inet6Address
            ? StandardProtocolFamily.INET6 : StandardProtocolFamily.INET);
        try {
            opened.setOption(StandardSocketOptions.SO_RCVBUF, options.receiveBufferBytes());
            opened.setOption(StandardSocketOptions.SO_SNDBUF, options.sendBufferBytes());
            opened.setOption(StandardSocketOptions.IP_TOS, options.trafficClass());
            opened.configureBlocking(false);
            opened.bind(bind);
        } catch (final IOException | RuntimeException ex) {
            opened.close();
            final IOException io = new java.net.BindException("cannot bind UDP socket to " + bind + ": "
                + ex.getMessage());
            io.initCause(ex);
            throw io;
        }
        this.channel = opened;
        this.localAddress = (InetSocketAddress) opened.getLocalAddress();
        this.receiveBuffer = BufferUtil.allocateDirectAligned(align(maxDatagramBytes), 64);
        this.receiveBuffer.limit(maxDatagramBytes);
        this.receiveView = new UnsafeBuffer(receiveBuffer);
    }

    private static int align(final int bytes) {
        return (bytes + 63) & ~63;
    }

    @Override
    public InetSocketAddress localAddress() {
        return localAddress;
    }

    @Override
    public SocketCapabilities capabilities() {
        return CAPABILITIES;
    }

    @Override
    public int receive(final int maxDatagrams) throws IOException {
        if (receiver == null) {
            throw new IllegalStateException("socket " + localAddress + " was opened to send only");
        }
        int read = 0;
        try {
            while (read < maxDatagrams) {
                receiveBuffer.clear().limit(maxDatagramBytes);
                final SocketAddress sender = channel.receive(receiveBuffer);
                if (sender == null) {
                    break;
                }
                read++;
                if (!receiver.onDatagram(receiveView, 0, receiveBuffer.position(),
                    source.socketAddress((InetSocketAddress) sender), DatagramEndpoint.ECN_NOT_ECT, 0)) {
                    break;
                }
            }
        } finally {
            if (read > 0) {
                receiver.onBatchEnd();
            }
        }
        return read;
    }

    @Override
    public void awaitReadable(final long timeoutNs) throws IOException {
        Selector current = selector;
        if (current == null) {
            current = Selector.open();
            channel.register(current, SelectionKey.OP_READ);
            selector = current;
        }
        // The Consumer form reports ready keys without adding them to the selected-key set (no
        // allocation per wake-up); readiness alone is the answer. A selector counts in milliseconds.
        current.select(IGNORE_KEY, Math.max(1, TimeUnit.NANOSECONDS.toMillis(timeoutNs)));
    }

    @Override
    public void wakeup() {
        final Selector current = selector;
        if (current != null) {
            current.wakeup();
        }
    }

    @Override
    public int send(final SendBatch batch) {
        int taken = 0;
        for (int e = 0; e < batch.size(); e++) {
            final ByteBuffer memory = batch.chunk(e).buffer();
            final int base = batch.chunk(e).bufferOffset();
            final InetSocketAddress recipient = batch.recipient(e);
            final int start = batch.offset(e);
            final int end = start + batch.bytes(e);
            final int segment = batch.segmentBytes(e);
            // Never connected (no CONNECT capability): every entry names its recipient.
            for (int at = start; at < end; at += segment) {
                final int length = Math.min(segment, end - at);
                memory.limit(base + at + length).position(base + at);
                try {
                    if (channel.send(memory, recipient) == 0) {
                        batch.stopBecause(SendFailure.WOULD_BLOCK);
                        return taken;
                    }
                } catch (final IOException ex) {
                    batch.stopBecause(failureOf(ex));
                    return taken;
                }
                taken++;
            }
        }
        return taken;
    }

    private static SendFailure failureOf(final IOException ex) {
        if (ex instanceof ClosedChannelException) {
            return SendFailure.CLOSED;
        }
        if (ex instanceof java.net.PortUnreachableException) {
            return SendFailure.PEER_UNREACHABLE;
        }
        return SendFailure.OTHER;
    }

    @Override
    public OutboundState outboundState() {
        return OutboundState.IDLE; // sends are synchronous: nothing waits here
    }

    @Override
    public boolean connect(final InetSocketAddress peer) throws IOException {
        // The endpoint socket receives from every peer: connecting it would filter them out.
        throw new IOException("the JDK endpoint socket is never connected");
    }

    @Override
    public void close() {
        try {
            final Selector current = selector;
            if (current != null) {
                current.close();
            }
        } catch (final IOException ex) {
            LOG.debug("closing the selector of {} failed", localAddress, ex);
        }
        try {
            channel.close();
        } catch (final IOException ex) {
            LOG.debug("closing {} failed", localAddress, ex);
        }
    }
}
