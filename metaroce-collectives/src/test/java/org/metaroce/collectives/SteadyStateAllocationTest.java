// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.collectives;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.metaroce.netty.linux.NativeUdp;

/**
 * Operations allocate nothing in steady state: INVOKER ranks (each drives its own device, so its
 * thread does all the work of an operation: the plan, the posts, the device's reads, timers and
 * sends) repeat operations on the same buffers, and each measures what its thread allocates
 * ({@code ThreadMXBean.getCurrentThreadAllocatedBytes}) round by round. Before the plans were
 * reused ({@link Plan}) every all-reduce allocated 624-1,536 B (the transfers, their list, the
 * arrays of the algorithms, the memory ranges, the registration cache's iterator), every round.
 * <p>
 * Needs the native transport (JDK 22 or newer on Linux): the Netty datagram channels of the JDK 17
 * path allocate per datagram (their packets and addresses), which is why the native one exists.
 */
class SteadyStateAllocationTest {
    private static final int ROUNDS = 50;
    private static final int OPS_PER_ROUND = 50;
    /** The rounds after the warm-up that are checked. */
    private static final int MEASURED_ROUNDS = 10;
    /**
     * Of the measured rounds, how many must allocate nothing at every rank. A deoptimisation and
     * the recompilation after it run a method interpreted for a while, which allocates what the
     * compiler had kept in registers: single rounds of 72-7,784 B, as late as the 36th (8 B
     * all-reduces, two cores, compilers and ranks sharing them), while most rounds allocate
     * nothing; and once in a while every rank allocates 392 B in the same round (the one-off growth
     * of an array to a new high-water mark, the ranks being in step). A path that allocates per
     * operation, or once in a few, allocates in every round.
     */
    private static final int QUIET_ROUNDS = 7;

    @ParameterizedTest(name = "{0} ranks, {1} bytes")
    @CsvSource({"4, 8", "4, 8192", "4, 65536", "4, 1048576", "3, 1048576"})
    void allReduceAllocatesNothingPerOperation(final int ranks, final int bytes) throws Exception {
        final int count = bytes / 4;
        final float sum = ranks * (ranks - 1) / 2f;
        check("all_reduce " + bytes + " B on " + ranks + " ranks", measure(ranks, bytes, (c, in, out) -> {
            for (int i = 0; i < count; i++) {
                in.putFloat(4 * i, c.rank() + i % 7);
            }
        }, (c, in, out) -> c.allReduce(in, out, count, DataType.FLOAT32, ReduceOp.SUM), (c, in, out) -> {
            for (int i = 0; i < count; i++) {
                final float expected = sum + ranks * (i % 7);
                if (out.getFloat(4 * i) != expected) {
                    throw new AssertionError("rank " + c.rank() + " element " + i + ": " + out.getFloat(4 * i)
                        + ", expected " + expected);
                }
            }
        }));
    }

    @Test
    void everyOtherOperationAllocatesNothingPerOperation() throws Exception {
        final int ranks = 4;
        final int bytes = 64 << 10;
        final int count = bytes / 4;
        final int block = count / ranks;
        check("broadcast, reduce, all_gather, reduce_scatter, all_to_all and barrier of " + bytes + " B on "
            + ranks + " ranks", measure(ranks, bytes, (c, in, out) -> {
                for (int i = 0; i < count; i++) {
                    in.putInt(4 * i, c.rank() + i);
                }
            }, (c, in, out) -> {
                c.broadcast(in, out, count, DataType.INT32, 1);
                c.reduce(in, out, count, DataType.INT32, ReduceOp.SUM, 2);
                c.allGather(in, out, block, DataType.INT32); // the first block of in
                c.reduceScatter(in, out, block, DataType.INT32, ReduceOp.SUM);
                c.allToAll(in, out, block, DataType.INT32);
                c.barrier();
            }, (c, in, out) -> {
                // The last operation, all_to_all: block q of rank r's output is block r of rank q's input.
                for (int q = 0; q < ranks; q++) {
                    for (int i = 0; i < block; i++) {
                        final int expected = q + c.rank() * block + i;
                        if (out.getInt(4 * (q * block + i)) != expected) {
                            throw new AssertionError("rank " + c.rank() + ", block " + q + ", element " + i + ": "
                                + out.getInt(4 * (q * block + i)) + ", expected " + expected);
                        }
                    }
                }
            }));
    }

    /** What a rank does with its buffers (in, out). */
    private interface Step {
        void apply(Communicator c, ByteBuffer in, ByteBuffer out);
    }

    /**
     * Runs {@code op} {@link #ROUNDS} x {@link #OPS_PER_ROUND} times on every rank of an INVOKER
     * cluster and returns, by rank, the bytes each round allocated on the rank's thread.
     */
    private static List<long[]> measure(final int ranks, final int bytes, final Step fill, final Step op,
                                        final Step verify) throws Exception {
        assumeTrue(NativeUdp.isAvailable(), () -> "needs the native transport, whose data path allocates "
            + "nothing (the JDK 17 Netty path allocates per datagram): " + NativeUdp.unavailabilityReason());
        final com.sun.management.ThreadMXBean mx =
            (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        try (LocalCluster cluster = LocalCluster.startInvoker(ranks, new CommConfig()
                .operationTimeout(Duration.ofSeconds(30)).setupTimeout(Duration.ofSeconds(30)), null)) {
            return cluster.run(c -> {
                final ByteBuffer in = ByteBuffer.allocateDirect(bytes).order(ByteOrder.nativeOrder());
                final ByteBuffer out = ByteBuffer.allocateDirect(bytes).order(ByteOrder.nativeOrder());
                fill.apply(c, in, out);
                final long[] rounds = new long[ROUNDS];
                for (int r = 0; r < ROUNDS; r++) {
                    final long before = mx.getCurrentThreadAllocatedBytes();
                    for (int k = 0; k < OPS_PER_ROUND; k++) {
                        op.apply(c, in, out);
                    }
                    rounds[r] = mx.getCurrentThreadAllocatedBytes() - before;
                }
                // Checked after the rounds, so that checking allocates nothing inside them.
                verify.apply(c, in, out);
                return rounds;
            }, Duration.ofSeconds(120));
        }
    }

    private static void check(final String what, final List<long[]> perRank) {
        for (int r = 0; r < perRank.size(); r++) {
            System.out.println(what + ", rank " + r + ", bytes allocated per round of " + OPS_PER_ROUND + ": "
                + Arrays.toString(perRank.get(r)));
        }
        for (int r = 0; r < perRank.size(); r++) {
            final long[] measured = Arrays.copyOfRange(perRank.get(r), ROUNDS - MEASURED_ROUNDS, ROUNDS);
            assertThat(Arrays.stream(measured).filter(b -> b == 0).count())
                .as("%s: rounds of %d that allocated nothing at rank %d, of the last %d (bytes: %s)", what,
                    OPS_PER_ROUND, r, MEASURED_ROUNDS, Arrays.toString(measured))
                .isGreaterThanOrEqualTo(QUIET_ROUNDS);
        }
    }
}
