package org.metaroce.bench.loopback;

import java.util.concurrent.TimeUnit;

/**
 * The anti-hang guard of a busy-wait: reports expiry when no progress was made for
 * {@link #LIMIT_NS}. Reads the clock only every 1024 idle spins and allocates nothing, so that
 * the guard costs nothing measurable; the caller builds its message only once it expired.
 */
final class Guard {
    /** No progress for this long means the contender is stuck (not slow). */
    static final long LIMIT_NS = TimeUnit.SECONDS.toNanos(10);

    private long deadlineNs;
    private int spins;

    /** Starts a wait. */
    void reset() {
        spins = 0;
        deadlineNs = 0;
    }

    /**
     * One idle spin of the wait.
     *
     * @return whether the wait has lasted {@link #LIMIT_NS}: the caller then fails with {@link #stuck}
     */
    boolean idle() {
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
