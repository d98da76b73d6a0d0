// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.bench.engine;

import java.nio.ByteBuffer;

import org.agrona.BitUtil;
import org.agrona.BufferUtil;
import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.metaroce.core.engine.DatagramEndpoint;
import org.metaroce.core.engine.TransmitSink;

/**
 * An allocation-free, lossless, in-memory connection of two {@link DatagramEndpoint}s for
 * benchmarks: the cheapest possible "network", so that a benchmark measures the protocol engine
 * and nothing else.
 *
 * <p>Each side polls into its own {@link TransmitSink}: a preallocated off-heap buffer (a direct
 * {@link ByteBuffer}, so the engine's CRC-32C takes the JDK intrinsic path exactly as it does
 * under a real driver) plus preallocated arrays recording each committed packet's offset, length
 * and destination. A sink holds at most {@code batchPackets} packets per poll, like a driver's
 * send ring (sendmmsg batch); when it is full the engine stops emitting and continues on its next
 * poll. Packets are handed to the other endpoint straight out of the sender's sink buffer, with no
 * copy, and the sink is emptied afterwards.
 *
 * <p>One round ({@link #pumpOnce(long)}) polls A and delivers its packets to B, then polls B and
 * delivers its packets to A. {@link #pump(long)} repeats rounds until nothing moves. Time is the
 * caller's: every call takes {@code nowNs} from a virtual clock the benchmark advances. Packets
 * whose destination is not the other endpoint are not delivered; they are counted as misrouted.
 *
 * <p>Single-threaded, like the endpoints it drives. Nothing here allocates after construction.
 */
public final class LoopbackPipe {
    /** Default bytes of each sink buffer: 1 MiB. */
    public static final int DEFAULT_SINK_BYTES = 1 << 20;
    /** Default packets per poll: one 64 KiB WRITE at a 4096-byte path MTU. */
    public static final int DEFAULT_BATCH_PACKETS = 16;

    private final DatagramEndpoint a;
    private final DatagramEndpoint b;
    private final int peerIdOfA;
    private final int peerIdOfB;
    private final Sink sinkA;
    private final Sink sinkB;

    private long packetsAToB;
    private long packetsBToA;
    private long bytesAToB;
    private long bytesBToA;
    private long misrouted;
    private long rounds;

    /**
     * A pipe with {@link #DEFAULT_SINK_BYTES} and {@link #DEFAULT_BATCH_PACKETS}.
     *
     * @param a one endpoint
     * @param peerIdOfA the driver identifier of A's address: B's queue pairs name A with it
     * @param b the other endpoint
     * @param peerIdOfB the driver identifier of B's address: A's queue pairs name B with it
     */
    public LoopbackPipe(final DatagramEndpoint a, final int peerIdOfA, final DatagramEndpoint b, final int peerIdOfB) {
        this(a, peerIdOfA, b, peerIdOfB, DEFAULT_SINK_BYTES, DEFAULT_BATCH_PACKETS);
    }

    /**
     * @param a one endpoint
     * @param peerIdOfA the driver identifier of A's address: B's queue pairs name A with it
     * @param b the other endpoint
     * @param peerIdOfB the driver identifier of B's address: A's queue pairs name B with it
     * @param sinkBytes bytes of each side's transmit buffer
     * @param batchPackets most packets one poll of one side may commit (the send batch)
     */
    public LoopbackPipe(final DatagramEndpoint a, final int peerIdOfA, final DatagramEndpoint b, final int peerIdOfB,
                        final int sinkBytes, final int batchPackets) {
        if (a == null || b == null || a == b) {
            throw new IllegalArgumentException("two distinct endpoints are required");
        }
        if (peerIdOfA == peerIdOfB) {
            throw new IllegalArgumentException("the two sides need distinct peer ids, both were " + peerIdOfA);
        }
        if (sinkBytes < 64 || batchPackets < 1) {
            throw new IllegalArgumentException("sinkBytes must be >= 64 and batchPackets >= 1, got "
                + sinkBytes + " and " + batchPackets);
        }
        this.a = a;
        this.b = b;
        this.peerIdOfA = peerIdOfA;
        this.peerIdOfB = peerIdOfB;
        this.sinkA = new Sink(sinkBytes, batchPackets);
        this.sinkB = new Sink(sinkBytes, batchPackets);
    }

    /**
     * One round: A emits and B receives, then B emits and A receives.
     *
     * @param nowNs the virtual time of this round
     * @return packets moved in both directions
     */
    public int pumpOnce(final long nowNs) {
        rounds++;
        a.poll(nowNs, sinkA);
        final int fromA = deliver(nowNs, sinkA, b, peerIdOfB, peerIdOfA);
        packetsAToB += fromA;
        bytesAToB += sinkA.committedBytes;
        sinkA.reset();

        b.poll(nowNs, sinkB);
        final int fromB = deliver(nowNs, sinkB, a, peerIdOfA, peerIdOfB);
        packetsBToA += fromB;
        bytesBToA += sinkB.committedBytes;
        sinkB.reset();
        return fromA + fromB;
    }

    /**
     * Runs rounds at {@code nowNs} until one moves nothing.
     *
     * @param nowNs the virtual time
     * @return packets moved in both directions
     */
    public long pump(final long nowNs) {
        long moved = 0;
        int n;
        while ((n = pumpOnce(nowNs)) > 0) {
            moved += n;
        }
        return moved;
    }

    private int deliver(final long nowNs, final Sink from, final DatagramEndpoint to, final int toPeerId,
                        final int fromPeerId) {
        final UnsafeBuffer buffer = from.buffer;
        final int[] offsets = from.offsets;
        final int[] lengths = from.lengths;
        final int[] peers = from.peers;
        int delivered = 0;
        for (int i = 0, n = from.count; i < n; i++) {
            if (peers[i] != toPeerId) {
                misrouted++;
                continue;
            }
            to.onDatagram(nowNs, buffer, offsets[i], lengths[i], fromPeerId, DatagramEndpoint.ECN_NOT_ECT);
            delivered++;
        }
        return delivered;
    }

    /** @return packets delivered from A to B since construction */
    public long packetsAToB() {
        return packetsAToB;
    }

    /** @return packets delivered from B to A since construction */
    public long packetsBToA() {
        return packetsBToA;
    }

    /** @return bytes (UDP payload) committed by A since construction */
    public long bytesAToB() {
        return bytesAToB;
    }

    /** @return bytes (UDP payload) committed by B since construction */
    public long bytesBToA() {
        return bytesBToA;
    }

    /** @return packets not delivered because their destination was not the other endpoint */
    public long misrouted() {
        return misrouted;
    }

    /** @return rounds run since construction */
    public long rounds() {
        return rounds;
    }

    /** @return times a claim on either side found the sink full (the engine then waits for the next poll) */
    public long sinkFullEvents() {
        return sinkA.noRoom + sinkB.noRoom;
    }

    /**
     * Appends the pipe's statistics without string formatting machinery (safe inside a measurement).
     *
     * @param sb where to append
     * @return {@code sb}
     */
    public StringBuilder appendTo(final StringBuilder sb) {
        return sb.append("LoopbackPipe{rounds=").append(rounds).append(", aToB=").append(packetsAToB)
            .append(" pkts/").append(bytesAToB).append(" B, bToA=").append(packetsBToA).append(" pkts/")
            .append(bytesBToA).append(" B, misrouted=").append(misrouted).append(", sinkFull=")
            .append(sinkFullEvents()).append('}');
    }

    @Override
    public String toString() {
        return appendTo(new StringBuilder(160)).toString();
    }

    /**
     * One side's transmit ring: claims are 8-byte aligned slices of a preallocated off-heap buffer;
     * commits are recorded in preallocated arrays. It checks the claim/commit contract so that a
     * misbehaving engine fails the benchmark instead of corrupting it.
     */
    private static final class Sink implements TransmitSink {
        private static final int ALIGNMENT = 8;

        final UnsafeBuffer buffer;
        final int[] offsets;
        final int[] lengths;
        final int[] peers;
        final int maxPackets;
        int count;
        long committedBytes;
        long noRoom;
        private int position;
        private int claimOffset = NO_ROOM;
        private int claimLength;

        Sink(final int capacity, final int maxPackets) {
            final ByteBuffer memory = BufferUtil.allocateDirectAligned(BitUtil.align(capacity, 64), 64);
            this.buffer = new UnsafeBuffer(memory);
            this.maxPackets = maxPackets;
            this.offsets = new int[maxPackets];
            this.lengths = new int[maxPackets];
            this.peers = new int[maxPackets];
        }

        void reset() {
            count = 0;
            position = 0;
            committedBytes = 0;
            claimOffset = NO_ROOM;
        }

        @Override
        public MutableDirectBuffer buffer() {
            return buffer;
        }

        @Override
        public int claim(final int maxLength) {
            final int offset = BitUtil.align(position, ALIGNMENT);
            if (maxLength < 0) {
                throw new IllegalArgumentException("claim of a negative length: " + maxLength);
            }
            if (count == maxPackets || offset + (long) maxLength > buffer.capacity()) {
                noRoom++;
                return NO_ROOM;
            }
            claimOffset = offset;
            claimLength = maxLength;
            return offset;
        }

        @Override
        public void commit(final int offset, final int length, final int peerId, final int entropy) {
            if (offset != claimOffset || length < 0 || length > claimLength) {
                throw new IllegalStateException("commit(offset=" + offset + ", length=" + length
                    + ") does not match the pending claim (offset=" + claimOffset + ", length=" + claimLength + ')');
            }
            offsets[count] = offset;
            lengths[count] = length;
            peers[count] = peerId;
            count++;
            committedBytes += length;
            position = offset + length;
            claimOffset = NO_ROOM;
        }
    }
}
