// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.metaroce.core.verbs.PostStatus;
import org.metaroce.core.verbs.RecvRequest;
import org.metaroce.core.verbs.SendFlags;
import org.metaroce.core.verbs.SendRequest;
import org.metaroce.core.verbs.WcStatus;
import org.metaroce.core.verbs.WrOpcode;

/** Opening, threading rules, commands and closing of a device. */
class DeviceLifecycleTest {
    private static DeviceConfig config(final Transport transport, final ThreadingMode mode) {
        return DevicePair.config(transport, mode, 2, 1);
    }

    @ParameterizedTest
    @EnumSource(value = Transport.class, names = {"EPOLL", "NIO"})
    void invokerDeviceBindsTheEndpointPortAndEveryEntropyPort(final Transport transport) {
        EndToEndTest.assumeTransport(transport);
        try (MetaRoceDevice device = new MetaRoceDevice(config(transport, ThreadingMode.INVOKER))) {
            assertThat(device.localAddress().getAddress()).isEqualTo(InetAddress.getLoopbackAddress());
            assertThat(device.endpointPort()).isPositive();
            assertThat(device.entropyPorts()).hasSize(2).doesNotContain(0, device.endpointPort());
            assertThat(device.isOwningThread()).isTrue();
            assertThat(device.doWork()).isGreaterThanOrEqualTo(0);
            assertThat(device.nextDeadlineNs()).isEqualTo(Long.MAX_VALUE);
        }
    }

    @Test
    void autoPicksNativeThenEpollThenNio() {
        try (MetaRoceDevice device = new MetaRoceDevice(config(Transport.AUTO, ThreadingMode.INVOKER))) {
            assertThat(device.transport()).isEqualTo(org.metaroce.netty.linux.NativeUdp.isAvailable() ? Transport.NATIVE
                : Transport.epollAvailable() ? Transport.EPOLL : Transport.NIO);
        }
    }

    @Test
    void explicitEntropyPortsAreUsed() throws Exception {
        final int[] free = new int[2];
        for (int i = 0; i < 2; i++) {
            try (java.net.DatagramSocket s = new java.net.DatagramSocket(0, InetAddress.getLoopbackAddress())) {
                free[i] = s.getLocalPort();
            }
        }
        try (MetaRoceDevice device = new MetaRoceDevice(config(Transport.NIO, ThreadingMode.INVOKER)
            .entropyPorts(free))) {
            assertThat(device.entropyPorts()).containsExactly(free);
        }
    }

    @ParameterizedTest
    @EnumSource(value = Transport.class, names = {"EPOLL", "NIO"})
    void aPortInUseFailsTheConstructorCleanly(final Transport transport) {
        EndToEndTest.assumeTransport(transport);
        for (final ThreadingMode mode : ThreadingMode.values()) {
            try (SharedDriver driver = new SharedDriver(transport, new EventLoopIdleStrategy());
                 MetaRoceDevice first = new MetaRoceDevice(config(transport, ThreadingMode.INVOKER))) {
                final int taken = first.endpointPort();
                assertThatThrownBy(() -> new MetaRoceDevice(config(transport, mode).sharedDriver(driver)
                    .endpointPort(taken))).isInstanceOf(UncheckedIOException.class).hasMessageContaining("cannot bind");
                // Taken as an entropy port too.
                assertThatThrownBy(() -> new MetaRoceDevice(config(transport, mode).sharedDriver(driver)
                    .entropyPorts(0, taken))).isInstanceOf(UncheckedIOException.class)
                    .hasMessageContaining(String.valueOf(taken));
                assertThat(driver.deviceCount()).isZero();
                assertThat(driver.isRunning()).isTrue();
            }
        }
    }

    @Test
    void doWorkIsOnlyForTheOwningThreadOfAnInvokerDevice() throws Exception {
        try (MetaRoceDevice dedicated = new MetaRoceDevice(config(Transport.AUTO, ThreadingMode.DEDICATED))) {
            assertThatThrownBy(dedicated::doWork).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("INVOKER");
            assertThat(dedicated.isOwningThread()).isFalse();
        }
        try (MetaRoceDevice invoker = new MetaRoceDevice(config(Transport.AUTO, ThreadingMode.INVOKER))) {
            final AtomicReference<Throwable> failure = new AtomicReference<>();
            final Thread other = new Thread(() -> {
                try {
                    invoker.doWork();
                } catch (final Throwable t) {
                    failure.set(t);
                }
            });
            other.start();
            other.join();
            assertThat(failure.get()).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("thread that built the device");
        }
    }

    @Test
    void commandsFromManyThreadsRunOnTheDriverThreadInOrderPerThread() throws Exception {
        try (MetaRoceDevice device = new MetaRoceDevice(config(Transport.AUTO, ThreadingMode.DEDICATED)
            .commandQueueCapacity(4096))) {
            final Thread driver = device.call(ep -> Thread.currentThread());
            assertThat(driver.getName()).startsWith("metaroce-driver-");
            final int threads = 4;
            final int perThread = 500;
            final List<List<Integer>> seen = new ArrayList<>();
            final List<Thread> workers = new ArrayList<>();
            final List<CompletableFuture<Boolean>> last = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                final List<Integer> log = new ArrayList<>();
                seen.add(log);
                final CompletableFuture<Boolean> done = new CompletableFuture<>();
                last.add(done);
                workers.add(new Thread(() -> {
                    CompletableFuture<Boolean> f = null;
                    for (int i = 0; i < perThread; i++) {
                        final int n = i;
                        f = device.submit(ep -> {
                            log.add(n);
                            return Thread.currentThread() == driver;
                        });
                        while (f.isCompletedExceptionally()) {
                            // Queue full: retry.
                            Thread.onSpinWait();
                            f = device.submit(ep -> {
                                log.add(n);
                                return Thread.currentThread() == driver;
                            });
                        }
                    }
                    f.whenComplete((v, e) -> done.complete(v));
                }));
            }
            workers.forEach(Thread::start);
            for (final Thread w : workers) {
                w.join();
            }
            for (final CompletableFuture<Boolean> f : last) {
                assertThat(f.get(10, TimeUnit.SECONDS)).isTrue();
            }
            device.call(ep -> null);
            for (final List<Integer> log : seen) {
                assertThat(log).hasSize(perThread).isSorted();
            }
        }
    }

    @Test
    void closingFailsQueuedAndLaterCommandsAndIsIdempotent() {
        final MetaRoceDevice device = new MetaRoceDevice(config(Transport.AUTO, ThreadingMode.INVOKER));
        final CompletableFuture<Integer> queued = device.submit(ep -> 1);
        device.close();
        device.close();
        assertThat(device.isClosed()).isTrue();
        assertThatThrownBy(queued::get).isInstanceOf(ExecutionException.class)
            .hasCauseInstanceOf(RejectedExecutionException.class);
        assertThat(device.submit(ep -> 2)).isCompletedExceptionally();
        assertThat(device.offer(() -> { })).isFalse();
        assertThatThrownBy(() -> device.execute(() -> { })).isInstanceOf(RejectedExecutionException.class);
        assertThatThrownBy(device::doWork).isInstanceOf(IllegalStateException.class).hasMessageContaining("closed");
        assertThat(device.counters().get(DriverCounter.COMMANDS_REJECTED)).isGreaterThanOrEqualTo(2);
    }

    @Test
    void aDedicatedDeviceCanBeClosedFromItsOwnThread() throws Exception {
        final MetaRoceDevice device = new MetaRoceDevice(config(Transport.AUTO, ThreadingMode.DEDICATED));
        final Thread driver = device.call(ep -> Thread.currentThread());
        device.execute(device::close);
        driver.join(10_000);
        assertThat(driver.isAlive()).isFalse();
        assertThat(device.isClosed()).isTrue();
        device.close();
    }

    @Test
    void exceptionsOfCommandsReachTheCallerAndTheDriverSurvives() {
        try (MetaRoceDevice device = new MetaRoceDevice(config(Transport.AUTO, ThreadingMode.DEDICATED))) {
            assertThatThrownBy(() -> device.call(ep -> {
                throw new IllegalArgumentException("boom");
            })).isInstanceOf(IllegalArgumentException.class).hasMessage("boom");
            device.execute(() -> {
                throw new IllegalStateException("plain runnable fails");
            });
            assertThat((int) device.call(ep -> 42)).isEqualTo(42);
            assertThat(device.counters().get(DriverCounter.ENGINE_ERRORS)).isEqualTo(1);
        }
    }

    @ParameterizedTest
    @EnumSource(value = Transport.class, names = {"EPOLL", "NIO"})
    void eventLoopIdleStrategyBlocksWhenIdleAndWakesForTraffic(final Transport transport) throws Exception {
        EndToEndTest.assumeTransport(transport);
        try (DevicePair pair = new DevicePair(transport, ThreadingMode.DEDICATED, 2,
            c -> c.idleStrategy(new EventLoopIdleStrategy()), c -> c.idleStrategy(new EventLoopIdleStrategy()))) {
            pair.connect(1024);
            EndToEndTest.fill(pair.a.mr.buffer(), 0, 20_000, 3);
            assertThat((int) pair.b.device.call(ep -> pair.b.qp.postRecv(new RecvRequest(1).wrId(1)
                .addSge(pair.b.address(0), 20_000, pair.b.mr.lkey())))).isEqualTo(PostStatus.OK);
            assertThat((int) pair.a.device.call(ep -> pair.a.qp.postSend(new SendRequest(1).wrId(2).opcode(WrOpcode.SEND)
                .sendFlags(SendFlags.SIGNALED).addSge(pair.a.address(0), 20_000, pair.a.mr.lkey()))))
                .isEqualTo(PostStatus.OK);
            assertThat(pair.awaitCompletions(1, 1)).isTrue();
            assertThat(pair.b.recvCompletions.get(0).status()).isEqualTo(WcStatus.SUCCESS);
            EndToEndTest.assertSameBytes(pair.a.mr.buffer(), 0, pair.b.mr.buffer(), 0, 20_000);

            // Quiet: the driver threads sleep in the event loop instead of spinning.
            Thread.sleep(50);
            final long before = pair.a.device.counters().get(DriverCounter.DUTY_CYCLES);
            Thread.sleep(300);
            final long cycles = pair.a.device.counters().get(DriverCounter.DUTY_CYCLES) - before;
            assertThat(cycles).as("duty cycles in 300 ms of idleness").isLessThan(200);
        }
    }

    @Test
    void aPathWhoseEntropyIsNotALocalPortIsSentFromTheEndpointPort() {
        try (DevicePair pair = new DevicePair(Transport.AUTO, ThreadingMode.INVOKER, 2)) {
            final int[] mine = pair.a.device.entropyPorts();
            // Path 1 names a port this device has no socket for.
            pair.connect(1024, new int[] {mine[0], 1}, pair.b.device.entropyPorts());
            EndToEndTest.fill(pair.a.mr.buffer(), 0, 10_000, 4);
            assertThat((int) pair.a.device.call(ep -> pair.a.qp.postSend(new SendRequest(1).wrId(1)
                .opcode(WrOpcode.RDMA_WRITE).sendFlags(SendFlags.SIGNALED).addSge(pair.a.address(0), 10_000,
                    pair.a.mr.lkey()).remoteAddr(pair.b.address(0)).rkey(pair.b.mr.rkey())))).isEqualTo(PostStatus.OK);
            assertThat(pair.awaitCompletions(1, 0)).isTrue();
            assertThat(pair.a.sendCompletions.get(0).status()).isEqualTo(WcStatus.SUCCESS);
            EndToEndTest.assertSameBytes(pair.a.mr.buffer(), 0, pair.b.mr.buffer(), 0, 10_000);
            assertThat(pair.a.device.counters().get(DriverCounter.ENTROPY_FALLBACKS)).isPositive();
            assertThat(pair.a.device.counters().sentFromEndpointPort()).isPositive();
            assertThat(pair.a.device.counters().sentFromEntropyPort(0)).isPositive();
            assertThat(pair.a.device.counters().sentFromEntropyPort(1)).isZero();
        }
    }

    @Test
    void aPacketForAnUnknownPeerIsCountedAndDropped() {
        try (DevicePair pair = new DevicePair(Transport.AUTO, ThreadingMode.INVOKER, 1)) {
            pair.connect(1024);
            // The engine commits a packet for a peer id the table does not know (a stale transient id).
            final NettySink sink = pair.a.device.sinkForTest();
            sink.beginCycle();
            final int offset = sink.claim(64);
            sink.commit(offset, 64, 123_456, pair.a.device.entropyPorts()[0]);
            sink.flush();
            assertThat(pair.a.device.counters().get(DriverCounter.UNROUTABLE_PACKETS)).isEqualTo(1);
            assertThat(pair.a.device.counters().get(DriverCounter.DATAGRAMS_SENT)).isZero();
        }
    }

    @ParameterizedTest
    @EnumSource(value = Transport.class, names = {"EPOLL", "NIO"})
    void ipv6LoopbackCarriesAWrite(final Transport transport) throws Exception {
        EndToEndTest.assumeTransport(transport);
        final InetAddress v6 = InetAddress.getByName("::1");
        try (java.net.DatagramSocket probe = new java.net.DatagramSocket(0, v6)) {
            probe.getLocalPort();
        } catch (final java.net.SocketException ex) {
            org.junit.jupiter.api.Assumptions.abort("no IPv6 loopback here: " + ex);
        }
        try (DevicePair pair = new DevicePair(transport, ThreadingMode.INVOKER, 2, c -> c.bindAddress(v6),
            c -> c.bindAddress(v6))) {
            pair.connect(1024);
            assertThat(pair.a.device.localAddress().getAddress()).isEqualTo(v6);
            EndToEndTest.fill(pair.a.mr.buffer(), 0, 30_000, 8);
            assertThat((int) pair.a.device.call(ep -> pair.a.qp.postSend(new SendRequest(1).wrId(1)
                .opcode(WrOpcode.RDMA_WRITE).sendFlags(SendFlags.SIGNALED).addSge(pair.a.address(0), 30_000,
                    pair.a.mr.lkey()).remoteAddr(pair.b.address(64)).rkey(pair.b.mr.rkey())))).isEqualTo(PostStatus.OK);
            assertThat(pair.awaitCompletions(1, 0)).as(pair::describe).isTrue();
            assertThat(pair.a.sendCompletions.get(0).status()).isEqualTo(WcStatus.SUCCESS);
            EndToEndTest.assertSameBytes(pair.a.mr.buffer(), 0, pair.b.mr.buffer(), 64, 30_000);
            assertThat(pair.b.device.endpoint().counters().get(org.metaroce.core.engine.EndpointCounter.PEER_MISMATCH))
                .isZero();
        }
    }
}
