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

    @Test
    @DisplayName("the warm-up runs up to the first size whose transfers take two chunks, not only to 1 MiB")
    void runsUpToTheFirstMultiChunkSize() {
        final int chunk = 256 << 10;
        // 4 ranks: Rabenseifner's blocks (size / 4) take two chunks from 2 MiB; 1 MiB left it to the row.
        assertThat(JitWarmup.topBytes(8, 32 << 20, 4, chunk, 4)).isEqualTo(2 << 20);
        // 8 ranks: from 4 MiB, the sweep's next size after 2 MiB being 8 MiB.
        assertThat(JitWarmup.topBytes(8, 32 << 20, 4, chunk, 8)).isEqualTo(8 << 20);
        assertThat(JitWarmup.topBytes(8, 32 << 20, 2, chunk, 8)).isEqualTo(4 << 20);
        // 2 ranks: 1 MiB already, the least the warm-up runs to.
        assertThat(JitWarmup.topBytes(8, 32 << 20, 2, chunk, 2)).isEqualTo(1 << 20);
        // Never past the sweep's last size, never below its first.
        assertThat(JitWarmup.topBytes(8, 512 << 10, 4, chunk, 4)).isEqualTo(512 << 10);
        assertThat(JitWarmup.topBytes(64 << 20, 256 << 20, 2, chunk, 4)).isEqualTo(64 << 20);
        // A factor of 1 steps by a byte, as the sweep does.
        assertThat(JitWarmup.topBytes(3, 5, 1, 1, 1)).isEqualTo(5);
    }
}
