package org.metaroce.bench.loopback;

import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * The anti-hang guard of a busy-wait: fails when no progress was made for {@link #LIMIT_NS}. Reads
 * the clock only every 1024 spins so that the guard costs nothing measurable.
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
     * @param what describes what is awaited, built only when the guard fires
     * @throws IllegalStateException when the wait has lasted {@link #LIMIT_NS}
     */
    void spin(final Supplier<String> what) {
        if ((++spins & 1023) != 0) {
            return;
        }
        final long now = System.nanoTime();
        if (deadlineNs == 0) {
            deadlineNs = now + LIMIT_NS;
        } else if (now - deadlineNs > 0) {
            throw new IllegalStateException("no progress for " + TimeUnit.NANOSECONDS.toSeconds(LIMIT_NS) + " s: "
                + what.get());
        }
    }
}
