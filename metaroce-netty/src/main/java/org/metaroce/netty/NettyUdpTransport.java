// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty;

import java.io.IOException;
import java.net.Inet6Address;
import java.net.InetSocketAddress;
import java.util.ArrayDeque;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFactory;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelOption;
import io.netty.channel.ManualIoEventLoop;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.channel.epoll.EpollChannelOption;
import io.netty.channel.epoll.EpollDatagramChannel;
import io.netty.channel.socket.SocketProtocolFamily;
import io.netty.channel.socket.nio.NioDatagramChannel;

/**
 * The Netty transports (epoll or NIO) as a {@link UdpTransport}: sockets are datagram channels
 * registered with the device's event loop, read by the event loop when it finds them readable
 * (epoll: {@code recvmmsg} into {@code receiveBatch} fixed slots, or UDP GRO), and chunks are
 * pooled direct buffers of the device's allocator.
 *
 * <p>Owning thread (the event loop's) only.
 */
final class NettyUdpTransport implements UdpTransport {
    private static final long BIND_TIMEOUT_NS = TimeUnit.SECONDS.toNanos(10);

    private final ManualIoEventLoop eventLoop;
    private final boolean epoll;
    private final ByteBufAllocator allocator;
    private final WriteBufferWaterMark waterMark;
    private final int maxDatagramBytes;
    private final int receiveBatch;
    private final int maxDatagramsPerRead;
    private final boolean gro;
    private final boolean gso;
    private final DriverCounters counters;
    private final Consumer<SendFailure> sendFailures;
    /** Released chunk wrappers, reused so that a new chunk allocates no wrapper. */
    private final ArrayDeque<ByteBufSendChunk> spareChunks = new ArrayDeque<>();
    /** How a released chunk comes back to {@link #spareChunks}; one object for all chunks. */
    private final java.util.function.Consumer<ByteBufSendChunk> recycler = this::recycle;

    /**
     * @param eventLoop the owning thread's event loop (its I/O handler must match {@code transport})
     * @param transport EPOLL or NIO (resolved)
     * @param config buffers, batching, GRO and GSO settings
     * @param counters the device's counters (direct sends, pipeline errors)
     * @param sendFailures where writes that fail in the pipeline are reported (the sink)
     */
    NettyUdpTransport(final ManualIoEventLoop eventLoop, final Transport transport, final DeviceConfig config,
                      final DriverCounters counters, final Consumer<SendFailure> sendFailures) {
        this.eventLoop = eventLoop;
        this.epoll = transport == Transport.EPOLL;
        this.allocator = config.allocator();
        this.waterMark = new WriteBufferWaterMark(config.writeBufferHighWaterMark() / 2,
            config.writeBufferHighWaterMark());
        this.maxDatagramBytes = config.maxDatagramBytes();
        this.receiveBatch = config.receiveBatch();
        this.maxDatagramsPerRead = config.maxDatagramsPerRead();
        this.gro = epoll && config.gro();
        this.gso = epoll && EpollDatagramChannel.isSegmentedDatagramPacketSupported();
        this.counters = counters;
        this.sendFailures = sendFailures;
    }

    @Override
    public UdpSocket open(final SocketOptions options, final DatagramReceiver receiver) throws IOException {
        final SocketProtocolFamily family = options.bind().getAddress() instanceof Inet6Address
            ? SocketProtocolFamily.INET6 : SocketProtocolFamily.INET;
        final ChannelFactory<Channel> factory = epoll
            ? () -> new EpollDatagramChannel(family) : () -> new NioDatagramChannel(family);
        final Bootstrap bootstrap = new Bootstrap().group(eventLoop).channelFactory(factory)
            .handler(new NettyChannelHandler(receiver, sendFailures, counters))
            .option(ChannelOption.ALLOCATOR, allocator)
            .option(ChannelOption.SO_SNDBUF, options.sendBufferBytes())
            .option(ChannelOption.SO_RCVBUF, options.receiveBufferBytes())
            .option(ChannelOption.WRITE_BUFFER_WATER_MARK, waterMark)
            // IP_TOS (IPV6_TCLASS on IPv6 sockets): DSCP in the upper six bits, ECN in the lower two.
            .option(ChannelOption.IP_TOS, options.trafficClass())
            // A send-only socket never reads: everything arrives on the endpoint port [ENC-002].
            .option(ChannelOption.AUTO_READ, receiver != null);
        final boolean groHere = gro && receiver != null;
        if (receiver != null) {
            final int slot = groHere ? DeviceConfig.GRO_SLOT_BYTES : maxDatagramBytes;
            // Netty splits GRO-coalesced datagrams only on its recvmsg path (its recvmmsg path hands
            // them over whole), so GRO replaces recvmmsg: one recvmsg returns up to 64 KiB of datagrams.
            final int batch = epoll && !groHere ? receiveBatch : 1;
            // With recvmmsg a batch that filled fewer slots than offered drained the socket: no empty read after it.
            bootstrap.option(ChannelOption.RECVBUF_ALLOCATOR, new ReceiveBatchAllocator(slot * batch,
                maxDatagramsPerRead, batch > 1));
            if (epoll) {
                bootstrap.option(EpollChannelOption.MAX_DATAGRAM_PAYLOAD_SIZE, batch > 1 ? slot : 0);
                if (groHere) {
                    bootstrap.option(EpollChannelOption.UDP_GRO, true);
                }
            }
        }
        return new NettyUdpSocket(bindAndWait(bootstrap, options.bind()), eventLoop, gso, groHere, counters);
    }

    private Channel bindAndWait(final Bootstrap bootstrap, final InetSocketAddress address) throws IOException {
        final ChannelFuture future = bootstrap.bind(address);
        final long deadline = System.nanoTime() + BIND_TIMEOUT_NS;
        while (!future.isDone()) {
            eventLoop.runNow();
            if (System.nanoTime() - deadline > 0) {
                future.channel().close();
                throw new IOException("binding " + address + " did not complete within 10 s");
            }
            Thread.onSpinWait();
        }
        if (!future.isSuccess()) {
            final Throwable cause = future.cause();
            final Channel channel = future.channel();
            if (channel != null && channel.isOpen()) {
                channel.close();
            }
            final IOException io = new java.net.BindException("cannot bind UDP socket to " + address + ": "
                + cause.getMessage());
            io.initCause(cause);
            throw io;
        }
        return future.channel();
    }

    @Override
    public SendChunk allocateChunk(final int capacity) {
        final ByteBufSendChunk chunk = spareChunks.isEmpty() ? new ByteBufSendChunk(recycler) : spareChunks.pop();
        chunk.attach(allocator.directBuffer(capacity, capacity));
        return chunk;
    }

    /** Takes back a released chunk's wrapper. */
    void recycle(final ByteBufSendChunk chunk) {
        spareChunks.push(chunk);
    }

    @Override
    public String name() {
        return epoll ? "epoll" : "nio";
    }
}
