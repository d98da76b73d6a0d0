// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.List;

import org.agrona.BufferUtil;
import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.metaroce.core.AllocationMeter;
import org.metaroce.core.SeededRandomSource;
import org.metaroce.core.verbs.AccessFlags;
import org.metaroce.core.verbs.CompletionQueue;
import org.metaroce.core.verbs.MemoryRegion;
import org.metaroce.core.verbs.PostStatus;
import org.metaroce.core.verbs.ProtectionDomain;
import org.metaroce.core.verbs.SendFlags;
import org.metaroce.core.verbs.SendRequest;
import org.metaroce.core.verbs.WcStatus;
import org.metaroce.core.verbs.WorkCompletion;
import org.metaroce.core.verbs.WrOpcode;

/**
 * What INLINE payloads cost a queue pair (issue 20, COLL-038): nothing while it posts nothing
 * inline, and once it does, what it has in flight at most, not depth x limit; and inline WRITEs
 * still copy at post time [OPS-041], arrive intact however their copies wrap around the storage,
 * and allocate nothing in steady state.
 */
class InlineStorageTest {
    private static final long SEED = Long.getLong("metaroce.seed", 20261205L);
    /** An INVOKER rank's queue pairs: 4 KiB inline, send queue depth 24 (4 slots x 4 + 8). */
    private static final int INLINE = 4096;
    private static final int DEPTH = 24;
    private static final int QPS = 128;
    private static final com.sun.management.ThreadMXBean THREAD =
        (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();

    private static long heapUsedAfterGc() {
        long least = Long.MAX_VALUE;
        for (int i = 0; i < 3; i++) {
            System.gc();
            least = Math.min(least, ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed());
        }
        return least;
    }

    /** @return {bytes this thread allocated per QP, bytes of heap retained per QP} for {@link #QPS} new QPs */
    private static long[] perQueuePair(final int maxInline, final List<QueuePair> keep) {
        final Endpoint endpoint = new Endpoint(new EndpointConfig().maxInlineData(maxInline), new SeededRandomSource(SEED));
        final ProtectionDomain pd = endpoint.allocateProtectionDomain();
        final CompletionQueue cq = endpoint.createCompletionQueue(4096);
        final QueuePairCapabilities caps = new QueuePairCapabilities(DEPTH, DEPTH, 1, 1, 1);
        // One first, so that what the endpoint allocates once (tables, schedules) is not counted.
        keep.add(endpoint.createQueuePair(pd, cq, cq, caps));
        final long heapBefore = heapUsedAfterGc();
        final long allocatedBefore = THREAD.getCurrentThreadAllocatedBytes();
        for (int i = 0; i < QPS; i++) {
            keep.add(endpoint.createQueuePair(pd, cq, cq, caps));
        }
        final long allocated = THREAD.getCurrentThreadAllocatedBytes() - allocatedBefore;
        final long retained = heapUsedAfterGc() - heapBefore;
        return new long[] {allocated / QPS, retained / QPS};
    }

    @Test
    void aQueuePairThatPostsNothingInlineHoldsNoInlineStorage() {
        final List<QueuePair> keep = new ArrayList<>();
        final long[] without = perQueuePair(0, keep);
        final long[] with = perQueuePair(INLINE, keep);
        System.out.println("per QP of depth " + DEPTH + ": inline 0: " + without[0] + " B allocated, " + without[1]
            + " B retained; inline " + INLINE + ": " + with[0] + " B allocated, " + with[1] + " B retained (a copy "
            + "per entry would be " + DEPTH * INLINE + " B)");
        for (final QueuePair qp : keep) {
            assertThat(qp.requester().inlineArena().capacity()).as("inline storage of an unused QP").isZero();
        }
        // Allocation on this thread is exact: the inline limit must not change what a QP allocates.
        assertThat(with[0] - without[0]).as("bytes a QP allocates for a 4 KiB inline limit").isLessThan(64);
        // The heap figure sees the JVM's own work too: a loose bound, far below a copy per entry (96 KiB).
        assertThat(with[1] - without[1]).as("bytes of heap a QP retains for a 4 KiB inline limit")
            .isLessThan(8 * 1024);
    }

    /** Two endpoints wired back to back with no queue: what one polls out, the other reads at once. */
    private static final class Node implements TransmitSink {
        final Endpoint endpoint;
        final QueuePair qp;
        final MemoryRegion mr;
        final CompletionQueue cq;
        final int peerId;
        private final UnsafeBuffer out = new UnsafeBuffer(BufferUtil.allocateDirectAligned(1 << 20, 64));
        private final int[] offsets = new int[512];
        private final int[] lengths = new int[512];
        private int packets;
        private int used;

        Node(final EndpointConfig config, final long seed, final int peerId) {
            this.peerId = peerId;
            endpoint = new Endpoint(config, new SeededRandomSource(seed));
            final ProtectionDomain pd = endpoint.allocateProtectionDomain();
            cq = endpoint.createCompletionQueue(4096);
            qp = endpoint.createQueuePair(pd, cq, cq, new QueuePairCapabilities(DEPTH, DEPTH, 2, 1, 1));
            mr = pd.registerMemory(BufferUtil.allocateDirectAligned(1 << 20, 64), AccessFlags.ALL);
        }

        @Override
        public MutableDirectBuffer buffer() {
            return out;
        }

        @Override
        public int claim(final int maxLength) {
            if (packets == offsets.length || used + maxLength > out.capacity()) {
                return NO_ROOM;
            }
            return used;
        }

        @Override
        public void commit(final int offset, final int length, final int peer, final int entropy) {
            offsets[packets] = offset;
            lengths[packets] = length;
            packets++;
            used = offset + length;
        }

        /** Polls this endpoint and hands what it sent to {@code to}, which knows this one as {@link #peerId}. */
        int pollInto(final Node to, final long nowNs) {
            final int n = endpoint.poll(nowNs, this);
            for (int i = 0; i < packets; i++) {
                to.endpoint.onDatagram(nowNs, out, offsets[i], lengths[i], peerId, 0);
            }
            packets = 0;
            used = 0;
            return n;
        }
    }

    private Node a;
    private Node b;
    private long now = 1_000_000;
    private final SendRequest wr = new SendRequest(2);
    private final WorkCompletion[] wcs = {new WorkCompletion(), new WorkCompletion(), new WorkCompletion(),
        new WorkCompletion()};
    private long wrong;
    private long failed;
    private int mostInFlight;

    /** Lengths of the WRITEs, in turn: one packet and several (MTU 1024), two entries for some. */
    private static final int[] LENGTHS = {8, 100, 1000, 4096, 3000, 1, 2500};

    private static byte expected(final int round, final int write, final int i) {
        return (byte) (i * 31 + round * 7 + write);
    }

    /**
     * One round: {@code 1 + round % 6} inline WRITEs posted back to back (every third signaled),
     * each source overwritten as soon as the post returns, then both sides driven until A's send
     * queue is empty; checks the destination bytes.
     */
    private void round(final int round) {
        final int writes = 1 + round % 6;
        for (int w = 0; w < writes; w++) {
            final int length = LENGTHS[(round + w) % LENGTHS.length];
            final int src = w * 8192;
            for (int i = 0; i < length; i++) {
                a.mr.buffer().putByte(src + i, expected(round, w, i));
            }
            final int firstPart = length / 3;
            wr.clear().wrId(round).opcode(WrOpcode.RDMA_WRITE).remoteAddr(b.mr.address() + src).rkey(b.mr.rkey())
                .sendFlags(SendFlags.INLINE | (w % 3 == 0 ? SendFlags.SIGNALED : 0));
            if (firstPart > 0) {
                wr.addSge(a.mr.address() + src, firstPart, a.mr.lkey());
            }
            wr.addSge(a.mr.address() + src + firstPart, length - firstPart, a.mr.lkey());
            if (a.qp.postSend(wr) != PostStatus.OK) {
                failed++;
            }
            // Reused at once: the post copied it [OPS-041].
            a.mr.buffer().setMemory(src, length, (byte) 0xEE);
        }
        mostInFlight = Math.max(mostInFlight, a.qp.requester().inlineArena().used());
        for (int step = 0; step < 10_000 && a.qp.outstandingSends() > 0; step++) {
            now += 2_000;
            a.pollInto(b, now);
            b.pollInto(a, now);
        }
        int n;
        while ((n = a.cq.poll(wcs, wcs.length)) > 0) {
            for (int i = 0; i < n; i++) {
                if (wcs[i].status() != WcStatus.SUCCESS) {
                    failed++;
                }
            }
        }
        if (a.qp.outstandingSends() > 0) {
            failed++;
        }
        for (int w = 0; w < writes; w++) {
            final int length = LENGTHS[(round + w) % LENGTHS.length];
            for (int i = 0; i < length; i++) {
                if (b.mr.buffer().getByte(w * 8192 + i) != expected(round, w, i)) {
                    wrong++;
                    break;
                }
            }
        }
    }

    @Test
    void inlineWritesArriveIntactAndAllocateNothingAfterWarmUp() {
        System.out.println("InlineStorageTest.inlineWritesArriveIntactAndAllocateNothingAfterWarmUp seed=" + SEED);
        final EndpointConfig config = new EndpointConfig().maxInlineData(INLINE);
        a = new Node(config, SEED * 31 + 1, 1);
        b = new Node(config, SEED * 31 + 2, 2);
        // A knows B as peer 2 and B knows A as peer 1: the ids each one's packets arrive with.
        TwoNodeFixture.bringUp(a.qp, b.qp.qpn(), 2, 1024, 500, 700, 0, null, 0);
        TwoNodeFixture.bringUp(b.qp, a.qp.qpn(), 1, 1024, 700, 500, 0, null, 0);

        final AllocationMeter.Measurement m = AllocationMeter.fewestBytes(2_000, this::round);
        final int capacity = a.qp.requester().inlineArena().capacity();
        System.out.println("inline WRITEs, 1-6 in flight: " + m + "; inline storage " + capacity + " B for at most "
            + mostInFlight + " B in flight (depth x limit " + DEPTH * INLINE + " B)");
        assertThat(failed).as("failed posts, error completions or WRITEs never completed").isZero();
        assertThat(wrong).as("WRITEs whose destination differs from what was posted").isZero();
        assertThat(m.fewest()).as("bytes allocated by inline WRITEs in steady state").isZero();
        assertThat(capacity).as("storage grew to what was in flight at most, doubled")
            .isGreaterThanOrEqualTo(mostInFlight).isLessThanOrEqualTo(2 * mostInFlight)
            .isLessThan(DEPTH * INLINE);
        assertThat(a.qp.requester().inlineArena().used()).as("freed as the WRITEs completed").isZero();
    }
}
