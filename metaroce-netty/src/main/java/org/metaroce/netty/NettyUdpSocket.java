// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.concurrent.TimeUnit;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ManualIoEventLoop;
import io.netty.channel.socket.DatagramPacket;
import io.netty.channel.unix.SegmentedDatagramPacket;
import io.netty.channel.unix.Socket;
import io.netty.channel.unix.UnixChannel;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A {@link UdpSocket} that is a Netty datagram channel (epoll or NIO). A batch goes into the
 * channel's pipeline, as retained slices of its chunks (no copy; the pipeline writes
 * asynchronously, so the slices keep the memory alive), and is flushed once: under epoll Netty
 * hands it to one {@code sendmmsg}. A segmented entry is one {@link SegmentedDatagramPacket} (UDP
 * GSO).
 *
 * <p>Separate datagrams go straight to {@code sendto} on the epoll socket while nothing of the
 * socket waits in Netty: the pipeline, outbound buffer and flush cost a few hundred nanoseconds per
 * datagram, most of what a request-reply round trip spends above the system calls. When the kernel
 * refuses one (buffer full), it and the rest go through the pipeline, which then waits for the
 * socket to drain. So the socket takes every datagram it is given; failures of the pipeline's
 * writes reach the sink later, through the channel's {@link NettyChannelHandler}.
 *
 * <p>Owning thread (the channel's event loop) only.
 */
final class NettyUdpSocket implements UdpSocket {
    private static final Logger LOG = LoggerFactory.getLogger(NettyUdpSocket.class);
    private static final long CLOSE_TIMEOUT_NS = TimeUnit.SECONDS.toNanos(10);

    private final Channel channel;
    private final ManualIoEventLoop eventLoop;
    private final InetSocketAddress localAddress;
    private final SocketCapabilities capabilities;
    private final DriverCounters counters;
    /** The epoll channel's native socket (a public Netty type), for direct sends; null under NIO. */
    private final Socket directSocket;
    /** bytesBeforeUnwritable() with nothing queued: less means datagrams wait in Netty. */
    private final long emptyBytesBeforeUnwritable;

    NettyUdpSocket(final Channel channel, final ManualIoEventLoop eventLoop, final boolean gso, final boolean gro,
                   final DriverCounters counters) {
        this.channel = channel;
        this.eventLoop = eventLoop;
        this.counters = counters;
        this.localAddress = (InetSocketAddress) channel.localAddress();
        this.emptyBytesBeforeUnwritable = channel.bytesBeforeUnwritable();
        this.directSocket = channel instanceof UnixChannel && ((UnixChannel) channel).fd() instanceof Socket
            ? (Socket) ((UnixChannel) channel).fd() : null;
        this.capabilities = new SocketCapabilities(gso, gro, false, directSocket != null);
    }

    @Override
    public InetSocketAddress localAddress() {
        return localAddress;
    }

    @Override
    public SocketCapabilities capabilities() {
        return capabilities;
    }

    @Override
    public int send(final SendBatch batch) {
        int taken = 0;
        boolean wrote = false;
        boolean direct = directSocket != null && channel.isActive()
            && channel.bytesBeforeUnwritable() >= emptyBytesBeforeUnwritable;
        try {
            for (int e = 0; e < batch.size(); e++) {
                final ByteBuf owner = byteBuf(batch.chunk(e));
                final InetSocketAddress recipient = batch.recipient(e);
                // To the peer the socket is connected to: no recipient (the sender keeps the envelope valid).
                final InetSocketAddress sender = recipient == null ? localAddress : null;
                final int start = batch.offset(e);
                final int end = start + batch.bytes(e);
                final int segment = batch.segmentBytes(e);
                if (batch.segmented(e)) {
                    channel.write(new SegmentedDatagramPacket(owner.retainedSlice(start, end - start), segment,
                        recipient, sender), channel.voidPromise());
                    wrote = true;
                    taken += batch.datagrams(e);
                    continue;
                }
                for (int at = start; at < end; at += segment) {
                    final int length = Math.min(segment, end - at);
                    if (direct && !wrote) {
                        // The chunk's own NIO view: its base is the pool's memory, positioned here.
                        final ByteBuffer nio = owner.internalNioBuffer(at, length);
                        final int sent;
                        try {
                            sent = recipient == null ? directSocket.send(nio, nio.position(), nio.limit())
                                : directSocket.sendTo(nio, nio.position(), nio.limit(), recipient.getAddress(),
                                    recipient.getPort());
                        } catch (final IOException ex) {
                            batch.stopBecause(NettyChannelHandler.failureOf(ex));
                            if (LOG.isDebugEnabled()) {
                                LOG.debug("send on {} failed: {}", channel, ex.toString());
                            }
                            return taken;
                        }
                        if (sent > 0) {
                            counters.increment(DriverCounter.DIRECT_SENDS);
                            taken++;
                            continue;
                        }
                        direct = false; // the kernel's buffer is full: the pipeline waits for it to drain
                    }
                    channel.write(new DatagramPacket(owner.retainedSlice(at, length), recipient, sender),
                        channel.voidPromise());
                    wrote = true;
                    taken++;
                }
            }
        } finally {
            if (wrote) {
                channel.flush();
            }
        }
        return taken;
    }

    private static ByteBuf byteBuf(final SendChunk chunk) {
        if (!(chunk instanceof ByteBufSendChunk)) {
            // The pipeline writes later: it needs memory it can hold a reference to.
            throw new IllegalArgumentException("a Netty socket sends only chunks of a Netty transport, got " + chunk);
        }
        return ((ByteBufSendChunk) chunk).byteBuf();
    }

    @Override
    public OutboundState outboundState() {
        if (!channel.isWritable() && channel.isActive()) {
            return OutboundState.BACKED_UP;
        }
        return channel.bytesBeforeUnwritable() < emptyBytesBeforeUnwritable ? OutboundState.QUEUED
            : OutboundState.IDLE;
    }

    @Override
    public boolean connect(final InetSocketAddress peer) throws IOException {
        if (directSocket == null) {
            throw new IOException("a NIO datagram channel is not connected by the driver");
        }
        return directSocket.connect(peer);
    }

    @Override
    public void close() {
        final ChannelFuture closing = channel.close();
        final long deadline = System.nanoTime() + CLOSE_TIMEOUT_NS;
        while (!closing.isDone() && System.nanoTime() - deadline < 0) {
            try {
                eventLoop.runNow();
            } catch (final Throwable t) {
                LOG.debug("error while closing {}", channel, t);
            }
        }
    }

    @Override
    public String toString() {
        return "NettyUdpSocket{" + channel + '}';
    }
}
