// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.collectives;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.InetAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.metaroce.core.engine.EndpointConfig;
import org.metaroce.netty.DeviceConfig;
import org.metaroce.netty.DriverCounter;
import org.metaroce.netty.InboundFaults;
import org.metaroce.netty.InvokerIdleStrategy;
import org.metaroce.netty.ThreadingMode;
import org.metaroce.netty.Transport;

/**
 * Ranks that drive their own devices (INVOKER mode, no driver threads) [COLL-029]: every operation
 * against the reference, on a clean and on a lossy wire; misuse from another thread; and the wire
 * baseline [COLL-030], which must leave the chunk streams in step for the operations after it.
 */
class InvokerModeTest {
    static final long SEED = Long.getLong("metaroce.seed", 20261130L);

    @ParameterizedTest(name = "{0} ranks")
    @ValueSource(ints = {1, 2, 3, 4, 5})
    @DisplayName("COLL-029: every op x type x reduction matches the reference with INVOKER ranks")
    void everyOperationMatchesTheReference(final int ranks) throws Exception {
        System.out.println("InvokerModeTest seed=" + SEED + " ranks=" + ranks);
        try (LocalCluster cluster = LocalCluster.startInvoker(ranks, CollectivesMatrixTest.config(), null)) {
            assertThat(cluster.threadingMode()).isEqualTo(ThreadingMode.INVOKER);
            final List<List<String>> wrong = cluster.run(c -> {
                assertThat(c.device().threadingMode()).isEqualTo(ThreadingMode.INVOKER);
                return new ArrayList<>(new OpCases(c, SEED).all(new long[] {0, 1, 7, 97, 1021, 12_289},
                    DataType.values(), ReduceOp.values()));
            }, Duration.ofSeconds(120));
            for (final List<String> w : wrong) {
                assertThat(w).as("seed " + SEED).isEmpty();
            }
        }
    }

    @Test
    @DisplayName("COLL-029: INVOKER ranks that block in their device when waiting (blockWait) get the reference results")
    void ranksThatBlockWhenWaiting() throws Exception {
        final int ranks = 4;
        System.out.println("InvokerModeTest.ranksThatBlockWhenWaiting seed=" + SEED);
        final CommConfig cfg = CollectivesMatrixTest.config().blockWait(true);
        assertThat(LocalCluster.rankConfig(cfg, ranks, ThreadingMode.INVOKER, 64).blockWaits())
            .as("the choice is kept where the ranks would fit the cores").isTrue();
        try (LocalCluster cluster = LocalCluster.startInvoker(ranks, cfg, null)) {
            final List<List<String>> wrong = cluster.run(c -> {
                assertThat(cfg.invokerIdleStrategy(c.device())).isInstanceOf(InvokerIdleStrategy.class);
                // A launched rank's default (no wait chosen) blocks as well; only an explicit backoff does not.
                assertThat(new CommConfig().invokerIdleStrategy(c.device())).isInstanceOf(InvokerIdleStrategy.class);
                assertThat(new CommConfig().spinWait(false).invokerIdleStrategy(c.device()))
                    .isInstanceOf(org.agrona.concurrent.BackoffIdleStrategy.class);
                return new ArrayList<>(new OpCases(c, SEED).all(new long[] {0, 1, 97, 12_289, 300_001},
                    new DataType[] {DataType.FLOAT32, DataType.INT64}, new ReduceOp[] {ReduceOp.SUM, ReduceOp.MAX}));
            }, Duration.ofSeconds(120));
            for (final List<String> w : wrong) {
                assertThat(w).as("seed " + SEED).isEmpty();
            }
        }
    }

    @Test
    @DisplayName("COLL-029, COLL-010: INVOKER ranks on a wire with loss and reordering get the reference results")
    void lossyWire() throws Exception {
        final int ranks = 3;
        System.out.println("InvokerModeTest.lossyWire seed=" + SEED);
        final DeviceConfig template = new DeviceConfig().bindAddress(InetAddress.getLoopbackAddress()).endpointPort(0)
            .entropyPortRange(4, 0).transport(Transport.AUTO).gro(true) // the default's receive offload, too
            .endpointConfig(new EndpointConfig().minRtoNs(2_000_000).pathBurstPackets(16))
            .inboundFaults(new InboundFaults(0.02, 0.1, SEED));
        final CommConfig cfg = CollectivesMatrixTest.config().qpTimeoutNs(2_000_000);
        try (LocalCluster cluster = LocalCluster.startInvoker(ranks, cfg, template)) {
            final List<List<String>> wrong = cluster.run(c -> new ArrayList<>(new OpCases(c, SEED).all(
                new long[] {1, 1021, 12_289}, new DataType[] {DataType.FLOAT32, DataType.INT64},
                new ReduceOp[] {ReduceOp.SUM, ReduceOp.MIN})), Duration.ofSeconds(150));
            for (final List<String> w : wrong) {
                assertThat(w).as("seed " + SEED).isEmpty();
            }
            assertThat(LossyWireTest.driverTotal(cluster, ranks, DriverCounter.FAULT_DROPPED)).as("datagrams dropped")
                .isPositive();
        }
    }

    @Test
    @DisplayName("COLL-037, COLL-029: Rabenseifner's 64 KiB all-reduce, its step in the duty cycle, on a lossy wire")
    void rabenseifnerInTheDutyCycleOnALossyWire() throws Exception {
        final int ranks = 4;
        System.out.println("InvokerModeTest.rabenseifnerInTheDutyCycleOnALossyWire seed=" + SEED);
        final DeviceConfig template = new DeviceConfig().bindAddress(InetAddress.getLoopbackAddress()).endpointPort(0)
            .entropyPortRange(1, 0).transport(Transport.AUTO).gro(true)
            .endpointConfig(Bootstrap.invokerEndpoint().minRtoNs(2_000_000))
            .inboundFaults(new InboundFaults(0.02, 0.1, SEED));
        // The default thresholds: 64 KiB of float32 is Rabenseifner's on 4 ranks, and each rank sends
        // 96 KiB, inside Engine.IN_CYCLE_SEND_BYTES_HALVING; 256 KiB of int64 sends more, after the cycle.
        final CommConfig cfg = new CommConfig().operationTimeout(Duration.ofSeconds(30))
            .setupTimeout(Duration.ofSeconds(30)).qpTimeoutNs(2_000_000);
        final long floats = 16_384;
        final long longs = 32_768;
        assertThat(floats * 4 * 3 / 2).isGreaterThan(Engine.IN_CYCLE_SEND_BYTES)
            .isLessThanOrEqualTo(Engine.IN_CYCLE_SEND_BYTES_HALVING);
        assertThat(longs * 8 * 3 / 2).isGreaterThan(Engine.IN_CYCLE_SEND_BYTES_HALVING);
        try (LocalCluster cluster = LocalCluster.startInvoker(ranks, cfg, template)) {
            final List<List<String>> wrong = cluster.run(c -> {
                assertThat(c.rabenseifner(floats * 4)).isTrue();
                assertThat(c.rabenseifner(longs * 8)).isTrue();
                final OpCases cases = new OpCases(c, SEED);
                for (int i = 0; i < 5; i++) {
                    cases.allReduce(floats, DataType.FLOAT32, ReduceOp.SUM, i % 2 == 0);
                    cases.allReduce(longs, DataType.INT64, ReduceOp.MAX, i % 2 == 1);
                }
                return new ArrayList<>(cases.wrong);
            }, Duration.ofSeconds(120));
            for (final List<String> w : wrong) {
                assertThat(w).as("seed " + SEED).isEmpty();
            }
            assertThat(LossyWireTest.driverTotal(cluster, ranks, DriverCounter.FAULT_DROPPED)).as("datagrams dropped")
                .isPositive();
        }
    }

    @Test
    @DisplayName("COLL-029: an operation or close from a thread that does not own the INVOKER device is refused")
    void otherThreadsAreRefused() throws Exception {
        try (LocalCluster cluster = LocalCluster.startInvoker(2, CollectivesMatrixTest.config(), null)) {
            final Communicator c = cluster.communicator(0);
            final ByteBuffer b = Reference.direct(16);
            assertThatThrownBy(() -> c.allReduce(b, 2, DataType.INT64, ReduceOp.SUM))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("INVOKER").hasMessageContaining("COLL-029");
            assertThatThrownBy(c::barrier).isInstanceOf(IllegalStateException.class);
            assertThatThrownBy(c::close).isInstanceOf(IllegalStateException.class);
            // The refused calls changed nothing: the ranks still work together on their own threads.
            final List<Long> sums = cluster.run(comm -> {
                final ByteBuffer x = Reference.direct(8);
                x.putLong(0, comm.rank() + 1);
                comm.allReduce(x, 1, DataType.INT64, ReduceOp.SUM);
                return x.getLong(0);
            }, Duration.ofSeconds(60));
            assertThat(sums).containsOnly(3L);
        }
    }

    @Test
    @DisplayName("COLL-029: finish is a barrier, then an INVOKER rank keeps driving its device for the linger")
    void finishBarriersThenLingers() throws Exception {
        System.out.println("InvokerModeTest.finishBarriersThenLingers seed=" + SEED);
        try (LocalCluster cluster = LocalCluster.startInvoker(3, CollectivesMatrixTest.config(), null)) {
            final List<Long> lingered = cluster.run(c -> {
                final ByteBuffer v = ByteBuffer.allocateDirect(8).order(java.nio.ByteOrder.nativeOrder());
                v.putLong(0, c.rank() + 1);
                c.allReduce(v, 1, DataType.INT64, ReduceOp.SUM);
                assertThat(v.getLong(0)).isEqualTo(6);
                final long start = System.nanoTime();
                c.finish(Duration.ofMillis(200));
                return System.nanoTime() - start;
            }, Duration.ofSeconds(60));
            // A contract, not a performance target: no rank may return before its linger ran out.
            assertThat(lingered).allSatisfy(ns -> assertThat(ns).isGreaterThanOrEqualTo(200_000_000L));
        }
    }

    @Test
    @DisplayName("COLL-029: ranks busy-poll only when every thread has a core, unless the caller chose")
    void spinOnlyWhenThreadsFitTheCores() throws Exception {
        assertThat(new CommConfig().blocksWhenIdle()).as("no wait chosen: INVOKER ranks block").isTrue();
        assertThat(new CommConfig().spinWait(false).blocksWhenIdle()).as("an explicit backoff").isFalse();
        assertThat(new CommConfig().parkWait(true).blocksWhenIdle()).isFalse();
        assertThat(new CommConfig().spinWait(true).blocksWhenIdle()).isFalse();
        assertThat(new CommConfig().idleStrategy(new org.agrona.concurrent.NoOpIdleStrategy()).blocksWhenIdle()).isFalse();
        assertThat(new CommConfig().spinWait(true).blockWait(true).blocksWhenIdle()).isTrue();
        assertThat(LocalCluster.rankConfig(new CommConfig(), 4, ThreadingMode.INVOKER, 2).spinWaits()).isFalse();
        assertThat(LocalCluster.rankConfig(new CommConfig(), 4, ThreadingMode.INVOKER, 2).blockWaits())
            .as("INVOKER ranks that share cores block in their devices").isTrue();
        assertThat(LocalCluster.rankConfig(new CommConfig(), 4, ThreadingMode.DEDICATED, 7).blockWaits())
            .as("ranks with driver threads have no device to block in").isFalse();
        assertThat(LocalCluster.rankConfig(new CommConfig(), 2, ThreadingMode.INVOKER, 2).blockWaits()).isFalse();
        assertThat(LocalCluster.rankConfig(new CommConfig(), 2, ThreadingMode.INVOKER, 2).spinWaits()).isTrue();
        assertThat(LocalCluster.rankConfig(new CommConfig(), 4, ThreadingMode.DEDICATED, 8).spinWaits()).isTrue();
        assertThat(LocalCluster.rankConfig(new CommConfig(), 4, ThreadingMode.DEDICATED, 7).spinWaits()).isFalse();
        assertThat(LocalCluster.rankConfig(new CommConfig(), 3, ThreadingMode.SHARED, 4).spinWaits()).isTrue();
        assertThat(LocalCluster.rankConfig(new CommConfig(), 3, ThreadingMode.SHARED, 3).spinWaits()).isFalse();
        // A choice is kept: backoff (spinWait(false)) or park on a host with cores to spare.
        assertThat(LocalCluster.rankConfig(new CommConfig().spinWait(false), 1, ThreadingMode.INVOKER, 64).spinWaits())
            .isFalse();
        assertThat(LocalCluster.rankConfig(new CommConfig().parkWait(true), 1, ThreadingMode.INVOKER, 64).spinWaits())
            .isFalse();
        final CommConfig given = new CommConfig();
        assertThat(LocalCluster.rankConfig(given, 1, ThreadingMode.INVOKER, 64)).isNotSameAs(given);
        assertThat(given.spinWaits()).as("the caller's configuration is not changed").isFalse();
        // One INVOKER rank always has a core: it spins, and still works.
        try (LocalCluster cluster = LocalCluster.startInvoker(1, new CommConfig(), null)) {
            assertThat(cluster.communicator(0).config().spinWaits()).isTrue();
            assertThat(cluster.run(c -> {
                final ByteBuffer x = Reference.direct(8);
                x.putLong(0, 5);
                c.allReduce(x, 1, DataType.INT64, ReduceOp.SUM);
                return x.getLong(0);
            }, Duration.ofSeconds(30))).containsExactly(5L);
        }
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"INVOKER", "DEDICATED"})
    @DisplayName("COLL-030: the wire baseline writes nothing, and the operations after it stay correct")
    void ringBaselineKeepsTheStreamsInStep(final String mode) throws Exception {
        final int ranks = 3;
        final CommConfig cfg = CollectivesMatrixTest.config();
        try (LocalCluster cluster = mode.equals("INVOKER") ? LocalCluster.startInvoker(ranks, cfg, null)
            : LocalCluster.startDedicated(ranks, cfg, null)) {
            final List<List<String>> wrong = cluster.run(c -> {
                final OpCases cases = new OpCases(c, SEED);
                final ByteBuffer src = Reference.direct(100_003);
                for (int i = 0; i < src.capacity(); i++) {
                    src.put(i, (byte) (i * 7 + c.rank()));
                }
                c.ringBaseline(src, 100_003); // 25 chunks of 4 KiB per segment, segments of unequal length
                c.ringBaseline(src, 1);       // one rank sends one byte, the others send nothing
                c.ringBaseline(src, 0);
                for (int i = 0; i < src.capacity(); i++) {
                    if (src.get(i) != (byte) (i * 7 + c.rank())) {
                        cases.wrong.add("rank " + c.rank() + ": the baseline changed its buffer at byte " + i);
                        break;
                    }
                }
                cases.allReduce(12_289, DataType.FLOAT32, ReduceOp.SUM, false);
                cases.allGather(1021, DataType.INT32, false);
                assertThatThrownBy(() -> c.ringBaseline(src, -1)).isInstanceOf(IllegalArgumentException.class);
                return new ArrayList<>(cases.wrong);
            }, Duration.ofSeconds(60));
            for (final List<String> w : wrong) {
                assertThat(w).as("seed " + SEED).isEmpty();
            }
        }
    }
}
