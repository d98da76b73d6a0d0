// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.sim.workload;

/**
 * Ring all-reduce over K ranks: 2(K−1) steps (reduce-scatter then all-gather), in each of which
 * every rank WRITEs one chunk of size/K to the next rank. A rank sends its chunk for step s+1 as
 * soon as it has received its left neighbour's chunk of step s (it needs that data to reduce or
 * forward). The collective completes when every rank has received its last chunk.
 */
public final class RingAllReduce extends FlowSetWorkload {
    private final int[] ranks;
    private final long chunkBytes;
    private final int steps;

    /**
     * @param ranks host index of each rank, in ring order
     * @param totalBytes size of the buffer being all-reduced
     */
    public RingAllReduce(final int[] ranks, final long totalBytes) {
        if (ranks.length < 2) {
            throw new IllegalArgumentException("a ring needs at least 2 ranks");
        }
        this.ranks = ranks.clone();
        this.chunkBytes = Math.max(1, totalBytes / ranks.length);
        this.steps = 2 * (ranks.length - 1);
    }

    @Override
    public String name() {
        return "ring-allreduce-" + ranks.length;
    }

    @Override
    void schedule(final Traffic t) {
        expect(ranks.length * steps);
        final long now = t.network().simulator().nowNs();
        for (int r = 0; r < ranks.length; r++) {
            sendStep(now, r, 0);
        }
    }

    private void sendStep(final long now, final int rank, final int step) {
        start(now, ranks[rank], ranks[(rank + 1) % ranks.length], chunkBytes, "step" + step + ":" + rank);
    }

    @Override
    void afterFlowDone(final long nowNs, final Flow flow) {
        final String tag = flow.tag();
        final int colon = tag.indexOf(':');
        final int step = Integer.parseInt(tag.substring(4, colon));
        final int sender = Integer.parseInt(tag.substring(colon + 1));
        final int receiver = (sender + 1) % ranks.length;
        if (step + 1 < steps) {
            sendStep(nowNs, receiver, step + 1);
        }
    }

    /**
     * Ranks ordered so that consecutive ranks sit on different leaves (rank r on leaf r mod leaves),
     * making every ring hop cross the spine layer, as a ring spanning many servers does.
     *
     * @param k ranks wanted
     * @param hostsPerLeaf hosts per leaf of the fabric
     * @param hosts hosts in the fabric
     * @return host index per rank
     */
    public static int[] acrossLeaves(final int k, final int hostsPerLeaf, final int hosts) {
        final int leaves = (hosts + hostsPerLeaf - 1) / hostsPerLeaf;
        if (k > hosts) {
            throw new IllegalArgumentException(k + " ranks do not fit on " + hosts + " hosts");
        }
        final int[] out = new int[k];
        for (int r = 0; r < k; r++) {
            out[r] = (r % leaves) * hostsPerLeaf + r / leaves;
            if (out[r] >= hosts) {
                throw new IllegalArgumentException("rank " + r + " would land on missing host " + out[r]
                    + ": use full leaves");
            }
        }
        return out;
    }
}
