package org.metaroce.netty;

import java.net.InetSocketAddress;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.channel.socket.DatagramPacket;
import io.netty.channel.unix.SegmentedDatagramPacket;
import io.netty.channel.unix.Socket;
import io.netty.channel.unix.UnixChannel;
import org.agrona.MutableDirectBuffer;
import org.agrona.collections.Int2IntHashMap;
import org.agrona.concurrent.UnsafeBuffer;
import org.metaroce.core.engine.TransmitSink;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The device's {@link TransmitSink}: the engine writes packets straight into pooled off-heap chunks,
 * and each committed packet is written, as a retained slice of its chunk (no copy), to the send
 * socket whose local port is the packet's entropy value. With send order preserved (the default), a
 * socket is flushed as soon as a packet for another socket is committed, so datagrams reach the
 * kernel in the engine's order; otherwise nothing is flushed until the end of the duty cycle, when
 * {@link #flush()} flushes every socket written to once. With epoll, Netty hands each flushed batch
 * of a socket to one {@code sendmmsg} call.
 *
 * <p>Every send socket has its own chunk: the engine names the entropy value (the socket) when it
 * claims room ({@link #claim(int, int)}), so the packets of one socket lie back to back even when
 * a QP sprays over several paths. Consecutive packets of a socket to the same destination and of
 * the same length (the last one may be shorter) are then merged into one
 * {@link SegmentedDatagramPacket}, still without copying, when the platform supports UDP GSO and
 * the run has at least {@code gsoMinSegments} datagrams.
 *
 * <p>Datagrams not merged (a lone reply or ACK, a short run) go straight to {@code sendto} on the
 * epoll socket when nothing of that socket waits in Netty: Netty's pipeline, outbound buffer and
 * flush cost a few hundred nanoseconds per datagram, which is most of what a request-reply round
 * trip spends above the system calls. When the kernel refuses one (buffer full), it and the rest of
 * the run go through the pipeline, which then waits for the socket to drain.
 *
 * <p>Backpressure: a claim returns {@link #NO_ROOM} once {@code maxPacketsPerCycle} packets were
 * committed in this cycle, or when some socket has more unsent bytes queued than its high water
 * mark; the endpoint then tries again on its next poll.
 *
 * <p>Owning thread only.
 */
final class NettySink implements TransmitSink {
    private static final Logger LOG = LoggerFactory.getLogger(NettySink.class);
    /** Linux UDP_MAX_SEGMENTS is 64 on older kernels (128 since 6.x): stay within the older limit. */
    static final int MAX_GSO_SEGMENTS = 64;
    /** A GSO write is one IP datagram before segmentation: at most 64 KiB minus headers. */
    static final int MAX_GSO_BYTES = 65_000;

    private final ByteBufAllocator allocator;
    private final int chunkBytes;
    private final int maxPacketsPerCycle;
    private final PeerTable peers;
    private final DriverCounters counters;
    private final UnsafeBuffer emptyView = new UnsafeBuffer(new byte[0]);

    /** Sockets by index: entropy sockets 0..n-1, then the endpoint socket at n. */
    private final Channel[] channels;
    private final boolean[] dirty;
    private final Int2IntHashMap indexByPort = new Int2IntHashMap(-1);
    private final int endpointIndex;
    /** Per socket, bytesBeforeUnwritable() with nothing queued: less means datagrams wait in Netty. */
    private final long[] emptyBytesBeforeUnwritable;
    /** The endpoint socket on the POLLED receive path (its slot in {@link #channels} is then null). */
    private final PolledEndpointSocket polledEndpoint;
    private boolean gso;
    private final int gsoMinSegments;
    /** Per socket, its native socket when the transport is epoll (else null), for direct sends. */
    private final Socket[] directSockets;
    /**
     * Per entropy socket, the peer it is connected to: the first one it sent a datagram to
     * directly (null until then, or when connecting failed). Datagrams to that peer go without an
     * address ({@code send}, and GSO writes without a recipient): the kernel keeps the socket's
     * route instead of looking it up per datagram (about 0.35 µs per send on loopback), and Netty
     * builds no address array. Datagrams to other peers still name theirs ({@code sendto} with an
     * address works on a connected UDP socket). Entropy sockets never read, so the connection
     * filters nothing they need. Only sockets bound to a specific address are connected: connecting
     * a wildcard-bound socket would pin its source address to the first peer's route, wrong for
     * peers reached through another interface.
     */
    private final InetSocketAddress[] connectedTo;
    /** Per socket, whether it may still be connected (entropy socket, epoll, specific address, not tried yet). */
    private final boolean[] mayConnect;
    private final InetSocketAddress[] localAddresses;
    private boolean warnedFallback;

    // One chunk (and view of it) per socket; the latest claim's socket is current.
    private final ByteBuf[] chunk;
    private final UnsafeBuffer[] view;
    private final int[] position;
    private int current = -1;
    /** Socket of the latest committed packet, or -1 right after a flush. */
    private int lastIndex = -1;
    private final boolean preserveSendOrder;
    private int committedThisCycle;
    private boolean backedUp;
    private boolean closed;

    // Per sending socket, the run of packets being merged into one write, and the chunk it lies in.
    private final int[] runChunk;
    private final InetSocketAddress[] runRecipient;
    private final int[] runStart;
    private final int[] runBytes;
    private final int[] runSegment;
    private final int[] runCount;
    private final boolean[] runClosed;
    private long gsoWritesSinceFlush;

    NettySink(final ByteBufAllocator allocator, final int chunkBytes, final int maxPacketsPerCycle,
              final PeerTable peers, final DriverCounters counters, final Channel[] entropyChannels,
              final int[] entropyPorts, final Channel endpointChannel, final PolledEndpointSocket polledEndpoint,
              final int endpointPort, final boolean gso, final int gsoMinSegments,
              final boolean connectEntropySockets, final boolean preserveSendOrder) {
        this.allocator = allocator;
        this.preserveSendOrder = preserveSendOrder;
        this.chunkBytes = chunkBytes;
        this.maxPacketsPerCycle = maxPacketsPerCycle;
        this.peers = peers;
        this.counters = counters;
        this.channels = new Channel[entropyChannels.length + 1];
        System.arraycopy(entropyChannels, 0, channels, 0, entropyChannels.length);
        this.endpointIndex = entropyChannels.length;
        this.channels[endpointIndex] = endpointChannel;
        this.polledEndpoint = polledEndpoint;
        if ((endpointChannel == null) == (polledEndpoint == null)) {
            throw new IllegalArgumentException("exactly one of endpointChannel and polledEndpoint must be given");
        }
        final int n = channels.length;
        this.dirty = new boolean[n];
        this.chunk = new ByteBuf[n];
        this.view = new UnsafeBuffer[n];
        for (int i = 0; i < n; i++) {
            view[i] = new UnsafeBuffer(new byte[0]);
        }
        this.position = new int[n];
        this.runChunk = new int[n];
        java.util.Arrays.fill(runChunk, -1);
        this.runRecipient = new InetSocketAddress[n];
        this.runStart = new int[n];
        this.runBytes = new int[n];
        this.runSegment = new int[n];
        this.runCount = new int[n];
        this.runClosed = new boolean[n];
        for (int i = 0; i < entropyPorts.length; i++) {
            indexByPort.put(entropyPorts[i], i);
        }
        // Connection-manager packets are sent from the endpoint port [ENC-003].
        indexByPort.put(endpointPort, endpointIndex);
        this.gso = gso;
        this.gsoMinSegments = gsoMinSegments;
        this.emptyBytesBeforeUnwritable = new long[channels.length];
        this.directSockets = new Socket[channels.length];
        this.connectedTo = new InetSocketAddress[channels.length];
        this.mayConnect = new boolean[channels.length];
        this.localAddresses = new InetSocketAddress[channels.length];
        for (int i = 0; i < channels.length; i++) {
            localAddresses[i] = channels[i] == null ? null : (InetSocketAddress) channels[i].localAddress();
            emptyBytesBeforeUnwritable[i] = channels[i] == null ? 0 : channels[i].bytesBeforeUnwritable();
            // An epoll channel's descriptor is its native socket (a public Netty type).
            if (channels[i] instanceof UnixChannel && ((UnixChannel) channels[i]).fd() instanceof Socket) {
                directSockets[i] = (Socket) ((UnixChannel) channels[i]).fd();
            }
            mayConnect[i] = connectEntropySockets && i != endpointIndex && directSockets[i] != null
                && !localAddresses[i].getAddress().isAnyLocalAddress();
        }
    }

    /**
     * @return whether a send socket holds written datagrams the kernel has not taken yet (it then
     *     waits for the event loop to report it writable)
     */
    boolean hasPendingOutbound() {
        for (int i = 0; i < channels.length; i++) {
            final Channel channel = channels[i];
            if (channel != null && channel.bytesBeforeUnwritable() < emptyBytesBeforeUnwritable[i]) {
                return true;
            }
        }
        return false;
    }

    /** @return whether GSO merging is on */
    boolean gsoEnabled() {
        return gso;
    }

    /** Turns GSO merging off for good (after the kernel refused a GSO write). */
    void disableGso() {
        if (gso) {
            gso = false;
            LOG.warn("UDP GSO write failed; sending datagrams one by one (sendmmsg) from now on");
        }
    }

    /** @return whether any GSO write was queued since the last flush */
    boolean gsoPendingSinceFlush() {
        return gsoWritesSinceFlush > 0;
    }

    /** Called at the start of each duty cycle, before the endpoint polls. */
    void beginCycle() {
        committedThisCycle = 0;
        boolean anyBackedUp = false;
        for (final Channel channel : channels) {
            if (channel != null && !channel.isWritable() && channel.isActive()) {
                anyBackedUp = true;
                break;
            }
        }
        backedUp = anyBackedUp;
    }

    @Override
    public MutableDirectBuffer buffer() {
        return current < 0 ? emptyView : view[current];
    }

    @Override
    public int claim(final int maxLength) {
        return claimFor(endpointIndex, maxLength);
    }

    @Override
    public int claim(final int maxLength, final int entropy) {
        final int index = indexByPort.get(entropy);
        return claimFor(index < 0 ? endpointIndex : index, maxLength);
    }

    private int claimFor(final int index, final int maxLength) {
        if (closed || backedUp || committedThisCycle >= maxPacketsPerCycle) {
            counters.increment(DriverCounter.SINK_FULL);
            return NO_ROOM;
        }
        if (chunk[index] == null || position[index] + maxLength > chunk[index].capacity()) {
            rotate(index, maxLength);
        }
        current = index;
        return position[index];
    }

    @Override
    public void commit(final int offset, final int length, final int peerId, final int entropy) {
        final int written = current;
        final InetSocketAddress recipient = peers.address(peerId);
        if (recipient == null) {
            counters.increment(DriverCounter.UNROUTABLE_PACKETS);
            return;
        }
        int index = indexByPort.get(entropy);
        if (index < 0) {
            index = endpointIndex;
            counters.increment(DriverCounter.ENTROPY_FALLBACKS);
            if (!warnedFallback) {
                warnedFallback = true;
                LOG.warn("entropy value {} is not a port of this device; sending from the endpoint port instead "
                    + "(set QP paths to the device's entropyPorts())", entropy);
            }
        }
        position[written] = offset + length;
        committedThisCycle++;
        if (preserveSendOrder && lastIndex >= 0 && lastIndex != index) {
            // Leaving a socket: what it holds goes to the kernel now, so datagrams leave in the
            // order the engine committed them. Flushing per socket only at the end of the cycle
            // would group them by socket, and a sprayed QP would see up to a whole cycle of
            // self-inflicted reordering (beyond the 64-packet SACK bitmap: an ACK per packet).
            flushSocket(lastIndex);
        }
        lastIndex = index;
        append(index, written, recipient, offset, length);
    }

    private void flushSocket(final int index) {
        if (runChunk[index] >= 0) {
            writeRun(index);
        }
        if (dirty[index]) {
            dirty[index] = false;
            channels[index].flush();
            counters.increment(DriverCounter.FLUSHES);
        }
    }

    private void append(final int index, final int chunkIndex, final InetSocketAddress recipient, final int offset,
                        final int length) {
        if (runChunk[index] >= 0) {
            if (gso && !runClosed[index] && runChunk[index] == chunkIndex && offset == runStart[index] + runBytes[index]
                && length <= runSegment[index] && runCount[index] < MAX_GSO_SEGMENTS
                && runBytes[index] + length <= MAX_GSO_BYTES && recipient.equals(runRecipient[index])) {
                runBytes[index] += length;
                runCount[index]++;
                // Every segment but the last must be exactly segment-sized.
                runClosed[index] = length < runSegment[index];
                return;
            }
            writeRun(index);
        }
        runChunk[index] = chunkIndex;
        runRecipient[index] = recipient;
        runStart[index] = offset;
        runBytes[index] = length;
        runSegment[index] = length;
        runCount[index] = 1;
        runClosed[index] = false;
    }

    private void writeRun(final int index) {
        final Channel channel = channels[index];
        if (channel == null) {
            sendPolled(index);
            return;
        }
        final int count = runCount[index];
        if (count < gsoMinSegments) {
            writeSeparately(index);
            return;
        }
        final ByteBuf slice = chunk[runChunk[index]].retainedSlice(runStart[index], runBytes[index]);
        final DatagramPacket packet;
        // To the peer the socket is connected to: no recipient (the sender field keeps the envelope valid).
        final boolean connected = isConnectedTo(index, runRecipient[index]);
        final InetSocketAddress recipient = connected ? null : runRecipient[index];
        final InetSocketAddress sender = connected ? localAddresses[index] : null;
        if (count > 1) {
            packet = new SegmentedDatagramPacket(slice, runSegment[index], recipient, sender);
            counters.increment(DriverCounter.GSO_WRITES);
            counters.add(DriverCounter.GSO_SEGMENTS, count);
            gsoWritesSinceFlush++;
        } else {
            packet = new DatagramPacket(slice, recipient, sender);
        }
        channel.write(packet, channel.voidPromise());
        dirty[index] = true;
        countSent(index, count, runBytes[index]);
        runChunk[index] = -1;
        runRecipient[index] = null;
    }

    /**
     * Sends a run as separate datagrams: straight to {@code sendto} while nothing of the socket
     * waits in Netty and the kernel takes them, the rest through the pipeline (flushed with the
     * socket).
     */
    private void writeSeparately(final int index) {
        final Channel channel = channels[index];
        final ByteBuf owner = chunk[runChunk[index]];
        final InetSocketAddress recipient = runRecipient[index];
        final int segment = runSegment[index];
        final int end = runStart[index] + runBytes[index];
        int at = runStart[index];
        final Socket socket = directSockets[index];
        if (socket != null && !dirty[index] && channel.isActive()
            && channel.bytesBeforeUnwritable() >= emptyBytesBeforeUnwritable[index]) {
            if (mayConnect[index]) {
                connect(index, socket, recipient);
            }
            final boolean connected = isConnectedTo(index, recipient);
            while (at < end) {
                final int length = Math.min(segment, end - at);
                try {
                    // The chunk's own NIO view: its base is the pool chunk's memory, positioned here.
                    final java.nio.ByteBuffer nio = owner.internalNioBuffer(at, length);
                    int sent;
                    try {
                        sent = connected ? socket.send(nio, nio.position(), nio.limit())
                            : socket.sendTo(nio, nio.position(), nio.limit(), recipient.getAddress(), recipient.getPort());
                    } catch (final java.io.IOException ex) {
                        if (connected || !InboundHandler.isPeerUnreachable(ex)) {
                            throw ex;
                        }
                        // The error was the connected peer's (its port is closed), reported by this
                        // send; it is consumed now, so the datagram for another peer goes again.
                        sent = socket.sendTo(nio, nio.position(), nio.limit(), recipient.getAddress(),
                            recipient.getPort());
                    }
                    if (sent == 0) {
                        break; // the kernel's buffer is full: the pipeline waits for it to drain
                    }
                    counters.increment(DriverCounter.DIRECT_SENDS);
                    countSent(index, 1, length);
                } catch (final java.io.IOException ex) {
                    // As on the pipeline path: the datagram is lost, the protocol retransmits.
                    counters.increment(DriverCounter.SEND_ERRORS);
                    if (LOG.isDebugEnabled()) {
                        LOG.debug("send on {} failed: {}", channel, ex.toString());
                    }
                }
                at += length;
            }
        }
        final boolean connected = isConnectedTo(index, recipient);
        for (; at < end; at += segment) {
            final int length = Math.min(segment, end - at);
            channel.write(new DatagramPacket(owner.retainedSlice(at, length), connected ? null : recipient,
                connected ? localAddresses[index] : null), channel.voidPromise());
            dirty[index] = true;
            countSent(index, 1, length);
        }
        runChunk[index] = -1;
        runRecipient[index] = null;
    }

    private boolean isConnectedTo(final int index, final InetSocketAddress recipient) {
        final InetSocketAddress peer = connectedTo[index];
        return peer != null && (peer == recipient || peer.equals(recipient));
    }

    /** Connects entropy socket {@code index} to {@code peer}, once; a failure leaves it unconnected. */
    private void connect(final int index, final Socket socket, final InetSocketAddress peer) {
        mayConnect[index] = false;
        try {
            if (socket.connect(peer)) {
                connectedTo[index] = peer;
                counters.increment(DriverCounter.CONNECTED_SOCKETS);
            }
        } catch (final java.io.IOException ex) {
            LOG.debug("entropy socket {} not connected to {}: {}", localAddresses[index], peer, ex.toString());
        }
    }

    private void countSent(final int index, final int datagrams, final int bytes) {
        counters.add(DriverCounter.DATAGRAMS_SENT, datagrams);
        counters.add(DriverCounter.BYTES_SENT, bytes);
        counters.addSent(index, datagrams);
    }

    /** Sends a run from the POLLED endpoint socket, one datagram per segment, at once (no flush needed). */
    private void sendPolled(final int index) {
        final ByteBuf owner = chunk[runChunk[index]];
        final int count = runCount[index];
        final int segment = runSegment[index];
        final int end = runStart[index] + runBytes[index];
        final InetSocketAddress recipient = runRecipient[index];
        int sent = 0;
        for (int at = runStart[index]; at < end; at += segment) {
            final int length = Math.min(segment, end - at);
            if (polledEndpoint.send(owner.internalNioBuffer(at, length), recipient)) {
                sent++;
                countSent(index, 1, length);
            }
        }
        runChunk[index] = -1;
        runRecipient[index] = null;
        if (sent < count) {
            LOG.debug("{} of {} datagrams from the endpoint port to {} were not sent", count - sent, count, recipient);
        }
    }

    /**
     * Writes the pending runs and flushes every socket written to since the last flush.
     *
     * @return number of sockets flushed
     */
    int flush() {
        for (int i = 0; i < channels.length; i++) {
            if (runChunk[i] >= 0) {
                writeRun(i);
            }
        }
        int flushed = 0;
        for (int i = 0; i < channels.length; i++) {
            if (dirty[i]) {
                dirty[i] = false;
                channels[i].flush();
                flushed++;
            }
        }
        gsoWritesSinceFlush = 0;
        lastIndex = -1;
        if (flushed > 0) {
            counters.add(DriverCounter.FLUSHES, flushed);
        }
        return flushed;
    }

    private void rotate(final int index, final int maxLength) {
        // Runs still pointing into the old chunk go out first: they hold slices of it.
        for (int i = 0; i < channels.length; i++) {
            if (runChunk[i] == index) {
                writeRun(i);
            }
        }
        if (chunk[index] != null) {
            // Slices already written hold their own references; the chunk returns to the pool when
            // the last of them is sent.
            chunk[index].release();
            chunk[index] = null;
        }
        final int size = Math.max(chunkBytes, maxLength);
        final ByteBuf fresh = allocator.directBuffer(size, size);
        chunk[index] = fresh;
        // Wrap the chunk's own NIO view, not its raw address: the engine's CRC-32C uses the JDK
        // intrinsic only for ByteBuffer- or array-backed buffers (for a raw address it must fall
        // back to a byte-at-a-time loop). internalNioBuffer reuses one ByteBuffer per chunk.
        final java.nio.ByteBuffer nio = fresh.internalNioBuffer(0, fresh.capacity());
        view[index].wrap(nio, nio.position(), fresh.capacity());
        position[index] = 0;
    }

    /** Drops the pending runs and releases every chunk. Idempotent. */
    void close() {
        closed = true;
        for (int i = 0; i < channels.length; i++) {
            runChunk[i] = -1;
            runRecipient[i] = null;
            if (chunk[i] != null) {
                chunk[i].release();
                chunk[i] = null;
            }
            view[i].wrap(new byte[0]);
        }
        current = -1;
    }
}
