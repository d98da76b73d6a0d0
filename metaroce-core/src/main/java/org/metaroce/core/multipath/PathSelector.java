package org.metaroce.core.multipath;

/**
 * Chooses the path (entropy value) for each packet of one queue pair. Paths carry a weight; a
 * path that loses a packet has its weight halved, a path whose RTT runs well above the best
 * path's is nudged down, and every acknowledgement earns weight back, so a bad path gets less
 * traffic until it recovers but is never abandoned (it keeps a floor weight and so keeps being
 * probed). Selection is smooth weighted round-robin: deterministic, no randomness, and spreads
 * each path's share evenly in time.
 */
public final class PathSelector {
    /** Weight of a healthy path. */
    public static final int FULL_WEIGHT = 1024;
    /** Weight below which a path is not pushed, so it is still probed [MP spec: never abandon]. */
    public static final int MIN_WEIGHT = 16;
    private static final int RECOVERY_PER_ACK = 8;

    private final int[] entropies;
    private final int[] weights;
    private final int[] current;
    private final long[] srttNs;
    private final long[] losses;
    private final long[] sent;
    private long bestRttNs = Long.MAX_VALUE;

    /**
     * @param entropies the QP's entropy values (UDP source ports), one per path; copied
     */
    public PathSelector(final int[] entropies) {
        if (entropies.length < 1 || entropies.length > 255) {
            throw new IllegalArgumentException("a queue pair needs 1 to 255 paths, got " + entropies.length);
        }
        this.entropies = entropies.clone();
        final int n = entropies.length;
        weights = new int[n];
        current = new int[n];
        srttNs = new long[n];
        losses = new long[n];
        sent = new long[n];
        java.util.Arrays.fill(weights, FULL_WEIGHT);
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
     * Picks the path for the next packet and counts it as sent there.
     *
     * @return the path index
     */
    public int next() {
        final int n = entropies.length;
        if (n == 1) {
            sent[0]++;
            return 0;
        }
        int total = 0;
        int best = 0;
        for (int i = 0; i < n; i++) {
            current[i] += weights[i];
            total += weights[i];
            if (current[i] > current[best]) {
                best = i;
            }
        }
        current[best] -= total;
        sent[best]++;
        return best;
    }

    /**
     * A packet sent on {@code pathId} was declared lost.
     *
     * @param pathId the path
     */
    public void onLoss(final int pathId) {
        if (pathId < 0 || pathId >= weights.length) {
            return;
        }
        losses[pathId]++;
        weights[pathId] = Math.max(MIN_WEIGHT, weights[pathId] >> 1);
    }

    /**
     * A packet sent on {@code pathId} was acknowledged.
     *
     * @param pathId the path
     * @param rttNs RTT sample for that packet, or 0 when none
     */
    public void onAck(final int pathId, final long rttNs) {
        if (pathId < 0 || pathId >= weights.length) {
            return;
        }
        if (rttNs > 0) {
            srttNs[pathId] = srttNs[pathId] == 0 ? rttNs : srttNs[pathId] + ((rttNs - srttNs[pathId]) >> 3);
            bestRttNs = Math.min(bestRttNs, srttNs[pathId]);
        }
        if (srttNs[pathId] > 0 && bestRttNs != Long.MAX_VALUE && srttNs[pathId] > 3 * bestRttNs) {
            // Markedly slower than the best path: shed a little weight instead of gaining.
            weights[pathId] = Math.max(MIN_WEIGHT, weights[pathId] - RECOVERY_PER_ACK);
        } else {
            weights[pathId] = Math.min(FULL_WEIGHT, weights[pathId] + RECOVERY_PER_ACK);
        }
    }

    /** @return the current weight of a path (for counters and tests) */
    public int weight(final int pathId) {
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
}
