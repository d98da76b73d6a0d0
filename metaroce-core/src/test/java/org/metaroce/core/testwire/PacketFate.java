// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.testwire;

/**
 * What happened to a packet on an {@link InMemoryWire}, as recorded in its {@link Trace}. A packet
 * that survives gets one {@link #DELIVERED} event per copy, preceded by the marks it picked up on
 * the way ({@link #DUPLICATED}, {@link #REORDERED}, {@link #CORRUPTED}, {@link #CE_MARKED}); a
 * dropped packet gets exactly one {@code DROPPED_*} event.
 */
public enum PacketFate {
    /** A copy reached its destination's {@code onDatagram}; recorded at delivery time. */
    DELIVERED,
    /** Dropped by random or Gilbert–Elliott burst loss; recorded at send time. */
    DROPPED_LOSS,
    /** Dropped by the wire's {@link PacketFilter}; recorded at send time. */
    DROPPED_FILTER,
    /** Dropped because it was sent inside a blackhole window; recorded at send time. */
    DROPPED_BLACKHOLE,
    /** Tail-dropped by a full {@link Bottleneck} queue; recorded at send time. */
    DROPPED_QUEUE,
    /** A second copy was scheduled; recorded at send time. */
    DUPLICATED,
    /** Held back so later packets overtake it; recorded at send time. */
    REORDERED,
    /** One bit of a copy was flipped; recorded at send time, once per corrupted copy. */
    CORRUPTED,
    /** Will be delivered with ECN CE; recorded at send time. */
    CE_MARKED,
    /** Cut to its headers by a trimming {@link Bottleneck} [WIRE-042]; recorded at send time. */
    TRIMMED;

    /** @return whether this fate is one of the drops */
    public boolean isDrop() {
        return this == DROPPED_LOSS || this == DROPPED_FILTER || this == DROPPED_BLACKHOLE || this == DROPPED_QUEUE;
    }
}
