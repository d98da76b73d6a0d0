// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.channels.DatagramChannel;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.metaroce.netty.linux.NativeUdp;

/**
 * A native device whose owning thread blocks in {@code epoll_wait} (a DEDICATED driver with
 * {@link EventLoopIdleStrategy}, an INVOKER owner in {@code awaitWork}) wakes when a send socket
 * whose buffer filled ({@code EAGAIN}) can take datagrams again, and sends the rest of its batch
 * then: not at the end of an idle wait of 20 s, and without spinning meanwhile. The socket fills
 * for real: in a network namespace of the test's own, {@code lo} drains through a token bucket
 * of 2 Mbit/s, so datagrams wait in the qdisc charged to the sender's 4 KiB send buffer. Root only.
 */
class NativeWritabilityTest {
    private static final int DATAGRAMS = 48;
    private static final int BYTES = 1000;
    private static final long IDLE_WAIT_NS = TimeUnit.SECONDS.toNanos(20);
    /** The burst takes about 0.2 s on the wire; an idle wait would make it 20 s per EAGAIN. */
    private static final long ENOUGH_NS = TimeUnit.SECONDS.toNanos(5);
    /**
     * Duty cycles a driver needs for the burst: one per wake-up, a few dozen. A driver that spins
     * while the socket drains runs hundreds of thousands.
     */
    private static final long MAX_CYCLES = 2_000;

    @Test
    void aDedicatedDriverBlockedInEpollWaitSendsTheRestWhenTheSocketDrains() throws Exception {
        inNamespaceWithSlowLoopback(ThreadingMode.DEDICATED);
    }

    @Test
    void anInvokerOwnerBlockedInAwaitWorkSendsTheRestWhenTheSocketDrains() throws Exception {
        inNamespaceWithSlowLoopback(ThreadingMode.INVOKER);
    }

    private static void inNamespaceWithSlowLoopback(final ThreadingMode mode) throws Exception {
        assumeTrue(NativeUdp.isAvailable(), () -> "native transport unavailable: " + NativeUdp.unavailabilityReason());
        final String reason = NetworkNamespace.unavailableReason();
        assumeTrue(reason == null, () -> "skipped: " + reason);
        final String tc = NetworkNamespace.tcUnavailableReason();
        assumeTrue(tc == null, () -> "skipped: " + tc);
        try (NetworkNamespace ns = new NetworkNamespace("natW")) {
            ns.tc("qdisc", "add", "dev", "lo", "root", "tbf", "rate", "2mbit", "burst", "4kb", "limit", "1mb");
            ns.runInside("writability-" + mode, 60, () -> burst(mode));
        }
    }

    private static void burst(final ThreadingMode mode) throws Exception {
        final InetAddress lo = InetAddress.getLoopbackAddress();
        DeviceConfig config = DevicePair.config(Transport.NATIVE, mode, 1, 7).sendBufferBytes(4096).gso(false);
        if (mode == ThreadingMode.DEDICATED) {
            config = config.idleStrategy(new EventLoopIdleStrategy(IDLE_WAIT_NS));
        }
        try (DatagramChannel receiver = DatagramChannel.open().bind(new InetSocketAddress(lo, 0));
             MetaRoceDevice device = new MetaRoceDevice(config)) {
            receiver.setOption(StandardSocketOptions.SO_RCVBUF, 1 << 20);
            final BurstHandler burst = new BurstHandler(device.entropyPorts()[0], BYTES);
            final int peer = device.peerId((InetSocketAddress) receiver.getLocalAddress());
            if (mode == ThreadingMode.INVOKER) {
                device.endpoint().connectionManager(burst);
            } else {
                device.call(ep -> {
                    ep.connectionManager(burst);
                    return null;
                });
            }
            final DriverCounters counters = device.counters();
            final long cyclesBefore = counters.get(DriverCounter.DUTY_CYCLES);
            final long start = System.nanoTime();
            burst.fire(peer, DATAGRAMS);
            if (mode == ThreadingMode.INVOKER) {
                while (true) {
                    final int work = device.doWork();
                    if (counters.get(DriverCounter.DATAGRAMS_SENT) == DATAGRAMS || System.nanoTime() - start > 2 * ENOUGH_NS) {
                        break; // checked before waiting: with everything sent, the wait would be for nothing
                    }
                    if (work == 0) {
                        device.awaitWork(IDLE_WAIT_NS);
                    }
                }
            } else {
                device.offer(() -> { }); // wakes the driver thread: the next cycle polls the handler
                while (counters.get(DriverCounter.DATAGRAMS_SENT) < DATAGRAMS && System.nanoTime() - start < 2 * ENOUGH_NS) {
                    Thread.sleep(1);
                }
            }
            final long elapsed = System.nanoTime() - start;
            final long cycles = counters.get(DriverCounter.DUTY_CYCLES) - cyclesBefore;
            System.out.printf("%s: %d datagrams sent in %.1f ms, %d duty cycles, %d hand-overs stopped by EAGAIN, "
                + "%d claims refused%n", mode, counters.get(DriverCounter.DATAGRAMS_SENT), elapsed / 1e6, cycles,
                counters.get(DriverCounter.SEND_WOULD_BLOCK), burst.refused());
            assertThat(counters.get(DriverCounter.SEND_WOULD_BLOCK)).as("the send buffer filled (EAGAIN)").isPositive();
            assertThat(counters.get(DriverCounter.DATAGRAMS_SENT)).as("datagrams the kernel took").isEqualTo(DATAGRAMS);
            assertThat(elapsed).as("time to send the burst, ns (idle wait %d ns)", IDLE_WAIT_NS).isLessThan(ENOUGH_NS);
            assertThat(cycles).as("duty cycles while the socket drained").isLessThan(MAX_CYCLES);
            assertThat(counters.get(DriverCounter.SEND_ERRORS)).isZero();
        }
    }
}
