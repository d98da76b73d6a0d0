// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.collectives;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import org.agrona.DirectBuffer;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.RepeatedTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.metaroce.netty.DeviceConfig;
import org.metaroce.netty.DriverCounter;
import org.metaroce.netty.InboundDropRule;
import org.metaroce.netty.Transport;

/**
 * Closing an INVOKER rank's communicator right after its last operation, without {@code finish}
 * [COLL-039]: the operation returned before its inline chunks were acknowledged (COLL-038), and
 * the close drives the device until they are, so a peer still receiving gets its data; a close
 * that cannot make sure fails naming the peer, never silently.
 */
class CloseDrainTest {
    static final long SEED = Long.getLong("metaroce.seed", 20261205L);
    /** First element of rank 0's vector in the last operation: marks the datagrams that carry it. */
    private static final long MAGIC = 0x5EED_C105_E000_0000L;
    private static final int COUNT = 8;
    private static final int ROUNDS = 20;
    /** Base Header: opcode at byte 1, header length in words at 15, Transmit Timestamp at 16. */
    private static final int OPCODE_WRITE_WITH_IMM = 0x04;

    /**
     * @param returned the Transmit Timestamp (low 32 bits of {@code System.nanoTime()}, WIRE-013; the
     *     ranks share one clock) at which rank 0 returned from its last operation, null until then
     * @return a rule for every rank's device: it drops each datagram of a WRITE_WITH_IMM whose payload
     *     starts with {@link #MAGIC} and that rank 0 sent before that return, first transmission or
     *     not, whenever the peer reads it (a peer may read after rank 0 returned)
     */
    private static InboundDropRule dropMagicSentBefore(final AtomicReference<Integer> returned) {
        return (DirectBuffer b, int offset, int length) -> {
            if (length < 24 || (b.getByte(offset + 1) & 0xFF) != OPCODE_WRITE_WITH_IMM) {
                return false;
            }
            final int payload = offset + (b.getByte(offset + 15) & 0xFF) * 4;
            if (payload + 8 > offset + length || b.getLong(payload, ByteOrder.nativeOrder()) != MAGIC) {
                return false;
            }
            final Integer at = returned.get();
            return at == null || b.getInt(offset + 16, ByteOrder.BIG_ENDIAN) - at <= 0;
        };
    }

    private static DeviceConfig invoker(final InboundDropRule rule) {
        return LocalCluster.defaultDeviceConfig(org.metaroce.netty.ThreadingMode.INVOKER).inboundDropRule(rule);
    }

    private static long value(final int rank, final int round, final int i) {
        return rank == 0 && round == ROUNDS - 1 && i == 0 ? MAGIC : Reference.mix(SEED + round, rank, i) % 1000;
    }

    private static long dropped(final LocalCluster cluster, final int ranks) {
        return LossyWireTest.driverTotal(cluster, ranks, DriverCounter.FAULT_DROPPED);
    }

    @ParameterizedTest(name = "{0} ranks")
    @ValueSource(ints = {2, 3})
    @DisplayName("COLL-039: rank 0 closes right after its last all-reduce, whose inline chunks only a retransmission after the return can deliver; the peers get exact results")
    void closeDeliversTheInlineChunksOfTheLastOperation(final int ranks) throws Exception {
        System.out.println("CloseDrainTest.closeDeliversTheInlineChunksOfTheLastOperation seed=" + SEED + " ranks="
            + ranks);
        final AtomicReference<Integer> returned = new AtomicReference<>();
        try (LocalCluster cluster = LocalCluster.startInvoker(ranks, new CommConfig(),
            invoker(dropMagicSentBefore(returned)))) {
            final List<String> outcome = cluster.run(c -> {
                final ByteBuffer in = Reference.direct(COUNT * 8);
                final ByteBuffer out = Reference.direct(COUNT * 8);
                final List<String> wrong = new ArrayList<>();
                for (int round = 0; round < ROUNDS; round++) {
                    for (int i = 0; i < COUNT; i++) {
                        in.putLong(i * 8, value(c.rank(), round, i));
                    }
                    // 64 B: a one-shot all-reduce, every chunk inline and unsignaled [COLL-036, COLL-038].
                    c.allReduce(in, out, COUNT, DataType.INT64, ReduceOp.SUM);
                    for (int i = 0; i < COUNT; i++) {
                        long sum = 0;
                        for (int r = 0; r < ranks; r++) {
                            sum += value(r, round, i);
                        }
                        if (out.getLong(i * 8) != sum) {
                            wrong.add("round " + round + " element " + i + ": " + out.getLong(i * 8) + ", expected " + sum);
                        }
                    }
                }
                if (c.rank() != 0) {
                    return wrong.isEmpty() ? "ok" : "rank " + c.rank() + ": " + wrong;
                }
                // Every copy of the last chunk sent so far is dropped: only a retransmission from now can deliver it.
                returned.set((int) System.nanoTime());
                long unacknowledged = 0;
                for (final Link l : c.engine().links) {
                    if (l != null) {
                        unacknowledged += l.sent - l.sendDone;
                    }
                }
                try {
                    c.close();
                    return wrong.isEmpty() ? "closed with " + unacknowledged + " unacknowledged" : "rank 0: " + wrong;
                } catch (final RuntimeException ex) {
                    return "close failed: " + ex;
                }
            }, Duration.ofSeconds(60));
            System.out.println("outcome: " + outcome);
            assertThat(outcome.get(0)).as("seed " + SEED).startsWith("closed with ").doesNotEndWith(" 0 unacknowledged");
            for (int r = 1; r < ranks; r++) {
                assertThat(outcome.get(r)).as("rank " + r + ", seed " + SEED).isEqualTo("ok");
            }
            assertThat(dropped(cluster, ranks)).as("copies of the last chunk dropped before rank 0 returned")
                .isGreaterThanOrEqualTo(ranks - 1);
        }
    }

    @RepeatedTest(3)
    @DisplayName("COLL-039, COLL-026: INVOKER ranks that all close right after their last all-reduce, without finish, close without an error")
    void everyRankClosesRightAfterItsLastOperation() throws Exception {
        final int ranks = 4;
        try (LocalCluster cluster = LocalCluster.startInvoker(ranks, new CommConfig(), null)) {
            final List<String> outcome = cluster.run(c -> {
                final ByteBuffer b = Reference.direct(512 * 8);
                for (int round = 0; round < 50; round++) {
                    b.putLong(0, c.rank());
                    b.putLong(511 * 8, round);
                    c.allReduce(b, 512, DataType.INT64, ReduceOp.SUM);
                    if (b.getLong(0) != (long) ranks * (ranks - 1) / 2 || b.getLong(511 * 8) != (long) ranks * round) {
                        return "rank " + c.rank() + " round " + round + ": wrong result";
                    }
                }
                try {
                    c.close();
                    return "closed";
                } catch (final RuntimeException ex) {
                    return "close failed: " + ex;
                }
            }, Duration.ofSeconds(60));
            assertThat(outcome).containsOnly("closed");
        }
    }

    /** INVOKER ranks with a retry budget of {@code retryBudgetNs} and a short retransmission floor. */
    private static DeviceConfig silentPeerTemplate(final long retryBudgetNs) {
        return new DeviceConfig().bindAddress(InetAddress.getLoopbackAddress()).endpointPort(0)
            .entropyPortRange(1, 0).transport(Transport.AUTO)
            .endpointConfig(Bootstrap.invokerEndpoint().minRtoNs(2_000_000).maxRtoNs(20_000_000)
                .retryTimeoutNs(retryBudgetNs));
    }

    /**
     * Rank 1 never drives its device until rank 0 has closed: rank 0's send returns (inline), and
     * its close cannot get the chunk acknowledged.
     *
     * @return what rank 0's close did, with the milliseconds it took
     */
    private static String closeWithASilentPeer(final CommConfig config, final DeviceConfig template) throws Exception {
        final CountDownLatch closed = new CountDownLatch(1);
        try (LocalCluster cluster = LocalCluster.startInvoker(2, config, template)) {
            final List<String> outcome = cluster.run(c -> {
                if (c.rank() == 1) {
                    try {
                        closed.await(60, TimeUnit.SECONDS);
                    } catch (final InterruptedException ex) {
                        Thread.currentThread().interrupt();
                    }
                    return "idle";
                }
                final ByteBuffer b = Reference.direct(8);
                c.send(b, 1, DataType.INT64, 1); // inline: returns without an acknowledgement
                final long start = System.nanoTime();
                try {
                    c.close();
                    return "closed";
                } catch (final CollectiveException ex) {
                    return "after " + (System.nanoTime() - start) / 1_000_000 + " ms, peer " + ex.peerRank() + ", op "
                        + ex.operation() + ": " + ex.getMessage();
                } finally {
                    closed.countDown();
                }
            }, Duration.ofSeconds(90));
            System.out.println("rank 0: " + outcome.get(0));
            return outcome.get(0);
        }
    }

    @Test
    @DisplayName("COLL-039: a peer that stops answering makes close fail, naming it, once its retry budget is spent")
    void aSilentPeerFailsTheCloseWithItsRetryError() throws Exception {
        final String outcome = closeWithASilentPeer(new CommConfig(), silentPeerTemplate(500_000_000L));
        assertThat(outcome).startsWith("after ").contains("peer 1, op close: ").contains("may be lost")
            .contains("RETRY_EXC_ERR").contains("COLL-039");
    }

    @Test
    @DisplayName("COLL-039: close waits for acknowledgements no longer than the operation timeout")
    void closeEndsAtTheOperationTimeout() throws Exception {
        final String outcome = closeWithASilentPeer(new CommConfig().operationTimeout(Duration.ofMillis(300)),
            silentPeerTemplate(30_000_000_000L));
        assertThat(outcome).startsWith("after ").contains("peer 1, op close: ").contains("timed out after 300 ms")
            .contains("1 chunk(s) posted to rank 1 not acknowledged").contains("COLL-039");
        final long ms = Long.parseLong(outcome.substring("after ".length(), outcome.indexOf(" ms")));
        assertThat(ms).as("time the close took").isBetween(300L, 10_000L);
    }
}
