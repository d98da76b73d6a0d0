// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.cli.collectives;

import java.util.function.LongSupplier;
import java.util.function.Predicate;

/**
 * Runs rounds of the measured operation until the JIT compiler has been idle for a while, so that
 * the timed iterations measure compiled code. Why: nccl-tests' few warm-up iterations suffice for C,
 * but a JVM interprets the collective path until C2 has compiled it, which on a 2-core host shared
 * with other work takes seconds of the compiler's CPU; an 8-byte all-reduce on 4 ranks took a median
 * of 2.6 ms after 100 warm-up iterations and 0.34 ms after 3,000 in the same minute. The JVM reports
 * compilation time only when a compilation ends, so a long C2 compilation on a starved host looks
 * like a quiet compiler: at load average 11 a 0.5 s quiet period alone ended some warm-ups after
 * 80 rounds with the small sizes still at milliseconds; hence a minimum duration too. Every rank must
 * run the same rounds, so the decision to stop is agreed on ({@code allQuiet}) after each round.
 * The clocks are inputs (tests substitute them).
 */
final class JitWarmup {
    /** What one warm-up took. */
    record Result(int rounds, long elapsedNs, boolean quiet) {
    }

    private JitWarmup() {
    }

    /**
     * @param round one round of the operations to warm up (every rank runs it)
     * @param allQuiet given this rank's verdict, whether every rank's compiler is quiet (collective)
     * @param compileMs total JIT compilation time so far in ms, as the JVM reports it
     * @param nanoTime the clock
     * @param minNs shortest warm-up
     * @param quietNs how long the compiler must have done nothing
     * @param maxNs when to give up waiting for it
     * @return rounds run, time taken, whether the compiler went quiet before {@code maxNs}
     */
    static Result run(final Runnable round, final Predicate<Boolean> allQuiet,
                      final LongSupplier compileMs, final LongSupplier nanoTime, final long minNs,
                      final long quietNs, final long maxNs) {
        final long start = nanoTime.getAsLong();
        long lastCompileMs = compileMs.getAsLong();
        long quietSince = start;
        int rounds = 0;
        while (true) {
            round.run();
            rounds++;
            final long now = nanoTime.getAsLong();
            final long compiled = compileMs.getAsLong();
            if (compiled != lastCompileMs) {
                lastCompileMs = compiled;
                quietSince = now;
            }
            final boolean timedOut = now - start >= maxNs;
            if (allQuiet.test(now - start >= minNs && now - quietSince >= quietNs || timedOut)) {
                return new Result(rounds, now - start, !timedOut);
            }
        }
    }

    /** Rows up to this size at least: every algorithm's code path below the multi-chunk transfers. */
    static final long MIN_TOP_BYTES = 1 << 20;

    /**
     * The largest row a warm-up runs: the first of the sweep's sizes that is at least 1 MiB and at
     * least {@code 2 x chunk x ranks}, the first size at which every transfer of the ring (a
     * segment, size / ranks) and of Rabenseifner's algorithm (a block, size / p, p <= ranks) takes
     * two chunks or more; at most the sweep's last size, at least its first. Why: the engine's
     * paths for a transfer of several chunks (pipelined chunks, region grants of several) run first
     * there. With the warm-up stopping at 1 MiB, 4 ranks and 256 KiB chunks, the 2 MiB row was the
     * first to take them: the JIT compiled 43 methods while it was timed (2 since), 15 or so calls
     * in a row took 8-14 ms instead of 3-4, and the row's mean was 8-20 % above its median in the
     * comparison with Open MPI (3-14 % since; docs/collectives.md).
     *
     * @param minBytes the sweep's first size
     * @param maxBytes its last size, at most
     * @param factor its step factor (a factor of 1 steps by one byte, as the sweep does)
     * @param chunkBytes the communicator's chunk size
     * @param ranks the number of ranks
     * @return the largest size the warm-up runs
     */
    static long topBytes(final long minBytes, final long maxBytes, final int factor, final int chunkBytes,
                         final int ranks) {
        final long wanted = Math.max(MIN_TOP_BYTES, 2L * chunkBytes * ranks);
        long top = minBytes;
        for (long size = minBytes; size <= maxBytes; size = Math.max(size * factor, size + 1)) {
            top = size;
            if (size >= wanted) {
                break;
            }
        }
        return top;
    }

    /** @return the JVM's total JIT compilation time in ms, or 0 where it does not tell */
    static long compilationMs() {
        final java.lang.management.CompilationMXBean jit = java.lang.management.ManagementFactory
            .getCompilationMXBean();
        return jit != null && jit.isCompilationTimeMonitoringSupported() ? jit.getTotalCompilationTime() : 0;
    }

}
