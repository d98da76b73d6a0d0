// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.collectives;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import java.net.InetAddress;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.metaroce.core.engine.EndpointConfig;
import org.metaroce.netty.DeviceConfig;
import org.metaroce.netty.InboundFaults;
import org.metaroce.netty.Transport;

/**
 * Placed chunks [COLL-033, COLL-034]: receives whose data is final (the all-reduce's all-gather
 * pass, all-gather, broadcast, all-to-all, recv) longer than the latency threshold get their
 * chunks written straight into the destination through granted regions, not through slots;
 * reduce steps and short messages keep the slots. Counted chunk by chunk on every rank.
 */
class PlacementTest {
    static final long SEED = Long.getLong("metaroce.seed", 33L);
    private final ExecutorService pool = Executors.newCachedThreadPool();

    @AfterEach
    void tearDown() throws InterruptedException {
        pool.shutdownNow();
        assertThat(pool.awaitTermination(30, TimeUnit.SECONDS)).isTrue();
    }

    /** 4 KiB chunks, 4 slots, threshold 512 B: every message below is cut into many chunks. */
    static CommConfig config() {
        return CollectivesMatrixTest.config();
    }

    /** @return {placed, slot} chunks this rank received during {@code body} */
    static long[] counted(final Communicator c, final Runnable body) {
        final long placed = c.engine().counters.get(CollectiveCounter.CHUNKS_RECEIVED_PLACED.ordinal());
        final long slots = c.engine().counters.get(CollectiveCounter.CHUNKS_RECEIVED_SLOT.ordinal());
        body.run();
        return new long[] {c.engine().counters.get(CollectiveCounter.CHUNKS_RECEIVED_PLACED.ordinal()) - placed, c.engine().counters.get(CollectiveCounter.CHUNKS_RECEIVED_SLOT.ordinal()) - slots};
    }

    static long chunks(final long bytes, final int chunk) {
        return (bytes + chunk - 1) / chunk;
    }

    @Test
    @DisplayName("COLL-033, COLL-034: all-reduce reduces through slots and places the all-gather pass; results exact")
    void allReducePlacesItsAllGatherPass() throws Exception {
        System.out.println("PlacementTest seed=" + SEED);
        final int ranks = 4;
        final long n = 100_003; // segments of 25,001 and 25,000 floats
        try (LocalCluster cluster = LocalCluster.start(ranks, config())) {
            final List<long[]> counts = cluster.run(c -> {
                final OpCases cases = new OpCases(c, SEED);
                final long[] oop = counted(c, () -> cases.allReduce(n, DataType.FLOAT32, ReduceOp.SUM, false));
                final long[] ip = counted(c, () -> cases.allReduce(n, DataType.FLOAT32, ReduceOp.SUM, true));
                assertThat(cases.wrong).isEmpty();
                return new long[] {oop[0], oop[1], ip[0], ip[1], c.rank()};
            }, Duration.ofSeconds(60));
            final int chunk = config().chunkBytes();
            for (final long[] k : counts) {
                final int r = (int) k[4];
                long reduceChunks = 0;
                long gatherChunks = 0;
                for (int s = 0; s < ranks - 1; s++) {
                    reduceChunks += chunks(Plans.segmentLength(n, ranks, Plans.mod(r - s - 1, ranks)) * 4, chunk);
                    gatherChunks += chunks(Plans.segmentLength(n, ranks, Plans.mod(r - s, ranks)) * 4, chunk);
                }
                assertThat(k[0]).as("rank %d placed chunks, out of place", r).isEqualTo(gatherChunks);
                assertThat(k[1]).as("rank %d slot chunks, out of place", r).isEqualTo(reduceChunks);
                assertThat(k[2]).as("rank %d placed chunks, in place", r).isEqualTo(gatherChunks);
                assertThat(k[3]).as("rank %d slot chunks, in place", r).isEqualTo(reduceChunks);
            }
        }
    }

    @Test
    @DisplayName("COLL-033: all-gather, broadcast, all-to-all and send/recv receive only placed chunks")
    void finalDataIsPlaced() throws Exception {
        final int ranks = 3;
        final long n = 5_003;
        try (LocalCluster cluster = LocalCluster.start(ranks, config())) {
            final List<List<String>> wrong = cluster.run(c -> {
                final OpCases cases = new OpCases(c, SEED);
                final List<String> problems = new ArrayList<>();
                final long[][] k = {
                    counted(c, () -> cases.allGather(n, DataType.INT64, false)),
                    counted(c, () -> cases.allGather(n, DataType.INT64, true)),
                    counted(c, () -> cases.broadcast(n, DataType.FLOAT64, 1, false)),
                    counted(c, () -> cases.allToAll(n, DataType.INT32, false)),
                    counted(c, () -> cases.allToAll(n, DataType.INT32, true)),
                    counted(c, () -> cases.sendRecv(n, DataType.FLOAT32)),
                };
                final String[] names = {"all-gather", "all-gather in place", "broadcast", "all-to-all",
                    "all-to-all in place (staged)", "send/recv"};
                for (int i = 0; i < k.length; i++) {
                    final boolean receives = i != 2 || c.rank() != 1; // the broadcast's root receives nothing
                    if (k[i][1] != 0 || (receives && k[i][0] == 0)) {
                        problems.add("rank " + c.rank() + " " + names[i] + ": " + k[i][0] + " placed, " + k[i][1]
                            + " through slots");
                    }
                }
                problems.addAll(cases.wrong);
                return problems;
            }, Duration.ofSeconds(60));
            for (final List<String> w : wrong) {
                assertThat(w).as("seed " + SEED).isEmpty();
            }
        }
    }

    @Test
    @DisplayName("COLL-010, COLL-033: placed chunks on a wire with loss and reordering: exact results")
    void placedUnderLossAndReordering() throws Exception {
        final int ranks = 4;
        System.out.println("PlacementTest.placedUnderLossAndReordering seed=" + SEED);
        final DeviceConfig template = new DeviceConfig().bindAddress(InetAddress.getLoopbackAddress()).endpointPort(0)
            .entropyPortRange(4, 0).transport(Transport.AUTO)
            .endpointConfig(new EndpointConfig().minRtoNs(2_000_000))
            .inboundFaults(new InboundFaults(0.02, 0.1, SEED));
        final CommConfig cfg = config().qpTimeoutNs(2_000_000).operationTimeout(Duration.ofSeconds(60));
        try (LocalCluster cluster = LocalCluster.start(ranks, cfg, template)) {
            final List<List<String>> wrong = cluster.run(c -> {
                final OpCases cases = new OpCases(c, SEED);
                final long[] k = counted(c, () -> {
                    cases.allReduce(40_009, DataType.FLOAT32, ReduceOp.SUM, false);
                    cases.allReduce(40_009, DataType.FLOAT64, ReduceOp.MAX, true);
                    cases.allGather(10_007, DataType.INT32, true);
                    cases.broadcast(30_011, DataType.FLOAT32, 2, false);
                    cases.allToAll(5_003, DataType.INT64, true);
                    cases.sendRecv(20_011, DataType.FLOAT32);
                });
                final List<String> problems = new ArrayList<>(cases.wrong);
                if (k[0] == 0) {
                    problems.add("rank " + c.rank() + " received no placed chunk");
                }
                return problems;
            }, Duration.ofSeconds(120));
            for (final List<String> w : wrong) {
                assertThat(w).as("seed " + SEED).isEmpty();
            }
            LossyWireTest.assertFaultsInjected(cluster, ranks);
        }
    }

    @Test
    @DisplayName("COLL-033: messages up to the latency threshold keep the slots (no grant to wait for)")
    void shortMessagesUseSlots() throws Exception {
        try (LocalCluster cluster = LocalCluster.start(2, config())) {
            final List<long[]> counts = cluster.run(c -> {
                final OpCases cases = new OpCases(c, SEED);
                final long[] k = counted(c, () -> {
                    cases.allGather(64, DataType.INT32, false); // 256 B per rank
                    cases.sendRecv(128, DataType.FLOAT32); // 512 B: not above the threshold
                });
                assertThat(cases.wrong).isEmpty();
                return k;
            }, Duration.ofSeconds(60));
            for (final long[] k : counts) {
                assertThat(k[0]).as("placed").isZero();
                assertThat(k[1]).as("through slots").isEqualTo(2);
            }
        }
    }

    @Test
    @DisplayName("COLL-033: an output buffer reused across calls is registered once")
    void reusedBuffersAreRegisteredOnce() throws Exception {
        try (LocalCluster cluster = LocalCluster.start(3, config())) {
            final List<long[]> made = cluster.run(c -> {
                final ByteBuffer send = Reference.direct(4 * 10_000);
                final ByteBuffer recv = Reference.direct(4 * 30_000);
                final ByteBuffer all = Reference.direct(4 * 30_000);
                c.allGather(send, recv, 10_000, DataType.FLOAT32);
                c.allReduce(all, 30_000, DataType.FLOAT32, ReduceOp.SUM);
                c.allToAll(send.duplicate().limit(4 * 9_999), recv, 3_333, DataType.FLOAT32);
                final long first = c.registrationsMade();
                for (int i = 0; i < 5; i++) {
                    c.allGather(send, recv, 10_000, DataType.FLOAT32);
                    c.allReduce(all, 30_000, DataType.FLOAT32, ReduceOp.SUM);
                    c.allToAll(send.duplicate().limit(4 * 9_999), recv, 3_333, DataType.FLOAT32);
                }
                return new long[] {first, c.registrationsMade()};
            }, Duration.ofSeconds(60));
            for (final long[] m : made) {
                assertThat(m[0]).as("buffers registered by the first calls").isBetween(3L, 4L);
                assertThat(m[1]).as("registered after five more rounds").isEqualTo(m[0]);
            }
        }
    }

    @Test
    @DisplayName("COLL-033: a buffer registered as a source becomes a placed destination (registered again, writable)")
    void sourceBecomesDestination() throws Exception {
        final int ranks = 3;
        final long n = 4_001;
        try (LocalCluster cluster = LocalCluster.start(ranks, config())) {
            final List<List<String>> wrong = cluster.run(c -> {
                final List<String> problems = new ArrayList<>();
                final ByteBuffer whole = Reference.direct(4 * n * ranks);
                final ByteBuffer other = Reference.direct(4 * n * ranks);
                // 1: the whole buffer is the source of an out-of-place all-reduce (registered without
                // remote access).
                Reference.fill(whole, DataType.INT32, SEED, c.rank(), 0, n * ranks, ReduceOp.SUM);
                c.allReduce(whole, other, n * ranks, DataType.INT32, ReduceOp.SUM);
                final long before = c.registrationsMade();
                // 2: in-place all-gather into it: its block is the source (covered by the old region),
                // the whole is a placed destination, registered again with REMOTE_WRITE before the
                // source's key is taken.
                final ByteBuffer mine = whole.duplicate().position((int) (4 * n * c.rank())).slice()
                    .order(whole.order());
                Reference.fill(mine, DataType.INT32, SEED + 1, c.rank(), 0, n, ReduceOp.SUM);
                final long[] k = counted(c, () -> c.allGather(mine, whole, n, DataType.INT32));
                for (int r = 0; r < ranks; r++) {
                    for (long i = 0; i < n; i++) {
                        final double want = Reference.value(SEED + 1, r, i, ReduceOp.SUM, DataType.INT32);
                        if (Reference.get(whole, DataType.INT32, r * n + i) != want && problems.size() < 5) {
                            problems.add("rank " + c.rank() + ": element " + (r * n + i) + " wrong");
                        }
                    }
                }
                if (k[0] == 0 || k[1] != 0) {
                    problems.add("rank " + c.rank() + ": " + k[0] + " placed, " + k[1] + " through slots");
                }
                if (c.registrationsMade() != before + 1) {
                    problems.add("rank " + c.rank() + ": " + (c.registrationsMade() - before) + " registrations");
                }
                // 3: the re-registered buffer is a source again.
                c.allReduce(whole, other, n * ranks, DataType.INT32, ReduceOp.MAX);
                return problems;
            }, Duration.ofSeconds(60));
            for (final List<String> w : wrong) {
                assertThat(w).as("seed " + SEED).isEmpty();
            }
        }
    }

    @Test
    @DisplayName("COLL-033, COLL-034: ranks that disagree on placement (different thresholds) fail, no hang")
    void disagreementOnPlacementIsAnError() throws Exception {
        final int port = BootstrapTest.freePort();
        final List<Future<Void>> ranks = new ArrayList<>();
        for (final int rank : new int[] {0, 1}) {
            ranks.add(pool.submit(() -> {
                // Rank 1 places messages above 512 bytes, rank 0 only above 1 MiB.
                final CommConfig cfg = config().smallAllReduceBytes(rank == 1 ? 512 : 1 << 20)
                    .operationTimeout(Duration.ofSeconds(5));
                try (Communicator c = Bootstrap.connect(new LaunchEnv(rank, 2, "127.0.0.1", port, "explicit"), cfg,
                    null)) {
                    final ByteBuffer b = Reference.direct(4 * 10_000);
                    if (rank == 0) {
                        c.send(b, 10_000, DataType.FLOAT32, 1);
                    } else {
                        c.recv(b, 10_000, DataType.FLOAT32, 0);
                    }
                }
                return null;
            }));
        }
        final List<String> failures = new ArrayList<>();
        for (final Future<Void> f : ranks) {
            try {
                f.get(60, TimeUnit.SECONDS);
            } catch (final ExecutionException ex) {
                // One rank sees the mismatch; the other may then see its peer close (COLL-026).
                assertThat(ex.getCause()).isInstanceOf(CollectiveException.class);
                failures.add(ex.getCause().getMessage());
            }
        }
        assertThat(failures).as("failures").anySatisfy(m -> assertThat(m).contains("disagree")
            .containsPattern("COLL-03[34]"));
    }

    @Test
    @DisplayName("COLL-033: a placed receive needs a destination registered for remote writes")
    void placedReceiveWithoutRemoteKeyIsRefused() {
        assertThatThrownBy(() -> new Plan().copy(1, 4096, 8192, 4096).placedAbove(512, 0))
            .isInstanceOf(IllegalStateException.class).hasMessageContaining("remote writes");
        assertThat(new Plan().copy(1, 4096, 512, 4096).placedAbove(512, 0).placed).isFalse();
        assertThat(new Plan().send(1, 4096, 7, 513, 4096).placedAbove(512).placed).isTrue();
    }
}
