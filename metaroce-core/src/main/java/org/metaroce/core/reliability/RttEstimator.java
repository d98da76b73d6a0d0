// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.reliability;

/**
 * Smoothed round-trip time and retransmission timeout in the manner of RFC 6298, at nanosecond
 * resolution, with a floor suited to datacenter round trips and exponential backoff after
 * consecutive timeouts. Samples come from timestamp echoes, so retransmitted packets give valid
 * samples too (no Karn ambiguity).
 */
public final class RttEstimator {
    private long minRtoNs;
    private long maxRtoNs;
    private long initialRtoNs;
    private final long extraNs;
    private long srttNs;
    private long rttVarNs;
    private long minRttNs = Long.MAX_VALUE;
    private long latestRttNs;
    private boolean hasSample;
    private int backoffShift;

    /**
     * @param initialRtoNs timeout before the first sample
     * @param minRtoNs lower bound of the timeout
     * @param maxRtoNs upper bound of the timeout, backoff included
     */
    public RttEstimator(final long initialRtoNs, final long minRtoNs, final long maxRtoNs) {
        this(initialRtoNs, minRtoNs, maxRtoNs, 0);
    }

    /**
     * @param initialRtoNs timeout before the first sample
     * @param minRtoNs lower bound of the timeout
     * @param maxRtoNs upper bound of the timeout, backoff included
     * @param extraNs added to SRTT + 4·RTTVAR: the longest an acknowledgement may be held back by
     *     the peer's coalescing [REL-027]
     */
    public RttEstimator(final long initialRtoNs, final long minRtoNs, final long maxRtoNs, final long extraNs) {
        this.extraNs = extraNs;
        if (minRtoNs <= 0 || initialRtoNs < minRtoNs || maxRtoNs < initialRtoNs) {
            throw new IllegalArgumentException("need 0 < minRto <= initialRto <= maxRto, got " + minRtoNs + ", "
                + initialRtoNs + ", " + maxRtoNs);
        }
        this.initialRtoNs = initialRtoNs;
        this.minRtoNs = minRtoNs;
        this.maxRtoNs = maxRtoNs;
    }

    /**
     * Changes the timeout's bounds, keeping the measurements (a modify of TIMEOUT on a running QP).
     *
     * @param initialRtoNs timeout before the first sample
     * @param minRtoNs lower bound of the timeout
     * @param maxRtoNs upper bound of the timeout, backoff included
     */
    public void reconfigure(final long initialRtoNs, final long minRtoNs, final long maxRtoNs) {
        if (minRtoNs <= 0 || initialRtoNs < minRtoNs || maxRtoNs < initialRtoNs) {
            throw new IllegalArgumentException("need 0 < minRto <= initialRto <= maxRto, got " + minRtoNs + ", "
                + initialRtoNs + ", " + maxRtoNs);
        }
        this.initialRtoNs = initialRtoNs;
        this.minRtoNs = minRtoNs;
        this.maxRtoNs = maxRtoNs;
    }

    /** Measurements at or above this are taken for clock or sequence errors, not round trips [REL-020]. */
    public static final long MAX_SAMPLE_NS = 1_000_000_000L;

    /**
     * What a measured round trip counts as [REL-020], [REL-063]: 0 (no sample) outside
     * {@code [0, MAX_SAMPLE_NS)}, else the measurement, at least 1 ns. A round trip shorter than
     * the clock can tell (a responder that answered the instant it could, on a path faster than
     * one tick, as in-memory wires and fuzzers have) is a sample of one tick: discarding it left a
     * window paced down to one packet per second or more with no sample ever to grow it, each
     * ACK arriving at once and proving nothing.
     *
     * @param rttNs measured round trip, the peer's ACK Delay already subtracted
     * @return the sample, or 0 for none
     */
    public static long sampleOf(final long rttNs) {
        return rttNs < 0 || rttNs >= MAX_SAMPLE_NS ? 0 : Math.max(1, rttNs);
    }

    /**
     * Feeds one measurement.
     *
     * @param rttNs round-trip time, responder hold time already subtracted; ignored unless positive
     */
    public void onSample(final long rttNs) {
        if (rttNs <= 0) {
            return;
        }
        latestRttNs = rttNs;
        minRttNs = Math.min(minRttNs, rttNs);
        if (!hasSample) {
            srttNs = rttNs;
            rttVarNs = rttNs >> 1;
            hasSample = true;
        } else {
            final long err = Math.abs(srttNs - rttNs);
            rttVarNs += (err - rttVarNs) >> 2;
            srttNs += (rttNs - srttNs) >> 3;
        }
        backoffShift = 0;
    }

    /** Doubles the timeout after a retransmission timeout, up to the maximum. */
    public void onTimeout() {
        if (backoffShift < 16) {
            backoffShift++;
        }
    }

    /** Withdraws the backoff of timeouts found spurious: the path was slow, not broken. */
    public void undoBackoff() {
        backoffShift = 0;
    }

    /** @return the current retransmission timeout, backoff included */
    public long rtoNs() {
        final long base = hasSample ? Math.max(minRtoNs, srttNs + Math.max(4 * rttVarNs, 1_000) + extraNs)
            : initialRtoNs;
        final long backedOff = base << backoffShift;
        return backedOff < 0 || backedOff > maxRtoNs ? maxRtoNs : backedOff;
    }

    /** @return smoothed RTT, or 0 before the first sample */
    public long srttNs() {
        return srttNs;
    }

    /** @return RTTVAR, or 0 before the first sample */
    public long rttVarNs() {
        return rttVarNs;
    }

    /** @return smallest RTT seen, or 0 before the first sample */
    public long minRttNs() {
        return hasSample ? minRttNs : 0;
    }

    /** @return the most recent sample, or 0 before the first */
    public long latestRttNs() {
        return latestRttNs;
    }

    /** @return whether at least one sample was taken */
    public boolean hasSample() {
        return hasSample;
    }
}
