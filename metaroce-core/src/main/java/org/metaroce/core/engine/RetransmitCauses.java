// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.engine;

/**
 * One queue pair's retransmissions split by cause: the endpoint's {@code RETRANSMITS_*}
 * counters, for this QP alone. Owning thread; counting allocates nothing.
 */
final class RetransmitCauses {
    private static final EndpointCounter[] CAUSES = {
        EndpointCounter.RETRANSMITS_LOSS_DETECTED, EndpointCounter.RETRANSMITS_TIMEOUT,
        EndpointCounter.RETRANSMITS_TAIL_PROBE, EndpointCounter.RETRANSMITS_TRIMMED,
        EndpointCounter.RETRANSMITS_PSN_WINDOW, EndpointCounter.RETRANSMITS_RNR,
        EndpointCounter.RETRANSMITS_GO_BACK_N,
    };
    /** Index into {@link #counts} by {@link EndpointCounter} ordinal, -1 for counters that are no cause. */
    private static final int[] INDEX = new int[EndpointCounter.count()];

    static {
        java.util.Arrays.fill(INDEX, -1);
        for (int i = 0; i < CAUSES.length; i++) {
            INDEX[CAUSES[i].ordinal()] = i;
        }
    }

    private final long[] counts = new long[CAUSES.length];

    /** @param cause a {@code RETRANSMITS_*} counter; other counters are not counted */
    void count(final EndpointCounter cause) {
        final int i = INDEX[cause.ordinal()];
        if (i >= 0) {
            counts[i]++;
        }
    }

    /**
     * @param cause a {@code RETRANSMITS_*} counter
     * @return retransmissions for that cause
     * @throws IllegalArgumentException if {@code cause} is no retransmission cause
     */
    long get(final EndpointCounter cause) {
        final int i = INDEX[cause.ordinal()];
        if (i < 0) {
            throw new IllegalArgumentException(cause + " is not a retransmission cause (a RETRANSMITS_* counter)");
        }
        return counts[i];
    }
}
