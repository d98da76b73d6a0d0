// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

import io.netty.util.concurrent.FastThreadLocalThread;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.api.Test;
import org.metaroce.core.verbs.PostStatus;
import org.metaroce.core.verbs.RecvRequest;
import org.metaroce.core.verbs.SendFlags;
import org.metaroce.core.verbs.SendRequest;
import org.metaroce.core.verbs.WcStatus;
import org.metaroce.core.verbs.WrOpcode;

/**
 * {@link MetaRoceDevice#awaitWork}: an INVOKER owner blocks without spinning and wakes for a
 * datagram, a command from another thread and the endpoint's next deadline, on both receive paths
 * and both transports. Bounds on elapsed time are anti-hang guards far from the expected values (a
 * wake-up that does not happen shows as the full 10 s wait).
 */
class AwaitWorkTest {
    private static final long LONG_WAIT_NS = TimeUnit.SECONDS.toNanos(10);
    private static final long WOKEN_WITHIN_NS = TimeUnit.SECONDS.toNanos(5);
    private static final int RECEIVES_AHEAD = 8;

    static java.util.stream.Stream<Arguments> paths() {
        return java.util.stream.Stream.of(
            Arguments.of(Transport.AUTO, ReceivePath.POLLED),
            Arguments.of(Transport.AUTO, ReceivePath.BATCHED),
            Arguments.of(Transport.NIO, ReceivePath.POLLED),
            Arguments.of(Transport.NIO, ReceivePath.BATCHED));
    }

    private static DeviceConfig config(final Transport transport, final ReceivePath path) {
        return DevicePair.config(transport, ThreadingMode.INVOKER, 2, 1).receivePath(path);
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("paths")
    void aDatagramEndsTheWait(final Transport transport, final ReceivePath path) throws Exception {
        try (MetaRoceDevice device = new MetaRoceDevice(config(transport, path));
             DatagramSocket sender = new DatagramSocket(0, InetAddress.getLoopbackAddress())) {
            device.doWork();
            final CompletableFuture<Void> sent = CompletableFuture.runAsync(() -> {
                sleep(100);
                try {
                    sender.send(new DatagramPacket(new byte[] {1, 2, 3}, 3, device.localAddress()));
                } catch (final java.io.IOException ex) {
                    throw new java.io.UncheckedIOException(ex);
                }
            });
            final long start = System.nanoTime();
            assertThat(device.awaitWork(LONG_WAIT_NS)).isTrue();
            assertThat(System.nanoTime() - start).as("woken by the datagram").isLessThan(WOKEN_WITHIN_NS);
            sent.get(5, TimeUnit.SECONDS);
            // Read by the wait itself (BATCHED) or by the next duty cycle (POLLED).
            device.doWork();
            assertThat(device.counters().get(DriverCounter.DATAGRAMS_RECEIVED)).isEqualTo(1);
        }
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("paths")
    void aCommandFromAnotherThreadEndsTheWait(final Transport transport, final ReceivePath path) throws Exception {
        try (MetaRoceDevice device = new MetaRoceDevice(config(transport, path))) {
            device.doWork();
            final AtomicBoolean ran = new AtomicBoolean();
            final CompletableFuture<Boolean> offered = CompletableFuture.supplyAsync(() -> {
                sleep(100);
                return device.offer(() -> ran.set(true));
            });
            final long start = System.nanoTime();
            device.awaitWork(LONG_WAIT_NS);
            assertThat(System.nanoTime() - start).as("woken by the command").isLessThan(WOKEN_WITHIN_NS);
            assertThat(offered.get(5, TimeUnit.SECONDS)).isTrue();
            device.doWork();
            assertThat(ran).isTrue();
            // A command already queued: no wait at all.
            assertThat(device.offer(() -> { })).isTrue();
            assertThat(device.awaitWork(LONG_WAIT_NS)).isFalse();
        }
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("paths")
    void theNextDeadlineEndsTheWait(final Transport transport, final ReceivePath path) {
        try (DevicePair pair = new DevicePair(transport, ThreadingMode.INVOKER, 2, c -> c.receivePath(path),
            c -> c.receivePath(path)).connect(1024)) {
            // B never runs: A's SEND stays unacknowledged and its retransmission timer is armed.
            assertThat(pair.a.qp.postSend(new SendRequest(1).wrId(1).opcode(WrOpcode.SEND)
                .sendFlags(SendFlags.SIGNALED).addSge(pair.a.address(0), 64, pair.a.mr.lkey())))
                .isEqualTo(PostStatus.OK);
            pair.a.device.doWork();
            final long deadline = pair.a.device.nextDeadlineNs();
            assertThat(deadline).as("retransmission timer armed").isNotEqualTo(Long.MAX_VALUE);
            final long start = System.nanoTime();
            pair.a.device.awaitWork(LONG_WAIT_NS);
            assertThat(System.nanoTime() - start).as("woken by the deadline").isLessThan(WOKEN_WITHIN_NS);
        }
    }

    /**
     * A wait shorter than a millisecond (the endpoint's next deadline that close, or a short
     * {@code maxWaitNs}) still ends when a datagram is there, where the native transport can wait
     * to the nanosecond ({@code epoll_pwait2}): before, it parked to the deadline, blind to the
     * socket. 500 waits of 900 µs with a datagram left unread take at least 450 ms parked, and a
     * few system calls each otherwise.
     */
    @Test
    void aDatagramEndsAWaitShorterThanAMillisecond() throws Exception {
        try (MetaRoceDevice device = new MetaRoceDevice(config(Transport.AUTO, ReceivePath.POLLED));
             DatagramSocket sender = new DatagramSocket(0, InetAddress.getLoopbackAddress())) {
            org.junit.jupiter.api.Assumptions.assumeTrue(device.transport() == Transport.NATIVE,
                "the native transport (JDK 22+ on Linux) is the one that waits to the nanosecond; this device runs "
                    + device.transport());
            org.junit.jupiter.api.Assumptions.assumeTrue(device.waitsToTheNanosecond(),
                "libc or the kernel lacks epoll_pwait2 (glibc 2.35, Linux 5.11): waits count milliseconds here");
            device.doWork();
            sender.send(new DatagramPacket(new byte[] {1, 2, 3}, 3, device.localAddress()));
            final int waits = 500;
            final long start = System.nanoTime();
            for (int i = 0; i < waits; i++) {
                assertThat(device.awaitWork(TimeUnit.MICROSECONDS.toNanos(900))).isTrue();
            }
            final long elapsed = System.nanoTime() - start;
            System.out.printf("%d sub-millisecond waits with a datagram waiting: %.1f ms%n", waits, elapsed / 1e6);
            assertThat(elapsed).as("500 waits of 900 us ended by the waiting datagram, not parked through")
                .isLessThan(TimeUnit.MILLISECONDS.toNanos(200));
            device.doWork();
            assertThat(device.counters().get(DriverCounter.DATAGRAMS_RECEIVED)).isEqualTo(1);
        }
    }

    @Test
    void aWaitCostsNoProcessorTime() {
        final ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        org.junit.jupiter.api.Assumptions.assumeTrue(threads.isCurrentThreadCpuTimeSupported(),
            "thread CPU time is not measurable on this JVM");
        for (final ReceivePath path : new ReceivePath[] {ReceivePath.POLLED, ReceivePath.BATCHED}) {
            try (MetaRoceDevice device = new MetaRoceDevice(config(Transport.AUTO, path))) {
                device.doWork();
                final long waitNs = TimeUnit.MILLISECONDS.toNanos(400);
                final long cpuBefore = threads.getCurrentThreadCpuTime();
                final long start = System.nanoTime();
                long waited = 0;
                while (waited < waitNs) {
                    device.awaitWork(waitNs - waited);
                    waited = System.nanoTime() - start;
                }
                final long cpu = threads.getCurrentThreadCpuTime() - cpuBefore;
                // Spinning would burn about the whole 400 ms.
                assertThat(cpu).as(path + ": CPU time of a 400 ms wait").isLessThan(TimeUnit.MILLISECONDS.toNanos(100));
            }
        }
    }

    @Test
    void misuseIsRefusedWithTheReason() throws Exception {
        try (MetaRoceDevice device = new MetaRoceDevice(config(Transport.AUTO, ReceivePath.POLLED))) {
            assertThatThrownBy(() -> device.awaitWork(0)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("maxWaitNs must be > 0");
            final AtomicReference<Throwable> fromOther = new AtomicReference<>();
            final Thread other = new Thread(() -> {
                try {
                    device.awaitWork(1_000_000);
                } catch (final Throwable t) {
                    fromOther.set(t);
                }
            });
            other.start();
            other.join(10_000);
            assertThat(fromOther.get()).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("awaitWork() must be called by the thread that built the device");
        }
        try (MetaRoceDevice dedicated = new MetaRoceDevice(DevicePair.config(Transport.AUTO,
            ThreadingMode.DEDICATED, 2, 1))) {
            assertThatThrownBy(() -> dedicated.awaitWork(1_000_000)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("awaitWork() is for INVOKER mode");
        }
    }

    /**
     * Two INVOKER devices, each on its own thread that waits in {@code awaitWork} whenever a cycle
     * did nothing: 500 SEND round trips complete, with every byte checked.
     */
    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("paths")
    void pingPongBetweenThreadsThatBlockWhenIdle(final Transport transport, final ReceivePath path) throws Exception {
        final int rounds = 500;
        final DeviceConfig[] configs = {config(transport, path), DevicePair.config(transport, ThreadingMode.INVOKER, 2, 2)
            .receivePath(path)};
        final CountDownLatch built = new CountDownLatch(2);
        final CountDownLatch connected = new CountDownLatch(1);
        final DevicePair.Node[] nodes = new DevicePair.Node[2];
        final AtomicReference<Throwable> failure = new AtomicReference<>();
        final int[] received = new int[2];
        final Thread[] threads = new Thread[2];
        for (int side = 0; side < 2; side++) {
            final int me = side;
            threads[side] = new FastThreadLocalThread(() -> {
                try (MetaRoceDevice device = new MetaRoceDevice(configs[me])) {
                    final DevicePair.Node node = DevicePair.node(device);
                    nodes[me] = node;
                    built.countDown();
                    while (!connected.await(1, TimeUnit.MILLISECONDS)) {
                        device.doWork(); // answers the other thread's setup calls
                    }
                    final org.metaroce.core.verbs.WorkCompletion[] wcs = {new org.metaroce.core.verbs.WorkCompletion()};
                    // Side 0 blocks as soon as a cycle finds nothing, side 1 yields first (the defaults).
                    final InvokerIdleStrategy idle = me == 0
                        ? new InvokerIdleStrategy(device, 0, 0, TimeUnit.MILLISECONDS.toNanos(5))
                        : new InvokerIdleStrategy(device);
                    int sent = 0;
                    int posted = RECEIVES_AHEAD; // posted by the main thread before the start
                    final long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
                    if (me == 0) {
                        sent += send(node, 0);
                    }
                    while (received[me] < rounds && System.nanoTime() - end < 0) {
                        while (posted < received[me] + RECEIVES_AHEAD) {
                            assertThat(node.qp.postRecv(new RecvRequest(1).wrId(posted)
                                .addSge(node.address(4096L * (posted % RECEIVES_AHEAD)), 64, node.mr.lkey())))
                                .isEqualTo(PostStatus.OK);
                            posted++;
                        }
                        int work = device.doWork();
                        while (node.sendCq.poll(wcs, 1) > 0) {
                            assertThat(wcs[0].status()).isEqualTo(WcStatus.SUCCESS);
                            work++;
                        }
                        while (node.recvCq.poll(wcs, 1) > 0) {
                            assertThat(wcs[0].status()).isEqualTo(WcStatus.SUCCESS);
                            final long at = 4096L * (wcs[0].wrId() % RECEIVES_AHEAD);
                            assertThat(node.memory.getInt((int) at)).as("round trip number").isEqualTo(received[me]);
                            received[me]++;
                            work++;
                            if (me == 1 || received[me] < rounds) {
                                sent += send(node, me == 1 ? received[me] - 1 : received[me]);
                            }
                        }
                        idle.idle(work);
                    }
                    // Let the last ACKs out before closing.
                    final long drain = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(200);
                    while (System.nanoTime() - drain < 0) {
                        if (device.doWork() == 0) {
                            device.awaitWork(TimeUnit.MILLISECONDS.toNanos(5));
                        }
                        while (node.sendCq.poll(wcs, 1) > 0) {
                            assertThat(wcs[0].status()).isEqualTo(WcStatus.SUCCESS);
                        }
                    }
                    assertThat(sent).isEqualTo(rounds);
                } catch (final Throwable t) {
                    failure.compareAndSet(null, t);
                    built.countDown();
                }
            }, "await-work-" + side);
            threads[side].start();
        }
        assertThat(built.await(30, TimeUnit.SECONDS)).isTrue();
        if (failure.get() == null) {
            DevicePair.connect(nodes[0], nodes[1], 1024);
            for (final DevicePair.Node node : nodes) {
                node.device.call(ep -> {
                    for (int i = 0; i < RECEIVES_AHEAD; i++) {
                        assertThat(node.qp.postRecv(new RecvRequest(1).wrId(i)
                            .addSge(node.address(4096L * i), 64, node.mr.lkey()))).isEqualTo(PostStatus.OK);
                    }
                    return null;
                });
            }
        }
        connected.countDown();
        for (final Thread t : threads) {
            t.join(TimeUnit.SECONDS.toMillis(90));
            assertThat(t.isAlive()).as(t.getName() + " finished").isFalse();
        }
        if (failure.get() != null) {
            throw new AssertionError("a side failed", failure.get());
        }
        assertThat(received).containsExactly(rounds, rounds);
    }

    @Test
    void invokerIdleStrategySpinsThenYieldsThenBlocksUntilADatagram() throws Exception {
        try (MetaRoceDevice device = new MetaRoceDevice(config(Transport.AUTO, ReceivePath.POLLED));
             DatagramSocket sender = new DatagramSocket(0, InetAddress.getLoopbackAddress())) {
            device.doWork();
            final InvokerIdleStrategy idle = new InvokerIdleStrategy(device, 3, 2, LONG_WAIT_NS);
            final long start = System.nanoTime();
            for (int i = 0; i < 5; i++) {
                idle.idle(0); // three spins, two yields: none of them waits for anything
            }
            assertThat(System.nanoTime() - start).as("spins and yields").isLessThan(WOKEN_WITHIN_NS);
            final AtomicBoolean datagramSent = new AtomicBoolean();
            final CompletableFuture<Void> sent = CompletableFuture.runAsync(() -> {
                sleep(100);
                datagramSent.set(true);
                try {
                    sender.send(new DatagramPacket(new byte[] {7}, 1, device.localAddress()));
                } catch (final java.io.IOException ex) {
                    throw new java.io.UncheckedIOException(ex);
                }
            });
            final long blockStart = System.nanoTime();
            idle.idle(0); // the sixth: blocks in awaitWork
            assertThat(datagramSent).as("returned only once the datagram was on its way").isTrue();
            assertThat(System.nanoTime() - blockStart).as("woken by the datagram").isLessThan(WOKEN_WITHIN_NS);
            sent.get(5, TimeUnit.SECONDS);
            idle.idle(1); // work done: spinning starts again
            assertThat(idle.alias()).isEqualTo("invoker-await");
        }
    }

    @Test
    void invokerIdleStrategyRefusesOtherDevicesAndBadBounds() {
        try (MetaRoceDevice dedicated = new MetaRoceDevice(DevicePair.config(Transport.AUTO,
            ThreadingMode.DEDICATED, 2, 1))) {
            assertThatThrownBy(() -> new InvokerIdleStrategy(dedicated)).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("InvokerIdleStrategy needs an INVOKER device, got DEDICATED");
        }
        try (MetaRoceDevice device = new MetaRoceDevice(config(Transport.AUTO, ReceivePath.POLLED))) {
            assertThatThrownBy(() -> new InvokerIdleStrategy(device, -1, 0, 1)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("maxSpins and maxYields must be >= 0");
            assertThatThrownBy(() -> new InvokerIdleStrategy(device, 0, 0, 0)).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("maxWaitNs must be > 0, got 0");
        }
    }

    /** Posts one signalled 64-byte SEND whose first int is {@code number}; returns 1. */
    private static int send(final DevicePair.Node node, final int number) {
        final long slot = 4096L * 100 + 4096L * (number % 8);
        node.memory.putInt((int) slot, number);
        assertThat(node.qp.postSend(new SendRequest(1).wrId(number).opcode(WrOpcode.SEND)
            .sendFlags(SendFlags.SIGNALED).addSge(node.address(slot), 64, node.mr.lkey())))
            .isEqualTo(PostStatus.OK);
        return 1;
    }

    private static void sleep(final long ms) {
        try {
            Thread.sleep(ms);
        } catch (final InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
    }
}
