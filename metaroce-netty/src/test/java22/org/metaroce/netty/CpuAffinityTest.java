// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.Test;

/** Reading and setting a thread's CPU affinity through sched_getaffinity/sched_setaffinity. */
class CpuAffinityTest {
    @Test
    void aThreadPinnedToEachAllowedCpuRunsThereAloneAndOthersAreUntouched() throws Exception {
        assumeTrue(CpuAffinity.isAvailable(), () -> "affinity unavailable: " + CpuAffinity.unavailabilityReason());
        final int[] allowed = CpuAffinity.allowedCpus();
        assertThat(allowed).isNotEmpty().isSorted();
        assertThat(allowed.length).isLessThanOrEqualTo(Runtime.getRuntime().availableProcessors());
        for (final int cpu : allowed) {
            final AtomicReference<int[]> seen = new AtomicReference<>();
            final Thread t = new Thread(() -> {
                CpuAffinity.pinCurrentThread(cpu);
                seen.set(CpuAffinity.allowedCpus());
            });
            t.start();
            t.join();
            assertThat(seen.get()).as("after pinning to CPU %d", cpu).containsExactly(cpu);
        }
        // Pinning is per thread: this one may still run everywhere it could.
        assertThat(CpuAffinity.allowedCpus()).containsExactly(allowed);
    }

    @Test
    void aCpuTheThreadMayNotUseIsRefusedWithTheAllowedOnes() {
        assumeTrue(CpuAffinity.isAvailable(), () -> "affinity unavailable: " + CpuAffinity.unavailabilityReason());
        final int[] allowed = CpuAffinity.allowedCpus();
        final int outside = allowed[allowed.length - 1] + 1;
        assertThatThrownBy(() -> CpuAffinity.pinCurrentThread(outside))
            .isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("CPU " + outside + " is not one this thread may run on");
        assertThatThrownBy(() -> CpuAffinity.pinCurrentThread(-1)).isInstanceOf(IllegalArgumentException.class);
    }
}
