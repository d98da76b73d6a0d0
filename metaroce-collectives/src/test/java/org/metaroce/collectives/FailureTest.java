// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.collectives;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.List;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** A dead peer, a missing peer and disagreeing arguments end in exceptions naming the rank [COLL-026..COLL-028]. */
class FailureTest {
    static CommConfig config() {
        return new CommConfig().chunkBytes(4096).operationTimeout(Duration.ofSeconds(3))
            .setupTimeout(Duration.ofSeconds(20));
    }

    @Test
    @DisplayName("COLL-026: a peer that dies fails the operation on the others, naming it")
    void deadPeer() throws Exception {
        try (LocalCluster cluster = LocalCluster.start(3, config())) {
            cluster.communicator(2).device().close(); // rank 2 dies
            final List<String> errors = cluster.run(c -> {
                if (c.rank() == 2) {
                    return "dead";
                }
                final ByteBuffer b = Reference.direct(4 * 100_000);
                try {
                    c.allReduce(b, 100_000, DataType.FLOAT32, ReduceOp.SUM);
                    return "no exception";
                } catch (final CollectiveException ex) {
                    assertThat(ex.operation()).isEqualTo("all_reduce");
                    // Broken from now on: the next call fails at once.
                    assertThatThrownBy(c::barrier).isInstanceOf(CollectiveException.class)
                        .hasMessageContaining("broken");
                    return ex.getMessage();
                }
            }, Duration.ofSeconds(60));
            assertThat(errors.get(0)).contains("rank 2").contains("all_reduce");
            assertThat(errors.get(1)).contains("rank 2").contains("all_reduce");
        }
    }

    @Test
    @DisplayName("COLL-027: a rank that never calls the operation is named by the timeout")
    void absentPeerTimesOut() throws Exception {
        try (LocalCluster cluster = LocalCluster.start(2, config())) {
            final long start = System.nanoTime();
            final List<String> errors = cluster.run(c -> {
                if (c.rank() == 1) {
                    return "idle";
                }
                final ByteBuffer b = Reference.direct(64);
                try {
                    c.recv(b, 4, DataType.INT32, 1);
                    return "no exception";
                } catch (final CollectiveException ex) {
                    assertThat(ex.peerRank()).isEqualTo(1);
                    return ex.getMessage();
                }
            }, Duration.ofSeconds(60));
            assertThat(errors.get(0)).contains("recv on rank 0 timed out").contains("waiting for data from rank 1");
            assertThat(System.nanoTime() - start).isLessThan(Duration.ofSeconds(30).toNanos());
        }
    }

    @Test
    @DisplayName("COLL-028: ranks that disagree on the count get an error, not a wrong answer")
    void disagreeingCounts() throws Exception {
        try (LocalCluster cluster = LocalCluster.start(2, config())) {
            final List<String> errors = cluster.run(c -> {
                final ByteBuffer b = Reference.direct(8 * 1000);
                try {
                    if (c.rank() == 0) {
                        c.send(b, 1000, DataType.INT64, 1);
                    } else {
                        c.recv(b, 999, DataType.INT64, 0);
                    }
                    return "no exception";
                } catch (final CollectiveException ex) {
                    return ex.getMessage();
                }
            }, Duration.ofSeconds(60));
            assertThat(errors.get(1)).contains("rank 0 sent a chunk of").contains("disagree");
        }
    }

    @Test
    @DisplayName("COLL-028: a count that differs on one rank of four is reported as that, not as a timeout")
    void aDisagreementIsTheReportedCause() throws Exception {
        try (LocalCluster cluster = LocalCluster.start(4, config())) {
            assertThatThrownBy(() -> cluster.run(c -> {
                final int count = c.rank() == 2 ? 1000 : 1024;
                final ByteBuffer b = Reference.direct(4L * count);
                c.allReduce(b, count, DataType.FLOAT32, ReduceOp.SUM);
                return null;
            }, Duration.ofSeconds(60))).isInstanceOf(RankDisagreementException.class)
                .hasMessageContaining("disagree");
        }
    }

    @Test
    void misuseIsRejected() throws Exception {
        try (LocalCluster cluster = LocalCluster.start(2, config())) {
            final Communicator c = cluster.communicator(0);
            assertThatThrownBy(() -> c.allReduce(ByteBuffer.allocate(16), 4, DataType.INT32, ReduceOp.SUM))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("direct");
            assertThatThrownBy(() -> c.allReduce(Reference.direct(8), 4, DataType.INT32, ReduceOp.SUM))
                .hasMessageContaining("8 bytes remaining, 16 needed");
            // The platform's order is little-endian where this runs; a BIG_ENDIAN view summed byte-swapped.
            final ByteBuffer bigEndian = Reference.direct(16).order(java.nio.ByteOrder.BIG_ENDIAN);
            assertThatThrownBy(() -> c.allReduce(bigEndian, 4, DataType.FLOAT32, ReduceOp.SUM))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("send buffer is in BIG_ENDIAN order")
                .hasMessageContaining("send.order(ByteOrder.nativeOrder())");
            assertThatThrownBy(() -> c.send(Reference.direct(8), 1, DataType.INT32, 0))
                .hasMessageContaining("not this rank");
            assertThatThrownBy(() -> c.broadcast(Reference.direct(8), 1, DataType.INT32, 5))
                .hasMessageContaining("root must be a rank in 0..1");
        }
    }

    @Test
    @DisplayName("COLL-026: a peer that closes breaks only the operations that need it")
    void closedPeerBreaksOnlyWhatNeedsIt() throws Exception {
        try (LocalCluster cluster = LocalCluster.start(3, config())) {
            cluster.run(c -> {
                c.barrier();
                return null;
            }, Duration.ofSeconds(30));
            cluster.communicator(1).close();
            final List<String> results = cluster.run(c -> {
                if (c.rank() == 1) {
                    return "closed";
                }
                final ByteBuffer b = Reference.direct(4 * 1000);
                // Ranks 0 and 2 go on between themselves while rank 1's disconnect arrives.
                for (int i = 0; i < 20; i++) {
                    if (c.rank() == 0) {
                        c.send(b, 1000, DataType.INT32, 2);
                        c.recv(b, 1000, DataType.INT32, 2);
                    } else {
                        c.recv(b, 1000, DataType.INT32, 0);
                        c.send(b, 1000, DataType.INT32, 0);
                    }
                }
                if (c.rank() == 2) {
                    return "ok";
                }
                // Sends to the closed rank fail once its disconnect has arrived, or once its
                // granted slots are used up and no grant comes back (the timeout).
                try {
                    for (int i = 0; i < 10; i++) {
                        c.send(b, 1000, DataType.INT32, 1);
                    }
                    return "no exception";
                } catch (final CollectiveException ex) {
                    assertThat(ex.peerRank()).isEqualTo(1);
                    return ex.getMessage();
                }
            }, Duration.ofSeconds(60));
            assertThat(results.get(2)).isEqualTo("ok");
            assertThat(results.get(0)).contains("send on rank 0").contains("rank 1");
        }
    }

    @Test
    @DisplayName("COLL-026: ranks that close right after their last operation do not fail the others'")
    void closingRightAfterTheLastOperation() throws Exception {
        // Three ranks: in the barrier rank 2 only hears from rank 0, which may finish and close
        // while rank 2's result is still in its completion queue, ahead of the flushed receives.
        for (int i = 0; i < 8; i++) {
            try (LocalCluster cluster = LocalCluster.startDedicated(3, config(), null)) {
                cluster.run(c -> {
                    final ByteBuffer b = Reference.direct(64);
                    c.allReduce(b, 4, DataType.INT32, ReduceOp.SUM);
                    c.barrier();
                    c.close();
                    return null;
                }, Duration.ofSeconds(30));
            }
        }
    }
}
