// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.bench.loopback;

import java.util.Locale;

/**
 * The transports compared over loopback, each with two threads: the benchmark thread drives the
 * sending (or pinging) end, a {@link PeerThread} the receiving (or echoing) end; both wait the same
 * way ({@link Idle}).
 */
public enum Contender {
    /** MetaRoCE RDMA WRITE (bandwidth only). */
    METAROCE_WRITE("MetaRoCE WRITE", true, false),
    /** MetaRoCE SEND into posted receives (bandwidth and ping-pong). */
    METAROCE_SEND("MetaRoCE SEND", true, true),
    /** MetaRoCE RDMA READ (bandwidth only). */
    METAROCE_READ("MetaRoCE READ", true, false),
    /** Aeron 1.51 over UDP, embedded INVOKER-mode drivers, tuned for large messages. */
    AERON("Aeron UDP", true, true),
    /** Plain datagrams through the MetaRoCE device, no protocol (the ceiling). */
    RAW_UDP("raw UDP (same driver)", true, true),
    /** One TCP stream, Java NIO. */
    TCP("TCP (1 NIO stream)", true, true),
    /**
     * The physical limit of the UDP path: plain 4 KiB datagrams, GSO, sendmmsg to recvmmsg through
     * the native sockets (JDK 22+ on Linux only; {@link #unavailabilityReason()}).
     */
    UDP_CEILING("UDP ceiling (native)", true, false);

    /** Human-readable name for reports. */
    public final String label;
    /** Whether it has a bandwidth harness. */
    public final boolean stream;
    /** Whether it has a ping-pong harness. */
    public final boolean pingPong;

    Contender(final String label, final boolean stream, final boolean pingPong) {
        this.label = label;
        this.stream = stream;
        this.pingPong = pingPong;
    }

    /** @return the parameter name: lower case with dashes ({@code metaroce-write}) */
    public String id() {
        return name().toLowerCase(Locale.ROOT).replace('_', '-');
    }

    /**
     * @param id a parameter name as {@link #id()} prints it
     * @return the contender
     * @throws IllegalArgumentException naming the valid ids
     */
    public static Contender of(final String id) {
        for (final Contender c : values()) {
            if (c.id().equals(id)) {
                return c;
            }
        }
        final StringBuilder valid = new StringBuilder();
        for (final Contender c : values()) {
            valid.append(valid.length() == 0 ? "" : ", ").append(c.id());
        }
        throw new IllegalArgumentException("unknown contender '" + id + "': one of " + valid);
    }

    /**
     * @param size message bytes
     * @param aeronMtu Aeron's MTU (ignored by the others)
     * @param idle how both threads wait when there is nothing to do
     * @param link path MTU and GRO of the MetaRoCE devices (MetaRoCE and raw UDP)
     * @return a connected bandwidth harness
     */
    public StreamHarness stream(final int size, final int aeronMtu, final Idle idle, final Link link) {
        return switch (this) {
            case METAROCE_WRITE -> new MetaRoceStream(MetaRoceStream.Op.WRITE, size, 128, idle, link);
            case METAROCE_SEND -> new MetaRoceStream(MetaRoceStream.Op.SEND, size, 128, idle, link);
            case METAROCE_READ -> new MetaRoceStream(MetaRoceStream.Op.READ, size, 128, idle, link);
            case AERON -> new AeronStream(size, aeronMtu, idle);
            case RAW_UDP -> new RawUdpStream(size, idle, link);
            case TCP -> new TcpStream(size, idle);
            case UDP_CEILING -> UdpCeiling.open(size, idle);
        };
    }

    /** @return why this contender cannot run in this JVM (the native ceiling needs JDK 22+), or null */
    public String unavailabilityReason() {
        return this == UDP_CEILING ? UdpCeiling.unavailabilityReason() : null;
    }

    /**
     * @param size message bytes
     * @param verifyRounds rounds whose echo is checked byte for byte
     * @param idle how both threads wait when there is nothing to do
     * @return a connected ping-pong harness
     * @throws IllegalArgumentException if this contender has none
     */
    public PingPongHarness pingPong(final int size, final long verifyRounds, final Idle idle) {
        return switch (this) {
            case METAROCE_SEND -> new MetaRocePingPong(size, verifyRounds, idle);
            case AERON -> new AeronPingPong(size, verifyRounds, idle);
            case RAW_UDP -> new RawUdpPingPong(size, idle);
            case TCP -> new TcpPingPong(size, verifyRounds, idle);
            default -> throw new IllegalArgumentException(id() + " has no ping-pong harness (use metaroce-send)");
        };
    }
}
