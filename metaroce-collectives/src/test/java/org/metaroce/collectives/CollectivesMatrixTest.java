// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.collectives;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Every operation x type x reduction against a plain reference computation, for world sizes 1..8
 * in one process over loopback (one shared driver thread), element counts 0, 1, primes and a
 * larger one cut into many chunks (4 KiB chunks, 4 slots: pipelining and slot reuse), in place
 * and out of place. All four all-reduce algorithms run: one-shot up to 64 bytes, recursive
 * doubling up to 512 bytes, Rabenseifner up to 8 KiB on 4 ranks or more (1021 elements of every
 * type, 97 of 8 bytes), the ring above. Every rank checks its own result element by element.
 */
class CollectivesMatrixTest {
    static final long[] SIZES = {0, 1, 2, 3, 7, 31, 97, 1021, 12_289};
    static final long SEED = Long.getLong("metaroce.seed", 20261130L);

    static CommConfig config() {
        return new CommConfig().chunkBytes(4096).slots(4).smallAllReduceBytes(512).oneShotAllReduceBytes(64)
            .rabenseifnerAllReduceBytes(8192)
            .operationTimeout(Duration.ofSeconds(30)).setupTimeout(Duration.ofSeconds(30));
    }

    @ParameterizedTest(name = "{0} ranks")
    @ValueSource(ints = {1, 2, 3, 4, 5, 6, 7, 8})
    @DisplayName("COLL-012..COLL-020: every op x type x reduction matches the reference")
    void everyOperationMatchesTheReference(final int ranks) throws Exception {
        System.out.println("CollectivesMatrixTest seed=" + SEED + " ranks=" + ranks);
        // Larger worlds run the large size with fewer type/reduction combinations to stay fast.
        try (LocalCluster cluster = LocalCluster.start(ranks, config())) {
            final List<int[]> checked = new ArrayList<>();
            final List<List<String>> wrong = cluster.run(c -> {
                final OpCases cases = new OpCases(c, SEED);
                final List<String> w = new ArrayList<>(cases.all(SIZES, DataType.values(), ReduceOp.values()));
                synchronized (checked) {
                    checked.add(new int[] {cases.checked});
                }
                return w;
            }, Duration.ofSeconds(120));
            for (final List<String> w : wrong) {
                assertThat(w).as("seed " + SEED).isEmpty();
            }
            assertThat(checked).hasSize(ranks).allSatisfy(n -> assertThat(n[0]).isPositive());
        }
    }

    @ParameterizedTest(name = "{0} ranks")
    @ValueSource(ints = {3, 8})
    @DisplayName("COLL-012, COLL-014, COLL-015, COLL-018: megabyte messages over many chunks")
    void largeMessages(final int ranks) throws Exception {
        System.out.println("CollectivesMatrixTest.largeMessages seed=" + SEED + " ranks=" + ranks);
        final CommConfig cfg = config().chunkBytes(64 << 10);
        try (LocalCluster cluster = LocalCluster.start(ranks, cfg)) {
            final List<List<String>> wrong = cluster.run(c -> {
                final OpCases cases = new OpCases(c, SEED);
                cases.allReduce(1_000_003, DataType.FLOAT32, ReduceOp.SUM, false);
                cases.allReduce(250_007, DataType.INT64, ReduceOp.MAX, true);
                cases.reduceScatter(131_071, DataType.FLOAT64, ReduceOp.SUM, false);
                cases.allGather(131_071, DataType.INT32, true);
                cases.allToAll(65_537, DataType.FLOAT32, false);
                cases.broadcast(300_001, DataType.FLOAT32, ranks - 1, false);
                return new ArrayList<>(cases.wrong);
            }, Duration.ofSeconds(150));
            for (final List<String> w : wrong) {
                assertThat(w).as("seed " + SEED).isEmpty();
            }
        }
    }

    @ParameterizedTest(name = "{0} ranks")
    @ValueSource(ints = {4, 5, 6, 7, 8})
    @DisplayName("COLL-037: Rabenseifner all-reduce over many chunks per block, in place and out of place")
    void rabenseifnerPipelinesChunks(final int ranks) throws Exception {
        System.out.println("CollectivesMatrixTest.rabenseifnerPipelinesChunks seed=" + SEED + " ranks=" + ranks);
        // 4 KiB chunks: every block is many chunks, forwarded chunk by chunk between the steps;
        // above the latency threshold the all-gather blocks are placed [COLL-033].
        final CommConfig cfg = config().rabenseifnerAllReduceBytes(1 << 30);
        try (LocalCluster cluster = LocalCluster.start(ranks, cfg)) {
            final List<List<String>> wrong = cluster.run(c -> {
                final OpCases cases = new OpCases(c, SEED);
                cases.allReduce(100_003, DataType.FLOAT32, ReduceOp.SUM, false);
                cases.allReduce(50_001, DataType.INT64, ReduceOp.MAX, true);
                cases.allReduce(30_011, DataType.FLOAT64, ReduceOp.PROD, true);
                return new ArrayList<>(cases.wrong);
            }, Duration.ofSeconds(120));
            for (final List<String> w : wrong) {
                assertThat(w).as("seed " + SEED).isEmpty();
            }
        }
    }

    @ParameterizedTest(name = "{0} ranks")
    @ValueSource(ints = {3, 4})
    @DisplayName("COLL-037, COLL-013: by default 48 KiB goes to Rabenseifner on 4 ranks, to recursive doubling on 3")
    void defaultThresholdsChooseByRankCount(final int ranks) throws Exception {
        System.out.println("CollectivesMatrixTest.defaultThresholdsChooseByRankCount seed=" + SEED + " ranks=" + ranks);
        // Default thresholds (chunks of 4 KiB for speed): above RABENSEIFNER_ABOVE_DEFAULT_BYTES and
        // below the 64 KiB latency threshold. What a rank sends tells the algorithms apart: recursive
        // doubling sends the whole vector per step (2 steps on 4 ranks; on 3, one fold to or from
        // rank 2 besides), Rabenseifner 2 (p-1)/p of it on 4 ranks.
        final CommConfig cfg = new CommConfig().chunkBytes(4096);
        final int count = 12 * 1024;
        final long bytes = count * 4L;
        assertThat(bytes).isGreaterThan(CommConfig.RABENSEIFNER_ABOVE_DEFAULT_BYTES)
            .isLessThanOrEqualTo(cfg.smallAllReduceBytes());
        try (LocalCluster cluster = LocalCluster.start(ranks, cfg)) {
            final List<long[]> sent = cluster.run(c -> {
                final OpCases cases = new OpCases(c, SEED);
                final long before = c.counters().get(CollectiveCounter.CHUNK_BYTES_SENT.ordinal());
                cases.allReduce(count, DataType.FLOAT32, ReduceOp.SUM, false);
                assertThat(cases.wrong).as("seed " + SEED).isEmpty();
                return new long[] {c.rank(), c.counters().get(CollectiveCounter.CHUNK_BYTES_SENT.ordinal()) - before};
            }, Duration.ofSeconds(60));
            for (final long[] s : sent) {
                if (ranks == 4) {
                    assertThat(s[1]).as("rank " + s[0]).isEqualTo(bytes * 3 / 2);
                } else {
                    // Rank 0 exchanges with rank 1 and answers rank 2's fold; the ring would send 4/3.
                    assertThat(s[1]).as("rank " + s[0]).isEqualTo(s[0] == 0 ? 2 * bytes : bytes);
                }
            }
        }
    }

    @ParameterizedTest(name = "{0} ranks")
    @ValueSource(ints = {3, 4, 5})
    @DisplayName("COLL-037: by default Rabenseifner takes every size above 32 KiB up to 1 GiB on 4 ranks or more")
    void defaultRabenseifnerRangeReachesLargeVectors(final int ranks) throws Exception {
        // The ring above 1 MiB (v1.0.17's default) took 1.4-2.3 times Rabenseifner's time where the
        // ranks' CPUs sit far apart (docs/collectives.md, "The host's slow mode"); the ring keeps 2
        // and 3 ranks, and sizes above 1 GiB.
        try (LocalCluster cluster = LocalCluster.start(ranks, new CommConfig())) {
            final Communicator c = cluster.communicator(0);
            for (final long bytes : new long[] {(32 << 10) + 4, 1 << 20, (1 << 20) + 4, 64L << 20, 1L << 30}) {
                assertThat(c.rabenseifner(bytes)).as(bytes + " B on " + ranks + " ranks").isEqualTo(ranks >= 4);
            }
            assertThat(c.rabenseifner(32 << 10)).as("32 KiB: recursive doubling").isFalse();
            assertThat(c.rabenseifner((1L << 30) + 4)).as("above 1 GiB: the ring").isFalse();
        }
    }

    @ParameterizedTest(name = "{0} ranks")
    @ValueSource(ints = {4, 6, 7})
    @DisplayName("COLL-037, COLL-012: rounding differs by algorithm, never by rank")
    void resultsAreBitIdenticalOnEveryRank(final int ranks) throws Exception {
        System.out.println("CollectivesMatrixTest.resultsAreBitIdenticalOnEveryRank seed=" + SEED + " ranks=" + ranks);
        // Floats with fractions, whose sum depends on the order of additions: every rank must
        // still end with the same bits, by Rabenseifner (12 KiB) and by the ring (48 KiB).
        try (LocalCluster cluster = LocalCluster.start(ranks, config().rabenseifnerAllReduceBytes(16 << 10))) {
            final List<List<byte[]>> results = cluster.run(c -> {
                final List<byte[]> outputs = new ArrayList<>();
                for (final int n : new int[] {3_001, 12_007}) {
                    final java.nio.ByteBuffer in = java.nio.ByteBuffer.allocateDirect(n * 4)
                        .order(java.nio.ByteOrder.nativeOrder());
                    final java.util.SplittableRandom random = new java.util.SplittableRandom(SEED * 31 + c.rank());
                    for (int i = 0; i < n; i++) {
                        in.putFloat(i * 4, (float) (random.nextDouble() * 1e6 - 5e5) / 3f);
                    }
                    final java.nio.ByteBuffer out = java.nio.ByteBuffer.allocateDirect(n * 4)
                        .order(java.nio.ByteOrder.nativeOrder());
                    c.allReduce(in, out, n, DataType.FLOAT32, ReduceOp.SUM);
                    final byte[] bytes = new byte[n * 4];
                    out.get(0, bytes);
                    outputs.add(bytes);
                }
                return outputs;
            }, Duration.ofSeconds(60));
            for (int r = 1; r < ranks; r++) {
                for (int k = 0; k < results.get(0).size(); k++) {
                    assertThat(java.util.Arrays.mismatch(results.get(r).get(k), results.get(0).get(k)))
                        .as("first differing byte of output %d, rank %d against rank 0, seed %d", k, r, SEED)
                        .isEqualTo(-1);
                }
            }
        }
    }
}
