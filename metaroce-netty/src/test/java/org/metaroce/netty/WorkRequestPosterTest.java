// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.management.ManagementFactory;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.EnumSource;
import org.metaroce.core.verbs.PostStatus;
import org.metaroce.core.verbs.RecvRequest;
import org.metaroce.core.verbs.SendFlags;
import org.metaroce.core.verbs.SendRequest;
import org.metaroce.core.verbs.WcStatus;
import org.metaroce.core.verbs.WorkCompletion;
import org.metaroce.core.verbs.WrOpcode;

/** Posting from an application thread: direct on an INVOKER device, through the ring otherwise. */
class WorkRequestPosterTest {
    private static final long WAIT_NS = TimeUnit.SECONDS.toNanos(10);

    @Test
    void invokerPostsDirectlyAndReportsARefusalAtOnce() {
        try (DevicePair pair = new DevicePair(Transport.AUTO, ThreadingMode.INVOKER, 2)) {
            final WorkRequestPoster poster = new WorkRequestPoster(pair.a.device, 64);
            // The QP is still in RESET: a receive is refused.
            final int status = poster.postRecv(pair.a.qp, new RecvRequest(1).wrId(1)
                .addSge(pair.a.address(0), 64, pair.a.mr.lkey()));
            assertThat(status).isEqualTo(PostStatus.INVALID_QP_STATE);
            assertThat(poster.refusal()).isEqualTo(new WorkRequestPoster.Refusal(pair.a.qp.qpn(), false, 1,
                PostStatus.INVALID_QP_STATE));
            assertThat(poster.refusal().toString())
                .isEqualTo("postRecv on QP " + pair.a.qp.qpn() + " refused: INVALID_QP_STATE (wr_id 1)");
        }
    }

    @Test
    void dedicatedQueuesPostsEveryRequestOnTheOwningThreadAndRemembersTheFirstRefusal() throws Exception {
        try (DevicePair pair = new DevicePair(Transport.AUTO, ThreadingMode.DEDICATED, 2).connect(1024)) {
            // A ring of 32 and 200 receives (the receive queue holds 256): the producer waits for room.
            final WorkRequestPoster poster = new WorkRequestPoster(pair.b.device, 32);
            final RecvRequest recv = new RecvRequest(1);
            for (int i = 0; i < 200; i++) {
                recv.clear().wrId(i).addSge(pair.b.address(64L * (i % 64)), 64, pair.b.mr.lkey());
                assertThat(poster.postRecv(pair.b.qp, recv)).isEqualTo(PostStatus.OK);
                poster.flush();
            }
            poster.flush();
            assertThat(poster.refusal()).isNull();
            // A request with a bad lkey is refused on the owning thread and reported afterwards.
            poster.postRecv(pair.b.qp, recv.clear().wrId(5000).addSge(pair.b.address(0), 64, pair.b.mr.lkey() + 1));
            awaitRefusal(poster);
            // The first refusal is this one: the 200 before it were all posted.
            assertThat(poster.refusal()).isEqualTo(new WorkRequestPoster.Refusal(pair.b.qp.qpn(), false, 5000,
                PostStatus.INVALID_LKEY));
        }
    }

    /**
     * A WRITE gathered from 1, 2 and the QP's maximum number of SGEs (4 with the default
     * capabilities) arrives whole, in both modes: the ring takes what the QP takes.
     */
    @ParameterizedTest(name = "{0} SGE(s), {1}")
    @CsvSource({"1, DEDICATED", "2, DEDICATED", "4, DEDICATED",
        "1, INVOKER", "2, INVOKER", "4, INVOKER"})
    void aGatherWriteOfUpToMaxSendSgeEntriesArrivesWhole(final int sges, final ThreadingMode mode) {
        try (DevicePair pair = new DevicePair(Transport.AUTO, mode, 2).connect(1024)) {
            assertThat(pair.a.qp.maxSendSge()).isEqualTo(4);
            final WorkRequestPoster poster = new WorkRequestPoster(pair.a.device, 32);
            final int piece = 1000;
            // Pieces taken from every other kilobyte of the source, so the gather order shows.
            for (int i = 0; i < sges * 2 * 1024; i++) {
                pair.a.memory.put(i, (byte) (i * 7 + 3));
            }
            final SendRequest write = new SendRequest(4).wrId(77).opcode(WrOpcode.RDMA_WRITE)
                .sendFlags(SendFlags.SIGNALED).remoteAddr(pair.b.address(1 << 20)).rkey(pair.b.mr.rkey());
            for (int s = 0; s < sges; s++) {
                write.addSge(pair.a.address(2048L * s), piece, pair.a.mr.lkey());
            }
            assertThat(poster.postSend(pair.a.qp, write)).isEqualTo(PostStatus.OK);
            poster.flush();
            assertThat(pair.pump(() -> !pair.a.sendCompletions.isEmpty())).isTrue();
            assertThat(pair.a.sendCompletions.get(0).status()).isEqualTo(WcStatus.SUCCESS);
            assertThat(pair.a.sendCompletions.get(0).wrId()).isEqualTo(77);
            assertThat(poster.refusal()).isNull();
            final byte[] expected = new byte[sges * piece];
            for (int s = 0; s < sges; s++) {
                for (int i = 0; i < piece; i++) {
                    expected[s * piece + i] = pair.a.memory.get(2048 * s + i);
                }
            }
            final byte[] written = pair.b.device.call(ep -> {
                final byte[] copy = new byte[sges * piece];
                pair.b.memory.duplicate().position(1 << 20).get(copy);
                return copy;
            });
            assertThat(written).isEqualTo(expected);
        }
    }

    /** One SGE more than the QP allows: TOO_MANY_SGE in both modes, as a direct postSend returns. */
    @ParameterizedTest
    @EnumSource(value = ThreadingMode.class, names = {"DEDICATED", "INVOKER"})
    void moreSgesThanTheQpAllowsAreRefusedWithTheOwnerThreadsCode(final ThreadingMode mode) {
        try (DevicePair pair = new DevicePair(Transport.AUTO, mode, 2).connect(1024)) {
            final WorkRequestPoster poster = new WorkRequestPoster(pair.a.device, 32);
            final SendRequest write = new SendRequest(5).wrId(9).opcode(WrOpcode.RDMA_WRITE)
                .remoteAddr(pair.b.address(0)).rkey(pair.b.mr.rkey());
            for (int s = 0; s < 5; s++) {
                write.addSge(pair.a.address(64L * s), 64, pair.a.mr.lkey());
            }
            final int direct = pair.a.device.call(ep -> pair.a.qp.postSend(write));
            assertThat(direct).isEqualTo(PostStatus.TOO_MANY_SGE);
            final int status = poster.postSend(pair.a.qp, write);
            poster.flush();
            awaitRefusal(poster);
            assertThat(status).isEqualTo(mode == ThreadingMode.INVOKER ? PostStatus.TOO_MANY_SGE : PostStatus.OK);
            assertThat(poster.refusal().status()).isEqualTo(direct);
            assertThat(poster.refusal()).isEqualTo(new WorkRequestPoster.Refusal(pair.a.qp.qpn(), true, 9,
                PostStatus.TOO_MANY_SGE));
        }
    }

    /** Once every ring slot has met a two-SGE request, posting through the ring allocates nothing. */
    @Test
    void theRingAllocatesNothingInSteadyState() {
        final int sges = 2;
        final com.sun.management.ThreadMXBean mx = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        try (DevicePair pair = new DevicePair(Transport.AUTO, ThreadingMode.DEDICATED, 2).connect(1024)) {
            final WorkRequestPoster poster = new WorkRequestPoster(pair.a.device, 32);
            final SendRequest write = new SendRequest(sges);
            final WorkCompletion[] wc = {new WorkCompletion(), new WorkCompletion(), new WorkCompletion(),
                new WorkCompletion()};
            long measured = Long.MAX_VALUE;
            for (int round = 0; round < 30 && measured != 0; round++) {
                final long before = mx.getCurrentThreadAllocatedBytes();
                int completed = 0;
                for (int i = 0; i < 64; i++) {
                    write.clear().wrId(i).opcode(WrOpcode.RDMA_WRITE).sendFlags(SendFlags.SIGNALED)
                        .remoteAddr(pair.b.address(0)).rkey(pair.b.mr.rkey());
                    for (int s = 0; s < sges; s++) {
                        write.addSge(pair.a.address(256L * s), 128, pair.a.mr.lkey());
                    }
                    poster.postSend(pair.a.qp, write);
                    poster.flush();
                }
                final long deadline = System.nanoTime() + WAIT_NS;
                while (completed < 64 && System.nanoTime() - deadline < 0) {
                    poster.flush();
                    completed += pair.a.sendCq.poll(wc, wc.length);
                }
                measured = mx.getCurrentThreadAllocatedBytes() - before;
                assertThat(completed).isEqualTo(64);
            }
            assertThat(poster.refusal()).isNull();
            assertThat(measured).as("bytes the producer allocated posting 64 two-SGE WRITEs through the ring").isZero();
        }
    }

    private static void awaitRefusal(final WorkRequestPoster poster) {
        final long deadline = System.nanoTime() + WAIT_NS;
        while (poster.refusal() == null && System.nanoTime() - deadline < 0) {
            poster.flush();
            Thread.onSpinWait();
        }
        assertThat(poster.refusal()).as("a refusal within 10 s").isNotNull();
    }
}
