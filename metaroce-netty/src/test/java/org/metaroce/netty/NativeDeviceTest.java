// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import org.junit.jupiter.api.Test;
import org.metaroce.core.verbs.PostStatus;
import org.metaroce.core.verbs.SendFlags;
import org.metaroce.core.verbs.SendRequest;
import org.metaroce.core.verbs.WcStatus;
import org.metaroce.core.verbs.WrOpcode;
import org.metaroce.netty.linux.NativeUdp;

/**
 * The native transport in the device: selection and its errors, and the threading modes whose
 * idle strategy blocks (DEDICATED and SHARED with {@link EventLoopIdleStrategy}), which on this
 * transport wait in {@code epoll_wait} on the endpoint sockets rather than in Netty's event loop.
 * The spinning and backoff modes run in {@link EndToEndTest}, INVOKER's {@code awaitWork} in
 * {@link AwaitWorkTest} (AUTO is native where available).
 */
class NativeDeviceTest {
    /** Longest single wait of the blocking idle: far longer than the test allows, so only wake-ups end a wait. */
    private static final long LONG_WAIT_NS = TimeUnit.SECONDS.toNanos(30);
    private static final long WOKEN_WITHIN_NS = TimeUnit.SECONDS.toNanos(2);

    private static void assumeNative() {
        assumeTrue(NativeUdp.isAvailable(), () -> "native transport not available here: "
            + NativeUdp.unavailabilityReason().orElse(""));
    }

    @Test
    void explicitNativeWhereUnavailableNamesTheReasonAndTheWayOut() {
        assumeTrue(!NativeUdp.isAvailable(), "native transport available: nothing to refuse");
        assertThatThrownBy(() -> Transport.NATIVE.resolve()).isInstanceOf(IllegalStateException.class)
            .hasMessageContaining("the native transport is not available: " + NativeUdp.unavailabilityReason().get())
            .hasMessageContaining("epoll, nio or auto");
        assertThat(Transport.AUTO.resolve()).isIn(Transport.EPOLL, Transport.NIO);
    }

    @Test
    void nativePollsEverySocketInEveryModeAndRefusesBatched() {
        assumeNative();
        try (MetaRoceDevice gro = new MetaRoceDevice(DevicePair.config(Transport.NATIVE, ThreadingMode.INVOKER, 2, 1)
                 .gro(true));
             MetaRoceDevice blocking = new MetaRoceDevice(DevicePair.config(Transport.NATIVE, ThreadingMode.DEDICATED,
                 2, 2).idleStrategy(new EventLoopIdleStrategy(LONG_WAIT_NS)))) {
            assertThat(gro.receivePath()).isEqualTo(ReceivePath.POLLED);
            assertThat(gro.readsEcn()).isTrue();
            assertThat(blocking.receivePath()).isEqualTo(ReceivePath.POLLED);
        }
        assertThatThrownBy(() -> new MetaRoceDevice(DevicePair.config(Transport.NATIVE, ThreadingMode.INVOKER, 2, 3)
            .receivePath(ReceivePath.BATCHED)).close()).hasMessageContaining("BATCHED needs a Netty transport");
        // AUTO with BATCHED asked for: Netty, since only Netty has that path.
        try (MetaRoceDevice batched = new MetaRoceDevice(DevicePair.config(Transport.AUTO, ThreadingMode.INVOKER, 2, 4)
            .receivePath(ReceivePath.BATCHED))) {
            assertThat(batched.transport()).isIn(Transport.EPOLL, Transport.NIO);
            assertThat(batched.readsEcn()).isFalse();
        }
    }

    @Test
    void groIsOnByDefaultOnNativeAndOffWhenAskedSo() {
        assumeNative();
        final DeviceConfig defaults = DevicePair.config(Transport.NATIVE, ThreadingMode.INVOKER, 2, 5);
        assertThat(defaults.groFor(Transport.NATIVE)).isTrue();
        assertThat(defaults.groFor(Transport.EPOLL)).isFalse();
        assertThat(defaults.groFor(Transport.NIO)).isFalse();
        assertThat(new DeviceConfig().gro(false).groFor(Transport.NATIVE)).isFalse();
        assertThat(new DeviceConfig().gro(true).groFor(Transport.EPOLL)).isTrue();
        try (MetaRoceDevice on = new MetaRoceDevice(defaults);
             MetaRoceDevice off = new MetaRoceDevice(DevicePair.config(Transport.NATIVE, ThreadingMode.INVOKER, 2, 6)
                 .gro(false))) {
            assertThat(on.groActive()).isTrue();
            assertThat(off.groActive()).isFalse();
        }
    }

    @Test
    void dedicatedDevicesThatBlockWakeForDatagramsAndCommands() {
        assumeNative();
        final DeviceConfig ca = DevicePair.config(Transport.NATIVE, ThreadingMode.DEDICATED, 4, 11)
            .idleStrategy(new EventLoopIdleStrategy(LONG_WAIT_NS));
        final DeviceConfig cb = DevicePair.config(Transport.NATIVE, ThreadingMode.DEDICATED, 4, 12)
            .idleStrategy(new EventLoopIdleStrategy(LONG_WAIT_NS));
        try (MetaRoceDevice a = new MetaRoceDevice(ca); MetaRoceDevice b = new MetaRoceDevice(cb)) {
            writeAndCheck(DevicePair.node(a), DevicePair.node(b));
        }
    }

    @Test
    void sharedDriverThatBlocksWakesForEveryDevice() {
        assumeNative();
        try (SharedDriver driver = new SharedDriver(Transport.NATIVE, new EventLoopIdleStrategy(LONG_WAIT_NS));
             MetaRoceDevice a = new MetaRoceDevice(DevicePair.config(Transport.NATIVE, ThreadingMode.SHARED, 4, 21)
                 .sharedDriver(driver));
             MetaRoceDevice b = new MetaRoceDevice(DevicePair.config(Transport.AUTO, ThreadingMode.SHARED, 4, 22)
                 .sharedDriver(driver))) {
            assertThat(b.transport()).isEqualTo(Transport.NATIVE);
            writeAndCheck(DevicePair.node(a), DevicePair.node(b));
        }
    }

    /**
     * A 1 MiB RDMA WRITE from x to y while both driver threads idle by blocking between bursts:
     * each command (setup, post) and each datagram has to wake a thread from epoll_wait.
     */
    private static void writeAndCheck(final DevicePair.Node x, final DevicePair.Node y) {
        DevicePair.connect(x, y, 4096);
        final int length = 1 << 20;
        EndToEndTest.fill(x.mr.buffer(), 0, length, 7);
        // Let both threads go to sleep in epoll_wait before the post wakes them.
        LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(50));
        final long start = System.nanoTime();
        final int status = x.device.call(ep -> x.qp.postSend(new SendRequest(1).wrId(5).opcode(WrOpcode.RDMA_WRITE)
            .sendFlags(SendFlags.SIGNALED).addSge(x.address(0), length, x.mr.lkey()).remoteAddr(y.address(64))
            .rkey(y.mr.rkey())));
        assertThat(status).isEqualTo(PostStatus.OK);
        assertThat(System.nanoTime() - start).as("a command wakes the blocked driver at once")
            .isLessThan(WOKEN_WITHIN_NS);
        // Each datagram has to wake the other side (no wait ends by itself within the test).
        final long deadline = System.nanoTime() + 5 * WOKEN_WITHIN_NS;
        while (x.sendCompletions.isEmpty() && System.nanoTime() - deadline < 0) {
            LockSupport.parkNanos(100_000);
            x.drain();
        }
        assertThat(x.sendCompletions).as(() -> "completion; A " + x.device.counters() + " B " + y.device.counters())
            .hasSize(1);
        assertThat(x.sendCompletions.get(0).status()).isEqualTo(WcStatus.SUCCESS);
        y.device.call(ep -> {
            EndToEndTest.assertSameBytes(x.mr.buffer(), 0, y.mr.buffer(), 64, length);
            return null;
        });
        assertThat(y.device.counters().get(DriverCounter.RECEIVE_ERRORS)).isZero();
    }
}
