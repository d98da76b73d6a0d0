// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.multipath;

/**
 * Chooses the path (entropy value) of each packet of one queue pair (specification section 7).
 * Every path has a weight in [W_MIN, 1]: a loss halves it, a trim takes a quarter, an ECN echo or
 * a markedly slow path an eighth [MP-009]; penalties decay back towards 1 with a half-life
 * [MP-010]; and a path never drops below W_MIN, so it keeps carrying a little traffic that probes
 * it and lets it recover [MP-011]. New packets go by smooth weighted round-robin [MP-013]: a
 * deterministic choice whose per-path shares follow the weights, so simulations and tests
 * reproduce exactly. Allocation-free; called from the endpoint's owning thread only.
 */
public final class PathSelector {
    /** Floor of a path's weight [MP-009]. */
    public static final double W_MIN = 1.0 / 16;
    private static final double LOSS_FACTOR = 0.5;
    private static final double TRIM_FACTOR = 0.75;
    private static final double ECN_FACTOR = 0.875;
    private static final double SLOW_FACTOR = 0.875;
    private static final long MIN_HALF_LIFE_NS = 200_000;
    private static final long MIN_TARGET_DELAY_NS = 4_000;

    private final int[] entropies;
    private final double[] weights;
    /**
     * Weighted round-robin state per sequence ({@link #REQUESTS}, {@link #RESPONSES}) over the same
     * weights: the responder's packets (responses, ACKs, NACKs, CNPs) must not advance the
     * requester's sequence, or a QP whose requests and ACKs alternate would send all its requests
     * on every other path [MP-022].
     */
    private final double[][] current;
    /** Next path of each sequence's plain rotation (all weights equal). */
    private final int[] rotation = new int[2];
    private static final int REQUESTS = 0;
    private static final int RESPONSES = 1;
    private final long[] srttNs;
    private final long[] minRttNs;
    private final long[] lastSampleNs;
    private final long[] lastDecayNs;
    private final long[] lastEcnPenaltyNs;
    private final long[] lastSlowPenaltyNs;
    private final long[] losses;
    private final long[] trims;
    private final long[] ecnEchoes;
    private final long[] sent;
    private final long[] scratch;
    private long qpSrttNs;
    /** Paths whose weight is below 1; while 0 the weighted round-robin is plain round-robin. */
    private int penalised;
    private final int burstPackets;
    private int burstPath;
    private int burstLeft;
    /** Whether a new packet took {@link #burstPath} since the last ACK that followed it [MP-023]. */
    private boolean requestSinceAck;

    /**
     * @param entropies the QP's entropy values (UDP source ports), one per path; copied
     */
    public PathSelector(final int[] entropies) {
        this(entropies, 1);
    }

    /**
     * @param entropies the QP's entropy values (UDP source ports), one per path; copied
     * @param burstPackets new packets sent on a path before the next choice (1 = per-packet
     *     spraying) [MP-020]
     */
    public PathSelector(final int[] entropies, final int burstPackets) {
        if (burstPackets < 1 || burstPackets > 64) {
            throw new IllegalArgumentException("burstPackets must be in 1..64, got " + burstPackets);
        }
        this.burstPackets = burstPackets;
        if (entropies.length < 1 || entropies.length > 255) {
            throw new IllegalArgumentException("a queue pair needs 1 to 255 paths, got " + entropies.length);
        }
        this.entropies = entropies.clone();
        final int n = entropies.length;
        weights = new double[n];
        current = new double[2][n];
        srttNs = new long[n];
        minRttNs = new long[n];
        lastSampleNs = new long[n];
        lastDecayNs = new long[n];
        lastEcnPenaltyNs = new long[n];
        lastSlowPenaltyNs = new long[n];
        losses = new long[n];
        trims = new long[n];
        ecnEchoes = new long[n];
        sent = new long[n];
        scratch = new long[n];
        java.util.Arrays.fill(weights, 1.0);
        java.util.Arrays.fill(minRttNs, Long.MAX_VALUE);
        java.util.Arrays.fill(lastEcnPenaltyNs, Long.MIN_VALUE / 2);
        java.util.Arrays.fill(lastSlowPenaltyNs, Long.MIN_VALUE / 2);
    }

    /** @return number of paths */
    public int pathCount() {
        return entropies.length;
    }

    /**
     * @param pathId a path index
     * @return its entropy value (UDP source port)
     */
    public int entropy(final int pathId) {
        return entropies[pathId];
    }

    /**
     * Picks the path of the next new packet and counts it as sent there: by smooth weighted
     * round-robin [MP-013], kept for a burst of packets when configured [MP-020].
     *
     * @param nowNs current time (for the decay of penalties)
     * @return the path index
     */
    public int next(final long nowNs) {
        requestSinceAck = true;
        if (burstLeft > 0) {
            // Keep the path for the rest of the burst [MP-020].
            burstLeft--;
            sent[burstPath]++;
            return burstPath;
        }
        final int chosen = choose(nowNs);
        burstPath = chosen;
        burstLeft = burstPackets - 1;
        return chosen;
    }

    private int choose(final long nowNs) {
        return choose(nowNs, REQUESTS);
    }

    /** Smooth weighted round-robin over the weights, in sequence {@code seq}'s own state. */
    private int choose(final long nowNs, final int seq) {
        final int n = entropies.length;
        if (n == 1) {
            sent[0]++;
            return 0;
        }
        if (penalised == 0) {
            // All weights equal: smooth weighted round-robin degenerates to plain rotation.
            final int chosen = rotation[seq];
            rotation[seq] = chosen + 1 == n ? 0 : chosen + 1;
            sent[chosen]++;
            return chosen;
        }
        final double[] cur = current[seq];
        double total = 0;
        int best = 0;
        for (int i = 0; i < n; i++) {
            decay(i, nowNs);
            cur[i] += weights[i];
            total += weights[i];
            if (cur[i] > cur[best]) {
                best = i;
            }
        }
        cur[best] -= total;
        sent[best]++;
        return best;
    }

    /**
     * Picks the path of a packet the responder sends (READ or atomic response, ACK, NACK, CNP):
     * the same policy and weights as {@link #next}, but a sequence of its own, so that responder
     * traffic does not shift which paths the QP's new requests take [MP-017, MP-022].
     *
     * @param nowNs current time (for the decay of penalties)
     * @return the path index
     */
    public int nextForResponder(final long nowNs) {
        return choose(nowNs, RESPONSES);
    }

    /**
     * Picks the path of a bare ACK or NACK: with burst spraying, the path of the requester's latest
     * new packet when a new packet took it since the last ACK that followed it, else
     * {@link #nextForResponder} [MP-023]. An ACK written in the same transmission opportunity as a
     * reply then joins the reply's batch on that socket instead of costing a system call of its
     * own; no more ACKs follow a path than new packets took it, and a QP whose requester falls
     * silent is back on the responder's own sequence at its next ACK. Such an ACK does not advance
     * that sequence.
     *
     * @param nowNs current time (for the decay of penalties)
     * @return the path index
     */
    public int nextForAck(final long nowNs) {
        if (burstPackets > 1 && requestSinceAck) {
            requestSinceAck = false;
            sent[burstPath]++;
            return burstPath;
        }
        return nextForResponder(nowNs);
    }

    /**
     * Picks the path of a retransmission: the heaviest path other than the one the lost
     * transmission took, lowest Path ID on ties [MP-014].
     *
     * @param nowNs current time
     * @param lostPathId path of the lost transmission
     * @return the path index
     */
    public int forRetransmission(final long nowNs, final int lostPathId) {
        final int n = entropies.length;
        if (n == 1) {
            sent[0]++;
            return 0;
        }
        int best = -1;
        for (int i = 0; i < n; i++) {
            decay(i, nowNs);
            if (i != lostPathId && (best < 0 || weights[i] > weights[best])) {
                best = i;
            }
        }
        sent[best]++;
        return best;
    }

    /**
     * A loss was attributed to {@code pathId} (by the sender's own record, [MP-006]).
     *
     * @param nowNs current time
     * @param pathId the path
     */
    public void onLoss(final long nowNs, final int pathId) {
        if (valid(pathId)) {
            losses[pathId]++;
            penalise(pathId, nowNs, LOSS_FACTOR);
        }
    }

    /**
     * A trimmed-packet NACK was attributed to {@code pathId} [MP-007].
     *
     * @param nowNs current time
     * @param pathId the path
     */
    public void onTrim(final long nowNs, final int pathId) {
        if (valid(pathId)) {
            trims[pathId]++;
            penalise(pathId, nowNs, TRIM_FACTOR);
        }
    }

    /**
     * An RTT sample and/or ECN echo attributed to {@code pathId} [MP-005].
     *
     * @param nowNs current time
     * @param pathId the path
     * @param rttNs the RTT sample, or 0 when the acknowledgement carried none
     * @param ecnEcho whether the acknowledged packet was CE-marked
     */
    public void onFeedback(final long nowNs, final int pathId, final long rttNs, final boolean ecnEcho) {
        if (!valid(pathId)) {
            return;
        }
        if (rttNs > 0) {
            srttNs[pathId] = srttNs[pathId] == 0 ? rttNs : srttNs[pathId] + ((rttNs - srttNs[pathId]) >> 3);
            minRttNs[pathId] = Math.min(minRttNs[pathId], rttNs);
            lastSampleNs[pathId] = nowNs;
            qpSrttNs = qpSrttNs == 0 ? rttNs : qpSrttNs + ((rttNs - qpSrttNs) >> 3);
            final long interval = Math.max(1, srttNs[pathId]);
            if (nowNs - lastSlowPenaltyNs[pathId] >= interval
                && srttNs[pathId] > medianSrttNs() + targetQueueingDelayNs()) {
                lastSlowPenaltyNs[pathId] = nowNs;
                penalise(pathId, nowNs, SLOW_FACTOR);
            }
        }
        if (ecnEcho) {
            ecnEchoes[pathId]++;
            if (nowNs - lastEcnPenaltyNs[pathId] >= Math.max(1, srttNs[pathId])) {
                lastEcnPenaltyNs[pathId] = nowNs;
                penalise(pathId, nowNs, ECN_FACTOR);
            }
        }
    }

    /**
     * A retransmission turned out spurious: the loss penalty of its original path is undone [MP-012].
     *
     * @param nowNs current time
     * @param pathId path of the original transmission
     */
    public void onSpuriousLoss(final long nowNs, final int pathId) {
        if (valid(pathId) && weights[pathId] < 1.0) {
            decay(pathId, nowNs);
            if (weights[pathId] < 1.0) {
                final double w = weights[pathId] / LOSS_FACTOR;
                if (w >= 1.0) {
                    weights[pathId] = 1.0;
                    penalised--;
                } else {
                    weights[pathId] = w;
                }
            }
        }
    }

    /**
     * The median over paths with a recent sample of each path's smoothed RTT, the delay signal
     * that one congested path cannot drag along [MP-019].
     *
     * @return the median smoothed RTT in ns, or 0 when no path has a sample
     */
    public long medianSrttNs() {
        int n = 0;
        for (int i = 0; i < srttNs.length; i++) {
            if (srttNs[i] > 0) {
                scratch[n++] = srttNs[i];
            }
        }
        if (n == 0) {
            return 0;
        }
        java.util.Arrays.sort(scratch, 0, n);
        return scratch[n / 2];
    }

    /**
     * @return the spread between the slowest and the fastest path's smoothed RTT, 0 with fewer than
     *     two sampled paths: the reordering that spraying itself causes [REL-024]
     */
    public long srttSpreadNs() {
        long min = Long.MAX_VALUE;
        long max = 0;
        for (final long v : srttNs) {
            if (v > 0) {
                min = Math.min(min, v);
                max = Math.max(max, v);
            }
        }
        return min == Long.MAX_VALUE ? 0 : max - min;
    }

    private long targetQueueingDelayNs() {
        long min = Long.MAX_VALUE;
        for (final long m : minRttNs) {
            min = Math.min(min, m);
        }
        return min == Long.MAX_VALUE ? MIN_TARGET_DELAY_NS : Math.max(MIN_TARGET_DELAY_NS, min / 2);
    }

    private void penalise(final int pathId, final long nowNs, final double factor) {
        decay(pathId, nowNs);
        if (weights[pathId] >= 1.0) {
            if (penalised++ == 0) {
                // Leaving plain rotation: the weighted state starts where the rotation stands.
                java.util.Arrays.fill(current[REQUESTS], 0.0);
                java.util.Arrays.fill(current[RESPONSES], 0.0);
            }
        }
        weights[pathId] = Math.max(W_MIN, weights[pathId] * factor);
    }

    /** w ← 1 − (1 − w) · 2^(−Δt / H), H = max(200 µs, 16 × SRTT) [MP-010]. */
    private void decay(final int pathId, final long nowNs) {
        final long dt = nowNs - lastDecayNs[pathId];
        lastDecayNs[pathId] = nowNs;
        if (dt <= 0 || weights[pathId] >= 1.0) {
            return;
        }
        final double halfLife = Math.max(MIN_HALF_LIFE_NS, 16 * qpSrttNs);
        final double w = 1.0 - (1.0 - weights[pathId]) * Math.pow(2.0, -dt / halfLife);
        if (w > 1.0 - 1e-6) {
            // Fully recovered (the decay only approaches 1): count the path as healthy again.
            weights[pathId] = 1.0;
            penalised--;
        } else {
            weights[pathId] = w;
        }
    }

    private boolean valid(final int pathId) {
        return pathId >= 0 && pathId < weights.length;
    }

    /** @return the current weight of a path, in [W_MIN, 1] */
    public double weight(final int pathId) {
        return weights[pathId];
    }

    /** @return packets sent on a path */
    public long sent(final int pathId) {
        return sent[pathId];
    }

    /** @return losses attributed to a path */
    public long losses(final int pathId) {
        return losses[pathId];
    }

    /** @return trims attributed to a path */
    public long trims(final int pathId) {
        return trims[pathId];
    }

    /** @return ECN echoes attributed to a path */
    public long ecnEchoes(final int pathId) {
        return ecnEchoes[pathId];
    }

    /** @return the path's smoothed RTT, 0 before its first sample */
    public long srttNs(final int pathId) {
        return srttNs[pathId];
    }

    /** @return the path's smallest RTT sample, 0 before its first sample [MP-004] */
    public long minRttNs(final int pathId) {
        return minRttNs[pathId] == Long.MAX_VALUE ? 0 : minRttNs[pathId];
    }

    /** @return when the path's latest RTT sample was taken, 0 before its first [MP-004] */
    public long lastSampleNs(final int pathId) {
        return lastSampleNs[pathId];
    }
}
