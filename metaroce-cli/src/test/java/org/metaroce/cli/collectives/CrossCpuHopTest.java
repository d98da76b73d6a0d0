// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.cli.collectives;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.metaroce.netty.CpuAffinity;

/** The cross-CPU hop the collective tools print around a sweep (docs/collectives.md, "The host's slow mode"). */
class CrossCpuHopTest {

    @Test
    void measuresAHopOrSaysWhyNotAndLeavesTheCallersThreadAlone() {
        final String line = CrossCpuHop.describe();
        System.out.println(line);
        if (!CpuAffinity.isAvailable() || CpuAffinity.allowedCpus().length < 2) {
            assertThat(line).startsWith("cross-CPU hop: n/a (").doesNotContain("null");
            return;
        }
        final int[] before = CpuAffinity.allowedCpus();
        assertThat(line).matches("cross-CPU hop [0-9]+ ns \\(CPUs [0-9]+ and [0-9]+\\)|cross-CPU hop: n/a \\(.+\\)");
        final double ns = CrossCpuHop.medianNs(before[0], before[1]);
        // A hop between two CPUs costs at least a few ns and, unless a CPU is taken away for the
        // whole trial (then NaN), far less than the trial limit spread over its hops.
        if (!Double.isNaN(ns)) {
            assertThat(ns).isGreaterThan(1).isLessThan(10_000);
        }
        assertThat(CpuAffinity.allowedCpus()).as("the caller's thread is not pinned").containsExactly(before);
    }
}
