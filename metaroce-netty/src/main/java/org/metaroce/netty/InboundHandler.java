package org.metaroce.netty;

import java.nio.channels.ClosedChannelException;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.socket.DatagramPacket;
import org.agrona.concurrent.UnsafeBuffer;
import org.metaroce.core.engine.DatagramEndpoint;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Hands every datagram the endpoint socket reads to the endpoint, on the owning thread, then
 * releases it. The packet's bytes are viewed in place through one reused {@link UnsafeBuffer}.
 * The clock is read once per receive batch. Also counts write failures reported by the send
 * sockets' pipelines. Sharable because one instance serves all send sockets of a device; every
 * socket of a device lives on the same (owning) thread.
 */
@ChannelHandler.Sharable
final class InboundHandler extends ChannelInboundHandlerAdapter {
    private static final Logger LOG = LoggerFactory.getLogger(InboundHandler.class);

    private final DatagramEndpoint endpoint;
    private final PeerTable peers;
    private final DriverCounters counters;
    private final NettySink[] sink;
    private final UnsafeBuffer view = new UnsafeBuffer(new byte[0]);
    private final boolean receives;
    private long batchNowNs;
    private boolean clockValid;
    private long errorsLogged;
    /** Fault injection (null when off): the decisions, and the one datagram held back. */
    private java.util.SplittableRandom faultRandom;
    private InboundFaults faults;
    private UnsafeBuffer held;
    private int heldLength = -1;
    private int heldPeer;

    /**
     * @param receives whether this handler sits on the endpoint socket (true) or a send socket
     * @param sink a one-element holder of the device's sink (set once the sockets are bound)
     */
    InboundHandler(final DatagramEndpoint endpoint, final PeerTable peers, final DriverCounters counters,
                   final NettySink[] sink, final boolean receives) {
        this.endpoint = endpoint;
        this.peers = peers;
        this.counters = counters;
        this.sink = sink;
        this.receives = receives;
    }

    /** Turns on seeded loss and reordering of received datagrams (before the device starts). */
    void injectFaults(final InboundFaults profile, final int maxDatagramBytes) {
        faults = profile;
        faultRandom = new java.util.SplittableRandom(profile.seed());
        held = new UnsafeBuffer(new byte[Math.max(maxDatagramBytes, DeviceConfig.GRO_SLOT_BYTES)]);
    }

    @Override
    public void channelRead(final ChannelHandlerContext ctx, final Object msg) {
        if (!(msg instanceof DatagramPacket)) {
            io.netty.util.ReferenceCountUtil.release(msg);
            return;
        }
        final DatagramPacket packet = (DatagramPacket) msg;
        try {
            if (receives) {
                deliver(packet);
            }
        } catch (final Throwable t) {
            counters.increment(DriverCounter.ENGINE_ERRORS);
            logError("the endpoint threw while processing a datagram", t);
        } finally {
            packet.release();
        }
    }

    private void deliver(final DatagramPacket packet) {
        if (!clockValid) {
            batchNowNs = System.nanoTime();
            clockValid = true;
        }
        final ByteBuf content = packet.content();
        final int length = content.readableBytes();
        final int peerId = peers.lookupOrAssign(packet.sender());
        final int offset;
        final ByteBuf root = root(content);
        if (root != content && root.hasMemoryAddress() && content.hasMemoryAddress() && root.nioBufferCount() == 1) {
            // A datagram of a recvmmsg batch is a slice of the batch buffer. A slice's internal NIO
            // buffer is a new ByteBuffer per call; the root buffer's is the pool's cached one.
            final int rootIndex = (int) (content.memoryAddress() + content.readerIndex() - root.memoryAddress());
            final java.nio.ByteBuffer nio = root.internalNioBuffer(rootIndex, length);
            view.wrap(nio, nio.position(), length);
            offset = 0;
        } else if (content.isDirect() && content.nioBufferCount() == 1) {
            // A ByteBuffer view (reused by Netty per buffer) lets the CRC-32C use the JDK
            // intrinsic; a raw address would force the byte-at-a-time fallback.
            final java.nio.ByteBuffer nio = content.internalNioBuffer(content.readerIndex(), length);
            view.wrap(nio, nio.position(), length);
            offset = 0;
        } else if (content.hasMemoryAddress()) {
            view.wrap(content.memoryAddress() + content.readerIndex(), length);
            offset = 0;
        } else if (content.hasArray()) {
            view.wrap(content.array(), content.arrayOffset() + content.readerIndex(), length);
            offset = 0;
        } else {
            view.wrap(content.nioBuffer(content.readerIndex(), length));
            offset = 0;
        }
        deliver(view, offset, length, peerId);
    }

    /**
     * Hands a datagram read directly from the endpoint socket (the POLLED receive path) to the
     * endpoint, with fault injection, counters and the batch clock as for datagrams from the pipeline.
     *
     * @param datagram the datagram's bytes (valid only during the call)
     * @param length datagram length
     * @param sender where it came from
     */
    void deliverPolled(final UnsafeBuffer datagram, final int length, final java.net.InetSocketAddress sender) {
        if (!clockValid) {
            batchNowNs = System.nanoTime();
            clockValid = true;
        }
        try {
            deliver(datagram, 0, length, peers.lookupOrAssign(sender));
        } catch (final Throwable t) {
            counters.increment(DriverCounter.ENGINE_ERRORS);
            logError("the endpoint threw while processing a datagram", t);
        }
    }

    /** Ends a burst of polled datagrams: a datagram held back by fault injection goes now; the clock is re-read. */
    void endPolledBurst() {
        channelReadComplete(null);
    }

    private void deliver(final UnsafeBuffer view, final int offset, final int length, final int peerId) {
        counters.increment(DriverCounter.DATAGRAMS_RECEIVED);
        counters.add(DriverCounter.BYTES_RECEIVED, length);
        if (faults != null) {
            if (faultRandom.nextDouble() < faults.dropProbability()) {
                counters.increment(DriverCounter.FAULT_DROPPED);
                return;
            }
            if (heldLength < 0 && length <= held.capacity()
                && faultRandom.nextDouble() < faults.reorderProbability()) {
                // Copied: the receive buffer is reused as soon as this returns.
                held.putBytes(0, view, offset, length);
                heldLength = length;
                heldPeer = peerId;
                counters.increment(DriverCounter.FAULT_REORDERED);
                return;
            }
        }
        endpoint.onDatagram(batchNowNs, view, offset, length, peerId, DatagramEndpoint.ECN_NOT_ECT);
        releaseHeld();
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

    /** Delivers the datagram held back by fault injection, if any, now. */
    private void releaseHeld() {
        if (heldLength >= 0) {
            final int length = heldLength;
            heldLength = -1;
            endpoint.onDatagram(batchNowNs, held, 0, length, heldPeer, DatagramEndpoint.ECN_NOT_ECT);
        }
    }

    @Override
    public void channelReadComplete(final ChannelHandlerContext ctx) {
        if (heldLength >= 0) {
            try {
                releaseHeld(); // a held datagram waits at most until the end of its read batch
            } catch (final Throwable t) {
                counters.increment(DriverCounter.ENGINE_ERRORS);
                logError("the endpoint threw while processing a datagram", t);
            }
        }
        // The next batch reads the clock again.
        clockValid = false;
    }

    /** Marks the start of a duty cycle: datagrams read from now on get a fresh timestamp. */
    void invalidateClock() {
        clockValid = false;
    }

    @Override
    public void exceptionCaught(final ChannelHandlerContext ctx, final Throwable cause) {
        if (cause instanceof ClosedChannelException) {
            counters.increment(DriverCounter.SEND_ERRORS);
            return;
        }
        if (cause instanceof java.io.IOException) {
            // A failed write (voidPromise failures arrive here) or a transient receive error: UDP
            // is lossy anyway and the protocol retransmits.
            counters.increment(DriverCounter.SEND_ERRORS);
            final NettySink s = sink[0];
            // A connected entropy socket reports the ICMP "port unreachable" of its peer: about
            // the peer, not about segmentation offload.
            if (s != null && s.gsoEnabled() && s.gsoPendingSinceFlush() && !isPeerUnreachable(cause)) {
                s.disableGso();
            }
            if (LOG.isDebugEnabled()) {
                LOG.debug("socket error on {}: {}", ctx.channel(), cause.toString());
            }
            return;
        }
        counters.increment(DriverCounter.ENGINE_ERRORS);
        logError("unexpected exception in the pipeline of " + ctx.channel(), cause);
    }

    /** @return whether {@code cause} reports a closed port at a peer (ICMP port unreachable, ECONNREFUSED) */
    static boolean isPeerUnreachable(final Throwable cause) {
        return cause instanceof java.net.PortUnreachableException
            || cause instanceof io.netty.channel.unix.Errors.NativeIoException
                && ((io.netty.channel.unix.Errors.NativeIoException) cause).expectedErr()
                    == io.netty.channel.unix.Errors.ERROR_ECONNREFUSED_NEGATIVE;
    }

    private void logError(final String what, final Throwable t) {
        // A bug that repeats on every packet must not flood the log: the first ten, then every 10000th.
        final long n = errorsLogged++;
        if (n < 10 || n % 10_000 == 0) {
            LOG.error("{} (occurrence {})", what, n + 1, t);
        }
    }
}
