// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

import org.agrona.concurrent.BackoffIdleStrategy;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The runners on their own, over a recording {@link DrivenDevice}: the order of an INVOKER cycle's
 * steps, who may drive it, what ends its wait, and what the driver-thread runners refuse.
 */
class ModeRunnerTest {
    private final AtomicBoolean closed = new AtomicBoolean();
    private final DriverCounters counters = new DriverCounters(1);
    private final Recording device = new Recording();
    private InvokerRunner invoker;

    @AfterEach
    void releaseTheEventLoop() {
        if (invoker != null) {
            invoker.releaseEventLoop();
        }
    }

    private InvokerRunner invoker() throws Exception {
        invoker = new InvokerRunner(Transport.NIO, device, closed, counters);
        invoker.start(() -> device.steps.add("open"));
        device.steps.clear();
        return invoker;
    }

    @Test
    void anInvokerCycleReadsThenRunsTheProtocol() throws Exception {
        final InvokerRunner runner = invoker();
        runner.doWork();
        assertThat(device.steps).containsExactly("beginIo", "needsEventLoopIo", "read", "protocol");
    }

    @Test
    void theApplicationStepRunsBetweenAnEarlyStoppedReadAndTheProtocol() throws Exception {
        final InvokerRunner runner = invoker();
        device.readUntilCompletion = 1;
        final int work = runner.doWork(() -> {
            device.steps.add("application");
            return 5;
        });
        assertThat(device.steps).containsExactly("beginIo", "needsEventLoopIo", "readUntilCompletion",
            "application", "protocol", "read");
        assertThat(work).as("the application's and the read's work count").isEqualTo(6);
    }

    /** A first read that found nothing stopped nowhere: no second receive call in that cycle. */
    @Test
    void anIdleApplicationCycleReadsTheSocketOnce() throws Exception {
        final InvokerRunner runner = invoker();
        device.readUntilCompletion = 0;
        assertThat(runner.doWork(() -> {
            device.steps.add("application");
            return 0;
        })).isZero();
        assertThat(device.steps).containsExactly("beginIo", "needsEventLoopIo", "readUntilCompletion",
            "application", "protocol");
    }

    @Test
    void onlyTheBuildingThreadDrivesAnInvokerDeviceAndNotOnceReleased() throws Exception {
        final InvokerRunner runner = invoker();
        final AtomicReference<Throwable> fromOther = new AtomicReference<>();
        final Thread other = new Thread(() -> {
            try {
                runner.doWork();
            } catch (final Throwable t) {
                fromOther.set(t);
            }
        }, "not-the-owner");
        other.start();
        other.join();
        assertThat(fromOther.get()).isInstanceOf(IllegalStateException.class)
            .hasMessage("doWork() must be called by the thread that built the device (INVOKER mode), not not-the-owner");
        assertThatThrownBy(() -> CompletableFuture.runAsync(runner::close).join())
            .hasCauseInstanceOf(IllegalStateException.class)
            .hasMessageContaining("close() of an INVOKER device must be called by its owning thread");
        assertThat(closed).as("a refused close leaves the device open").isFalse();
        runner.close();
        assertThat(closed).isTrue();
        assertThat(device.steps).containsExactly("release");
        assertThatThrownBy(() -> runner.awaitWork(1_000_000)).isInstanceOf(IllegalStateException.class)
            .hasMessage("device is closed");
    }

    @Test
    void aQueuedCommandOrAClosedDeviceMeansNoWait() throws Exception {
        final InvokerRunner runner = invoker();
        device.queued = true;
        assertThat(runner.awaitWork(TimeUnit.SECONDS.toNanos(10))).isFalse();
        device.queued = false;
        closed.set(true);
        assertThat(runner.awaitWork(TimeUnit.SECONDS.toNanos(10))).isFalse();
    }

    @Test
    void aWakeUpFromAnotherThreadEndsAWaitInTheEventLoop() throws Exception {
        final InvokerRunner runner = invoker();
        final CompletableFuture<Void> woken = CompletableFuture.runAsync(() -> {
            sleep(100);
            runner.wakeup();
        });
        final long start = System.nanoTime();
        assertThat(runner.awaitWork(TimeUnit.SECONDS.toNanos(10))).isTrue();
        assertThat(System.nanoTime() - start).as("woken well before the 10 s wait").isLessThan(TimeUnit.SECONDS.toNanos(5));
        woken.get(5, TimeUnit.SECONDS);
    }

    @Test
    void driverThreadRunnersNameTheirModeWhenAskedForInvokerCalls() {
        try (SharedDriver driver = new SharedDriver(Transport.NIO, new BackoffIdleStrategy())) {
            final SharedRunner shared = new SharedRunner(driver, device, closed);
            assertThat(shared.mode()).isEqualTo(ThreadingMode.SHARED);
            assertThatThrownBy(shared::doWork).isInstanceOf(IllegalStateException.class)
                .hasMessage("doWork() is for INVOKER mode; this device is SHARED");
            assertThatThrownBy(() -> shared.awaitWork(1)).isInstanceOf(IllegalStateException.class)
                .hasMessage("awaitWork() is for INVOKER mode; this device is SHARED");
            assertThat(shared.callTimeoutHint()).isEmpty();
            assertThat(shared.ownerCheckMessage()).contains("MetaRoceDevice.call/submit/execute");
        }
    }

    private static void sleep(final long ms) {
        try {
            Thread.sleep(ms);
        } catch (final InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
    }

    /** A device without sockets (BATCHED-like: nothing to poll) that records the steps it is asked for. */
    private static final class Recording implements DrivenDevice {
        final List<String> steps = new ArrayList<>();
        volatile boolean queued;
        boolean released;

        @Override
        public void beginIo() {
            steps.add("beginIo");
        }

        @Override
        public boolean needsEventLoopIo() {
            steps.add("needsEventLoopIo");
            return true;
        }

        @Override
        public int readPolledSocket() {
            steps.add("read");
            return 0;
        }

        /** What {@link #readPolledSocketUntilCompletion()} reports read. */
        int readUntilCompletion;

        @Override
        public int readPolledSocketUntilCompletion() {
            steps.add("readUntilCompletion");
            return readUntilCompletion;
        }

        @Override
        public int protocolCycle() {
            steps.add("protocol");
            return 0;
        }

        @Override
        public long nextDeadlineNs() {
            return Long.MAX_VALUE;
        }

        @Override
        public long nextDeadlineNsOnLoop() {
            return Long.MAX_VALUE;
        }

        @Override
        public boolean hasQueuedCommands() {
            return queued;
        }

        @Override
        public boolean hasPendingOutbound() {
            return false;
        }

        @Override
        public PolledUdpSocket polledSocket() {
            return null;
        }

        @Override
        public void watchWritabilityWith(final WritabilityWatch watch) {
            steps.add("watch");
        }

        @Override
        public boolean isReleased() {
            return released;
        }

        @Override
        public void release() {
            steps.add("release");
            released = true;
        }

        @Override
        public InetSocketAddress localAddress() {
            return null;
        }
    }
}
