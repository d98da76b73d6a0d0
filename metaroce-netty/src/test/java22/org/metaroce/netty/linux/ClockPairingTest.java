// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty.linux;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * [REL-066] Pairing the wall clock with the monotonic clock: a pause between the reads must not
 * shift arrivals (the likely source of RTT samples of 55 ns on a 20 µs veth round trip).
 */
class ClockPairingTest {
    /** A script of clock readings: monotonic reads step through {@code mono}, wall reads through {@code real}. */
    private static final class Script implements ClockPairing.Clocks {
        private final long[] mono;
        private final long[] real;
        private int m;
        private int r;

        Script(final long[] mono, final long[] real) {
            this.mono = mono;
            this.real = real;
        }

        @Override
        public long monotonicNs() {
            return mono[m++];
        }

        @Override
        public long realtimeNs() {
            return real[r++];
        }
    }

    // The true offset: wall = monotonic + 1_000_000_000_000.
    private static final long OFFSET = 1_000_000_000_000L;

    @Test
    @DisplayName("[REL-066] a pause between the clock reads is not taken into the offset")
    void aPauseBetweenTheReadsIsNotTakenIntoTheOffset() {
        // Attempt 1: the thread sleeps 30 µs after the first monotonic read (the wall clock is read
        // 30 µs late). Attempt 2: tight, 100 ns between reads.
        final Script s = new Script(new long[] {1_000, 31_100, 40_000, 40_100},
            new long[] {OFFSET + 31_000, OFFSET + 40_050});
        final long offset = ClockPairing.realMinusMonotonicNs(s);
        System.out.println("offset error " + (offset - OFFSET) + " ns");
        assertThat(Math.abs(offset - OFFSET)).isLessThanOrEqualTo(50);
    }

    @Test
    @DisplayName("[REL-066] a tight first bracket is taken at once")
    void aTightFirstBracketIsTakenAtOnce() {
        final Script s = new Script(new long[] {1_000, 1_200}, new long[] {OFFSET + 1_100});
        assertThat(ClockPairing.realMinusMonotonicNs(s)).isEqualTo(OFFSET);
        assertThat(s.m).isEqualTo(2);
    }

    @Test
    @DisplayName("[REL-066] with every bracket wide the tightest wins")
    void theTightestOfWideBracketsWins() {
        // Widths 50 µs, 10 µs, 30 µs; the wall clock read at each bracket's end (worst case).
        final Script s = new Script(new long[] {0, 50_000, 100_000, 110_000, 200_000, 230_000},
            new long[] {OFFSET + 50_000, OFFSET + 110_000, OFFSET + 230_000});
        final long offset = ClockPairing.realMinusMonotonicNs(s);
        assertThat(offset - OFFSET).as("error at most half the tightest width").isBetween(0L, 5_000L);
    }

    @Test
    void anUnreadableWallClockGivesNoOffset() {
        final Script s = new Script(new long[] {0, 10}, new long[] {ClockPairing.UNAVAILABLE});
        assertThat(ClockPairing.realMinusMonotonicNs(s)).isEqualTo(ClockPairing.UNAVAILABLE);
    }
}
