// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.collectives;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import org.agrona.concurrent.status.CountersReader;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.metaroce.netty.CounterFile;
import org.metaroce.netty.CounterType;
import org.metaroce.netty.ObservabilityConfig;

/**
 * A communicator's counters appear in its device's counters file (as {@code metaroce stat} reads
 * it), equal to what the rank counted, and go when the communicator closes.
 */
class CountersFileTest {
    @TempDir
    Path base;

    @Test
    void eachRanksCountersAreInItsDevicesFile() throws Exception {
        final int ops = 12;
        final int count = 64 * 1024; // 256 KiB of floats: the ring, chunks through slots and regions
        try (LocalCluster cluster = LocalCluster.start(2, new CommConfig(), LocalCluster.deviceConfig(null)
            .observability(new ObservabilityConfig().countersBase(base).countersIntervalNs(1_000_000)))) {
            cluster.run(c -> {
                final ByteBuffer buf = ByteBuffer.allocateDirect(count * 4).order(ByteOrder.nativeOrder());
                for (int i = 0; i < ops; i++) {
                    c.allReduce(buf, count, DataType.FLOAT32, ReduceOp.SUM);
                }
                return null;
            }, Duration.ofSeconds(120));
            for (int r = 0; r < 2; r++) {
                final Communicator c = cluster.communicator(r);
                final String prefix = "coll rank " + r + "/2 ";
                try (CounterFile file = CounterFile.map(c.device().counterFile().path())) {
                    final CountersReader counters = file.reader();
                    awaitValue(counters, prefix + "OPERATIONS", ops);
                    for (final CollectiveCounter counter : CollectiveCounter.values()) {
                        final int id = CounterFile.counterId(counters, prefix + counter.name());
                        assertThat(id).as(counter.name()).isNotNegative();
                        assertThat(counters.getCounterTypeId(id)).isEqualTo(CounterType.COLLECTIVES.typeId());
                        assertThat(counters.getCounterValue(id)).as(prefix + counter.name())
                            .isEqualTo(c.engine().counters.get(counter.ordinal()));
                    }
                    assertThat(counters.getCounterValue(CounterFile.counterId(counters, prefix + "CHUNKS_SENT"))).isPositive();
                    assertThat(counters.getCounterValue(CounterFile.counterId(counters, prefix + "CHUNK_BYTES_SENT")))
                        .as("a ring all-reduce of 2 ranks sends half the buffer twice").isEqualTo((long) ops * count * 4);
                    assertThat(counters.getCounterValue(CounterFile.counterId(counters, prefix + "OPERATIONS_FAILED"))).isZero();
                    // The other rank's counters are in the other rank's file only.
                    assertThat(CounterFile.counterId(counters, "coll rank " + (1 - r) + "/2 OPERATIONS")).isNegative();
                }
            }
            final Communicator c0 = cluster.communicator(0);
            try (CounterFile file = CounterFile.map(c0.device().counterFile().path())) {
                c0.close();
                final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                while (CounterFile.counterId(file.reader(), "coll rank 0/2 OPERATIONS") >= 0 && System.nanoTime() - deadline < 0) {
                    LockSupport.parkNanos(1_000_000);
                }
                assertThat(CounterFile.counterId(file.reader(), "coll rank 0/2 OPERATIONS")).as("after close").isNegative();
            }
        }
    }


    private static void awaitValue(final CountersReader counters, final String label, final long expected) {
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        long seen = Long.MIN_VALUE;
        while (System.nanoTime() - deadline < 0) {
            final int id = CounterFile.counterId(counters, label);
            seen = id < 0 ? Long.MIN_VALUE : counters.getCounterValue(id);
            if (seen == expected) {
                return;
            }
            LockSupport.parkNanos(1_000_000);
        }
        assertThat(seen).as("counter '%s'", label).isEqualTo(expected);
    }
}
