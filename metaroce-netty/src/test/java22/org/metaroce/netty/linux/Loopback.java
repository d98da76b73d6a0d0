// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty.linux;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;

/** Sockets on loopback for the native socket tests, which skip when the sockets are unavailable. */
final class Loopback {
    static final int IPV4 = 0x7F00_0001;

    private Loopback() {
    }

    /** Skips the calling test, with the reason, when the native sockets cannot be used. */
    static void assumeNative() {
        assumeTrue(NativeUdp.isAvailable(), () -> "native UDP unavailable: "
            + NativeUdp.unavailabilityReason().orElse("?"));
    }

    /** @return a socket bound to a free port of 127.0.0.1 (or ::1) */
    static LinuxUdpSocket bound(final boolean ipv6) throws ErrnoException {
        final LinuxUdpSocket s = LinuxUdpSocket.open(ipv6);
        try {
            s.bind(new InetSocketAddress(address(ipv6), 0));
        } catch (final ErrnoException | RuntimeException ex) {
            s.close();
            throw ex;
        }
        return s;
    }

    /**
     * @return an IPv4 socket bound to a free port and connected to a loopback port that was just
     *     closed: its first datagram draws an ICMP port unreachable, which the kernel holds for the
     *     socket's next call
     */
    static LinuxUdpSocket connectedToClosedPort() throws ErrnoException {
        final int closedPort;
        try (LinuxUdpSocket gone = bound(false)) {
            closedPort = gone.localAddress().getPort();
        }
        final LinuxUdpSocket s = bound(false);
        try {
            s.connect(new InetSocketAddress(address(false), closedPort));
        } catch (final ErrnoException | RuntimeException ex) {
            s.close();
            throw ex;
        }
        return s;
    }

    static InetAddress address(final boolean ipv6) {
        try {
            return InetAddress.getByName(ipv6 ? "::1" : "127.0.0.1");
        } catch (final UnknownHostException ex) {
            throw new IllegalStateException(ex);
        }
    }

    /**
     * Receives until {@code expected} datagrams arrived or 2 s passed, calling {@code each} per
     * datagram.
     *
     * @return datagrams received
     */
    static int receive(final LinuxUdpSocket s, final ReceiveBatch batch, final int expected, final Each each) {
        int got = 0;
        final long deadline = System.nanoTime() + 2_000_000_000L;
        while (got < expected && System.nanoTime() < deadline) {
            final int n = s.receive(batch);
            if (n < 0) {
                throw new AssertionError("receive failed: " + Errno.name(-n));
            }
            for (int i = 0; i < n; i++) {
                each.datagram(batch, i, got++);
            }
            if (n == 0) {
                Thread.onSpinWait();
            }
        }
        return got;
    }

    /** Per received datagram. */
    interface Each {
        void datagram(ReceiveBatch batch, int slot, int index);
    }

    /** @return native memory filled with {@code size} bytes {@code (seed + i) & 0xFF} */
    static MemorySegment pattern(final Arena arena, final int size, final int seed) {
        final MemorySegment m = arena.allocate(size, 8);
        for (int i = 0; i < size; i++) {
            m.set(java.lang.foreign.ValueLayout.JAVA_BYTE, i, (byte) (seed + i));
        }
        return m;
    }
}
