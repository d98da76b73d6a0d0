// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.bench.compare;

import org.metaroce.bench.loopback.Contender;

/**
 * One figure of the comparison: a contender measured in one configuration. Each run of a cell is
 * one JMH fork (a fresh JVM), so that no contender inherits another's JIT profile or heap.
 *
 * @param kind what is measured
 * @param contender the transport (null for the in-memory engine)
 * @param size message bytes
 * @param aeronMtu Aeron's MTU for an Aeron bandwidth figure, else 0
 */
public record Cell(Kind kind, Contender contender, int size, int aeronMtu) {
    /** A figure that has no Aeron MTU. */
    public Cell(final Kind kind, final Contender contender, final int size) {
        this(kind, contender, size, 0);
    }

    /** What a cell measures. */
    public enum Kind {
        /** Bandwidth, Gb/s delivered. */
        BANDWIDTH,
        /** Ping-pong round trip, median µs. */
        PING_PONG,
        /** The queue-pair engine in memory, M packets/s on one thread. */
        ENGINE
    }

    /** @return a short unique name, e.g. {@code bw/metaroce-write/65536} */
    public String id() {
        return switch (kind) {
            case BANDWIDTH -> "bw/" + contender.id() + (aeronMtu > 0 ? "-mtu" + aeronMtu : "") + "/" + size;
            case PING_PONG -> "pingpong/" + contender.id() + "/" + size;
            case ENGINE -> "engine/write/" + size;
        };
    }

    /** @return the label used in tables */
    public String label() {
        if (kind == Kind.ENGINE) {
            return "MetaRoCE engine in memory (no sockets)";
        }
        return aeronMtu > 0 ? contender.label + " (MTU " + aeronMtu + ")" : contender.label;
    }

    @Override
    public String toString() {
        return id();
    }
}
