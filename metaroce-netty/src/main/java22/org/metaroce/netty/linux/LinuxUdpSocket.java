// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty.linux;

import static java.lang.foreign.ValueLayout.JAVA_INT;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;

/**
 * A non-blocking Linux UDP socket over {@code java.lang.foreign} downcalls: setup calls
 * ({@code socket}, {@code bind}, {@code connect}, {@code setsockopt}) throw {@link ErrnoException};
 * the data path ({@link #send(SendBatch, int)}, {@link #receive(ReceiveBatch)}) returns counts
 * and negated errnos, which {@link UdpOutcome#of(int)} classifies, and allocates nothing.
 *
 * <p>Sending and receiving may run on two threads at once, each with its own batch. Setup calls
 * allocate (a confined arena each) and belong before the data path starts. Check
 * {@link NativeUdp#isAvailable()} before the first use of this class.
 */
public final class LinuxUdpSocket implements AutoCloseable {
    /** ECN codepoint ECT(0), the low two bits of {@link #setTrafficClass(int)}'s value. */
    public static final int ECT_0 = 2;
    /** ECN codepoint ECT(1). */
    public static final int ECT_1 = 1;
    /** ECN codepoint CE (congestion experienced). */
    public static final int CE = 3;

    private final int fd;
    private final int family;
    private volatile boolean closed;

    private LinuxUdpSocket(final int fd, final int family) {
        this.fd = fd;
        this.family = family;
    }

    /**
     * Opens a non-blocking, close-on-exec UDP socket.
     *
     * @param ipv6 {@code AF_INET6} (which also reaches IPv4 peers through IPv4-mapped addresses
     *     unless {@link #setIpv6Only(boolean)}), else {@code AF_INET}
     * @throws ErrnoException if the kernel refuses (e.g. {@code EAFNOSUPPORT} with IPv6 disabled)
     */
    public static LinuxUdpSocket open(final boolean ipv6) throws ErrnoException {
        return open(ipv6, 0);
    }

    /**
     * Opens a socket of another datagram protocol with the same calls: {@code IPPROTO_UDPLITE}
     * ({@value Uapi#IPPROTO_UDPLITE}) shares the kernel's UDP send path, and its refusal of UDP GSO
     * is the one {@code EIO} that path gives on a kernel without IPsec transforms (a test's).
     *
     * @param protocol the {@code socket()} protocol, 0 for UDP
     */
    static LinuxUdpSocket open(final boolean ipv6, final int protocol) throws ErrnoException {
        final int family = ipv6 ? Uapi.AF_INET6 : Uapi.AF_INET;
        try (Arena arena = Arena.ofConfined()) {
            final MemorySegment capture = Libc.allocateCapture(arena);
            final int fd = (int) Libc.SOCKET.invokeExact(capture, family,
                Uapi.SOCK_DGRAM | Uapi.SOCK_NONBLOCK | Uapi.SOCK_CLOEXEC, protocol);
            if (fd < 0) {
                throw new ErrnoException("socket(" + (ipv6 ? "AF_INET6" : "AF_INET") + ", SOCK_DGRAM, " + protocol
                    + ")", Libc.errno(capture));
            }
            return new LinuxUdpSocket(fd, family);
        } catch (final ErrnoException | RuntimeException | Error ex) {
            throw ex;
        } catch (final Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    /** @return the file descriptor (for {@link Epoll}) */
    public int fd() {
        return fd;
    }

    /** @return whether this is an {@code AF_INET6} socket */
    public boolean isIpv6() {
        return family == Uapi.AF_INET6;
    }

    /** @return {@code AF_INET} or {@code AF_INET6} */
    int family() {
        return family;
    }

    /**
     * Binds to a local address; port 0 picks a free port ({@link #localAddress()} tells which).
     *
     * @throws ErrnoException e.g. {@code EADDRINUSE}
     */
    public void bind(final InetSocketAddress local) throws ErrnoException {
        addressCall(Libc.BIND, "bind", local);
    }

    /**
     * Connects to a peer: sends without a destination go there, only its datagrams are received,
     * and ICMP errors for it are reported ({@link UdpOutcome#CONNECTION_REFUSED}).
     *
     * @throws ErrnoException e.g. {@code ENETUNREACH}
     */
    public void connect(final InetSocketAddress peer) throws ErrnoException {
        addressCall(Libc.CONNECT, "connect", peer);
    }

    /**
     * Dissolves the association of {@link #connect} ({@code connect} with {@code AF_UNSPEC}).
     *
     * @throws ErrnoException if the kernel refuses
     */
    public void disconnect() throws ErrnoException {
        try (Arena arena = Arena.ofConfined()) {
            final MemorySegment capture = Libc.allocateCapture(arena);
            final MemorySegment sockaddr = arena.allocate(Sockaddr.SLOT, 8);   // zeroed: family AF_UNSPEC
            final int r = (int) Libc.CONNECT.invokeExact(capture, fd, sockaddr, Sockaddr.SLOT);
            if (r < 0) {
                throw new ErrnoException("connect(AF_UNSPEC)", Libc.errno(capture));
            }
        } catch (final ErrnoException | RuntimeException | Error ex) {
            throw ex;
        } catch (final Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    /**
     * @return the bound local address ({@code getsockname})
     * @throws ErrnoException if the kernel refuses
     */
    public InetSocketAddress localAddress() throws ErrnoException {
        try (Arena arena = Arena.ofConfined()) {
            final MemorySegment capture = Libc.allocateCapture(arena);
            final MemorySegment sockaddr = arena.allocate(Sockaddr.SLOT, 8);
            final MemorySegment length = arena.allocate(JAVA_INT);
            length.set(JAVA_INT, 0, Sockaddr.SLOT);
            final int r = (int) Libc.GETSOCKNAME.invokeExact(capture, fd, sockaddr, length);
            if (r < 0) {
                throw new ErrnoException("getsockname", Libc.errno(capture));
            }
            return Sockaddr.read(sockaddr, 0);
        } catch (final ErrnoException | RuntimeException | Error ex) {
            throw ex;
        } catch (final Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    /** {@code SO_RCVBUF}: the kernel doubles the value and caps it at {@code net.core.rmem_max}. */
    public void setReceiveBufferSize(final int bytes) throws ErrnoException {
        setOption(Uapi.SOL_SOCKET, Uapi.SO_RCVBUF, bytes, "SO_RCVBUF");
    }

    /** {@code SO_SNDBUF}: the kernel doubles the value and caps it at {@code net.core.wmem_max}. */
    public void setSendBufferSize(final int bytes) throws ErrnoException {
        setOption(Uapi.SOL_SOCKET, Uapi.SO_SNDBUF, bytes, "SO_SNDBUF");
    }

    /** @return {@code SO_RCVBUF} as the kernel applied it (twice the request, capped) */
    public int receiveBufferSize() throws ErrnoException {
        return getOption(Uapi.SOL_SOCKET, Uapi.SO_RCVBUF, "SO_RCVBUF");
    }

    /** @return {@code SO_SNDBUF} as the kernel applied it */
    public int sendBufferSize() throws ErrnoException {
        return getOption(Uapi.SOL_SOCKET, Uapi.SO_SNDBUF, "SO_SNDBUF");
    }

    /** {@code SO_REUSEADDR}. */
    public void setReuseAddress(final boolean on) throws ErrnoException {
        setOption(Uapi.SOL_SOCKET, Uapi.SO_REUSEADDR, on ? 1 : 0, "SO_REUSEADDR");
    }

    /** {@code IPV6_V6ONLY} (IPv6 sockets only; before {@link #bind}). */
    public void setIpv6Only(final boolean on) throws ErrnoException {
        setOption(Uapi.IPPROTO_IPV6, Uapi.IPV6_V6ONLY, on ? 1 : 0, "IPV6_V6ONLY");
    }

    /**
     * The TOS byte (IPv4, {@code IP_TOS}) or traffic class (IPv6, {@code IPV6_TCLASS}) of every
     * datagram sent: DSCP in the upper six bits, ECN in the lower two (e.g. {@link #ECT_0}, which
     * a UDP socket may set; the kernel passes it through).
     *
     * @param trafficClass 0..255
     */
    public void setTrafficClass(final int trafficClass) throws ErrnoException {
        if (trafficClass < 0 || trafficClass > 255) {
            throw new IllegalArgumentException("traffic class must be 0..255, got " + trafficClass);
        }
        if (family == Uapi.AF_INET6) {
            setOption(Uapi.IPPROTO_IPV6, Uapi.IPV6_TCLASS, trafficClass, "IPV6_TCLASS");
        } else {
            setOption(Uapi.IPPROTO_IP, Uapi.IP_TOS, trafficClass, "IP_TOS");
        }
    }

    /**
     * Don't Fragment [ENC-021]: {@code IP_MTU_DISCOVER} = {@code IP_PMTUDISC_DO} (and
     * {@code IPV6_MTU_DISCOVER} = {@code IPV6_PMTUDISC_DO} on IPv6 sockets, which also send to IPv4).
     * Every IPv4 datagram carries DF, so a router on a path narrower than the configured link MTU
     * drops it (and reports "fragmentation needed") instead of fragmenting it; and a datagram larger
     * than a path MTU the kernel has learnt from such a report is refused with {@code EMSGSIZE}
     * rather than fragmented locally. Off is the kernel's default, {@code IP_PMTUDISC_WANT}: DF set,
     * but fragmented locally above a learnt path MTU.
     */
    public void setDontFragment(final boolean on) throws ErrnoException {
        if (family == Uapi.AF_INET6) {
            setOption(Uapi.IPPROTO_IPV6, Uapi.IPV6_MTU_DISCOVER, on ? Uapi.IPV6_PMTUDISC_DO : Uapi.IPV6_PMTUDISC_WANT,
                "IPV6_MTU_DISCOVER");
        }
        setOption(Uapi.IPPROTO_IP, Uapi.IP_MTU_DISCOVER, on ? Uapi.IP_PMTUDISC_DO : Uapi.IP_PMTUDISC_WANT,
            "IP_MTU_DISCOVER");
    }

    /**
     * Asks the kernel for the TOS / traffic class byte of every received datagram
     * ({@code IP_RECVTOS}, and {@code IPV6_RECVTCLASS} on IPv6 sockets, which also receive IPv4):
     * {@link ReceiveBatch#ecn(int)} then reads the ECN field.
     */
    public void setReceiveTrafficClass(final boolean on) throws ErrnoException {
        if (family == Uapi.AF_INET6) {
            setOption(Uapi.IPPROTO_IPV6, Uapi.IPV6_RECVTCLASS, on ? 1 : 0, "IPV6_RECVTCLASS");
        }
        setOption(Uapi.IPPROTO_IP, Uapi.IP_RECVTOS, on ? 1 : 0, "IP_RECVTOS");
    }

    /**
     * {@code SO_TIMESTAMPNS}: the kernel stamps every received datagram when it reaches the host
     * (in the receive path, before it waits in the socket), and {@link ReceiveBatch#arrivalNanoTime}
     * tells when that was, so that the time a datagram waited for a busy or descheduled reader is
     * not taken for path delay [REL-066].
     */
    public void setReceiveTimestamps(final boolean on) throws ErrnoException {
        setOption(Uapi.SOL_SOCKET, Uapi.SO_TIMESTAMPNS, on ? 1 : 0, "SO_TIMESTAMPNS");
    }

    /**
     * {@code IP_RECVERR} (and {@code IPV6_RECVERR} on IPv6 sockets): the kernel reports errors it
     * otherwise keeps to itself. For a send, {@code ENOBUFS} when a queue of the host (a qdisc, a
     * device) drops the datagram: without this option {@code sendmmsg} reports it as sent (the
     * kernel counts it in {@code SndbufErrors} of {@code /proc/net/snmp} either way). The option
     * also queues every ICMP error for the socket, and local errors such as a datagram larger than
     * the route allows, on its error queue ({@link #receiveError(QueuedError)} reads it), reports an
     * ICMP error to the next call even on an unconnected socket, and makes {@code epoll} report
     * {@code EPOLLERR} while that queue holds anything: whoever sets it must read the queue.
     */
    public void setReceiveErrors(final boolean on) throws ErrnoException {
        if (family == Uapi.AF_INET6) {
            setOption(Uapi.IPPROTO_IPV6, Uapi.IPV6_RECVERR, on ? 1 : 0, "IPV6_RECVERR");
        }
        setOption(Uapi.IPPROTO_IP, Uapi.IP_RECVERR, on ? 1 : 0, "IP_RECVERR");
    }

    /**
     * Reads the oldest entry of the socket's error queue ({@code recvmsg} with
     * {@code MSG_ERRQUEUE | MSG_DONTWAIT}) into {@code entry}, which decodes it. Reading the last
     * ICMP entry also clears the error the kernel holds for the next call ({@code sk_err}), so that
     * {@code epoll} stops reporting {@code EPOLLERR}. Allocates nothing.
     *
     * @return 1 when an entry was read, 0 when the queue is empty, or a negated errno
     */
    public int receiveError(final QueuedError entry) {
        entry.prepare();
        final long r;
        try {
            r = (long) Syscalls.RECVMSG.invokeExact(fd, entry.header(), Uapi.MSG_ERRQUEUE | Uapi.MSG_DONTWAIT);
        } catch (final RuntimeException | Error ex) {
            throw ex;
        } catch (final Throwable t) {
            throw new IllegalStateException(t);
        }
        if (r >= 0) {
            entry.received();
            return 1;
        }
        return r == -Errno.EAGAIN ? 0 : (int) r;
    }

    /**
     * Takes the error the kernel holds for the socket's next call ({@code getsockopt(SO_ERROR)},
     * which clears it): an ICMP error whose queue entry was not kept (the queue was full) would
     * otherwise keep {@code epoll} reporting {@code EPOLLERR}. Allocates nothing.
     *
     * @param memory where the call's value goes
     * @return the pending errno, 0 for none, or the call's negated errno
     */
    public int takePendingError(final QueuedError memory) {
        final long r;
        try {
            r = (long) Syscalls.GETSOCKOPT.invokeExact(fd, Uapi.SOL_SOCKET, Uapi.SO_ERROR, memory.value(),
                memory.valueLength());
        } catch (final RuntimeException | Error ex) {
            throw ex;
        } catch (final Throwable t) {
            throw new IllegalStateException(t);
        }
        return r < 0 ? (int) r : memory.value().get(JAVA_INT, 0);
    }

    /**
     * {@code UDP_GRO}: the kernel may deliver datagrams of one flow, of equal size, coalesced in
     * one receive ({@link ReceiveBatch#segmentSize(int)} tells their size). Receive slots must
     * then hold 64 KiB.
     */
    public void setGro(final boolean on) throws ErrnoException {
        setOption(Uapi.SOL_UDP, Uapi.UDP_GRO, on ? 1 : 0, "UDP_GRO");
    }

    /**
     * Sets an int socket option by its Linux numbers (for options without a method here).
     *
     * @throws ErrnoException e.g. {@code ENOPROTOOPT} on a kernel without it
     */
    public void setOption(final int level, final int name, final int value) throws ErrnoException {
        setOption(level, name, value, "level " + level + " option " + name);
    }

    /**
     * @return an int socket option by its Linux numbers
     * @throws ErrnoException if the kernel refuses
     */
    public int getOption(final int level, final int name) throws ErrnoException {
        return getOption(level, name, "level " + level + " option " + name);
    }

    /**
     * Sends messages {@code first..batch.count()-1} with one {@code sendmmsg}. The kernel may take
     * fewer than offered (a partial batch is normal: call again from {@code first + n}); when it
     * took none because message {@code first} failed, the result is its negated errno and the
     * caller drops or retries that message.
     *
     * @return messages the kernel took (0: the socket buffer is full, {@code EAGAIN}), or a
     *     negated errno ({@link UdpOutcome#of(int)})
     */
    public int send(final SendBatch batch, final int first) {
        final int n = batch.count() - first;
        if (n <= 0) {
            return 0;
        }
        final long r;
        try {
            r = (long) Syscalls.SENDMMSG.invokeExact(fd, batch.headersFrom(first), n, 0);
        } catch (final RuntimeException | Error ex) {
            throw ex;
        } catch (final Throwable t) {
            throw new IllegalStateException(t);
        }
        return r == -Errno.EAGAIN ? 0 : (int) r;
    }

    /**
     * Sends one datagram of {@code length} bytes at native address {@code address} to the peer
     * this socket is connected to, with {@code send}: what a request-reply exchange sends, one
     * datagram per duty cycle. On loopback {@code send} made a ping-pong between two spinning
     * threads 0.22-0.25 us faster per round trip than a {@code sendmmsg} of one message (C, the
     * same receive calls, interleaved; no message header to copy in).
     *
     * @return 1 when the kernel took it, 0 when the socket buffer is full ({@code EAGAIN}), or a
     *     negated errno ({@link UdpOutcome#of(int)})
     */
    public int sendConnected(final long address, final int length) {
        final long r;
        try {
            r = (long) Syscalls.SENDTO.invokeExact(fd, address, (long) length, 0, MemorySegment.NULL, 0);
        } catch (final RuntimeException | Error ex) {
            throw ex;
        } catch (final Throwable t) {
            throw new IllegalStateException(t);
        }
        if (r >= 0) {
            return 1;
        }
        return r == -Errno.EAGAIN ? 0 : (int) r;
    }

    /**
     * Receives up to {@code batch.slots()} datagrams with one {@code recvmmsg}, without waiting.
     *
     * @return datagrams received into slots 0..n-1 (0: none waiting, {@code EAGAIN}), or a
     *     negated errno ({@link UdpOutcome#of(int)}; e.g. {@code ECONNREFUSED} on a connected
     *     socket whose peer's port is closed)
     */
    public int receive(final ReceiveBatch batch) {
        batch.prepare();
        final long r;
        try {
            r = (long) Syscalls.RECVMMSG.invokeExact(fd, batch.headers(), batch.slots(), 0, MemorySegment.NULL);
        } catch (final RuntimeException | Error ex) {
            throw ex;
        } catch (final Throwable t) {
            throw new IllegalStateException(t);
        }
        if (r >= 0) {
            batch.received((int) r);
            return (int) r;
        }
        return r == -Errno.EAGAIN ? 0 : (int) r;
    }

    /**
     * Receives at most one datagram into slot 0 of {@code batch} with {@code recvmsg}, without
     * waiting: what a spinning reader calls while datagrams come one at a time. On loopback a
     * {@code recvmmsg} of 32 slots cost a 64-byte ping-pong 0.77 us more per round trip than
     * {@code recvmsg} (C, two spinning threads, same control messages).
     *
     * @return 1 with the datagram in slot 0, 0 when none was waiting ({@code EAGAIN}), or a negated
     *     errno as {@link #receive(ReceiveBatch)}
     */
    public int receiveOne(final ReceiveBatch batch) {
        batch.prepare();
        final long r;
        try {
            r = (long) Syscalls.RECVMSG.invokeExact(fd, batch.headers(), 0);
        } catch (final RuntimeException | Error ex) {
            throw ex;
        } catch (final Throwable t) {
            throw new IllegalStateException(t);
        }
        if (r >= 0) {
            batch.receivedOne((int) r);
            return 1;
        }
        return r == -Errno.EAGAIN ? 0 : (int) r;
    }

    /** Closes the descriptor (once; later calls do nothing). */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        try (Arena arena = Arena.ofConfined()) {
            final int ignored = (int) Libc.CLOSE.invokeExact(Libc.allocateCapture(arena), fd);
        } catch (final RuntimeException | Error ex) {
            throw ex;
        } catch (final Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    @Override
    public String toString() {
        return "LinuxUdpSocket[fd " + fd + (family == Uapi.AF_INET6 ? ", AF_INET6" : ", AF_INET")
            + (closed ? ", closed]" : "]");
    }

    private void addressCall(final java.lang.invoke.MethodHandle call, final String name,
                             final InetSocketAddress address) throws ErrnoException {
        try (Arena arena = Arena.ofConfined()) {
            final MemorySegment capture = Libc.allocateCapture(arena);
            final MemorySegment sockaddr = arena.allocate(Sockaddr.SLOT, 8);
            final int length = Sockaddr.write(sockaddr, 0, family, address);
            final int r = (int) call.invokeExact(capture, fd, sockaddr, length);
            if (r < 0) {
                throw new ErrnoException(name + "(" + address + ")", Libc.errno(capture));
            }
        } catch (final ErrnoException | RuntimeException | Error ex) {
            throw ex;
        } catch (final Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    private void setOption(final int level, final int name, final int value, final String label)
        throws ErrnoException {
        try (Arena arena = Arena.ofConfined()) {
            final MemorySegment capture = Libc.allocateCapture(arena);
            final MemorySegment v = arena.allocate(JAVA_INT);
            v.set(JAVA_INT, 0, value);
            final int r = (int) Libc.SETSOCKOPT.invokeExact(capture, fd, level, name, v, (int) JAVA_INT.byteSize());
            if (r < 0) {
                throw new ErrnoException("setsockopt(" + label + ", " + value + ")", Libc.errno(capture));
            }
        } catch (final ErrnoException | RuntimeException | Error ex) {
            throw ex;
        } catch (final Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    private int getOption(final int level, final int name, final String label) throws ErrnoException {
        try (Arena arena = Arena.ofConfined()) {
            final MemorySegment capture = Libc.allocateCapture(arena);
            final MemorySegment v = arena.allocate(JAVA_INT);
            final MemorySegment length = arena.allocate(JAVA_INT);
            length.set(JAVA_INT, 0, (int) JAVA_INT.byteSize());
            final int r = (int) Libc.GETSOCKOPT.invokeExact(capture, fd, level, name, v, length);
            if (r < 0) {
                throw new ErrnoException("getsockopt(" + label + ")", Libc.errno(capture));
            }
            return v.get(JAVA_INT, 0);
        } catch (final ErrnoException | RuntimeException | Error ex) {
            throw ex;
        } catch (final Throwable t) {
            throw new IllegalStateException(t);
        }
    }
}
