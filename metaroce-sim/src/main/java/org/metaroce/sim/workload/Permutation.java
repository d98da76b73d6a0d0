// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.sim.workload;

import java.util.SplittableRandom;

/** Permutation traffic: every host sends to exactly one other host and receives from exactly one. */
public final class Permutation extends FlowSetWorkload {
    private final int hosts;
    private final long bytes;
    private final SplittableRandom random;

    /**
     * @param hosts number of hosts (indices 0..hosts-1), at least 2
     * @param bytes bytes per flow
     * @param random source of the permutation
     */
    public Permutation(final int hosts, final long bytes, final SplittableRandom random) {
        if (hosts < 2) {
            throw new IllegalArgumentException("permutation needs at least 2 hosts");
        }
        this.hosts = hosts;
        this.bytes = bytes;
        this.random = random;
    }

    @Override
    public String name() {
        return "permutation";
    }

    /** A uniformly random derangement (no host sends to itself), by rejection. */
    static int[] derangement(final int n, final SplittableRandom random) {
        final int[] p = new int[n];
        while (true) {
            for (int i = 0; i < n; i++) {
                p[i] = i;
            }
            for (int i = n - 1; i > 0; i--) {
                final int j = random.nextInt(i + 1);
                final int tmp = p[i];
                p[i] = p[j];
                p[j] = tmp;
            }
            boolean ok = true;
            for (int i = 0; i < n && ok; i++) {
                ok = p[i] != i;
            }
            if (ok) {
                return p;
            }
        }
    }

    @Override
    void schedule(final Traffic t) {
        final int[] dst = derangement(hosts, random);
        expect(hosts);
        final long now = t.network().simulator().nowNs();
        for (int i = 0; i < hosts; i++) {
            start(now, i, dst[i], bytes, name());
        }
    }
}
