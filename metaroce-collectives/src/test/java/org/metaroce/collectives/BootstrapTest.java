// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.collectives;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.ServerSocket;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * The TCP rendezvous and setup, each rank on its own thread with its own device as in separate
 * processes [COLL-025].
 */
class BootstrapTest {
    private final ExecutorService pool = Executors.newCachedThreadPool();

    @AfterEach
    void tearDown() throws InterruptedException {
        pool.shutdownNow();
        assertThat(pool.awaitTermination(30, TimeUnit.SECONDS)).isTrue();
    }

    static int freePort() throws Exception {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    @Test
    @DisplayName("COLL-025: three ranks meet at the master (started last) and all-reduce")
    void ranksMeetAndAllReduce() throws Exception {
        final int port = freePort();
        final CommConfig cfg = new CommConfig().setupTimeout(Duration.ofSeconds(30));
        final List<Future<Double>> ranks = new ArrayList<>();
        for (final int rank : new int[] {2, 1, 0}) {
            ranks.add(pool.submit(() -> {
                if (rank == 0) {
                    Thread.sleep(300); // the others retry until the master listens
                }
                try (Communicator c = Bootstrap.connect(new LaunchEnv(rank, 3, "127.0.0.1", port, "explicit"), cfg,
                    null)) {
                    assertThat(c.rank()).isEqualTo(rank);
                    assertThat(c.size()).isEqualTo(3);
                    final ByteBuffer b = Reference.direct(8 * 1000);
                    for (int i = 0; i < 1000; i++) {
                        b.putDouble(i * 8, rank + i);
                    }
                    c.allReduce(b, 1000, DataType.FLOAT64, ReduceOp.SUM);
                    c.barrier();
                    return b.getDouble(999 * 8);
                }
            }));
        }
        for (final Future<Double> f : ranks) {
            assertThat(f.get(60, TimeUnit.SECONDS)).isEqualTo(3 * 999 + 3.0);
        }
    }

    @Test
    @DisplayName("COLL-025, COLL-029: launched ranks that drive their own (INVOKER) devices meet and work")
    void invokerRanksMeetAndWork() throws Exception {
        final int port = freePort();
        final CommConfig cfg = new CommConfig().setupTimeout(Duration.ofSeconds(30));
        final List<Future<List<String>>> ranks = new ArrayList<>();
        for (final int rank : new int[] {3, 1, 2, 0}) {
            ranks.add(pool.submit(() -> {
                try (Communicator c = Bootstrap.connect(new LaunchEnv(rank, 4, "127.0.0.1", port, "explicit"), cfg,
                    Bootstrap::invokerDeviceConfig)) {
                    assertThat(c.device().threadingMode()).isEqualTo(org.metaroce.netty.ThreadingMode.INVOKER);
                    final OpCases cases = new OpCases(c, 25L);
                    cases.allReduce(100_003, DataType.FLOAT32, ReduceOp.SUM, false);
                    cases.allReduce(7, DataType.BFLOAT16, ReduceOp.MAX, true);
                    cases.allToAll(1021, DataType.INT64, false);
                    cases.broadcast(4099, DataType.FLOAT16, 2, false);
                    c.barrier();
                    return new ArrayList<>(cases.wrong);
                }
            }));
        }
        for (final Future<List<String>> f : ranks) {
            assertThat(f.get(90, TimeUnit.SECONDS)).isEmpty();
        }
    }

    @Test
    @DisplayName("COLL-025: a rank that never shows up is named by the master's timeout")
    void missingRankIsNamed() throws Exception {
        final int port = freePort();
        final CommConfig cfg = new CommConfig().setupTimeout(Duration.ofSeconds(2));
        final Future<?> master = pool.submit(() ->
            Bootstrap.connect(new LaunchEnv(0, 4, "127.0.0.1", port, "explicit"), cfg, null));
        final Future<?> one = pool.submit(() ->
            Bootstrap.connect(new LaunchEnv(1, 4, "127.0.0.1", port, "explicit"), cfg, null));
        assertThatThrownBy(() -> master.get(30, TimeUnit.SECONDS)).hasCauseInstanceOf(CollectiveException.class)
            .hasMessageContaining("rank(s) [2, 3] never showed up");
        assertThatThrownBy(() -> one.get(30, TimeUnit.SECONDS)).hasCauseInstanceOf(CollectiveException.class)
            .hasMessageContaining("never showed up");
    }

    @Test
    @DisplayName("COLL-025: contradictory world sizes are refused")
    void contradictoryWorldSize() throws Exception {
        final int port = freePort();
        final CommConfig cfg = new CommConfig().setupTimeout(Duration.ofSeconds(10));
        final Future<?> master = pool.submit(() ->
            Bootstrap.connect(new LaunchEnv(0, 2, "127.0.0.1", port, "explicit"), cfg, null));
        final Future<?> one = pool.submit(() ->
            Bootstrap.connect(new LaunchEnv(1, 3, "127.0.0.1", port, "explicit"), cfg, null));
        assertThatThrownBy(() -> master.get(30, TimeUnit.SECONDS)).hasMessageContaining("says world size 3");
        assertThatThrownBy(() -> one.get(30, TimeUnit.SECONDS)).hasMessageContaining("refused")
            .hasMessageContaining("says world size 3");
    }

    @Test
    void rankZeroMustOwnTheMasterAddress() {
        assertThatThrownBy(() -> Bootstrap.connect(new LaunchEnv(0, 2, "192.0.2.1", 29500, "explicit"),
            new CommConfig(), null)).hasMessageContaining("not an address of this host");
    }
}
