// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.bench.loopback;

import java.util.concurrent.TimeUnit;

import org.agrona.concurrent.IdleStrategy;

/**
 * A thread's wait for work: idles with the run's {@link Idle} strategy when a duty cycle did
 * nothing, and is the anti-hang guard, reporting expiry when no progress was made for
 * {@link #LIMIT_NS}. Reads the clock only every 1024 idle cycles and allocates nothing, so that
 * the guard costs nothing measurable; the caller builds its message only once it expired.
 */
final class Guard {
    /** No progress for this long means the contender is stuck (not slow). */
    static final long LIMIT_NS = TimeUnit.SECONDS.toNanos(10);

    private final IdleStrategy strategy;
    private long deadlineNs;
    private int spins;

    Guard(final Idle idle) {
        this.strategy = idle.newStrategy();
    }

    /** Starts a wait. */
    void reset() {
        spins = 0;
        deadlineNs = 0;
        strategy.reset();
    }

    /**
     * After one duty cycle of the wait: progress resets the idle strategy and the guard; no work
     * idles.
     *
     * @param work what the duty cycle did (0 or less: nothing)
     * @return whether the wait made no progress for {@link #LIMIT_NS}: the caller then fails with
     *     {@link #stuck}
     */
    boolean idle(final int work) {
        if (work > 0) {
            if (spins != 0) {
                reset();
            }
            return false;
        }
        strategy.idle();
        if ((++spins & 1023) != 0) {
            return false;
        }
        final long now = System.nanoTime();
        if (deadlineNs == 0) {
            deadlineNs = now + LIMIT_NS;
            return false;
        }
        return now - deadlineNs > 0;
    }

    /** @return the failure of a wait that made no progress, saying what was awaited */
    static IllegalStateException stuck(final String what) {
        return new IllegalStateException("no progress for " + TimeUnit.NANOSECONDS.toSeconds(LIMIT_NS) + " s: " + what);
    }
}
