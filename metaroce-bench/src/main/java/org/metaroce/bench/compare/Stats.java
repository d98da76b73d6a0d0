// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.bench.compare;

import java.util.List;

/**
 * Median, minimum and maximum of a cell's repeated figures.
 *
 * @param median the median (mean of the two middle values for an even count)
 * @param min the smallest
 * @param max the largest
 * @param count how many
 */
public record Stats(double median, double min, double max, int count) {
    /**
     * @param values at least one value
     * @return their statistics
     */
    public static Stats of(final List<Double> values) {
        if (values.isEmpty()) {
            throw new IllegalArgumentException("no values");
        }
        final double[] v = values.stream().mapToDouble(Double::doubleValue).sorted().toArray();
        final int n = v.length;
        final double median = n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
        return new Stats(median, v[0], v[n - 1], n);
    }

    @Override
    public String toString() {
        return median + " [" + min + ", " + max + "] n=" + count;
    }
}
