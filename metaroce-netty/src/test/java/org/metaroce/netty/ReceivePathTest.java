// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

/** Which receive path a device takes, and what the POLLED path does with what arrives. */
class ReceivePathTest {
    /** The receive path is a choice of the Netty transports (the native one always polls): the best of them. */
    static final Transport NETTY = Transport.epollAvailable() ? Transport.EPOLL : Transport.NIO;

    private static DeviceConfig config(final ThreadingMode mode) {
        return DevicePair.config(NETTY, mode, 2, 1);
    }

    @Test
    void autoPollsUnlessTheDriverBlocksInTheEventLoopOrGroIsOn() {
        try (MetaRoceDevice invoker = new MetaRoceDevice(config(ThreadingMode.INVOKER));
             MetaRoceDevice backoff = new MetaRoceDevice(config(ThreadingMode.DEDICATED));
             MetaRoceDevice blocking = new MetaRoceDevice(config(ThreadingMode.DEDICATED)
                 .idleStrategy(new EventLoopIdleStrategy()))) {
            assertThat(invoker.receivePath()).isEqualTo(ReceivePath.POLLED);
            assertThat(invoker.groActive()).as("GRO stays off on Netty unless asked for").isFalse();
            assertThat(backoff.receivePath()).isEqualTo(ReceivePath.POLLED);
            assertThat(blocking.receivePath()).isEqualTo(ReceivePath.BATCHED);
        }
        try (MetaRoceDevice gro = new MetaRoceDevice(config(ThreadingMode.INVOKER).gro(true))) {
            assertThat(gro.receivePath()).isEqualTo(ReceivePath.BATCHED);
            assertThat(gro.groActive()).isEqualTo(NETTY == Transport.EPOLL);
        }
        try (SharedDriver blockingDriver = new SharedDriver(NETTY, new EventLoopIdleStrategy());
             MetaRoceDevice shared = new MetaRoceDevice(config(ThreadingMode.SHARED).sharedDriver(blockingDriver))) {
            assertThat(shared.receivePath()).isEqualTo(ReceivePath.BATCHED);
        }
    }

    @Test
    void polledWithGroOrABlockingDriverIsRefusedWithTheReason() {
        assertThatThrownBy(() -> new MetaRoceDevice(config(ThreadingMode.INVOKER).gro(true)
            .receivePath(ReceivePath.POLLED)).close())
            .hasMessageContaining("receivePath POLLED cannot use UDP GRO");
        assertThatThrownBy(() -> new MetaRoceDevice(config(ThreadingMode.DEDICATED)
            .idleStrategy(new EventLoopIdleStrategy()).receivePath(ReceivePath.POLLED)).close())
            .hasMessageContaining("receivePath POLLED cannot wake a driver that blocks in the event loop");
        assertThatThrownBy(() -> new DeviceConfig().receivePath(null))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("receivePath");
    }

    @Test
    void polledDeviceCountsEveryDatagramOnceAndDropsGarbageAsMalformed() throws Exception {
        try (MetaRoceDevice device = new MetaRoceDevice(config(ThreadingMode.INVOKER)
                 .receivePath(ReceivePath.POLLED));
             DatagramSocket sender = new DatagramSocket(0, InetAddress.getLoopbackAddress())) {
            // Sizes from empty to the largest datagram the device reads whole.
            final int[] sizes = {0, 1, 63, 1500, 4096, device.config().maxDatagramBytes()};
            for (final int size : sizes) {
                final byte[] junk = new byte[size];
                java.util.Arrays.fill(junk, (byte) 0xF5);
                sender.send(new DatagramPacket(junk, size, device.localAddress()));
            }
            final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (device.counters().get(DriverCounter.DATAGRAMS_RECEIVED) < sizes.length
                && System.nanoTime() - deadline < 0) {
                device.doWork();
            }
            for (int i = 0; i < 100; i++) {
                device.doWork(); // nothing more may arrive
            }
            long bytes = 0;
            for (final int size : sizes) {
                bytes += size;
            }
            assertThat(device.counters().get(DriverCounter.DATAGRAMS_RECEIVED)).isEqualTo(sizes.length);
            assertThat(device.counters().get(DriverCounter.BYTES_RECEIVED)).isEqualTo(bytes);
            assertThat(device.counters().get(DriverCounter.ENGINE_ERRORS)).isZero();
            assertThat(device.counters().get(DriverCounter.RECEIVE_ERRORS)).isZero();
            assertThat(device.endpoint().counters().get(org.metaroce.core.engine.EndpointCounter.MALFORMED))
                .isEqualTo(sizes.length);
        }
    }

    /**
     * The application's step runs after the first datagram that completes something, before the
     * datagrams behind it are read; what the stop left unread is read at the end of the same cycle,
     * after the protocol poll, so the next step finds its completion already there.
     */
    @Test
    void doWorkWithAnApplicationStepStopsReadingAtTheFirstCompletion() throws Exception {
        try (DevicePair pair = new DevicePair(NETTY, ThreadingMode.INVOKER, 2,
            c -> c.receivePath(ReceivePath.POLLED), c -> c.receivePath(ReceivePath.POLLED)).connect(1024)) {
            final DevicePair.Node b = pair.b;
            queueSingleSends(pair, 2);
            final long before = b.device.counters().get(DriverCounter.DATAGRAMS_RECEIVED);
            final int[] seen = new int[2];
            final long[] readBeforeStep = new long[2];
            final org.metaroce.core.verbs.WorkCompletion[] wcs = {new org.metaroce.core.verbs.WorkCompletion(),
                new org.metaroce.core.verbs.WorkCompletion()};
            int steps = 0;
            while (seen[0] + seen[1] < 2 && steps++ < 1000) {
                b.device.doWork(() -> {
                    final int n = b.recvCq.poll(wcs, 2);
                    if (n > 0) {
                        final int i = seen[0] == 0 ? 0 : 1;
                        seen[i] += n;
                        readBeforeStep[i] = b.device.counters().get(DriverCounter.DATAGRAMS_RECEIVED) - before;
                    }
                    return n;
                });
            }
            assertThat(seen).as("completions seen by each step").containsExactly(1, 1);
            assertThat(readBeforeStep).as("datagrams read before each step").containsExactly(1L, 2L);
            assertThat(b.device.counters().get(DriverCounter.DATAGRAMS_RECEIVED) - before).isEqualTo(2);
        }
    }

    /**
     * Forty completing datagrams wait in the socket: one cycle hands over at the first and still
     * reads the other 39. Reading only up to each completion let a bandwidth stream read a few ACKs
     * per cycle while emitting many packets, until its socket held seconds of ACKs, overflowed,
     * and the requester retransmitted what the responder had long acknowledged (issue 14).
     */
    @Test
    void oneCycleReadsTheBacklogTheEarlyStopLeft() throws Exception {
        final int sends = 40;
        try (DevicePair pair = new DevicePair(NETTY, ThreadingMode.INVOKER, 2,
            c -> c.receivePath(ReceivePath.POLLED), c -> c.receivePath(ReceivePath.POLLED)).connect(1024)) {
            final DevicePair.Node b = pair.b;
            queueSingleSends(pair, sends);
            final long before = b.device.counters().get(DriverCounter.DATAGRAMS_RECEIVED);
            final int[] steps = new int[1];
            b.device.doWork(() -> {
                steps[0]++;
                return 0;
            });
            assertThat(steps[0]).isOne();
            assertThat(b.device.counters().get(DriverCounter.DATAGRAMS_RECEIVED) - before)
                .as("datagrams read by one cycle").isEqualTo(sends);
        }
    }

    /** Posts receives at B and {@code n} single-packet SENDs at A, and lets them reach B's socket unread. */
    private static void queueSingleSends(final DevicePair pair, final int n) throws InterruptedException {
        final DevicePair.Node a = pair.a;
        final DevicePair.Node b = pair.b;
        for (int i = 0; i < n; i++) {
            assertThat(b.qp.postRecv(new org.metaroce.core.verbs.RecvRequest(1).wrId(10 + i)
                .addSge(b.address(4096L * i), 4096, b.mr.lkey()))).isEqualTo(org.metaroce.core.verbs.PostStatus.OK);
        }
        for (int i = 0; i < n; i++) {
            assertThat(a.qp.postSend(new org.metaroce.core.verbs.SendRequest(1).wrId(i)
                .opcode(org.metaroce.core.verbs.WrOpcode.SEND).sendFlags(org.metaroce.core.verbs.SendFlags.SIGNALED)
                .addSge(a.address(0), 100, a.mr.lkey()))).isEqualTo(org.metaroce.core.verbs.PostStatus.OK);
        }
        a.device.doWork();
        Thread.sleep(100);
    }
}
