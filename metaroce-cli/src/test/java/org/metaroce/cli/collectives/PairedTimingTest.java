// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.cli.collectives;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * The perf tools time out of place and in place in alternating blocks, after warming up both, and
 * charge each iteration to its own variant: with a clock that the fake operation advances, the
 * timings are exact. (Timed in blocks, the block that ran first absorbed the JIT's warm-up.)
 */
class PairedTimingTest {
    /** A clock that only the fake operation moves. */
    static final class FakeClock {
        long now;
    }

    @Test
    @DisplayName("warm-up of both variants first, then timed iterations alternate, each charged to its variant")
    void alternatesAndAttributes() {
        final FakeClock clock = new FakeClock();
        final FakeClock cpu = new FakeClock();
        final List<String> calls = new ArrayList<>();
        final PairedTiming.Result r = PairedTiming.run(2, 3, inPlace -> {
            calls.add(inPlace ? "ip" : "oop");
            clock.now += inPlace ? 1_000 : 3_000;
            cpu.now += 2 * (inPlace ? 1_000 : 3_000); // two cores busy
        }, () -> clock.now, () -> cpu.now);
        assertThat(calls).containsExactly("oop", "ip", "oop", "ip", "oop", "ip", "oop", "ip", "oop", "ip");
        assertThat(r.outOfPlaceNs()).containsExactly(3_000, 3_000, 3_000);
        assertThat(r.inPlaceNs()).containsExactly(1_000, 1_000, 1_000);
        assertThat(r.windowNs()).isEqualTo(12_000);
        assertThat(r.cpuNs()).as("CPU time of the timed window only, not the warm-up").isEqualTo(24_000);
        assertThat(r.outOfPlaceMeanUs()).isEqualTo(3.0);
        assertThat(r.inPlaceMedianUs()).isEqualTo(1.0);
    }

    @Test
    @DisplayName("a process that speeds up while it runs (JIT warm-up) slows both variants alike")
    void warmUpIsShared() {
        final FakeClock clock = new FakeClock();
        final int[] call = {0};
        // Every call costs the same in both variants, but calls get cheaper as the process warms
        // up: 10 ms for the first, 1 ms less for each later one, down to 1 ms.
        final PairedTiming.Result r = PairedTiming.run(0, 5, inPlace -> {
            clock.now += Math.max(1, 10 - call[0]++) * 1_000_000L;
        }, () -> clock.now, () -> 0);
        final double oop = r.outOfPlaceMeanUs();
        final double ip = r.inPlaceMeanUs();
        // In blocks this would have been 8 ms against 3 ms; alternating, the two differ by one step.
        assertThat(oop / ip).isBetween(1.0, 1.2);
        assertThat(r.outOfPlaceNs()).containsExactly(10_000_000, 8_000_000, 6_000_000, 4_000_000, 2_000_000);
    }

    @Test
    @DisplayName("timed in ten blocks of each variant: 20 iterations go as 2 out of place, 2 in place, ...")
    void blocksOfATenth() {
        final FakeClock clock = new FakeClock();
        final List<String> calls = new ArrayList<>();
        PairedTiming.run(0, 20, inPlace -> {
            calls.add(inPlace ? "ip" : "oop");
            clock.now += 1_000;
        }, () -> clock.now, () -> 0);
        final List<String> expected = new ArrayList<>();
        for (int b = 0; b < PairedTiming.BLOCKS; b++) {
            expected.addAll(List.of("oop", "oop", "ip", "ip"));
        }
        assertThat(calls).containsExactlyElementsOf(expected);
        final List<String> uneven = new ArrayList<>();
        PairedTiming.run(0, 5, inPlace -> uneven.add(inPlace ? "ip" : "oop"), () -> 0, () -> 0);
        assertThat(uneven).as("fewer iterations than blocks: one per block")
            .containsExactly("oop", "ip", "oop", "ip", "oop", "ip", "oop", "ip", "oop", "ip");
    }

    @Test
    @DisplayName("the wait for a slower rank, paid in the call after a change of variant, is charged to neither row")
    void waitForTheSlowestRankStaysOutOfTheRows() {
        final FakeClock clock = new FakeClock();
        final boolean[] previousInPlace = {true};
        // Every all-reduce takes 2 ms, but this rank leaves each one 1 ms before the others, so
        // the call after a change of variant waits 1 ms for them: an out-of-place call after an
        // in-place one takes 3 ms and the in-place call after it, which starts as early as the
        // others, 1 ms (the others' waits are shifted the other way). In calls of one variant in a
        // row the ranks stay in step.
        final PairedTiming.Result r = PairedTiming.run(0, 100, inPlace -> {
            final boolean switched = inPlace != previousInPlace[0];
            clock.now += switched ? (inPlace ? 1_000_000L : 3_000_000L) : 2_000_000L;
            previousInPlace[0] = inPlace;
        }, () -> clock.now, () -> 0);
        // Alternating every call, each row would have read 3 ms and 1 ms; in blocks of 10, one
        // call per block carries the wait.
        assertThat(r.outOfPlaceMeanUs()).isEqualTo(2_100.0);
        assertThat(r.inPlaceMeanUs()).isEqualTo(1_900.0);
        assertThat(r.outOfPlaceMedianUs()).isEqualTo(2_000.0);
        assertThat(r.inPlaceMedianUs()).isEqualTo(2_000.0);
    }

    @Test
    @DisplayName("a rank whose calls alternate between short and long: the median is the pairs', not either mode")
    void medianOfConsecutivePairs() {
        final FakeClock clock = new FakeClock();
        final int[] call = {0};
        // 60 us, 140 us, 60, 140, ...: the median of single calls is 140 (or 60, as the split falls).
        final PairedTiming.Result r = PairedTiming.run(0, 200, inPlace -> {
            clock.now += call[0]++ % 2 == 0 ? 60_000 : 140_000;
        }, () -> clock.now, () -> 0);
        assertThat(r.outOfPlaceMedianUs()).isEqualTo(100.0);
        assertThat(r.inPlaceMedianUs()).isEqualTo(100.0);
        assertThat(r.outOfPlaceMeanUs()).isEqualTo(100.0);
        assertThat(PairedTiming.Result.medianUs(new long[] {7_000})).as("one iteration").isEqualTo(7.0);
        assertThat(PairedTiming.Result.medianUs(new long[] {1_000, 3_000, 50_000}))
            .as("a lone last iteration is left out").isEqualTo(2.0);
    }

    @Test
    void rejectsBadCounts() {
        assertThatThrownBy(() -> PairedTiming.run(-1, 1, inPlace -> { }, System::nanoTime, () -> 0))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("warmup");
        assertThatThrownBy(() -> PairedTiming.run(0, 0, inPlace -> { }, System::nanoTime, () -> 0))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("iters");
    }
}
