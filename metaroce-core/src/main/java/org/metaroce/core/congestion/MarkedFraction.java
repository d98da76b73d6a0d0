// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.congestion;

/**
 * The marked fraction α of the default algorithm's marks-only form [CC-037]: per round trip (a
 * window of one SRTT, opened by the first acknowledgement after the previous one closed) the
 * fraction F of acknowledgements that carried a CE signal, smoothed as α ← (1 − g)·α + g·F with
 * g = 1/16, and, when a window closes with at least one mark in it, the factor 1 − α/2 by which
 * the window shrinks once for that round trip (DCTCP's estimator, RFC 8257, counted in
 * acknowledgements rather than bytes).
 *
 * <p>Why a fraction: on a software endpoint the delay signal measures the hosts, so a mark is the
 * only evidence of congestion, and how many packets are marked says how far the sender is above
 * the marking threshold. Halving at every marked round trip, as the delay quadrants do when every
 * delay is above the target, leaves a bottleneck that marks below its rate idle for much of the
 * time.
 *
 * <p>Allocation-free; owning thread only.
 */
final class MarkedFraction {
    /** g: the gain of the smoothing, 1/16 as DCTCP's. */
    static final double GAIN = 1.0 / 16;

    /** α starts at 1, as DCTCP's: a flow's first marked round trip halves it, as loss would. */
    private double alpha = 1;
    private long windowStartNs = Long.MIN_VALUE;
    private int acks;
    private int markedAcks;

    /**
     * Counts one acknowledgement and, when it closes a round trip, updates α.
     *
     * @param nowNs current time
     * @param roundTripNs the current SRTT (at least 1 ns is used)
     * @param marked whether the acknowledgement carried a CE signal
     * @return the factor to multiply the window by: 1 − α/2 when this acknowledgement closed a
     *     round trip that had a mark, else 1
     */
    double onAck(final long nowNs, final long roundTripNs, final boolean marked) {
        if (windowStartNs == Long.MIN_VALUE) {
            windowStartNs = nowNs;
        }
        acks++;
        if (marked) {
            markedAcks++;
        }
        if (nowNs - windowStartNs < Math.max(1, roundTripNs)) {
            return 1;
        }
        final double fraction = (double) markedAcks / acks;
        alpha += GAIN * (fraction - alpha);
        final boolean anyMark = markedAcks > 0;
        acks = 0;
        markedAcks = 0;
        windowStartNs = nowNs;
        return anyMark ? 1 - alpha / 2 : 1;
    }

    /** @return α, the smoothed marked fraction */
    double alpha() {
        return alpha;
    }
}
