// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.sim.workload;

import java.util.SplittableRandom;

/**
 * An empirical flow-size distribution given as a piecewise-linear CDF, sampled by inverse
 * transform.
 */
public final class FlowSizeDistribution {
    private final String name;
    private final long[] bytes;
    private final double[] cdf;

    /**
     * @param name label for reports
     * @param bytes sizes, increasing
     * @param cdf cumulative probabilities, non-decreasing, first 0 and last 1
     */
    public FlowSizeDistribution(final String name, final long[] bytes, final double[] cdf) {
        if (bytes.length != cdf.length || bytes.length < 2 || cdf[0] != 0 || cdf[cdf.length - 1] != 1) {
            throw new IllegalArgumentException("a CDF needs matching points from probability 0 to 1");
        }
        for (int i = 1; i < bytes.length; i++) {
            if (bytes[i] <= bytes[i - 1] || cdf[i] < cdf[i - 1]) {
                throw new IllegalArgumentException("CDF points must increase, at index " + i);
            }
        }
        this.name = name;
        this.bytes = bytes.clone();
        this.cdf = cdf.clone();
    }

    /**
     * The web-search distribution of the DCTCP paper (Alizadeh et al., SIGCOMM 2010), in the form
     * the pFabric and HPCC simulations use; mean about 1.6 MB, half the flows under 100 KB.
     *
     * @return the distribution
     */
    public static FlowSizeDistribution webSearch() {
        return new FlowSizeDistribution("web-search",
            new long[] {1, 10_000, 20_000, 30_000, 50_000, 80_000, 200_000, 1_000_000, 2_000_000, 5_000_000,
                10_000_000, 30_000_000},
            new double[] {0, 0.15, 0.2, 0.3, 0.4, 0.53, 0.6, 0.7, 0.8, 0.9, 0.97, 1});
    }

    /** @return label */
    public String name() {
        return name;
    }

    /** @return mean flow size in bytes (exact for the piecewise-linear CDF) */
    public double meanBytes() {
        double mean = 0;
        for (int i = 1; i < bytes.length; i++) {
            mean += (cdf[i] - cdf[i - 1]) * (bytes[i] + bytes[i - 1]) / 2.0;
        }
        return mean;
    }

    /**
     * @param random source
     * @return a flow size, at least 1 byte
     */
    public long sample(final SplittableRandom random) {
        final double u = random.nextDouble();
        for (int i = 1; i < bytes.length; i++) {
            if (u <= cdf[i]) {
                final double span = cdf[i] - cdf[i - 1];
                final double f = span == 0 ? 1 : (u - cdf[i - 1]) / span;
                return Math.max(1, Math.round(bytes[i - 1] + f * (bytes[i] - bytes[i - 1])));
            }
        }
        return bytes[bytes.length - 1];
    }
}
