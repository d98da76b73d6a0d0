// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty.linux;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static org.assertj.core.api.Assertions.assertThat;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The system call stubs return what libc's wrappers with errno captured report, the negated errno
 * in place of -1: both ways side by side, on the errors the data path meets (a full or empty
 * socket, a datagram too large, an ICMP error held for the next call, a bad descriptor).
 */
class SyscallsTest {
    private static final int EPOLL_EVENT_BYTES = 16;

    @BeforeEach
    void nativeOnly() {
        Loopback.assumeNative();
    }

    @Test
    void theStubsAreInUseOnX86AndSayWhyNotElsewhere() {
        final String arch = System.getProperty("os.arch");
        if (arch.equals("amd64") || arch.equals("x86_64")) {
            assertThat(Syscalls.fallbackReason()).isNull();
        } else {
            // aarch64, the other platform NativeUdp admits: libc with errno captured, and why.
            assertThat(Syscalls.fallbackReason()).isEqualTo("no system call stubs for " + arch + " (x86_64 only)");
        }
    }

    @Test
    void aBadDescriptorIsEbadfBothWays() throws Throwable {
        try (Arena arena = Arena.ofConfined()) {
            final MemorySegment value = arena.allocate(JAVA_INT);
            final MemorySegment length = arena.allocate(JAVA_INT);
            length.set(JAVA_INT, 0, 4);
            final MemorySegment buffer = arena.allocate(64);
            assertThat((long) Syscalls.GETSOCKOPT.invokeExact(-1, Uapi.SOL_SOCKET, Uapi.SO_ERROR, value, length))
                .isEqualTo(Syscalls.ThroughLibc.getsockopt(-1, Uapi.SOL_SOCKET, Uapi.SO_ERROR, value, length))
                .isEqualTo(-Errno.EBADF);
            assertThat((long) Syscalls.READ.invokeExact(-1, buffer, 8L))
                .isEqualTo(Syscalls.ThroughLibc.read(-1, buffer, 8L)).isEqualTo(-Errno.EBADF);
            assertThat((long) Syscalls.EPOLL_CTL.invokeExact(-1, Uapi.EPOLL_CTL_ADD, 0, buffer))
                .isEqualTo(Syscalls.ThroughLibc.epollCtl(-1, Uapi.EPOLL_CTL_ADD, 0, buffer)).isEqualTo(-Errno.EBADF);
            assertThat((long) Syscalls.EPOLL_PWAIT.invokeExact(-1, buffer, 1, 0, MemorySegment.NULL, 0L))
                .isEqualTo(Syscalls.ThroughLibc.epollPwait(-1, buffer, 1, 0, MemorySegment.NULL, 0L))
                .isEqualTo(-Errno.EBADF);
        }
    }

    @Test
    void anEmptySocketIsEagainAndAnEpollWaitFindsNothing() throws Throwable {
        try (LinuxUdpSocket rx = Loopback.bound(false); ReceiveBatch batch = new ReceiveBatch(4, 2048);
             Epoll epoll = new Epoll(1); Arena arena = Arena.ofConfined()) {
            batch.prepare();
            assertThat((long) Syscalls.RECVMMSG.invokeExact(rx.fd(), batch.headers(), 4, 0, MemorySegment.NULL))
                .isEqualTo(Syscalls.ThroughLibc.recvmmsg(rx.fd(), batch.headers(), 4, 0, MemorySegment.NULL))
                .isEqualTo(-Errno.EAGAIN);
            batch.prepare();
            assertThat((long) Syscalls.RECVMSG.invokeExact(rx.fd(), batch.headers(), 0))
                .isEqualTo(Syscalls.ThroughLibc.recvmsg(rx.fd(), batch.headers(), 0)).isEqualTo(-Errno.EAGAIN);
            final QueuedError entry = new QueuedError();
            try {
                entry.prepare();
                assertThat((long) Syscalls.RECVMSG.invokeExact(rx.fd(), entry.header(),
                    Uapi.MSG_ERRQUEUE | Uapi.MSG_DONTWAIT)).isEqualTo(-Errno.EAGAIN);
            } finally {
                entry.close();
            }
            epoll.add(rx, 7);
            assertThat(epoll.await(0)).isZero();
            assertThat(epoll.awaitNanos(0)).isZero();
            // The raw wait reports nothing to a fresh set, either way.
            final MemorySegment events = arena.allocate(4 * EPOLL_EVENT_BYTES, 8);
            final MemorySegment timeout = arena.allocate(16, 8);
            final long raw = (long) Syscalls.EPOLL_PWAIT2.invokeExact(rx.fd(), events, 4, timeout, MemorySegment.NULL,
                0L);
            assertThat(raw).as("epoll_pwait2 on a socket, not an epoll descriptor").isIn((long) -Errno.EINVAL,
                (long) -Errno.ENOSYS);
            assertThat(Syscalls.ThroughLibc.epollPwait2(rx.fd(), events, 4, timeout, MemorySegment.NULL, 0L))
                .isEqualTo(raw);
        }
    }

    @Test
    void aDatagramTooLargeIsEmsgsizeBothWays() throws Throwable {
        try (LinuxUdpSocket rx = Loopback.bound(false); LinuxUdpSocket tx = Loopback.bound(false);
             SendBatch batch = new SendBatch(1); Arena arena = Arena.ofConfined()) {
            final MemorySegment payload = arena.allocate(65_508);
            final InetSocketAddress to = rx.localAddress();
            batch.add(payload);
            batch.destination(0, tx, to);
            assertThat((long) Syscalls.SENDMMSG.invokeExact(tx.fd(), batch.headersFrom(0), 1, 0))
                .isEqualTo(Syscalls.ThroughLibc.sendmmsg(tx.fd(), batch.headersFrom(0), 1, 0))
                .isEqualTo(-Errno.EMSGSIZE);
            tx.connect(to);
            assertThat((long) Syscalls.SENDTO.invokeExact(tx.fd(), payload.address(), 65_508L, 0, MemorySegment.NULL,
                0)).isEqualTo(Syscalls.ThroughLibc.sendto(tx.fd(), payload.address(), 65_508L, 0, MemorySegment.NULL,
                0)).isEqualTo(-Errno.EMSGSIZE);
            // And a datagram that fits is taken both ways.
            assertThat((long) Syscalls.SENDTO.invokeExact(tx.fd(), payload.address(), 100L, 0, MemorySegment.NULL, 0))
                .isEqualTo(Syscalls.ThroughLibc.sendto(tx.fd(), payload.address(), 100L, 0, MemorySegment.NULL, 0))
                .isEqualTo(100L);
        }
    }

    /** The ICMP error a connected socket holds for its next call is that call's result, either way. */
    @Test
    void theErrorHeldForTheNextCallIsItsResultBothWays() throws Throwable {
        try (LinuxUdpSocket tx = Loopback.connectedToClosedPort(); Arena arena = Arena.ofConfined()) {
            final MemorySegment payload = Loopback.pattern(arena, 10, 1);
            assertThat(refusedAfterOneSend(tx, payload, false)).isEqualTo(-Errno.ECONNREFUSED);
            assertThat(refusedAfterOneSend(tx, payload, true)).isEqualTo(-Errno.ECONNREFUSED);
        }
    }

    /** @return the result of the first send after one that went, the ICMP error having come back */
    private static long refusedAfterOneSend(final LinuxUdpSocket tx, final MemorySegment payload,
                                            final boolean throughLibc) throws Throwable {
        assertThat(send(tx, payload, throughLibc)).isEqualTo(10L);
        long r = 10;
        final long deadline = System.nanoTime() + 2_000_000_000L;
        while (r == 10 && System.nanoTime() < deadline) {
            Thread.sleep(1);
            r = send(tx, payload, throughLibc);
        }
        return r;
    }

    private static long send(final LinuxUdpSocket tx, final MemorySegment payload, final boolean throughLibc)
        throws Throwable {
        return throughLibc
            ? Syscalls.ThroughLibc.sendto(tx.fd(), payload.address(), 10L, 0, MemorySegment.NULL, 0)
            : (long) Syscalls.SENDTO.invokeExact(tx.fd(), payload.address(), 10L, 0, MemorySegment.NULL, 0);
    }
}
