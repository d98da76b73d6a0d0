package org.metaroce.bench.compare;

import org.metaroce.bench.loopback.Contender;

/**
 * One figure of the comparison: a contender measured in one configuration. Each run of a cell is
 * one JMH fork (a fresh JVM), so that no contender inherits another's JIT profile or heap.
 *
 * @param kind what is measured
 * @param contender the transport (null for the in-memory engine)
 * @param size message bytes
 */
public record Cell(Kind kind, Contender contender, int size) {
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
            case BANDWIDTH -> "bw/" + contender.id() + "/" + size;
            case PING_PONG -> "pingpong/" + contender.id() + "/" + size;
            case ENGINE -> "engine/write/" + size;
        };
    }

    /** @return the label used in tables */
    public String label() {
        return kind == Kind.ENGINE ? "MetaRoCE engine in memory (no sockets)" : contender.label;
    }

    @Override
    public String toString() {
        return id();
    }
}
