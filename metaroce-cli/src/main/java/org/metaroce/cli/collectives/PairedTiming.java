// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.cli.collectives;

import java.util.function.LongSupplier;

/**
 * Times an operation out of place and in place in alternating blocks: warm-up iterations of both
 * first, then timed blocks of {@code ceil(iters / 10)} iterations, out of place, in place, out of
 * place, ... (ten blocks of each variant).
 *
 * <p>Why alternate: timing every out-of-place iteration and then every in-place one charged
 * everything that changes while the process runs to whichever variant came first: on a 2-core
 * host the JIT compiles for the first seconds of a run, and the first ten 64 MiB all-reduces took
 * 2-2.5 times as long as later ones in either variant, so the out-of-place row, timed first,
 * looked twice as slow as the in-place one.
 *
 * <p>Why blocks, not single iterations: ranks leave an operation at different times (a rank
 * whose last sends are inline need not wait for their acknowledgements), so the wait for the
 * slowest rank lands in the next call. Alternating every iteration, that call is always of the
 * other variant: on 4 ranks, 32 KiB, rank 0 measured 160 us per out-of-place and 82 per in-place
 * all-reduce in the same run where every rank's pair of calls took 243 us, so the slowest rank's
 * mean overstated the time per all-reduce by a third (121 us). In blocks the wait changes variant
 * only at a block's edge, one iteration in {@code ceil(iters / 10)}. The clock is an input (tests
 * substitute one).
 */
final class PairedTiming {
    /** Blocks of each variant in a timed run (fewer when there are fewer iterations). */
    static final int BLOCKS = 10;

    /** One iteration of the operation, in place or out of place. */
    @FunctionalInterface
    interface Iteration {
        void run(boolean inPlace);
    }

    /**
     * @param outOfPlaceNs the duration of each timed out-of-place iteration
     * @param inPlaceNs the duration of each timed in-place iteration
     * @param windowNs from the first timed iteration's start to the last one's end
     * @param cpuNs CPU time of the process over the same window
     */
    record Result(long[] outOfPlaceNs, long[] inPlaceNs, long windowNs, long cpuNs) {
        /** @return mean out-of-place iteration in microseconds */
        double outOfPlaceMeanUs() {
            return meanUs(outOfPlaceNs);
        }

        /** @return mean in-place iteration in microseconds */
        double inPlaceMeanUs() {
            return meanUs(inPlaceNs);
        }

        /** @return median out-of-place iteration in microseconds, over pairs of consecutive iterations */
        double outOfPlaceMedianUs() {
            return medianUs(outOfPlaceNs);
        }

        /** @return median in-place iteration in microseconds, over pairs of consecutive iterations */
        double inPlaceMedianUs() {
            return medianUs(inPlaceNs);
        }

        private static double meanUs(final long[] ns) {
            long sum = 0;
            for (final long v : ns) {
                sum += v;
            }
            return sum / 1e3 / ns.length;
        }

        /**
         * The median of the mean of two consecutive iterations (iterations 0 and 1, 2 and 3, ...;
         * a lone last one is left out, a lone only one is the median). A rank's consecutive calls
         * can alternate between short and long: on 4 ranks, 32 KiB, ranks 2 and 3 took 126, 64,
         * 127, 67, 133, 64, ... us while ranks 0 and 1 took 85-110 each, so the median of single
         * calls landed on either mode (130 us or 64) as the split fell, where every pair took about
         * 100 (docs/collectives.md, "The rows' time"). Stalls still fall out of the median.
         */
        static double medianUs(final long[] ns) {
            if (ns.length == 1) {
                return ns[0] / 1e3;
            }
            final long[] pairs = new long[ns.length / 2];
            for (int i = 0; i < pairs.length; i++) {
                pairs[i] = ns[2 * i] + ns[2 * i + 1];
            }
            java.util.Arrays.sort(pairs);
            return pairs[pairs.length / 2] / 2e3;
        }
    }

    private PairedTiming() {
    }

    /**
     * @param warmup untimed iterations of each variant, >= 0
     * @param iters timed iterations of each variant, >= 1
     * @param op the operation
     * @param clock nanosecond clock
     * @param cpuClock the process's CPU time in nanoseconds (read at the start and end of the timed window)
     * @return the timings
     */
    static Result run(final int warmup, final int iters, final Iteration op, final LongSupplier clock,
                      final LongSupplier cpuClock) {
        if (warmup < 0 || iters < 1) {
            throw new IllegalArgumentException("need warmup >= 0 and iters >= 1, got " + warmup + ", " + iters);
        }
        for (int i = 0; i < warmup; i++) {
            op.run(false);
            op.run(true);
        }
        final long[] oop = new long[iters];
        final long[] ip = new long[iters];
        final long cpuStart = cpuClock.getAsLong();
        final long start = clock.getAsLong();
        long last = start;
        final int block = (iters + BLOCKS - 1) / BLOCKS;
        for (int done = 0; done < iters; done += block) {
            final int end = Math.min(iters, done + block);
            for (int i = done; i < end; i++) {
                op.run(false);
                final long now = clock.getAsLong();
                oop[i] = now - last;
                last = now;
            }
            for (int i = done; i < end; i++) {
                op.run(true);
                final long now = clock.getAsLong();
                ip[i] = now - last;
                last = now;
            }
        }
        return new Result(oop, ip, last - start, cpuClock.getAsLong() - cpuStart);
    }
}
