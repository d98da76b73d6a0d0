// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.lang.foreign.Arena;
import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.channels.DatagramChannel;
import java.util.concurrent.TimeUnit;

import org.agrona.DirectBuffer;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.metaroce.netty.linux.Epoll;
import org.metaroce.netty.linux.Errno;
import org.metaroce.netty.linux.LinuxUdpSocket;
import org.metaroce.netty.linux.NativeUdp;
import org.metaroce.netty.linux.QueuedError;

/**
 * The error queue of the native transport's sockets, which set {@code IP_RECVERR}: an ICMP port
 * unreachable for a datagram an unconnected socket sent to a closed port (on the host's loopback;
 * no root needed) lands on the socket's error queue, is read and counted by kind, and a driver
 * blocked in {@code epoll_wait} does not spin afterwards, although {@code epoll} reports
 * {@code EPOLLERR} for as long as an entry waits (shown with a raw {@link Epoll} on a socket nobody
 * drains: the control that makes the bounds below mean something).
 */
class NativeErrorQueueTest {
    private static final InetAddress LO = InetAddress.getLoopbackAddress();
    private static final long WINDOW_NS = TimeUnit.MILLISECONDS.toNanos(200);
    /**
     * Wake-ups of a wait over 200 ms once the queue was read: one (the window's end) and a spare
     * for a signal. A wait that EPOLLERR ends at once wakes thousands of times (the control).
     */
    private static final int MAX_WAKE_UPS = 3;
    /** Duty cycles of a blocked driver over 200 ms once the queue was read (spinning: thousands). */
    private static final long MAX_DUTY_CYCLES = 5;

    @BeforeEach
    void available() {
        assumeTrue(NativeUdp.isAvailable(), () -> "native transport unavailable: " + NativeUdp.unavailabilityReason());
    }

    @Test
    void eachEntryIsCountedByItsKind() {
        assertThat(NativeErrorQueue.counterOf(QueuedError.ORIGIN_ICMP, Errno.ECONNREFUSED))
            .isEqualTo(DriverCounter.ICMP_PORT_UNREACHABLE);
        assertThat(NativeErrorQueue.counterOf(QueuedError.ORIGIN_ICMP6, Errno.ECONNREFUSED))
            .isEqualTo(DriverCounter.ICMP_PORT_UNREACHABLE);
        assertThat(NativeErrorQueue.counterOf(QueuedError.ORIGIN_ICMP, Errno.EHOSTUNREACH))
            .isEqualTo(DriverCounter.ICMP_HOST_UNREACHABLE);
        assertThat(NativeErrorQueue.counterOf(QueuedError.ORIGIN_ICMP6, Errno.ENETUNREACH))
            .isEqualTo(DriverCounter.ICMP_NET_UNREACHABLE);
        assertThat(NativeErrorQueue.counterOf(QueuedError.ORIGIN_ICMP, Errno.EMSGSIZE))
            .isEqualTo(DriverCounter.ICMP_FRAGMENTATION_NEEDED);
        assertThat(NativeErrorQueue.counterOf(QueuedError.ORIGIN_ICMP6, Errno.EACCES)).isEqualTo(DriverCounter.ICMP_OTHER);
        assertThat(NativeErrorQueue.counterOf(QueuedError.ORIGIN_LOCAL, Errno.EMSGSIZE)).isEqualTo(DriverCounter.LOCAL_ERRORS);
        assertThat(NativeErrorQueue.counterOf(QueuedError.NOT_REPORTED, 0)).isEqualTo(DriverCounter.UNKNOWN_ERRORS);
        assertThat(NativeErrorQueue.counterOf(QueuedError.ORIGIN_NONE, 0)).isEqualTo(DriverCounter.UNKNOWN_ERRORS);
        assertThat(NativeErrorQueue.counterOf(4, 42)).as("SO_EE_ORIGIN_TIMESTAMPING").isEqualTo(DriverCounter.UNKNOWN_ERRORS);
    }

    /** The driver's wait ({@link NativeReadinessWaiter}) over a receiving socket that sent to a closed port. */
    @Test
    void anIcmpPortUnreachableIsReadCountedAndEndsNoLaterWait() throws Exception {
        portUnreachableThroughTheWaiter(LO, 0 /* IPPROTO_IP */, 11 /* IP_RECVERR */);
    }

    /** The same over IPv6: an ICMPv6 port unreachable, read through {@code IPV6_RECVERR}. */
    @Test
    void anIcmpv6PortUnreachableIsReadCountedAndEndsNoLaterWait() throws Exception {
        final InetAddress lo6 = InetAddress.getByName("::1");
        try (DatagramChannel probe = DatagramChannel.open(java.net.StandardProtocolFamily.INET6)) {
            probe.bind(new InetSocketAddress(lo6, 0));
        } catch (final java.io.IOException ex) {
            assumeTrue(false, () -> "no IPv6 loopback: " + ex);
        }
        portUnreachableThroughTheWaiter(lo6, 41 /* IPPROTO_IPV6 */, 25 /* IPV6_RECVERR */);
    }

    private static void portUnreachableThroughTheWaiter(final InetAddress lo, final int level, final int option)
        throws Exception {
        final DriverCounters counters = new DriverCounters(0);
        final NativeUdpTransport transport = new NativeUdpTransport(2048, 8, false, counters);
        final InetSocketAddress closed = closedPort(lo);
        final InetSocketAddress any = new InetSocketAddress(lo, 0);
        try (PolledUdpSocket socket = transport.open(new SocketOptions(any, 1 << 20, 1 << 20, 0), new Discard());
             NativeReadinessWaiter waiter = new NativeReadinessWaiter()) {
            assertThat(((NativeUdpSocket) socket).linuxSocket().getOption(level, option))
                .as("IP_RECVERR / IPV6_RECVERR set by the transport").isOne();
            waiter.watch(socket);
            final SendChunk chunk = transport.allocateChunk(64);
            final SendBatch batch = new SendBatch();
            for (int i = 0; i < 3; i++) {
                batch.add(chunk, 0, 16, 16, false, closed);
            }
            assertThat(socket.send(batch)).as("sent to the closed port").isEqualTo(3);
            batch.takeStop();
            chunk.release();

            final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
            int waits = 0;
            while (counters.get(DriverCounter.ICMP_PORT_UNREACHABLE) < 3 && System.nanoTime() < deadline) {
                waiter.await(TimeUnit.SECONDS.toNanos(1)); // EPOLLERR ends it; the waiter reads the queue
                waits++;
            }
            assertThat(counters.get(DriverCounter.ICMP_PORT_UNREACHABLE)).as("ICMP port unreachables counted").isEqualTo(3);
            final int wakeUps = wakeUpsOver(WINDOW_NS, waiter::await);
            System.out.printf("%s: 3 ICMP port unreachables read in %d waits; then %d wake-ups in 200 ms; counters %s%n",
                lo, waits, wakeUps, counters);
            assertThat(wakeUps).as("wake-ups of the wait over 200 ms after the queue was read").isLessThanOrEqualTo(MAX_WAKE_UPS);
            assertThat(socket.receive(8)).as("nothing to read, and no error left for the read").isZero();
            assertThat(counters.get(DriverCounter.UNKNOWN_ERRORS)).isZero();
            assertThat(counters.get(DriverCounter.LOCAL_ERRORS)).isZero();
        }
    }

    /** What the queue does to an epoll wait when nobody reads it: the failure the driver avoids. */
    @Test
    void anUnreadErrorQueueEndsEveryEpollWait() throws Exception {
        final InetSocketAddress closed = closedPort();
        try (LinuxUdpSocket socket = LinuxUdpSocket.open(false); Epoll epoll = new Epoll(1); Arena arena = Arena.ofConfined();
             org.metaroce.netty.linux.SendBatch one = new org.metaroce.netty.linux.SendBatch(1)) {
            socket.setReceiveErrors(true);
            socket.bind(new InetSocketAddress(LO, 0));
            epoll.add(socket, 7L);
            one.destination(one.add(arena.allocate(16)), socket, closed);
            assertThat(socket.send(one, 0)).isOne();
            assertThat(epoll.await(1000)).isOne();
            assertThat(epoll.readyEvents(0) & Epoll.EPOLLERR).isEqualTo(Epoll.EPOLLERR);
            final int wakeUps = wakeUpsOver(WINDOW_NS, epoll::awaitNanos);
            System.out.printf("an unread ICMP error: %d epoll wake-ups in 200 ms%n", wakeUps);
            assertThat(wakeUps).as("a wait ended at once by EPOLLERR, again and again").isGreaterThan(100 * MAX_WAKE_UPS);

            // Reading the queue ends it: one entry, an ICMP port unreachable, then none.
            final QueuedError entry = new QueuedError();
            try {
                assertThat(socket.receiveError(entry)).isOne();
                assertThat(entry.origin()).isEqualTo(QueuedError.ORIGIN_ICMP);
                assertThat(entry.errno()).isEqualTo(Errno.ECONNREFUSED);
                assertThat(entry.icmpType()).as("destination unreachable").isEqualTo(3);
                assertThat(entry.icmpCode()).as("port unreachable").isEqualTo(3);
                assertThat(socket.receiveError(entry)).isZero();
                assertThat(socket.takePendingError(entry)).as("no error left for the next call").isZero();
            } finally {
                entry.close();
            }
            assertThat(epoll.await(50)).as("the wait blocks again").isZero();
        }
    }

    /** A DEDICATED driver with {@link EventLoopIdleStrategy}, blocked in {@code epoll_wait} over its endpoint socket. */
    @Test
    void aBlockedDriverDoesNotSpinAfterAnIcmpError() throws Exception {
        final InetSocketAddress closed = closedPort();
        final DeviceConfig config = DevicePair.config(Transport.NATIVE, ThreadingMode.DEDICATED, 1, 15)
            .idleStrategy(new EventLoopIdleStrategy(TimeUnit.SECONDS.toNanos(20)));
        try (MetaRoceDevice device = new MetaRoceDevice(config)) {
            // An entropy value that is none of the device's ports: the datagram leaves from the
            // endpoint socket (unconnected, and the one the driver's wait watches).
            final BurstHandler burst = new BurstHandler(device.localAddress().getPort(), 100);
            final int peer = device.peerId(closed);
            device.call(ep -> {
                ep.connectionManager(burst);
                return null;
            });
            final DriverCounters counters = device.counters();
            burst.fire(peer, 1);
            device.offer(() -> { }); // wakes the driver: the next cycle polls the handler
            final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
            while (counters.get(DriverCounter.ICMP_PORT_UNREACHABLE) == 0 && System.nanoTime() < deadline) {
                Thread.sleep(1);
            }
            assertThat(counters.sentFromEndpointPort()).as("sent from the endpoint socket").isOne();
            assertThat(counters.get(DriverCounter.ICMP_PORT_UNREACHABLE)).as("the ICMP error, read and counted").isOne();
            Thread.sleep(20); // the cycle that the wake-up started ends
            final long cycles = counters.get(DriverCounter.DUTY_CYCLES);
            Thread.sleep(TimeUnit.NANOSECONDS.toMillis(WINDOW_NS));
            final long idleCycles = counters.get(DriverCounter.DUTY_CYCLES) - cycles;
            System.out.printf("DEDICATED, blocked: %d duty cycles in the 200 ms after the ICMP error; counters %s%n",
                idleCycles, counters);
            assertThat(idleCycles).as("duty cycles over 200 ms after the error was read").isLessThanOrEqualTo(MAX_DUTY_CYCLES);
            assertThat(counters.get(DriverCounter.RECEIVE_ERRORS)).as("the read found no error left").isZero();
            assertThat(counters.get(DriverCounter.SEND_ERRORS)).isZero();
        }
    }

    /** An INVOKER owner waiting in {@code awaitWork}, i.e. in its endpoint socket's own {@code epoll_wait}. */
    @Test
    void anInvokerOwnerInAwaitWorkDoesNotSpinAfterAnIcmpError() throws Exception {
        final InetSocketAddress closed = closedPort();
        try (MetaRoceDevice device = new MetaRoceDevice(DevicePair.config(Transport.NATIVE, ThreadingMode.INVOKER, 1, 16))) {
            final BurstHandler burst = new BurstHandler(device.localAddress().getPort(), 100);
            device.endpoint().connectionManager(burst);
            final DriverCounters counters = device.counters();
            burst.fire(device.peerId(closed), 1);
            final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
            while (counters.get(DriverCounter.ICMP_PORT_UNREACHABLE) == 0 && System.nanoTime() < deadline) {
                if (device.doWork() == 0) {
                    device.awaitWork(TimeUnit.MILLISECONDS.toNanos(100));
                }
            }
            assertThat(counters.get(DriverCounter.ICMP_PORT_UNREACHABLE)).as("the ICMP error, read and counted").isOne();
            final int wakeUps = wakeUpsOver(WINDOW_NS, ns -> {
                device.doWork();
                device.awaitWork(ns);
            });
            System.out.printf("INVOKER in awaitWork: %d wake-ups in the 200 ms after the ICMP error; counters %s%n",
                wakeUps, counters);
            assertThat(wakeUps).as("returns of awaitWork over 200 ms after the error was read").isLessThanOrEqualTo(MAX_WAKE_UPS);
            assertThat(counters.get(DriverCounter.RECEIVE_ERRORS)).isZero();
        }
    }

    /** Reading ICMP errors off the queue allocates nothing once compiled. */
    @Test
    void drainingAllocatesNothingInSteadyState() throws Exception {
        final com.sun.management.ThreadMXBean mx = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        final DriverCounters counters = new DriverCounters(0);
        final InetSocketAddress closed = closedPort();
        try (LinuxUdpSocket socket = LinuxUdpSocket.open(false); Arena arena = Arena.ofConfined();
             org.metaroce.netty.linux.SendBatch batch = new org.metaroce.netty.linux.SendBatch(32);
             NativeErrorQueue queue = new NativeErrorQueue(socket, counters)) {
            socket.setReceiveErrors(true);
            socket.setReceiveBufferSize(1 << 20);
            socket.bind(new InetSocketAddress(LO, 0));
            final long payload = arena.allocate(16).address();
            for (int i = 0; i < 32; i++) {
                batch.destination(batch.add(payload, 16), socket, closed);
            }
            // Warm-up: until 20 rounds in a row allocate nothing (the JIT has compiled the path).
            int round = 0;
            for (int quiet = 0; round < 5_000 && quiet < 20; round++) {
                quiet = drainRound(mx, socket, batch, queue) == 0 ? quiet + 1 : 0;
            }
            final long warmUp = round;
            // Windows of 100 rounds (3,200 errors) until one allocates nothing, 5 at most: an
            // allocation per error shows in every window, while a one-off (a late deoptimisation
            // when other tests of the JVM load classes, seen as 64 B once) leaves the next one clean.
            final java.util.List<Long> windows = new java.util.ArrayList<>();
            long allocated = -1;
            while (allocated != 0 && windows.size() < 5) {
                allocated = 0;
                for (int i = 0; i < 100; i++) {
                    allocated += drainRound(mx, socket, batch, queue);
                }
                windows.add(allocated);
            }
            final long entries = counters.get(DriverCounter.ICMP_PORT_UNREACHABLE);
            System.out.printf("%d ICMP errors drained (%d warm-up rounds of 32), windows of 3,200: %s B allocated%n",
                entries, warmUp, windows);
            assertThat(entries).as("every error counted").isEqualTo((warmUp + 100L * windows.size()) * 32);
            assertThat(allocated).as("bytes allocated reading 3,200 errors (last window of %s)", windows).isZero();
        }
    }

    private static long drainRound(final com.sun.management.ThreadMXBean mx, final LinuxUdpSocket socket,
                                   final org.metaroce.netty.linux.SendBatch batch, final NativeErrorQueue queue)
        throws InterruptedException {
        int sent = 0;
        while (sent < batch.count()) {
            final int r = socket.send(batch, sent);
            if (r < 0) {
                queue.drain(); // an ICMP error reported by the send: read it, then go on
            } else {
                sent += r;
            }
        }
        // On loopback the ICMP errors come back within the send; wait for stragglers.
        int read = 0;
        long allocated = 0;
        for (int tries = 0; tries < 1000 && read < batch.count(); tries++) {
            final long before = mx.getCurrentThreadAllocatedBytes();
            read += queue.drain();
            allocated += mx.getCurrentThreadAllocatedBytes() - before;
            if (read < batch.count()) {
                Thread.onSpinWait();
            }
        }
        return allocated;
    }

    @FunctionalInterface
    private interface Wait {
        void await(long timeoutNs) throws Exception;
    }

    /** @return how often {@code wait} returned within {@code windowNs}, each call given what is left */
    private static int wakeUpsOver(final long windowNs, final Wait wait) throws Exception {
        final long end = System.nanoTime() + windowNs;
        int wakeUps = 0;
        for (long left = windowNs; left > 0; left = end - System.nanoTime()) {
            wait.await(left);
            wakeUps++;
        }
        return wakeUps;
    }

    /** @return a loopback port nothing listens on (bound, then closed) */
    private static InetSocketAddress closedPort() throws Exception {
        return closedPort(LO);
    }

    private static InetSocketAddress closedPort(final InetAddress lo) throws Exception {
        try (DatagramChannel probe = DatagramChannel.open(lo instanceof java.net.Inet6Address
            ? java.net.StandardProtocolFamily.INET6 : java.net.StandardProtocolFamily.INET)) {
            probe.setOption(StandardSocketOptions.SO_REUSEADDR, false);
            probe.bind(new InetSocketAddress(lo, 0));
            return new InetSocketAddress(lo, ((InetSocketAddress) probe.getLocalAddress()).getPort());
        }
    }

    private static final class Discard implements DatagramReceiver {
        @Override
        public boolean onDatagram(final DirectBuffer data, final int offset, final int length, final SourceAddress source,
                                  final int ecn, final int segmentBytes) {
            return true;
        }

        @Override
        public void onBatchEnd() {
        }
    }
}
