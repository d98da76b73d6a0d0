// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.connection;

import java.util.Arrays;

import org.agrona.collections.Hashing;

/**
 * Bounds the answers sent to sources that have not completed the cookie exchange [SEC-008]:
 * per source address through a fixed table of hashed buckets (so a flood from many spoofed
 * addresses allocates nothing), and optionally in total. Each bucket is a generic cell rate
 * algorithm (a token bucket stored as one "theoretical arrival time"): {@code rate} answers per
 * second with a burst of a tenth of that.
 */
final class AnswerRateLimiter {
    private static final long NS_PER_S = 1_000_000_000L;
    private static final long EMPTY = Long.MIN_VALUE;

    private final long[] perSource;
    private final int mask;
    private final long sourceIntervalNs;
    private final long sourceToleranceNs;
    private final long globalIntervalNs;
    private final long globalToleranceNs;
    private long global = EMPTY;

    AnswerRateLimiter(final int buckets, final int perSourcePerSecond, final int globalPerSecond) {
        this.perSource = new long[perSourcePerSecond > 0 ? buckets : 0];
        Arrays.fill(perSource, EMPTY);
        this.mask = buckets - 1;
        this.sourceIntervalNs = perSourcePerSecond > 0 ? Math.max(1, NS_PER_S / perSourcePerSecond) : 0;
        this.sourceToleranceNs = sourceIntervalNs * burst(perSourcePerSecond);
        this.globalIntervalNs = globalPerSecond > 0 ? Math.max(1, NS_PER_S / globalPerSecond) : 0;
        this.globalToleranceNs = globalIntervalNs * burst(globalPerSecond);
    }

    /** Burst allowance beyond the steady rate: a tenth of a second's worth, so no second sees more than 1.1 × rate. */
    private static long burst(final int perSecond) {
        return perSecond > 0 ? Math.max(0, perSecond / 10 - 1) : 0;
    }

    /**
     * Takes one answer's worth of credit for the source, if both its bucket and the global
     * bucket have it.
     *
     * @param nowNs current time
     * @param host the source's host id ({@code PeerDirectory.hostOf})
     * @return whether the answer may be sent
     */
    boolean tryAcquire(final long nowNs, final int host) {
        int index = -1;
        if (sourceIntervalNs > 0) {
            index = Hashing.hash(host, mask);
            if (!conforms(perSource[index], nowNs, sourceToleranceNs)) {
                return false;
            }
        }
        if (globalIntervalNs > 0) {
            if (!conforms(global, nowNs, globalToleranceNs)) {
                return false;
            }
            global = advance(global, nowNs, globalIntervalNs);
        }
        if (index >= 0) {
            perSource[index] = advance(perSource[index], nowNs, sourceIntervalNs);
        }
        return true;
    }

    private static boolean conforms(final long tat, final long nowNs, final long tolerance) {
        return tat == EMPTY || tat - tolerance <= nowNs;
    }

    private static long advance(final long tat, final long nowNs, final long interval) {
        return (tat == EMPTY || tat < nowNs ? nowNs : tat) + interval;
    }
}
