// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.collectives;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.metaroce.netty.DeviceConfig;
import org.metaroce.netty.DriverCounter;
import org.metaroce.netty.InboundFaults;
import org.metaroce.netty.Transport;

/**
 * Inline, mostly unsignaled data WRITEs on INVOKER ranks [COLL-038]: an operation returns without
 * waiting for their acknowledgements, their sources are free once posted (a retransmission reads
 * the inline copy), the send queue bound holds with requests whose completion is unknown, and
 * ranks with driver threads wait for every WRITE as before [COLL-010].
 */
class InlineSendsTest {
    static final long SEED = Long.getLong("metaroce.seed", 20261205L);

    /** INVOKER ranks' endpoint settings (inline limit included) with a short retransmission floor, on a lossy wire. */
    private static DeviceConfig lossyInvoker() {
        return new DeviceConfig().bindAddress(InetAddress.getLoopbackAddress()).endpointPort(0)
            .entropyPortRange(1, 0).transport(Transport.AUTO).gro(true)
            .endpointConfig(Bootstrap.invokerEndpoint().minRtoNs(2_000_000))
            .inboundFaults(new InboundFaults(0.02, 0.1, SEED));
    }

    private static CommConfig lossyConfig() {
        return CollectivesMatrixTest.config().qpTimeoutNs(2_000_000);
    }

    /** @return links of {@code c} on which a data chunk posted is not yet known to have completed */
    private static int unacknowledged(final Communicator c) {
        int n = 0;
        for (final Link l : c.engine().links) {
            if (l != null && l.sendDone < l.sent) {
                n++;
            }
        }
        return n;
    }

    /** Element i of rank's vector in round {@code round}: small integers, exact in INT64 sums. */
    private static long value(final int rank, final int round, final long i) {
        return Reference.mix(SEED + round, rank, i) % 1000;
    }

    private static void fill(final ByteBuffer b, final int rank, final int round, final long count) {
        for (long i = 0; i < count; i++) {
            b.putLong((int) (i * 8), value(rank, round, i));
        }
    }

    /** @return the first wrong element of the sum over {@code ranks} ranks, or null */
    private static String check(final ByteBuffer b, final int ranks, final int round, final long count, final String what) {
        for (long i = 0; i < count; i++) {
            long sum = 0;
            for (int r = 0; r < ranks; r++) {
                sum += value(r, round, i);
            }
            final long got = b.getLong((int) (i * 8));
            if (got != sum) {
                return what + " round " + round + " count " + count + ": element " + i + " is " + got + ", expected "
                    + sum;
            }
        }
        return null;
    }

    private static long dropped(final LocalCluster cluster, final int ranks) {
        return LossyWireTest.driverTotal(cluster, ranks, DriverCounter.FAULT_DROPPED);
    }

    @Test
    @DisplayName("COLL-038: an INVOKER all-reduce returns before its inline chunks are acknowledged, with exact results")
    void operationsReturnBeforeTheirInlineChunksAreAcknowledged() throws Exception {
        final int ranks = 3;
        System.out.println("InlineSendsTest.operationsReturnBeforeTheirInlineChunksAreAcknowledged seed=" + SEED);
        final long[] counts = {1, 97, 512};
        try (LocalCluster cluster = LocalCluster.startInvoker(ranks, lossyConfig(), lossyInvoker())) {
            final List<long[]> early = new ArrayList<>();
            final List<String> wrong = new ArrayList<>();
            cluster.run(c -> {
                final ByteBuffer in = Reference.direct(512 * 8);
                final ByteBuffer out = Reference.direct(512 * 8);
                long returnedEarly = 0;
                for (int round = 0; round < 300; round++) {
                    final long count = counts[round % counts.length];
                    fill(in, c.rank(), round, count);
                    c.allReduce(in, out, count, DataType.INT64, ReduceOp.SUM);
                    returnedEarly += unacknowledged(c);
                    final String w = check(out, ranks, round, count, "rank " + c.rank());
                    if (w != null) {
                        synchronized (wrong) {
                            wrong.add(w);
                        }
                    }
                }
                synchronized (early) {
                    early.add(new long[] {returnedEarly});
                }
                return null;
            }, Duration.ofSeconds(120));
            assertThat(wrong).as("seed " + SEED).isEmpty();
            assertThat(early.stream().mapToLong(e -> e[0]).sum())
                .as("returns with a chunk not yet known to be acknowledged (seed " + SEED + ")").isPositive();
            assertThat(dropped(cluster, ranks)).as("datagrams dropped").isPositive();
        }
    }

    @Test
    @DisplayName("COLL-038, COLL-010: a caller that overwrites its buffers as soon as each all-reduce returns gets exact results on a lossy wire")
    void buffersOverwrittenRightAfterEachReturn() throws Exception {
        final int ranks = 4;
        System.out.println("InlineSendsTest.buffersOverwrittenRightAfterEachReturn seed=" + SEED);
        // One-shot, recursive doubling, Rabenseifner and the ring (config: 64 B, 512 B and 8 KiB
        // thresholds, 4 KiB chunks, so every send is inline), out of place and in place.
        final long[] counts = {1, 97, 512, 1021, 12_289};
        try (LocalCluster cluster = LocalCluster.startInvoker(ranks, lossyConfig(), lossyInvoker())) {
            final List<List<String>> wrong = cluster.run(c -> {
                final List<String> w = new ArrayList<>();
                final ByteBuffer in = Reference.direct(12_289 * 8);
                final ByteBuffer out = Reference.direct(12_289 * 8);
                for (int round = 0; round < 60; round++) {
                    final long count = counts[round % counts.length];
                    fill(in, c.rank(), round, count);
                    if (round % 2 == 0) {
                        c.allReduce(in, out, count, DataType.INT64, ReduceOp.SUM);
                        Reference.poison(in); // the input, at once: a retransmission must read the inline copy
                        final String bad = check(out, ranks, round, count, "rank " + c.rank() + " out of place");
                        if (bad != null) {
                            w.add(bad);
                        }
                    } else {
                        c.allReduce(in, count, DataType.INT64, ReduceOp.SUM);
                        final String bad = check(in, ranks, round, count, "rank " + c.rank() + " in place");
                        Reference.poison(in); // the result, which was also the source of WRITEs
                        if (bad != null) {
                            w.add(bad);
                        }
                    }
                }
                c.finish(Duration.ofMillis(50));
                return w;
            }, Duration.ofSeconds(150));
            for (final List<String> w : wrong) {
                assertThat(w).as("seed " + SEED).isEmpty();
            }
            assertThat(dropped(cluster, ranks)).as("datagrams dropped").isPositive();
        }
    }

    @ParameterizedTest(name = "{0} ranks")
    @ValueSource(ints = {2, 4})
    @DisplayName("COLL-038: 5,000 back-to-back small all-reduces on INVOKER ranks never overfill a send queue")
    void backToBackSmallOperationsKeepTheSendQueueBound(final int ranks) throws Exception {
        System.out.println("InlineSendsTest.backToBackSmallOperationsKeepTheSendQueueBound seed=" + SEED + " ranks="
            + ranks);
        try (LocalCluster cluster = LocalCluster.startInvoker(ranks, new CommConfig(), null)) {
            final List<long[]> seen = cluster.run(c -> {
                final Engine e = c.engine();
                final ByteBuffer in = Reference.direct(512 * 8);
                final ByteBuffer out = Reference.direct(512 * 8);
                long returnedEarly = 0;
                long mostUnknown = 0;
                long wrong = 0;
                for (int round = 0; round < 5_000; round++) {
                    // 8 B and 4 KiB: the smallest and the largest one-shot all-reduce, every chunk inline.
                    final long count = round % 2 == 0 ? 1 : 512;
                    in.putLong(0, c.rank() + round);
                    in.putLong((int) (count - 1) * 8, c.rank() * 3L + round);
                    c.allReduce(in, out, count, DataType.INT64, ReduceOp.SUM);
                    // A refused post fails the operation; so does a stall at the bound (timeout).
                    returnedEarly += unacknowledged(c);
                    for (final Link l : e.links) {
                        if (l != null) {
                            mostUnknown = Math.max(mostUnknown, l.sqPosted - l.sqCompleted);
                        }
                    }
                    final long sum0 = (long) ranks * (ranks - 1) / 2 + (long) ranks * round;
                    final long sumLast = 3L * ranks * (ranks - 1) / 2 + (long) ranks * round;
                    if (out.getLong(0) != (count == 1 ? sumLast : sum0)
                        || out.getLong((int) (count - 1) * 8) != sumLast) {
                        wrong++;
                    }
                }
                c.finish(Duration.ofMillis(50));
                return new long[] {returnedEarly, mostUnknown, wrong, e.sqDepth};
            }, Duration.ofSeconds(300));
            for (final long[] s : seen) {
                assertThat(s[2]).as("wrong results").isZero();
                assertThat(s[1]).as("requests in a send queue, as far as the rank knows").isLessThanOrEqualTo(s[3]);
            }
            assertThat(seen.stream().mapToLong(s -> s[0]).sum()).as("returns before an acknowledgement").isPositive();
        }
    }

    @Test
    @DisplayName("COLL-038, COLL-010: with driver threads nothing is inline, and an operation waits for every WRITE")
    void driverThreadRanksWaitForEveryWrite() throws Exception {
        final int ranks = 3;
        System.out.println("InlineSendsTest.driverThreadRanksWaitForEveryWrite seed=" + SEED);
        try (LocalCluster cluster = LocalCluster.startDedicated(ranks, new CommConfig(), null)) {
            final List<List<String>> wrong = cluster.run(c -> {
                final List<String> w = new ArrayList<>();
                final ByteBuffer in = Reference.direct(512 * 8);
                final ByteBuffer out = Reference.direct(512 * 8);
                for (int round = 0; round < 300; round++) {
                    final long count = round % 2 == 0 ? 1 : 512;
                    fill(in, c.rank(), round, count);
                    c.allReduce(in, out, count, DataType.INT64, ReduceOp.SUM);
                    for (final Link l : c.engine().links) {
                        if (l != null && (l.sendDone != l.sent || l.awaited != l.sent)) {
                            w.add("rank " + c.rank() + " round " + round + " returned with " + l);
                        }
                    }
                    final String bad = check(out, ranks, round, count, "rank " + c.rank());
                    if (bad != null) {
                        w.add(bad);
                    }
                }
                return w;
            }, Duration.ofSeconds(120));
            for (final List<String> w : wrong) {
                assertThat(w).as("seed " + SEED).isEmpty();
            }
        }
    }

    @Test
    @DisplayName("COLL-038, COLL-026: a failed inline WRITE fails the operation that reaps it, naming the peer")
    void aFailedInlineWriteFailsTheOperationThatReapsIt() throws Exception {
        System.out.println("InlineSendsTest.aFailedInlineWriteFailsTheOperationThatReapsIt seed=" + SEED);
        final DeviceConfig template = new DeviceConfig().bindAddress(InetAddress.getLoopbackAddress()).endpointPort(0)
            .entropyPortRange(1, 0).transport(Transport.AUTO)
            // A retry budget of half a second, not 15 s: the silent peer is given up sooner.
            .endpointConfig(Bootstrap.invokerEndpoint().minRtoNs(2_000_000).maxRtoNs(20_000_000)
                .retryTimeoutNs(500_000_000L));
        final java.util.concurrent.CountDownLatch done = new java.util.concurrent.CountDownLatch(1);
        try (LocalCluster cluster = LocalCluster.startInvoker(2, lossyConfig(), template)) {
            final List<String> outcome = cluster.run(c -> {
                if (c.rank() == 1) {
                    // Never drives its device: rank 0's WRITEs are never acknowledged.
                    try {
                        done.await(60, java.util.concurrent.TimeUnit.SECONDS);
                    } catch (final InterruptedException ex) {
                        Thread.currentThread().interrupt();
                    }
                    return "idle";
                }
                final long start = System.nanoTime();
                try {
                    final ByteBuffer b = Reference.direct(8);
                    c.send(b, 1, DataType.INT64, 1); // posted inline: returns without an acknowledgement
                    int returned = 1;
                    try {
                        // Later sends return too while slots last; one of them reaps the failure.
                        for (int i = 0; i < 10; i++) {
                            c.send(b, 1, DataType.INT64, 1);
                            returned++;
                        }
                        return "no failure after " + returned + " sends";
                    } catch (final CollectiveException ex) {
                        return "returned " + returned + "; then, after " + (System.nanoTime() - start) / 1_000_000
                            + " ms, peer " + ex.peerRank() + ": " + ex.getMessage();
                    }
                } catch (final CollectiveException ex) {
                    return "the first send failed: " + ex.getMessage();
                } finally {
                    done.countDown();
                }
            }, Duration.ofSeconds(90));
            System.out.println("rank 0: " + outcome.get(0));
            assertThat(outcome.get(0)).startsWith("returned ").contains(" ms, peer 1: ").contains("RETRY_EXC_ERR")
                .doesNotContain("timed out");
        }
    }

    @Test
    @DisplayName("COLL-038: a signaled request's completion completes every request posted before it")
    void aSignaledCompletionCompletesWhatWasPostedBefore() {
        final Link l = new Link(1, null, 0, 0, 4, 0, 4, 4);
        assertThat(l.completedSignaled()).as("nothing signaled is outstanding").isFalse();
        // Two unsignaled data WRITEs, a signaled one, a signaled grant, an unsignaled WRITE.
        l.sqPosted++;
        l.sent++;
        l.sqPosted++;
        l.sent++;
        l.sqPosted++;
        l.sent++;
        l.postedSignaled();
        l.sqPosted++;
        l.postedSignaled();
        l.sqPosted++;
        l.sent++;
        assertThat(l.lastSignaled).isEqualTo(4);
        assertThat(l.completedSignaled()).isTrue();
        assertThat(l.sqCompleted).isEqualTo(3);
        assertThat(l.sendDone).isEqualTo(3);
        assertThat(l.completedSignaled()).isTrue();
        assertThat(l.sqCompleted).isEqualTo(4);
        assertThat(l.sendDone).as("the last WRITE is unsignaled: not known to be done").isEqualTo(3);
        assertThat(l.completedSignaled()).isFalse();
        // The ring wraps around its depth.
        for (int i = 0; i < 10; i++) {
            l.sqPosted++;
            l.sent++;
            l.postedSignaled();
            assertThat(l.completedSignaled()).isTrue();
            assertThat(l.sqCompleted).isEqualTo(l.sqPosted);
            assertThat(l.sendDone).isEqualTo(l.sent);
        }
    }
}
