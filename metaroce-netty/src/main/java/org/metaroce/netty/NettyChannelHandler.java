// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty;

import java.nio.channels.ClosedChannelException;
import java.util.function.Consumer;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.socket.DatagramPacket;
import org.agrona.concurrent.UnsafeBuffer;
import org.metaroce.core.engine.DatagramEndpoint;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The pipeline end of one Netty datagram channel: hands every datagram the channel reads to the
 * socket's {@link DatagramReceiver}, viewed in place through one reused {@link UnsafeBuffer}, then
 * releases it; ends each read batch with {@link DatagramReceiver#onBatchEnd()}; and reports the
 * failures of writes the pipeline made later (a {@code voidPromise} write fails here) as
 * {@link SendFailure}s. Netty cannot read the ECN field, so datagrams are reported Not-ECT; it
 * splits GRO-coalesced datagrams itself, so no segment size is reported either.
 *
 * <p>Owning thread (the channel's event loop) only.
 */
final class NettyChannelHandler extends ChannelInboundHandlerAdapter {
    private static final Logger LOG = LoggerFactory.getLogger(NettyChannelHandler.class);

    private final DatagramReceiver receiver;
    private final Consumer<SendFailure> sendFailures;
    private final DriverCounters counters;
    private final UnsafeBuffer view = new UnsafeBuffer(new byte[0]);
    private final SourceAddress source = new SourceAddress();
    private long errorsLogged;

    /**
     * @param receiver where datagrams go, or null for a socket that only sends
     * @param sendFailures where failed writes are reported
     * @param counters where unexpected pipeline exceptions are counted
     */
    NettyChannelHandler(final DatagramReceiver receiver, final Consumer<SendFailure> sendFailures,
                        final DriverCounters counters) {
        this.receiver = receiver;
        this.sendFailures = sendFailures;
        this.counters = counters;
    }

    @Override
    public void channelRead(final ChannelHandlerContext ctx, final Object msg) {
        if (!(msg instanceof DatagramPacket)) {
            io.netty.util.ReferenceCountUtil.release(msg);
            return;
        }
        final DatagramPacket packet = (DatagramPacket) msg;
        try {
            if (receiver != null) {
                final ByteBuf content = packet.content();
                final int length = content.readableBytes();
                view(content, length);
                receiver.onDatagram(view, 0, length, source.socketAddress(packet.sender()),
                    DatagramEndpoint.ECN_NOT_ECT, 0);
            }
        } finally {
            packet.release();
        }
    }

    /** Points {@link #view} at the datagram's bytes, in the form that lets the CRC-32C use the JDK intrinsic. */
    private void view(final ByteBuf content, final int length) {
        final ByteBuf root = root(content);
        if (root != content && root.hasMemoryAddress() && content.hasMemoryAddress() && root.nioBufferCount() == 1) {
            // A datagram of a recvmmsg batch is a slice of the batch buffer. A slice's internal NIO
            // buffer is a new ByteBuffer per call; the root buffer's is the pool's cached one.
            final int rootIndex = (int) (content.memoryAddress() + content.readerIndex() - root.memoryAddress());
            final java.nio.ByteBuffer nio = root.internalNioBuffer(rootIndex, length);
            view.wrap(nio, nio.position(), length);
        } else if (content.isDirect() && content.nioBufferCount() == 1) {
            // A ByteBuffer view (reused by Netty per buffer) lets the CRC-32C use the JDK
            // intrinsic; a raw address would force the byte-at-a-time fallback.
            final java.nio.ByteBuffer nio = content.internalNioBuffer(content.readerIndex(), length);
            view.wrap(nio, nio.position(), length);
        } else if (content.hasMemoryAddress()) {
            view.wrap(content.memoryAddress() + content.readerIndex(), length);
        } else if (content.hasArray()) {
            view.wrap(content.array(), content.arrayOffset() + content.readerIndex(), length);
        } else {
            view.wrap(content.nioBuffer(content.readerIndex(), length));
        }
    }

    /** The buffer that owns the memory {@code buf} is a view of (itself if it is not derived). */
    private static ByteBuf root(final ByteBuf buf) {
        ByteBuf current = buf;
        ByteBuf parent;
        while ((parent = current.unwrap()) != null) {
            current = parent;
        }
        return current;
    }

    @Override
    public void channelReadComplete(final ChannelHandlerContext ctx) {
        if (receiver != null) {
            receiver.onBatchEnd();
        }
    }

    @Override
    public void exceptionCaught(final ChannelHandlerContext ctx, final Throwable cause) {
        if (cause instanceof java.io.IOException) {
            // A failed write (voidPromise failures arrive here) or a transient receive error: UDP
            // is lossy anyway and the protocol retransmits.
            sendFailures.accept(failureOf(cause));
            if (LOG.isDebugEnabled() && !(cause instanceof ClosedChannelException)) {
                LOG.debug("socket error on {}: {}", ctx.channel(), cause.toString());
            }
            return;
        }
        counters.increment(DriverCounter.ENGINE_ERRORS);
        // A bug that repeats on every packet must not flood the log: the first ten, then every 10000th.
        final long n = errorsLogged++;
        if (n < 10 || n % 10_000 == 0) {
            LOG.error("unexpected exception in the pipeline of {} (occurrence {})", ctx.channel(), n + 1, cause);
        }
    }

    /** @return the {@link SendFailure} a Netty or JDK exception stands for */
    static SendFailure failureOf(final Throwable cause) {
        if (cause instanceof ClosedChannelException) {
            return SendFailure.CLOSED;
        }
        if (cause instanceof java.net.PortUnreachableException
            || cause instanceof io.netty.channel.unix.Errors.NativeIoException
                && ((io.netty.channel.unix.Errors.NativeIoException) cause).expectedErr()
                    == io.netty.channel.unix.Errors.ERROR_ECONNREFUSED_NEGATIVE) {
            // An ICMP "port unreachable" of an earlier datagram, reported on this socket.
            return SendFailure.PEER_UNREACHABLE;
        }
        return SendFailure.OTHER;
    }
}
