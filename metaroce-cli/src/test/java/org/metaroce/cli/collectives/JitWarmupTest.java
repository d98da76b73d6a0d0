// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.cli.collectives;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** The tools' JIT warm-up with fake clocks: stops once the compiler is quiet long enough, or at the cap. */
class JitWarmupTest {
    private long now;
    private long compileMs;

    @Test
    @DisplayName("runs until the compiler has been idle for the quiet period, as every rank agrees")
    void stopsWhenQuiet() {
        final List<Boolean> verdicts = new ArrayList<>();
        final JitWarmup.Result r = JitWarmup.run(() -> {
            now += 100;
            if (now <= 500) {
                compileMs++; // compiling during the first five rounds
            }
        }, quiet -> {
            verdicts.add(quiet);
            return quiet;
        }, () -> compileMs, () -> now, 0, 300, 10_000);
        // Last compile at 500; quiet for 300 at 800.
        assertThat(r.rounds()).isEqualTo(8);
        assertThat(r.elapsedNs()).isEqualTo(800);
        assertThat(r.quiet()).isTrue();
        assertThat(verdicts).containsExactly(false, false, false, false, false, false, false, true);
    }

    @Test
    @DisplayName("a rank whose peers are still compiling keeps running rounds with them")
    void waitsForEveryRank() {
        final int[] calls = {0};
        final JitWarmup.Result r = JitWarmup.run(() -> now += 100, quiet -> ++calls[0] >= 5, () -> 0, () -> now, 0, 50,
            10_000);
        assertThat(r.rounds()).isEqualTo(5);
        assertThat(r.quiet()).isTrue();
    }

    @Test
    @DisplayName("gives up at the cap with the compiler still busy, and says so")
    void capped() {
        final JitWarmup.Result r = JitWarmup.run(() -> {
            now += 100;
            compileMs++;
        }, quiet -> quiet, () -> compileMs, () -> now, 0, 300, 1_000);
        assertThat(r.rounds()).isEqualTo(10);
        assertThat(r.quiet()).isFalse();
    }

    @Test
    @DisplayName("a compiler that looks quiet early does not end the warm-up before the minimum")
    void runsAtLeastTheMinimum() {
        final JitWarmup.Result r = JitWarmup.run(() -> now += 100, quiet -> quiet, () -> 0, () -> now, 2_000, 100,
            10_000);
        assertThat(r.rounds()).isEqualTo(20);
        assertThat(r.quiet()).isTrue();
    }
}
