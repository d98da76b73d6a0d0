// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.concurrent.RejectedExecutionException;

import org.junit.jupiter.api.Test;
import org.metaroce.core.verbs.PostStatus;
import org.metaroce.core.verbs.RecvRequest;
import org.metaroce.core.verbs.SendFlags;
import org.metaroce.core.verbs.SendRequest;
import org.metaroce.core.verbs.WcStatus;
import org.metaroce.core.verbs.WrOpcode;

/** Several devices on one {@link SharedDriver} thread. */
class SharedDriverTest {
    private static DeviceConfig shared(final SharedDriver driver, final long seed) {
        return DevicePair.config(Transport.AUTO, ThreadingMode.SHARED, 2, seed).sharedDriver(driver);
    }

    @Test
    void devicesAttachRunOnTheDriverThreadAndDetachOnClose() {
        try (SharedDriver driver = new SharedDriver()) {
            final MetaRoceDevice one = new MetaRoceDevice(shared(driver, 1));
            final MetaRoceDevice two = new MetaRoceDevice(shared(driver, 2));
            assertThat(driver.deviceCount()).isEqualTo(2);
            assertThat(one.transport()).isEqualTo(driver.transport());
            final Thread ownerOfOne = one.call(ep -> Thread.currentThread());
            final Thread ownerOfTwo = two.call(ep -> Thread.currentThread());
            assertThat(ownerOfOne).isSameAs(driver.thread());
            assertThat(ownerOfTwo).isSameAs(driver.thread());
            one.close();
            assertThat(one.isClosed()).isTrue();
            assertThat(driver.deviceCount()).isEqualTo(1);
            assertThat(driver.isRunning()).isTrue();
            assertThat((int) two.call(ep -> 7)).isEqualTo(7);
            two.close();
            assertThat(driver.deviceCount()).isZero();
        }
    }

    @Test
    void closingTheDriverClosesItsDevices() {
        final SharedDriver driver = new SharedDriver();
        final MetaRoceDevice device = new MetaRoceDevice(shared(driver, 3));
        driver.close();
        assertThat(driver.isRunning()).isFalse();
        assertThat(device.isClosed()).isTrue();
        assertThat(device.submit(ep -> 1)).isCompletedExceptionally();
        device.close();
        assertThatThrownBy(() -> new MetaRoceDevice(shared(driver, 4))).isInstanceOf(RejectedExecutionException.class);
        driver.close();
    }

    @Test
    void configurationMustNameAMatchingDriver() {
        assertThatThrownBy(() -> new MetaRoceDevice(DevicePair.config(Transport.AUTO, ThreadingMode.SHARED, 1, 1)))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("sharedDriver");
        try (SharedDriver driver = new SharedDriver(Transport.NIO, new EventLoopIdleStrategy())) {
            if (Transport.epollAvailable()) {
                assertThatThrownBy(() -> new MetaRoceDevice(shared(driver, 5).transport(Transport.EPOLL)))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("differs");
            }
            try (MetaRoceDevice nio = new MetaRoceDevice(shared(driver, 6).transport(Transport.NIO))) {
                assertThat(nio.transport()).isEqualTo(Transport.NIO);
            }
        }
    }

    @Test
    void eventLoopIdleStrategyServesTwoDevicesOnOneBlockingThread() throws Exception {
        try (SharedDriver driver = new SharedDriver(Transport.AUTO, new EventLoopIdleStrategy());
             MetaRoceDevice a = new MetaRoceDevice(shared(driver, 7));
             MetaRoceDevice b = new MetaRoceDevice(shared(driver, 8))) {
            // Reuse the pair's wiring by hand: one QP each, connected.
            final DevicePair.Node na = DevicePair.node(a);
            final DevicePair.Node nb = DevicePair.node(b);
            DevicePair.connect(na, nb, 2048);
            EndToEndTest.fill(na.mr.buffer(), 0, 50_000, 9);
            assertThat((int) b.call(ep -> nb.qp.postRecv(new RecvRequest(1).wrId(1)
                .addSge(nb.address(0), 50_000, nb.mr.lkey())))).isEqualTo(PostStatus.OK);
            assertThat((int) a.call(ep -> na.qp.postSend(new SendRequest(1).wrId(2).opcode(WrOpcode.SEND)
                .sendFlags(SendFlags.SIGNALED).addSge(na.address(0), 50_000, na.mr.lkey())))).isEqualTo(PostStatus.OK);
            final long deadline = System.nanoTime() + DevicePair.TIMEOUT_NS;
            while ((na.sendCompletions.isEmpty() || nb.recvCompletions.isEmpty()) && System.nanoTime() < deadline) {
                na.drain();
                nb.drain();
                Thread.sleep(1);
            }
            assertThat(nb.recvCompletions).hasSize(1);
            assertThat(nb.recvCompletions.get(0).status()).isEqualTo(WcStatus.SUCCESS);
            EndToEndTest.assertSameBytes(na.mr.buffer(), 0, nb.mr.buffer(), 0, 50_000);

            Thread.sleep(50);
            final long before = a.counters().get(DriverCounter.DUTY_CYCLES);
            Thread.sleep(300);
            assertThat(a.counters().get(DriverCounter.DUTY_CYCLES) - before).as("cycles while idle").isLessThan(200);
        }
    }
}
