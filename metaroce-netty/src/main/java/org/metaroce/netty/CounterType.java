// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty;

/**
 * What a counter in a {@link CounterFile} counts: its Agrona type id. Tools group and format
 * counters by it; the label names the counter within its type.
 */
public enum CounterType {
    /** The queue-pair engine's counters ({@code org.metaroce.core.engine.EndpointCounter}); label "engine NAME". */
    ENGINE(1, true),
    /** The wire-format checks: accepted and dropped per reason; label "wire NAME". */
    WIRE(2, true),
    /** The driver's counters ({@link DriverCounter}) and datagrams sent per socket; label "driver NAME". */
    DRIVER(3, true),
    /** The connection manager's counters ({@code CmCounter}); label "cm NAME". */
    CONNECTION_MANAGER(4, true),
    /** Per-QP counts that only grow; key: the QPN; label "qp 0xQPN NAME". */
    QP_COUNTER(5, true),
    /** Per-QP values that go up and down (state, window, RTT); key: the QPN; label "qp 0xQPN NAME". */
    QP_GAUGE(6, false),
    /** The counters file's own bookkeeping (e.g. QPs left out for want of room); label "stat NAME". */
    STAT(7, true),
    /** A collectives communicator's counters ({@code CollectiveCounter}); key: the rank; label "coll rank R/N NAME". */
    COLLECTIVES(8, true);

    private static final CounterType[] VALUES = values();

    private final int typeId;
    private final boolean monotonic;

    CounterType(final int typeId, final boolean monotonic) {
        this.typeId = typeId;
        this.monotonic = monotonic;
    }

    /** @return the Agrona counter type id */
    public int typeId() {
        return typeId;
    }

    /** @return whether values only grow, so a rate per second means something */
    public boolean isMonotonic() {
        return monotonic;
    }

    /**
     * @param typeId an Agrona counter type id
     * @return its type, or null for ids this version does not know
     */
    public static CounterType ofTypeId(final int typeId) {
        for (final CounterType t : VALUES) {
            if (t.typeId == typeId) {
                return t;
            }
        }
        return null;
    }
}
