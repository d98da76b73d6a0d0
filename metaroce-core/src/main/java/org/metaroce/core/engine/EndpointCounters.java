// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.engine;

import java.util.concurrent.atomic.AtomicLongArray;

/**
 * The endpoint's counters: written by the endpoint's owning thread with ordered stores, readable
 * from any thread (Aeron style). Tests assert exact values of these.
 */
public final class EndpointCounters {
    private final AtomicLongArray values = new AtomicLongArray(EndpointCounter.count());

    void increment(final EndpointCounter counter) {
        final int i = counter.ordinal();
        values.lazySet(i, values.get(i) + 1);
    }

    void add(final EndpointCounter counter, final long delta) {
        final int i = counter.ordinal();
        values.lazySet(i, values.get(i) + delta);
    }

    /**
     * @param counter which counter
     * @return its current value
     */
    public long get(final EndpointCounter counter) {
        return values.get(counter.ordinal());
    }

    /** @return sum of all retransmission counters */
    public long retransmits() {
        return get(EndpointCounter.RETRANSMITS_LOSS_DETECTED) + get(EndpointCounter.RETRANSMITS_TIMEOUT)
            + get(EndpointCounter.RETRANSMITS_TAIL_PROBE) + get(EndpointCounter.RETRANSMITS_TRIMMED)
            + get(EndpointCounter.RETRANSMITS_PSN_WINDOW) + get(EndpointCounter.RETRANSMITS_RNR)
            + get(EndpointCounter.RETRANSMITS_GO_BACK_N);
    }

    @Override
    public String toString() {
        final StringBuilder sb = new StringBuilder("EndpointCounters{");
        boolean first = true;
        for (int i = 0; i < EndpointCounter.count(); i++) {
            final long v = values.get(i);
            if (v != 0) {
                sb.append(first ? "" : ", ").append(EndpointCounter.ofOrdinal(i)).append('=').append(v);
                first = false;
            }
        }
        return sb.append('}').toString();
    }
}
