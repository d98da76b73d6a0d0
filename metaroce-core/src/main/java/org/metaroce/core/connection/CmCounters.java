// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.connection;

/** Counters of one connection manager, indexed by {@link CmCounter}. Single-threaded. */
public final class CmCounters {
    private static final CmCounter[] ALL = CmCounter.values();

    private final long[] values = new long[ALL.length];

    CmCounters() {
    }

    void increment(final CmCounter counter) {
        values[counter.ordinal()]++;
    }

    /**
     * @param counter which counter
     * @return its value
     */
    public long get(final CmCounter counter) {
        return values[counter.ordinal()];
    }

    @Override
    public String toString() {
        final StringBuilder sb = new StringBuilder("CmCounters{");
        boolean first = true;
        for (final CmCounter c : ALL) {
            if (values[c.ordinal()] != 0) {
                if (!first) {
                    sb.append(", ");
                }
                sb.append(c).append('=').append(values[c.ordinal()]);
                first = false;
            }
        }
        return sb.append('}').toString();
    }
}
