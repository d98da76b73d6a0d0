// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.sim.measure;

import java.util.Arrays;

/** Exact percentiles of a sample (nearest-rank), for FCTs and slowdowns. */
public final class Percentiles {
    private final double[] sorted;

    /** @param values the sample (copied) */
    public Percentiles(final double[] values) {
        this.sorted = values.clone();
        Arrays.sort(sorted);
    }

    /** @return sample size */
    public int count() {
        return sorted.length;
    }

    /**
     * @param p percentile in (0, 100]
     * @return the nearest-rank percentile, NaN for an empty sample
     */
    public double percentile(final double p) {
        if (sorted.length == 0) {
            return Double.NaN;
        }
        final int rank = (int) Math.ceil(p / 100.0 * sorted.length);
        return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1];
    }

    /** @return the mean, NaN for an empty sample */
    public double mean() {
        if (sorted.length == 0) {
            return Double.NaN;
        }
        double s = 0;
        for (final double v : sorted) {
            s += v;
        }
        return s / sorted.length;
    }

    /** @return the largest value, NaN for an empty sample */
    public double max() {
        return sorted.length == 0 ? Double.NaN : sorted[sorted.length - 1];
    }

    /** @return the values in ascending order (a copy: the report writer's CDFs read it once per run) */
    public double[] sortedValues() {
        return sorted.clone();
    }
}
