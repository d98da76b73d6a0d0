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
    private static DeviceConfig config(final ThreadingMode mode) {
        return DevicePair.config(Transport.AUTO, mode, 2, 1);
    }

    @Test
    void autoPollsUnlessTheDriverBlocksInTheEventLoopOrGroIsOn() {
        try (MetaRoceDevice invoker = new MetaRoceDevice(config(ThreadingMode.INVOKER));
             MetaRoceDevice backoff = new MetaRoceDevice(config(ThreadingMode.DEDICATED));
             MetaRoceDevice blocking = new MetaRoceDevice(config(ThreadingMode.DEDICATED)
                 .idleStrategy(new EventLoopIdleStrategy()))) {
            assertThat(invoker.receivePath()).isEqualTo(ReceivePath.POLLED);
            assertThat(backoff.receivePath()).isEqualTo(ReceivePath.POLLED);
            assertThat(blocking.receivePath()).isEqualTo(ReceivePath.BATCHED);
        }
        try (MetaRoceDevice gro = new MetaRoceDevice(config(ThreadingMode.INVOKER).gro(true))) {
            assertThat(gro.receivePath()).isEqualTo(ReceivePath.BATCHED);
        }
        try (SharedDriver blockingDriver = new SharedDriver(Transport.AUTO, new EventLoopIdleStrategy());
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
}
