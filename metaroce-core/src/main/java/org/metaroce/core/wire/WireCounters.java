// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.wire;

import java.util.concurrent.atomic.AtomicLongArray;

/**
 * Counters of the wire layer: datagrams accepted and dropped per {@link DropReason}. Written by one
 * thread (the endpoint's owner) with ordered stores, readable from any thread, in the style of
 * Aeron's counters.
 */
public final class WireCounters {
    private static final int ACCEPTED = DropReason.count();
    private static final int TRIMMED_ACCEPTED = ACCEPTED + 1;

    private final AtomicLongArray values = new AtomicLongArray(TRIMMED_ACCEPTED + 1);

    void drop(final DropReason reason) {
        increment(reason.ordinal());
    }

    void accepted(final boolean trimmed) {
        increment(trimmed ? TRIMMED_ACCEPTED : ACCEPTED);
    }

    private void increment(final int index) {
        values.lazySet(index, values.get(index) + 1);
    }

    /**
     * @param reason a drop reason
     * @return datagrams dropped for that reason
     */
    public long dropped(final DropReason reason) {
        return values.get(reason.ordinal());
    }

    /** @return datagrams dropped for any reason */
    public long droppedTotal() {
        long sum = 0;
        for (int i = 0; i < ACCEPTED; i++) {
            sum += values.get(i);
        }
        return sum;
    }

    /** @return datagrams that passed validation with their integrity check */
    public long accepted() {
        return values.get(ACCEPTED);
    }

    /** @return trimmed (header-only, unprotected) datagrams that passed validation */
    public long acceptedTrimmed() {
        return values.get(TRIMMED_ACCEPTED);
    }

    @Override
    public String toString() {
        final StringBuilder sb = new StringBuilder("WireCounters{accepted=").append(accepted())
            .append(", acceptedTrimmed=").append(acceptedTrimmed());
        for (int i = 0; i < ACCEPTED; i++) {
            final long v = values.get(i);
            if (v != 0) {
                sb.append(", ").append(DropReason.ofOrdinal(i)).append('=').append(v);
            }
        }
        return sb.append('}').toString();
    }
}
