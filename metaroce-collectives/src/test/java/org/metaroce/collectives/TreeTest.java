// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.collectives;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Binomial tree broadcast and reduce [COLL-032]: the tree's shape for every world size up to 64,
 * and both operations pipelined over many chunks on 8 and 13 ranks from several roots.
 */
class TreeTest {
    static final long SEED = Long.getLong("metaroce.seed", 32L);

    @Test
    @DisplayName("COLL-032: every rank but the root has one parent, is its child once, within ceil(log2 n) hops")
    void treeShape() {
        for (int n = 1; n <= 64; n++) {
            final int[] parentOf = new int[n];
            java.util.Arrays.fill(parentOf, -1);
            for (int v = 0; v < n; v++) {
                int previous = Integer.MAX_VALUE;
                for (final int child : Plans.treeChildren(v, n)) {
                    assertThat(child).as("n %d: child of %d", n, v).isGreaterThan(v).isLessThan(n);
                    assertThat(parentOf[child]).as("n %d: %d has two parents", n, child).isEqualTo(-1);
                    assertThat(child - v).as("largest subtree first").isLessThan(previous);
                    previous = child - v;
                    parentOf[child] = v;
                }
            }
            final int depthBound = 32 - Integer.numberOfLeadingZeros(Math.max(0, n - 1));
            for (int v = 1; v < n; v++) {
                assertThat(parentOf[v]).as("n %d: parent of %d", n, v).isEqualTo(Plans.treeParent(v));
                int hops = 0;
                for (int u = v; u != 0; u = Plans.treeParent(u)) {
                    hops++;
                }
                assertThat(hops).as("n %d: depth of %d", n, v).isLessThanOrEqualTo(depthBound);
            }
        }
    }

    @ParameterizedTest(name = "{0} ranks")
    @ValueSource(ints = {8, 13})
    @DisplayName("COLL-032: tree broadcast and reduce over many chunks match the reference")
    void pipelinedTree(final int ranks) throws Exception {
        System.out.println("TreeTest seed=" + SEED + " ranks=" + ranks);
        // The tree for every size here; 4 KiB chunks: tens of chunks forwarded down (or reduced up) the tree.
        final CommConfig cfg = CollectivesMatrixTest.config().smallAllReduceBytes(1 << 20);
        try (LocalCluster cluster = LocalCluster.start(ranks, cfg)) {
            final List<List<String>> wrong = cluster.run(c -> {
                final OpCases cases = new OpCases(c, SEED);
                for (final int root : new int[] {0, 5, ranks - 1}) {
                    cases.broadcast(40_009, DataType.FLOAT32, root, root == 5);
                    cases.reduce(40_009, DataType.FLOAT32, ReduceOp.SUM, root);
                    cases.reduce(20_011, DataType.INT64, ReduceOp.MAX, root);
                    cases.reduce(30_011, DataType.BFLOAT16, ReduceOp.PROD, root);
                }
                return new ArrayList<>(cases.wrong);
            }, Duration.ofSeconds(120));
            for (final List<String> w : wrong) {
                assertThat(w).as("seed " + SEED).isEmpty();
            }
        }
    }
}
