// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.collectives;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeFalse;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.time.Duration;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.metaroce.netty.CpuAffinity;

/** {@link LocalCluster#pinRanks()}: rank threads spread round robin over the CPUs, as MPI binds ranks. */
class RankPinningTest {
    static final long SEED = Long.getLong("metaroce.seed", 20261205L);

    @Test
    void eachRankThreadRunsOnItsCpuAloneAndTheResultsStayRight() throws Exception {
        assumeTrue(CpuAffinity.isAvailable(), () -> "thread affinity unavailable here: "
            + CpuAffinity.unavailabilityReason().orElse("?"));
        System.out.println("RankPinningTest seed=" + SEED);
        final int[] allowed = CpuAffinity.allowedCpus();
        try (LocalCluster cluster = LocalCluster.startInvoker(4, CollectivesMatrixTest.config(), null)) {
            final int[] cpus = cluster.pinRanks();
            for (int i = 0; i < 4; i++) {
                assertThat(cpus[i]).as("rank %d", i).isEqualTo(allowed[i % allowed.length]);
            }
            final List<int[]> seen = cluster.run(c -> CpuAffinity.allowedCpus(), Duration.ofSeconds(30));
            for (int i = 0; i < 4; i++) {
                assertThat(seen.get(i)).as("rank %d's thread", i).containsExactly(cpus[i]);
            }
            final List<List<String>> wrong = cluster.run(c -> new OpCases(c, SEED).all(new long[] {1, 97, 12_289},
                new DataType[] {DataType.FLOAT32}, new ReduceOp[] {ReduceOp.SUM}), Duration.ofSeconds(60));
            for (final List<String> w : wrong) {
                assertThat(w).as("seed " + SEED).isEmpty();
            }
        }
    }

    @Test
    void withoutAffinityPinningSaysWhy() throws Exception {
        assumeFalse(CpuAffinity.isAvailable(), "affinity is available here; the refusal is for JVMs without it");
        try (LocalCluster cluster = LocalCluster.startInvoker(2, CollectivesMatrixTest.config(), null)) {
            assertThatThrownBy(cluster::pinRanks).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("thread affinity is not available");
        }
    }
}
