package org.metaroce.netty;

import java.net.InetSocketAddress;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.channel.socket.DatagramPacket;
import io.netty.channel.unix.SegmentedDatagramPacket;
import org.agrona.MutableDirectBuffer;
import org.agrona.collections.Int2IntHashMap;
import org.agrona.concurrent.UnsafeBuffer;
import org.metaroce.core.engine.TransmitSink;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The device's {@link TransmitSink}: the engine writes packets straight into pooled off-heap chunks,
 * and each committed packet is written, as a retained slice of its chunk (no copy), to the send
 * socket whose local port is the packet's entropy value. Nothing is flushed until the end of the
 * duty cycle, when {@link #flush()} flushes every socket written to once: with epoll, Netty then
 * hands each socket's whole batch to one {@code sendmmsg} call.
 *
 * <p>GSO: consecutive packets that lie back to back in the chunk, go to the same destination
 * from the same socket and have the same length (the last one may be shorter) are merged into one
 * {@link SegmentedDatagramPacket}, still without copying, when the platform supports UDP GSO. That
 * happens for runs of full-sized packets on one path (a single-path QP, or a burst of one QP's
 * packets the path selector keeps on one path); sprayed traffic goes out as sendmmsg batches.
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
    private final UnsafeBuffer view = new UnsafeBuffer(new byte[0]);

    /** Sockets by index: entropy sockets 0..n-1, then the endpoint socket at n. */
    private final Channel[] channels;
    private final boolean[] dirty;
    private final Int2IntHashMap indexByPort = new Int2IntHashMap(-1);
    private final int endpointIndex;
    private boolean gso;
    private boolean warnedFallback;

    private ByteBuf chunk;
    private int position;
    private int committedThisCycle;
    private boolean backedUp;
    private boolean closed;

    // The run of packets being merged into one write.
    private int runIndex = -1;
    private InetSocketAddress runRecipient;
    private int runStart;
    private int runBytes;
    private int runSegment;
    private int runCount;
    private boolean runClosed;
    private long gsoWritesSinceFlush;

    // Per-socket GSO staging: sprayed packets alternate sockets, so they are never back to back in
    // the chunk; each socket gathers its own run here (one copy per packet buys one GSO send per
    // up to 64 packets instead of one datagram each).
    private static final int STAGE_BYTES = 65_536;
    private final ByteBuf[] stage;
    private final InetSocketAddress[] stageRecipient;
    private final int[] stageBytes;
    private final int[] stageSegment;
    private final int[] stageCount;
    private final boolean[] stageClosed;

    NettySink(final ByteBufAllocator allocator, final int chunkBytes, final int maxPacketsPerCycle,
              final PeerTable peers, final DriverCounters counters, final Channel[] entropyChannels,
              final int[] entropyPorts, final Channel endpointChannel, final int endpointPort, final boolean gso) {
        this.allocator = allocator;
        this.chunkBytes = chunkBytes;
        this.maxPacketsPerCycle = maxPacketsPerCycle;
        this.peers = peers;
        this.counters = counters;
        this.channels = new Channel[entropyChannels.length + 1];
        System.arraycopy(entropyChannels, 0, channels, 0, entropyChannels.length);
        this.endpointIndex = entropyChannels.length;
        this.channels[endpointIndex] = endpointChannel;
        this.dirty = new boolean[channels.length];
        this.stage = new ByteBuf[channels.length];
        this.stageRecipient = new InetSocketAddress[channels.length];
        this.stageBytes = new int[channels.length];
        this.stageSegment = new int[channels.length];
        this.stageCount = new int[channels.length];
        this.stageClosed = new boolean[channels.length];
        for (int i = 0; i < entropyPorts.length; i++) {
            indexByPort.put(entropyPorts[i], i);
        }
        // Connection-manager packets are sent from the endpoint port [ENC-003].
        indexByPort.put(endpointPort, endpointIndex);
        this.gso = gso;
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
            if (!channel.isWritable() && channel.isActive()) {
                anyBackedUp = true;
                break;
            }
        }
        backedUp = anyBackedUp;
    }

    @Override
    public MutableDirectBuffer buffer() {
        return view;
    }

    @Override
    public int claim(final int maxLength) {
        if (closed || backedUp || committedThisCycle >= maxPacketsPerCycle) {
            counters.increment(DriverCounter.SINK_FULL);
            return NO_ROOM;
        }
        if (chunk == null || position + maxLength > chunk.capacity()) {
            rotate(maxLength);
        }
        return position;
    }

    @Override
    public void commit(final int offset, final int length, final int peerId, final int entropy) {
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
        committedThisCycle++;
        if (gso) {
            stage(index, recipient, offset, length);
            // The packet now lives in the socket's stage: its room in the chunk can be reused.
            position = offset;
            return;
        }
        position = offset + length;
        append(index, recipient, offset, length);
    }

    private void stage(final int index, final InetSocketAddress recipient, final int offset, final int length) {
        if (stage[index] != null && (stageClosed[index] || length > stageSegment[index]
            || stageCount[index] >= MAX_GSO_SEGMENTS || stageBytes[index] + length > MAX_GSO_BYTES
            || !recipient.equals(stageRecipient[index]))) {
            writeStage(index);
        }
        ByteBuf buf = stage[index];
        if (buf == null) {
            buf = allocator.directBuffer(STAGE_BYTES, STAGE_BYTES);
            stage[index] = buf;
            stageRecipient[index] = recipient;
            stageSegment[index] = length;
            stageBytes[index] = 0;
            stageCount[index] = 0;
            stageClosed[index] = false;
        }
        buf.setBytes(stageBytes[index], chunk, offset, length);
        stageBytes[index] += length;
        stageCount[index]++;
        // Every segment but the last must be exactly segment-sized.
        stageClosed[index] = length < stageSegment[index];
    }

    private void writeStage(final int index) {
        final ByteBuf buf = stage[index];
        stage[index] = null;
        buf.writerIndex(stageBytes[index]);
        final int count = stageCount[index];
        final DatagramPacket packet;
        if (count > 1) {
            packet = new SegmentedDatagramPacket(buf, stageSegment[index], stageRecipient[index]);
            counters.increment(DriverCounter.GSO_WRITES);
            counters.add(DriverCounter.GSO_SEGMENTS, count);
            gsoWritesSinceFlush++;
        } else {
            packet = new DatagramPacket(buf, stageRecipient[index]);
        }
        stageRecipient[index] = null;
        channels[index].write(packet, channels[index].voidPromise());
        dirty[index] = true;
        counters.add(DriverCounter.DATAGRAMS_SENT, count);
        counters.add(DriverCounter.BYTES_SENT, stageBytes[index]);
        counters.addSent(index, count);
    }

    private void append(final int index, final InetSocketAddress recipient, final int offset, final int length) {
        if (runIndex >= 0) {
            if (gso && !runClosed && index == runIndex && offset == runStart + runBytes && length <= runSegment
                && runCount < MAX_GSO_SEGMENTS && runBytes + length <= MAX_GSO_BYTES
                && recipient.equals(runRecipient)) {
                runBytes += length;
                runCount++;
                // Every segment but the last must be exactly segment-sized.
                runClosed = length < runSegment;
                return;
            }
            writeRun();
        }
        runIndex = index;
        runRecipient = recipient;
        runStart = offset;
        runBytes = length;
        runSegment = length;
        runCount = 1;
        runClosed = false;
    }

    private void writeRun() {
        final Channel channel = channels[runIndex];
        final ByteBuf slice = chunk.retainedSlice(runStart, runBytes);
        final DatagramPacket packet;
        if (runCount > 1) {
            packet = new SegmentedDatagramPacket(slice, runSegment, runRecipient);
            counters.increment(DriverCounter.GSO_WRITES);
            counters.add(DriverCounter.GSO_SEGMENTS, runCount);
            gsoWritesSinceFlush++;
        } else {
            packet = new DatagramPacket(slice, runRecipient);
        }
        channel.write(packet, channel.voidPromise());
        dirty[runIndex] = true;
        counters.add(DriverCounter.DATAGRAMS_SENT, runCount);
        counters.add(DriverCounter.BYTES_SENT, runBytes);
        counters.addSent(runIndex, runCount);
        runIndex = -1;
        runRecipient = null;
    }

    /**
     * Writes the pending run and flushes every socket written to since the last flush.
     *
     * @return number of sockets flushed
     */
    int flush() {
        if (runIndex >= 0) {
            writeRun();
        }
        for (int i = 0; i < stage.length; i++) {
            if (stage[i] != null) {
                writeStage(i);
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
        if (flushed > 0) {
            counters.add(DriverCounter.FLUSHES, flushed);
        }
        return flushed;
    }

    private void rotate(final int maxLength) {
        if (runIndex >= 0) {
            writeRun();
        }
        if (chunk != null) {
            // Slices already written hold their own references; the chunk returns to the pool when
            // the last of them is sent.
            chunk.release();
            chunk = null;
        }
        final int size = Math.max(chunkBytes, maxLength);
        chunk = allocator.directBuffer(size, size);
        // Wrap the chunk's own NIO view, not its raw address: the engine's CRC-32C uses the JDK
        // intrinsic only for ByteBuffer- or array-backed buffers (for a raw address it must fall
        // back to a byte-at-a-time loop). internalNioBuffer reuses one ByteBuffer per chunk.
        final java.nio.ByteBuffer nio = chunk.internalNioBuffer(0, chunk.capacity());
        view.wrap(nio, nio.position(), chunk.capacity());
        position = 0;
    }

    /** Drops the pending run and releases the current chunk. Idempotent. */
    void close() {
        closed = true;
        runIndex = -1;
        runRecipient = null;
        for (int i = 0; i < stage.length; i++) {
            if (stage[i] != null) {
                stage[i].release();
                stage[i] = null;
                stageRecipient[i] = null;
            }
        }
        if (chunk != null) {
            chunk.release();
            chunk = null;
        }
        view.wrap(new byte[0]);
    }
}
