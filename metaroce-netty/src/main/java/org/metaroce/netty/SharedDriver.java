// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty;

import java.util.concurrent.atomic.AtomicInteger;

import org.agrona.concurrent.BackoffIdleStrategy;
import org.agrona.concurrent.IdleStrategy;

/**
 * One driver thread and one event loop shared by several devices ({@link ThreadingMode#SHARED}):
 * each duty cycle reads every attached device's socket with a single non-blocking pass of the event
 * loop (one {@code epoll_wait} for all of them), then runs each device's commands, endpoint poll and
 * flush in turn. Use it to run many endpoints (for example one per simulated rank, or one per NIC
 * port) without a thread each.
 *
 * <p>Attach a device by building it with {@code threadingMode(SHARED).sharedDriver(driver)};
 * closing the device detaches it. Closing the driver closes every device still attached.
 */
public final class SharedDriver implements AutoCloseable {
    private static final AtomicInteger IDS = new AtomicInteger();

    private final DriverLoop loop;

    /** A driver on the best available transport, idling with a {@link BackoffIdleStrategy}. */
    public SharedDriver() {
        this(Transport.AUTO, new BackoffIdleStrategy(100, 10, 1_000, 100_000));
    }

    /**
     * @param transport transport of every device attached (AUTO resolves now)
     * @param idleStrategy how the thread idles; {@link EventLoopIdleStrategy} blocks in the event loop
     */
    public SharedDriver(final Transport transport, final IdleStrategy idleStrategy) {
        this("metaroce-shared-" + IDS.incrementAndGet(), transport, idleStrategy, 50_000);
    }

    /**
     * @param threadName name of the driver thread
     * @param transport transport of every device attached (AUTO resolves now)
     * @param idleStrategy how the thread idles; {@link EventLoopIdleStrategy} blocks in the event loop
     * @param deadlineSpinNs when the earliest deadline is nearer than this, yield instead of idling
     */
    public SharedDriver(final String threadName, final Transport transport, final IdleStrategy idleStrategy,
                        final long deadlineSpinNs) {
        if (threadName == null || transport == null || idleStrategy == null) {
            throw new IllegalArgumentException("threadName, transport and idleStrategy are required");
        }
        if (deadlineSpinNs < 0) {
            throw new IllegalArgumentException("deadlineSpinNs must be >= 0, got " + deadlineSpinNs);
        }
        this.loop = new DriverLoop(threadName, transport.resolve(), idleStrategy, deadlineSpinNs);
    }

    DriverLoop loop() {
        return loop;
    }

    /** @return the transport of every attached device */
    public Transport transport() {
        return loop.transport();
    }

    /** @return the driver thread */
    public Thread thread() {
        return loop.thread();
    }

    /** @return number of devices attached (a snapshot) */
    public int deviceCount() {
        return loop.deviceCount();
    }

    /** @return whether the driver thread is running */
    public boolean isRunning() {
        return loop.isRunning();
    }

    /** Closes every attached device and stops the thread. Idempotent. */
    @Override
    public void close() {
        loop.stopAndJoin();
    }

    @Override
    public String toString() {
        return "SharedDriver{" + loop.name() + ", " + loop.transport() + ", devices=" + loop.deviceCount() + '}';
    }
}
