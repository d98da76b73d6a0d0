// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.sim.workload;

import java.util.SplittableRandom;

/**
 * Background traffic: each host starts flows with Poisson arrivals at the rate that loads its
 * link to {@code load} on average, sizes drawn from a distribution, destinations uniform among
 * the other hosts. Arrivals are drawn up front, so the flow list depends on the seed only. Each flow
 * has a QP pair of its own, so flows are not serialized behind each other.
 */
public final class PoissonBackground extends FlowSetWorkload {
    private final int hosts;
    private final double load;
    private final long durationNs;
    private final long hostRateBps;
    private final FlowSizeDistribution sizes;
    private final SplittableRandom random;

    /**
     * @param hosts number of hosts
     * @param load target average load of each host link, in (0, 1)
     * @param durationNs arrivals happen in [0, durationNs)
     * @param hostRateBps host line rate
     * @param sizes flow-size distribution
     * @param random source of arrivals, sizes and destinations
     */
    public PoissonBackground(final int hosts, final double load, final long durationNs, final long hostRateBps,
                             final FlowSizeDistribution sizes, final SplittableRandom random) {
        if (!(load > 0 && load < 1)) {
            throw new IllegalArgumentException("load must be in (0, 1), got " + load);
        }
        if (hosts < 2 || durationNs <= 0) {
            throw new IllegalArgumentException("background traffic needs >= 2 hosts and a positive duration");
        }
        this.hosts = hosts;
        this.load = load;
        this.durationNs = durationNs;
        this.hostRateBps = hostRateBps;
        this.sizes = sizes;
        this.random = random;
    }

    @Override
    public String name() {
        return sizes.name() + "-" + Math.round(load * 100) + "%";
    }

    @Override
    void schedule(final Traffic t) {
        final double meanGapNs = sizes.meanBytes() * 8e9 / (load * hostRateBps);
        final long t0 = t.network().simulator().nowNs();
        int count = 0;
        for (int src = 0; src < hosts; src++) {
            double at = 0;
            while (true) {
                at += -Math.log(1 - random.nextDouble()) * meanGapNs;
                if (at >= durationNs) {
                    break;
                }
                int dst = random.nextInt(hosts - 1);
                if (dst >= src) {
                    dst++;
                }
                final long bytes = sizes.sample(random);
                final int s = src;
                final int d = dst;
                t.network().simulator().schedule(t0 + (long) at,
                    (now, subject, arg) -> start(now, s, d, bytes, name(), true), null, 0);
                count++;
            }
        }
        expect(count);
    }
}
