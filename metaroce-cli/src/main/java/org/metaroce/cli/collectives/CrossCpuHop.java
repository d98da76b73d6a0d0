// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.cli.collectives;

import java.util.Arrays;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicLong;

import org.metaroce.netty.CpuAffinity;

/**
 * How long a cache line takes to move between the first two CPUs this process may run on: two
 * threads, pinned one to each, hand a counter back and forth. On a virtual machine the figure says
 * where the host placed the vCPUs, and with that how fast anything moves between them: on the
 * project's 2-vCPU machines about 35 ns or about 150&ndash;230 ns, and in the second placement the
 * kernel's UDP loopback between the two CPUs moves a third as much, so a loopback collective of ranks
 * spread over both takes about twice as long (docs/collectives.md, "The host's slow mode"). The tool
 * prints it before and after a sweep so that runs in different placements are not compared. The same
 * measurement as {@code metaroce-collectives/compare/cross_cpu_hop.c}.
 *
 * <p>The caller's thread is left as it was: the two threads are new ones.
 */
final class CrossCpuHop {
    /** One-way hops per trial: tens of milliseconds at most. */
    static final long HOPS = 200_000;
    /** Trials; the median is reported. */
    static final int TRIALS = 5;
    /** A trial that has not ended by then is abandoned: a CPU is taken by something that does not yield to us. */
    private static final long TRIAL_LIMIT_NS = 2_000_000_000L;

    private CrossCpuHop() {
    }

    /**
     * @return "cross-CPU hop 36 ns (CPUs 0 and 1)", or "cross-CPU hop: n/a (why)" where it cannot be
     *     measured (no thread affinity in this JVM, a single CPU, a CPU held by other work)
     */
    static String describe() {
        if (!CpuAffinity.isAvailable()) {
            return "cross-CPU hop: n/a (" + CpuAffinity.unavailabilityReason().orElse("no thread affinity") + ")";
        }
        final int[] cpus = CpuAffinity.allowedCpus();
        if (cpus.length < 2) {
            return "cross-CPU hop: n/a (one CPU: " + Arrays.toString(cpus) + ")";
        }
        final double ns = medianNs(cpus[0], cpus[1]);
        return Double.isNaN(ns)
            ? "cross-CPU hop: n/a (a trial took over " + TRIAL_LIMIT_NS / 1_000_000_000L + " s: a CPU is busy)"
            : String.format(Locale.ROOT, "cross-CPU hop %.0f ns (CPUs %d and %d)", ns, cpus[0], cpus[1]);
    }

    /**
     * @param first one CPU this process may run on
     * @param second another
     * @return the median over {@link #TRIALS} of the time per one-way hop, ns; NaN when a trial did
     *     not end within its limit
     */
    static double medianNs(final int first, final int second) {
        final double[] ns = new double[TRIALS];
        for (int t = 0; t < TRIALS; t++) {
            ns[t] = trialNs(first, second);
            if (Double.isNaN(ns[t])) {
                return Double.NaN;
            }
        }
        Arrays.sort(ns);
        return ns[TRIALS / 2];
    }

    private static double trialNs(final int first, final int second) {
        final AtomicLong turn = new AtomicLong();
        final long[] elapsed = {-1};
        final RuntimeException[] failure = new RuntimeException[1];
        final long deadline = System.nanoTime() + TRIAL_LIMIT_NS;
        // The thread of the even turns times the exchange from the moment it passes turn 3 on (the
        // other thread has answered once by then: its start and pinning are not hops) to the
        // moment it passes the last odd value, HOPS - 1: HOPS - 4 hops.
        final Thread even = new Thread(() -> {
            try {
                CpuAffinity.pinCurrentThread(first);
                if (hand(turn, 0, 4, deadline)) {
                    final long start = System.nanoTime();
                    if (hand(turn, 4, HOPS, deadline)) {
                        elapsed[0] = System.nanoTime() - start;
                    }
                }
            } catch (final RuntimeException ex) {
                failure[0] = ex;
            }
        }, "cross-cpu-hop-" + first);
        final Thread odd = new Thread(() -> {
            try {
                CpuAffinity.pinCurrentThread(second);
                hand(turn, 1, HOPS, deadline);
            } catch (final RuntimeException ex) {
                failure[0] = ex;
            }
        }, "cross-cpu-hop-" + second);
        even.setDaemon(true);
        odd.setDaemon(true);
        even.start();
        odd.start();
        try {
            even.join();
            odd.join();
        } catch (final InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while measuring the cross-CPU hop", ex);
        }
        if (failure[0] != null) {
            throw failure[0];
        }
        return elapsed[0] < 0 ? Double.NaN : (double) elapsed[0] / (HOPS - 4);
    }

    /**
     * Takes the turns {@code first}, {@code first + 2}, ... below {@code end}: waits until the
     * counter shows the turn, then passes it on.
     *
     * @return false when the deadline passed first (the other thread is also released by it)
     */
    private static boolean hand(final AtomicLong turn, final long first, final long end, final long deadline) {
        for (long i = first; i < end; i += 2) {
            int spins = 0;
            while (turn.getAcquire() != i) {
                Thread.onSpinWait();
                if ((++spins & 0xFFFF) == 0 && System.nanoTime() - deadline > 0) {
                    return false;
                }
            }
            turn.setRelease(i + 1);
        }
        return true;
    }
}
