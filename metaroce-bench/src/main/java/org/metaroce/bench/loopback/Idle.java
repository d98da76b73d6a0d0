// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.bench.loopback;

import java.util.Locale;

import org.agrona.concurrent.BackoffIdleStrategy;
import org.agrona.concurrent.BusySpinIdleStrategy;
import org.agrona.concurrent.IdleStrategy;

/**
 * How both threads of every contender wait when there is nothing to do; one choice for all
 * contenders of a run. The strategies are those of the {@code metaroce} tools' {@code --idle}.
 */
public enum Idle {
    /** Busy-spin ({@link Thread#onSpinWait()}). */
    SPIN,
    /** Spin, yield, then park from 1 µs up to 100 µs (the tools' {@code backoff}). */
    BACKOFF;

    /** @return a fresh strategy (one per thread: they keep state) */
    public IdleStrategy newStrategy() {
        return this == SPIN ? new BusySpinIdleStrategy() : new BackoffIdleStrategy(100, 10, 1_000, 100_000);
    }

    /**
     * The tools' adaptive default: latency tests spin while the two busy threads fit the
     * processors; bandwidth tests spin only when a processor stays free for the kernel's loopback
     * packet processing (on 2 cores, all-spinning halved {@code write_bw}), else back off.
     *
     * @param name {@code spin}, {@code backoff} or {@code auto}
     * @param bandwidth whether the run measures bandwidth
     * @return the strategy
     */
    public static Idle resolve(final String name, final boolean bandwidth) {
        final int cores = Runtime.getRuntime().availableProcessors();
        return switch (name.toLowerCase(Locale.ROOT)) {
            case "spin" -> SPIN;
            case "backoff" -> BACKOFF;
            case "auto" -> (bandwidth ? 2 < cores : 2 <= cores) ? SPIN : BACKOFF;
            default -> throw new IllegalArgumentException("idle must be spin, backoff or auto, got '" + name + "'");
        };
    }
}
