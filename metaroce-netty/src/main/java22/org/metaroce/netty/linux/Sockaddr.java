// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty.linux;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT_UNALIGNED;
import static java.lang.foreign.ValueLayout.JAVA_LONG_UNALIGNED;
import static java.lang.foreign.ValueLayout.JAVA_SHORT_UNALIGNED;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.Inet4Address;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.ByteOrder;

/**
 * Reads and writes {@code struct sockaddr_in} and {@code struct sockaddr_in6} in native memory.
 * Addresses and ports are in network byte order in these structs; the family is in host order.
 *
 * <pre>
 * sockaddr_in  (16 B): u16 family @0, be16 port @2, be32 addr @4, 8 B zero
 * sockaddr_in6 (28 B): u16 family @0, be16 port @2, be32 flowinfo @4, 16 B addr @8, u32 scope_id @24
 * </pre>
 *
 * IPv6 addresses travel as two longs (high and low 8 bytes, big-endian), so that the data path
 * never builds an {@link InetAddress}.
 */
final class Sockaddr {
    /** {@code sizeof(struct sockaddr_in)}. */
    static final int IN_SIZE = 16;
    /** {@code sizeof(struct sockaddr_in6)}. */
    static final int IN6_SIZE = 28;
    /** Room for either, 8-byte aligned: the stride of address slots in batches. */
    static final int SLOT = 32;

    private static final ValueLayout.OfShort FAMILY = JAVA_SHORT_UNALIGNED;
    private static final ValueLayout.OfShort PORT = JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);
    private static final ValueLayout.OfInt IPV4 = JAVA_INT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);
    private static final ValueLayout.OfLong IPV6_HALF = JAVA_LONG_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);
    private static final long PORT_OFFSET = 2;
    private static final long IPV4_OFFSET = 4;
    private static final long FLOWINFO_OFFSET = 4;
    private static final long IPV6_OFFSET = 8;
    private static final long SCOPE_OFFSET = 24;

    private Sockaddr() {
    }

    /**
     * Writes a {@code sockaddr_in}.
     *
     * @return its length
     */
    static int writeIpv4(final MemorySegment m, final long offset, final int ip, final int port) {
        m.set(FAMILY, offset, (short) Uapi.AF_INET);
        m.set(PORT, offset + PORT_OFFSET, (short) port);
        m.set(IPV4, offset + IPV4_OFFSET, ip);
        m.set(JAVA_LONG_UNALIGNED, offset + 8, 0L);
        return IN_SIZE;
    }

    /**
     * Writes a {@code sockaddr_in6} (flow label and scope 0).
     *
     * @return its length
     */
    static int writeIpv6(final MemorySegment m, final long offset, final long high, final long low,
                         final int port) {
        m.set(FAMILY, offset, (short) Uapi.AF_INET6);
        m.set(PORT, offset + PORT_OFFSET, (short) port);
        m.set(JAVA_INT_UNALIGNED, offset + FLOWINFO_OFFSET, 0);
        m.set(IPV6_HALF, offset + IPV6_OFFSET, high);
        m.set(IPV6_HALF, offset + IPV6_OFFSET + 8, low);
        m.set(JAVA_INT_UNALIGNED, offset + SCOPE_OFFSET, 0);
        return IN6_SIZE;
    }

    /**
     * Writes {@code address} for a socket of {@code family}; an IPv4 address for an IPv6 socket
     * becomes its IPv4-mapped form ({@code ::ffff:a.b.c.d}). Setup path: may allocate.
     *
     * @return the length written
     * @throws IllegalArgumentException if an IPv6 address is given to an IPv4 socket
     */
    static int write(final MemorySegment m, final long offset, final int family, final InetSocketAddress address) {
        final InetAddress ip = address.getAddress();
        if (ip == null) {
            throw new IllegalArgumentException("unresolved address " + address);
        }
        final byte[] b = ip.getAddress();
        if (family == Uapi.AF_INET) {
            if (b.length != 4) {
                throw new IllegalArgumentException("an IPv4 socket cannot reach " + address);
            }
            return writeIpv4(m, offset, ipv4(b), address.getPort());
        }
        if (b.length == 4) {
            return writeIpv6(m, offset, 0L, 0xFFFF_0000_0000L | (ipv4(b) & 0xFFFF_FFFFL), address.getPort());
        }
        final int written = writeIpv6(m, offset, half(b, 0), half(b, 8), address.getPort());
        if (ip instanceof Inet6Address v6 && v6.getScopeId() != 0) {
            m.set(JAVA_INT_UNALIGNED, offset + SCOPE_OFFSET, v6.getScopeId());
        }
        return written;
    }

    /** @return the family of the sockaddr at {@code offset} */
    static int family(final MemorySegment m, final long offset) {
        return m.get(FAMILY, offset) & 0xFFFF;
    }

    /** @return the port of a sockaddr_in or sockaddr_in6 */
    static int port(final MemorySegment m, final long offset) {
        return m.get(PORT, offset + PORT_OFFSET) & 0xFFFF;
    }

    /** @return the IPv4 address of a sockaddr_in, most significant byte first */
    static int ipv4(final MemorySegment m, final long offset) {
        return m.get(IPV4, offset + IPV4_OFFSET);
    }

    /** @return the first 8 bytes of a sockaddr_in6's address, big-endian */
    static long ipv6High(final MemorySegment m, final long offset) {
        return m.get(IPV6_HALF, offset + IPV6_OFFSET);
    }

    /** @return the last 8 bytes of a sockaddr_in6's address, big-endian */
    static long ipv6Low(final MemorySegment m, final long offset) {
        return m.get(IPV6_HALF, offset + IPV6_OFFSET + 8);
    }

    /** @return the sockaddr at {@code offset} as an object (slow path: allocates) */
    static InetSocketAddress read(final MemorySegment m, final long offset) {
        final int family = family(m, offset);
        final byte[] b;
        if (family == Uapi.AF_INET) {
            b = new byte[4];
            MemorySegment.copy(m, JAVA_BYTE, offset + IPV4_OFFSET, b, 0, 4);
        } else if (family == Uapi.AF_INET6) {
            b = new byte[16];
            MemorySegment.copy(m, JAVA_BYTE, offset + IPV6_OFFSET, b, 0, 16);
        } else {
            throw new IllegalArgumentException("not an internet address: family " + family);
        }
        try {
            return new InetSocketAddress(InetAddress.getByAddress(b), port(m, offset));
        } catch (final UnknownHostException ex) {
            throw new IllegalStateException("4 or 16 bytes are always an address", ex);
        }
    }

    /** @return the 4 bytes of an IPv4 address as an int, most significant byte first */
    static int ipv4(final byte[] b) {
        return (b[0] & 0xFF) << 24 | (b[1] & 0xFF) << 16 | (b[2] & 0xFF) << 8 | b[3] & 0xFF;
    }

    /** @return 8 bytes of an IPv6 address from {@code from}, big-endian */
    static long half(final byte[] b, final int from) {
        long v = 0;
        for (int i = 0; i < 8; i++) {
            v = v << 8 | (b[from + i] & 0xFF);
        }
        return v;
    }

    /** @return the int form of an {@link Inet4Address} (setup and tests) */
    static int ipv4(final Inet4Address a) {
        return ipv4(a.getAddress());
    }
}
