// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;

/**
 * Sends an ICMP error about a UDP datagram that was (or might have been) sent, as a router on the
 * path would: through a raw ICMP socket (root only) of the calling thread's network namespace, to
 * the datagram's source. The kernel delivers it to the sending socket as if it came from the
 * path: e.g. "fragmentation needed" with a next-hop MTU, which no single namespace produces by
 * itself (it takes a forwarding hop with a smaller MTU). IPv4 only.
 */
final class IcmpInjector {
    private static final int AF_INET = 2;
    private static final int SOCK_RAW = 3;
    private static final int IPPROTO_ICMP = 1;
    private static final int IPPROTO_UDP = 17;
    private static final int ICMP_DEST_UNREACH = 3;
    private static final int ICMP_FRAG_NEEDED = 4;
    private static final int QUOTED_PAYLOAD = 100;

    private IcmpInjector() {
    }

    /**
     * ICMP destination unreachable, fragmentation needed, next-hop MTU {@code mtu}, quoting the
     * IPv4 and UDP headers of a datagram from {@code source} to {@code destination}, sent to
     * {@code source}.
     */
    static void fragmentationNeeded(final InetSocketAddress source, final InetSocketAddress destination, final int mtu)
        throws Throwable {
        final ByteBuffer m = ByteBuffer.allocate(8 + 20 + 8);
        m.put((byte) ICMP_DEST_UNREACH).put((byte) ICMP_FRAG_NEEDED).putShort((short) 0) // checksum, below
            .putShort((short) 0).putShort((short) mtu);
        // The quoted IPv4 header (DF set) and the first 8 bytes of its payload: the UDP header.
        m.put((byte) 0x45).put((byte) 0).putShort((short) (20 + 8 + QUOTED_PAYLOAD)).putShort((short) 0)
            .putShort((short) 0x4000).put((byte) 64).put((byte) IPPROTO_UDP).putShort((short) 0)
            .put(source.getAddress().getAddress()).put(destination.getAddress().getAddress());
        m.putShort((short) source.getPort()).putShort((short) destination.getPort())
            .putShort((short) (8 + QUOTED_PAYLOAD)).putShort((short) 0);
        m.putShort(2, checksum(m.array()));

        final Linker linker = Linker.nativeLinker();
        final MethodHandle socket = linker.downcallHandle(linker.defaultLookup().find("socket").orElseThrow(),
            FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT));
        final MethodHandle sendto = linker.downcallHandle(linker.defaultLookup().find("sendto").orElseThrow(),
            FunctionDescriptor.of(JAVA_LONG, JAVA_INT, ADDRESS, JAVA_LONG, JAVA_INT, ADDRESS, JAVA_INT));
        final MethodHandle close = linker.downcallHandle(linker.defaultLookup().find("close").orElseThrow(),
            FunctionDescriptor.of(JAVA_INT, JAVA_INT));
        final int fd = (int) socket.invokeExact(AF_INET, SOCK_RAW, IPPROTO_ICMP);
        if (fd < 0) {
            throw new IOException("socket(AF_INET, SOCK_RAW, IPPROTO_ICMP) failed (root only)");
        }
        try (Arena arena = Arena.ofConfined()) {
            final MemorySegment message = arena.allocateFrom(ValueLayout.JAVA_BYTE, m.array());
            final MemorySegment to = arena.allocate(16, 8);
            to.set(ValueLayout.JAVA_SHORT, 0, (short) AF_INET); // sin_family in host order; port 0 for raw
            MemorySegment.copy(source.getAddress().getAddress(), 0, to, ValueLayout.JAVA_BYTE, 4, 4);
            final long sent = (long) sendto.invokeExact(fd, message, (long) m.capacity(), 0, to, 16);
            if (sent != m.capacity()) {
                throw new IOException("sendto of the ICMP error returned " + sent);
            }
        } finally {
            final int ignored = (int) close.invokeExact(fd);
        }
    }

    /** @return the Internet checksum (RFC 1071) of {@code bytes} */
    private static short checksum(final byte[] bytes) {
        long sum = 0;
        for (int i = 0; i + 1 < bytes.length; i += 2) {
            sum += (bytes[i] & 0xFF) << 8 | bytes[i + 1] & 0xFF;
        }
        if ((bytes.length & 1) != 0) {
            sum += (bytes[bytes.length - 1] & 0xFF) << 8;
        }
        while (sum >> 16 != 0) {
            sum = (sum & 0xFFFF) + (sum >> 16);
        }
        return (short) ~sum;
    }
}
