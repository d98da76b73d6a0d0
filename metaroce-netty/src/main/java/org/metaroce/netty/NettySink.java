// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty;

import java.net.InetSocketAddress;

import org.agrona.MutableDirectBuffer;
import org.agrona.collections.Int2IntHashMap;
import org.agrona.concurrent.UnsafeBuffer;
import org.metaroce.core.engine.TransmitSink;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The device's {@link TransmitSink}, the same for every transport: the engine writes packets
 * straight into off-heap chunks, and committed packets are queued, without copying, in the
 * {@link SendBatch} of the send socket whose local port is the packet's entropy value, then handed
 * to that {@link UdpSocket}. (The name predates the transport seam: nothing here depends on Netty.)
 *
 * <p>Every socket has its own chunk: the engine names the entropy value (the socket) when it
 * claims room ({@link #claim(int, int)}), so the packets of one socket lie back to back even when
 * a QP sprays over several paths. Consecutive packets of a socket to the same destination and of
 * the same length (the last one may be shorter) form a run; a run of at least
 * {@code gsoMinSegments} datagrams on a socket that can do UDP GSO is queued as one segmented
 * entry, any other as separate datagrams.
 *
 * <p>Send order: with order preserved (the default) a socket's batch is handed over as soon as a
 * packet for another socket is committed, so datagrams reach the kernel in the engine's order;
 * otherwise each batch is handed over once, at the end of the duty cycle ({@link #flush()}).
 *
 * <p>Backpressure: a claim returns {@link #NO_ROOM} once {@code maxPacketsPerCycle} packets were
 * committed in this cycle, while a socket reports {@link OutboundState#BACKED_UP}, or while a
 * socket left part of its batch unsent ({@link SendFailure#WOULD_BLOCK}); such a remainder is
 * handed over again at the start of every cycle until the socket takes it. A chunk that such a
 * remainder points into is not released.
 *
 * <p>Errors (see {@link SendFailure}): the failed datagram is dropped and counted as a send
 * error, the rest of the batch goes on; a refused GSO message turns GSO off for the device;
 * "port unreachable" reported for an earlier datagram is consumed by the report, so an addressed
 * datagram is sent once more. Transports that fail later (Netty's pipeline) report through
 * {@link #sendFailed(SendFailure)}.
 *
 * <p>Payloads by reference: when every socket gathers ({@link SocketCapabilities#gather()}), the
 * sink takes what the engine offers with {@link #reference}: the payload's bytes stay in
 * registered memory, their room in the chunk stays unwritten, and the packet's commit records the
 * range in its chunk's {@link SendChunk#references()} for the socket to send from there. The
 * payload is then copied once, by the kernel, instead of twice.
 *
 * <p>Owning thread only.
 */
final class NettySink implements TransmitSink {
    private static final Logger LOG = LoggerFactory.getLogger(NettySink.class);
    /** Linux UDP_MAX_SEGMENTS is 64 on older kernels (128 since 6.x): stay within the older limit. */
    static final int MAX_GSO_SEGMENTS = 64;
    /** A GSO write is one IP datagram before segmentation: at most 64 KiB minus headers. */
    static final int MAX_GSO_BYTES = 65_000;

    private final UdpTransport chunks;
    private final int chunkBytes;
    private final int maxPacketsPerCycle;
    private final PeerTable peers;
    private final DriverCounters counters;
    private final UnsafeBuffer emptyView = new UnsafeBuffer(new byte[0]);
    private final boolean preserveSendOrder;
    private final int gsoMinSegments;
    /** Whether every socket gathers, so that payloads may be taken by reference. */
    private final boolean gather;
    // The reference offered for the packet being written (claimed, not yet committed).
    private boolean pending;
    private int pendingAt;
    private int pendingLength;
    private long pendingAddress;

    /** Sockets by index: entropy sockets 0..n-1, then the endpoint socket at n. */
    private final UdpSocket[] sockets;
    private final SocketCapabilities[] capabilities;
    private final SendBatch[] batches;
    private final Int2IntHashMap indexByPort = new Int2IntHashMap(-1);
    private final int endpointIndex;
    private boolean gso;
    /**
     * Per entropy socket, the peer it is connected to: the first one a lone datagram went to
     * (null until then, or when connecting failed). Datagrams to that peer go without an address:
     * the kernel keeps the socket's route instead of looking it up per datagram (about 0.35 µs per
     * send on loopback). Datagrams to other peers still name theirs ({@code sendto} with an
     * address works on a connected UDP socket). Entropy sockets never read, so the connection
     * filters nothing they need. Only sockets bound to a specific address are connected:
     * connecting a wildcard-bound socket would pin its source address to the first peer's route,
     * wrong for peers reached through another interface.
     */
    private final InetSocketAddress[] connectedTo;
    /** Per socket, whether it may still be connected (entropy socket, able to, specific address, not tried yet). */
    private final boolean[] mayConnect;
    private boolean warnedFallback;
    /** Where a socket whose buffer filled is registered, so that a blocked driver wakes when it drains. */
    private WritabilityWatch writability = WritabilityWatch.NONE;
    /** Per socket, whether it is registered with {@link #writability} (from a full buffer until its batch is empty). */
    private final boolean[] watchedWritable;

    // One chunk (and view of it) per socket; the latest claim's socket is current.
    private final SendChunk[] chunk;
    private final UnsafeBuffer[] view;
    private final int[] position;
    private int current = -1;
    /** Socket of the latest committed packet, or -1 right after a flush. */
    private int lastIndex = -1;
    private int committedThisCycle;
    private boolean backedUp;
    private boolean closed;

    // Per sending socket, the run of packets being merged, and the index of the chunk it lies in (-1: none).
    private final int[] runChunk;
    private final InetSocketAddress[] runRecipient;
    private final int[] runStart;
    private final int[] runBytes;
    private final int[] runSegment;
    private final int[] runCount;
    private final boolean[] runClosed;
    private long gsoWritesSinceFlush;

    /**
     * @param chunks the transport whose chunks the engine writes into (that of the entropy sockets)
     * @param entropySockets the send sockets, in entropy port order
     * @param entropyPorts their local ports
     * @param endpointSocket the endpoint socket (connection-manager packets and entropy fallbacks leave from it)
     */
    NettySink(final UdpTransport chunks, final int chunkBytes, final int maxPacketsPerCycle, final PeerTable peers,
              final DriverCounters counters, final UdpSocket[] entropySockets, final int[] entropyPorts,
              final UdpSocket endpointSocket, final boolean gso, final int gsoMinSegments,
              final boolean connectEntropySockets, final boolean preserveSendOrder) {
        this.chunks = chunks;
        this.chunkBytes = chunkBytes;
        this.maxPacketsPerCycle = maxPacketsPerCycle;
        this.peers = peers;
        this.counters = counters;
        this.preserveSendOrder = preserveSendOrder;
        this.gso = gso;
        this.gsoMinSegments = gsoMinSegments;
        final int n = entropySockets.length + 1;
        this.sockets = new UdpSocket[n];
        System.arraycopy(entropySockets, 0, sockets, 0, entropySockets.length);
        this.endpointIndex = entropySockets.length;
        this.sockets[endpointIndex] = endpointSocket;
        this.capabilities = new SocketCapabilities[n];
        this.batches = new SendBatch[n];
        this.chunk = new SendChunk[n];
        this.view = new UnsafeBuffer[n];
        this.position = new int[n];
        this.runChunk = new int[n];
        this.runRecipient = new InetSocketAddress[n];
        this.runStart = new int[n];
        this.runBytes = new int[n];
        this.runSegment = new int[n];
        this.runCount = new int[n];
        this.runClosed = new boolean[n];
        this.connectedTo = new InetSocketAddress[n];
        this.mayConnect = new boolean[n];
        this.watchedWritable = new boolean[n];
        for (int i = 0; i < n; i++) {
            capabilities[i] = sockets[i].capabilities();
            batches[i] = new SendBatch();
            view[i] = new UnsafeBuffer(new byte[0]);
            runChunk[i] = -1;
            mayConnect[i] = connectEntropySockets && i != endpointIndex && capabilities[i].connect()
                && !sockets[i].localAddress().getAddress().isAnyLocalAddress();
        }
        boolean allGather = true;
        for (final SocketCapabilities c : capabilities) {
            allGather &= c.gather();
        }
        this.gather = allGather;
        for (int i = 0; i < entropyPorts.length; i++) {
            indexByPort.put(entropyPorts[i], i);
        }
        // Connection-manager packets are sent from the endpoint port [ENC-003].
        indexByPort.put(endpointSocket.localAddress().getPort(), endpointIndex);
    }

    /**
     * @return whether a send socket holds datagrams the kernel has not taken yet: in the
     *     transport's queue, or left unsent in its batch
     */
    boolean hasPendingOutbound() {
        for (int i = 0; i < sockets.length; i++) {
            // Outside a poll every batch was handed over: what remains in one, the socket did not take.
            if (batches[i].size() > 0 || sockets[i].outboundState() != OutboundState.IDLE) {
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

    /**
     * A send failed after its socket took it (a transport that queues, such as Netty's pipeline,
     * learns the outcome only then): counted, and GSO turns off when a GSO message was handed over
     * since the last flush and the failure is not about the peer.
     *
     * @param failure what went wrong
     */
    void sendFailed(final SendFailure failure) {
        counters.sendFailed(failure);
        if (gso && gsoWritesSinceFlush > 0 && turnsGsoOff(failure)) {
            disableGso();
        }
    }

    /** @return whether a GSO message that failed so shows the kernel cannot segment (not a peer or a rule) */
    private static boolean turnsGsoOff(final SendFailure failure) {
        return failure == SendFailure.MESSAGE_TOO_LONG || failure == SendFailure.IO_ERROR
            || failure == SendFailure.OTHER;
    }

    /**
     * Registers sockets whose buffer is full with {@code watch} from now on (the readiness wait the
     * owning thread blocks in); those registered with the previous watch move over.
     */
    void watchWritabilityWith(final WritabilityWatch watch) {
        for (int i = 0; i < sockets.length; i++) {
            if (watchedWritable[i]) {
                writability.unwatchWritable(sockets[i]);
            }
        }
        writability = watch;
        for (int i = 0; i < sockets.length; i++) {
            if (watchedWritable[i]) {
                writability.watchWritable(sockets[i]);
            }
        }
    }

    /** Called at the start of each duty cycle, before the endpoint polls: hands over what sockets left unsent. */
    void beginCycle() {
        committedThisCycle = 0;
        boolean anyBackedUp = false;
        for (int i = 0; i < sockets.length; i++) {
            if (batches[i].size() > 0 && !closed) {
                handOver(i);
            }
            if (batches[i].size() > 0 || sockets[i].outboundState() == OutboundState.BACKED_UP) {
                anyBackedUp = true;
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
        pending = false; // a packet claimed again instead of committed drops its reference
        if (closed || backedUp || committedThisCycle >= maxPacketsPerCycle) {
            counters.increment(DriverCounter.SINK_FULL);
            return NO_ROOM;
        }
        if ((chunk[index] == null || position[index] + maxLength > chunk[index].capacity())
            && !rotate(index, maxLength)) {
            counters.increment(DriverCounter.SINK_FULL);
            return NO_ROOM;
        }
        current = index;
        return position[index];
    }

    /**
     * Takes the payload of the packet being written by reference when every socket gathers and
     * the chunk records references: the commit records the range in the chunk.
     */
    @Override
    public boolean reference(final int at, final long address, final int length) {
        if (!gather || current < 0 || closed || chunk[current] == null || chunk[current].references() == null) {
            return false;
        }
        pending = true; // for chunk[current]: a claim, the only way to change current, drops it
        pendingAt = at;
        pendingLength = length;
        pendingAddress = address;
        return true;
    }

    @Override
    public void commit(final int offset, final int length, final int peerId, final int entropy) {
        final int written = current;
        final boolean referenced = pending;
        pending = false;
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
        if (referenced) {
            if (pendingAt < offset || pendingAt + pendingLength > offset + length) {
                throw new IllegalStateException("a payload reference at " + pendingAt + " (" + pendingLength
                    + " bytes) lies outside the packet committed at " + offset + " (" + length + " bytes)");
            }
            chunk[written].references().add(pendingAt, pendingLength, pendingAddress);
            counters.increment(DriverCounter.PAYLOADS_BY_REFERENCE);
        }
        committedThisCycle++;
        if (preserveSendOrder && lastIndex >= 0 && lastIndex != index) {
            // Leaving a socket: what it holds goes to the kernel now, so datagrams leave in the
            // order the engine committed them. Handing over per socket only at the end of the
            // cycle would group them by socket, and a sprayed QP would see up to a whole cycle of
            // self-inflicted reordering (beyond the 64-packet SACK bitmap: an ACK per packet).
            flushSocket(lastIndex);
        }
        lastIndex = index;
        append(index, written, recipient, offset, length);
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
            closeRun(index);
        }
        runChunk[index] = chunkIndex;
        runRecipient[index] = recipient;
        runStart[index] = offset;
        runBytes[index] = length;
        runSegment[index] = length;
        runCount[index] = 1;
        runClosed[index] = false;
    }

    /** Queues the socket's open run in its batch: one GSO message if long enough and the socket can, else datagrams. */
    private void closeRun(final int index) {
        final InetSocketAddress recipient = runRecipient[index];
        final boolean segmented = runCount[index] >= gsoMinSegments && capabilities[index].gso() && gso;
        if (!segmented && mayConnect[index] && batches[index].size() == 0
            && sockets[index].outboundState() == OutboundState.IDLE) {
            connect(index, recipient);
        }
        final boolean connected = isConnectedTo(index, recipient);
        batches[index].add(chunk[runChunk[index]], runStart[index], runBytes[index], runSegment[index], segmented,
            connected ? null : recipient);
        if (segmented) {
            gsoWritesSinceFlush++;
        }
        runChunk[index] = -1;
        runRecipient[index] = null;
    }

    private void flushSocket(final int index) {
        if (runChunk[index] >= 0) {
            closeRun(index);
        }
        if (batches[index].size() > 0) {
            handOver(index);
        }
    }

    /**
     * Hands socket {@code index}'s batch over until the socket took it all or is full; failed
     * datagrams are dropped and counted. A full socket is watched for writability until a later
     * hand-over empties its batch.
     *
     * @return whether the batch is empty now
     */
    private boolean handOver(final int index) {
        final boolean empty = sendBatch(index);
        if (!empty) {
            copyReferencesIn(batches[index]);
        }
        if (empty && watchedWritable[index]) {
            watchedWritable[index] = false;
            writability.unwatchWritable(sockets[index]);
        } else if (!empty && !watchedWritable[index]) {
            watchedWritable[index] = true;
            writability.watchWritable(sockets[index]);
        }
        return empty;
    }

    /**
     * Copies the payloads that what a socket left unsent takes by reference into its chunk. Such
     * a remainder goes in a later duty cycle, by which time the work request may have completed
     * (a retransmission whose original arrived) and its memory been reused or freed: in this
     * cycle, the one that wrote the packets, the request is still outstanding and its memory as
     * the packet's Integrity Check covers it.
     */
    private void copyReferencesIn(final SendBatch batch) {
        for (int i = 0; i < batch.size(); i++) {
            final PayloadReferences refs = batch.chunk(i).references();
            if (refs != null && refs.size() > 0) {
                counters.add(DriverCounter.PAYLOADS_COPIED_FOR_RETRY,
                    refs.copyIn(batch.offset(i), batch.offset(i) + batch.bytes(i), batch.chunk(i).address()));
            }
        }
    }

    /** @return whether socket {@code index}'s batch is empty after handing it over (see {@link #handOver}) */
    private boolean sendBatch(final int index) {
        final SendBatch batch = batches[index];
        final UdpSocket socket = sockets[index];
        counters.increment(DriverCounter.FLUSHES);
        boolean retriedUnreachable = false;
        while (batch.size() > 0) {
            final int queued = batch.datagrams();
            final int taken = socket.send(batch);
            if (taken > 0) {
                batch.consume(taken);
                countSent(index, taken, batch.removedBytes());
                if (batch.removedSegmentedEntries() > 0) {
                    counters.add(DriverCounter.GSO_WRITES, batch.removedSegmentedEntries());
                    counters.add(DriverCounter.GSO_SEGMENTS, batch.removedSegmentedDatagrams());
                }
                retriedUnreachable = false;
            }
            final SendFailure failure = batch.takeStop();
            if (taken == queued) {
                return true;
            }
            if (failure == null) {
                if (taken == 0) {
                    // A socket that takes nothing and gives no reason is full by another name.
                    backedUp = true;
                    return false;
                }
                continue; // a limit of the transport's own (vector length): the rest goes in the next call
            }
            if (failure == SendFailure.WOULD_BLOCK) {
                // The rest waits in the batch; no new packets until a cycle finds the socket taking it.
                counters.sendFailed(failure);
                backedUp = true;
                return false;
            }
            if (failure == SendFailure.PEER_UNREACHABLE && !retriedUnreachable && batch.recipient(0) != null
                && !batch.segmented(0)) {
                // The error was the connected peer's (its port is closed), reported by this send; it
                // is consumed now, so the datagram for another peer goes again.
                retriedUnreachable = true;
                continue;
            }
            dropFailed(index, batch, failure);
            retriedUnreachable = false;
        }
        return true;
    }

    private void dropFailed(final int index, final SendBatch batch, final SendFailure failure) {
        final boolean segmented = batch.segmented(0);
        final InetSocketAddress recipient = batch.recipient(0);
        batch.dropFirst();
        // As with any UDP loss: the datagram is gone, the protocol retransmits.
        counters.sendFailed(failure);
        if (segmented && turnsGsoOff(failure)) {
            disableGso();
        }
        if (LOG.isDebugEnabled()) {
            LOG.debug("send from {} to {} failed: {}", sockets[index].localAddress(),
                recipient == null ? connectedTo[index] : recipient, failure);
        }
    }

    private boolean isConnectedTo(final int index, final InetSocketAddress recipient) {
        final InetSocketAddress peer = connectedTo[index];
        return peer != null && (peer == recipient || peer.equals(recipient));
    }

    /** Connects entropy socket {@code index} to {@code peer}, once; a failure leaves it unconnected. */
    private void connect(final int index, final InetSocketAddress peer) {
        mayConnect[index] = false;
        try {
            if (sockets[index].connect(peer)) {
                connectedTo[index] = peer;
                counters.increment(DriverCounter.CONNECTED_SOCKETS);
            }
        } catch (final java.io.IOException ex) {
            LOG.debug("entropy socket {} not connected to {}: {}", sockets[index].localAddress(), peer, ex.toString());
        }
    }

    private void countSent(final int index, final int datagrams, final long bytes) {
        counters.add(DriverCounter.DATAGRAMS_SENT, datagrams);
        counters.add(DriverCounter.BYTES_SENT, bytes);
        counters.addSent(index, datagrams);
    }

    /**
     * Closes the open runs and hands every socket's batch over.
     *
     * @return number of sockets that were handed something, the work of a duty cycle; a full socket
     *     that took nothing counts only when no readiness wait watches it (the thread then tries it
     *     again at once, as before), so that a blocking driver waits for it instead of spinning
     */
    int flush() {
        int flushed = 0;
        for (int i = 0; i < sockets.length; i++) {
            if (runChunk[i] >= 0) {
                closeRun(i);
            }
            if (batches[i].size() > 0) {
                final int before = batches[i].datagrams();
                handOver(i);
                if (batches[i].datagrams() < before || writability == WritabilityWatch.NONE) {
                    flushed++;
                }
            }
        }
        gsoWritesSinceFlush = 0;
        lastIndex = -1;
        return flushed;
    }

    /**
     * Gives socket {@code index} a fresh chunk. Runs and batches pointing into the old one are
     * handed over first (a synchronous transport reads the memory during its send); if a socket
     * leaves some of that unsent, the old chunk stays and the claim is refused.
     *
     * @return whether the socket has room now
     */
    private boolean rotate(final int index, final int maxLength) {
        final SendChunk old = chunk[index];
        if (old != null) {
            for (int i = 0; i < sockets.length; i++) {
                if (runChunk[i] == index) {
                    closeRun(i);
                }
            }
            for (int i = 0; i < sockets.length; i++) {
                if (batches[i].references(old) && !handOver(i)) {
                    return false;
                }
            }
            // A transport that still queues datagrams of the chunk holds its own reference to it.
            old.release();
            chunk[index] = null;
        }
        final int size = Math.max(chunkBytes, maxLength);
        final SendChunk fresh = chunks.allocateChunk(size);
        chunk[index] = fresh;
        // Wrap the chunk's ByteBuffer, not its raw address: the engine's CRC-32C uses the JDK
        // intrinsic only for ByteBuffer- or array-backed buffers (for a raw address it must fall
        // back to a byte-at-a-time loop).
        view[index].wrap(fresh.buffer(), fresh.bufferOffset(), fresh.capacity());
        position[index] = 0;
        return true;
    }

    /** Drops the pending runs and batches, stops watching full sockets and releases every chunk. Idempotent. */
    void close() {
        closed = true;
        for (int i = 0; i < sockets.length; i++) {
            if (watchedWritable[i]) {
                watchedWritable[i] = false;
                writability.unwatchWritable(sockets[i]);
            }
            runChunk[i] = -1;
            runRecipient[i] = null;
            batches[i].clear();
            if (chunk[i] != null) {
                chunk[i].release();
                chunk[i] = null;
            }
            view[i].wrap(new byte[0]);
        }
        current = -1;
    }
}
