// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty;

import java.util.concurrent.TimeUnit;
import java.util.function.IntSupplier;

import io.netty.channel.ManualIoEventLoop;

/**
 * How a device's duty cycles are driven and waited for in one {@link ThreadingMode}: which thread
 * owns the device, where its event loop comes from, how the owner is woken for a command, who may
 * call {@code doWork}/{@code awaitWork}/{@code close} and what closing stops. One implementation per
 * mode ({@link DedicatedRunner}, {@link SharedRunner}, {@link InvokerRunner}), chosen once by
 * the device ({@code MetaRoceDevice.runnerFor}; not here, so that the interface does not depend on
 * its implementations), so that the device asks its runner instead of testing its mode.
 */
interface ModeRunner {
    /**
     * The logger runners write to: the device's ({@code MetaRoceDevice}'s class name), where users
     * look for a device's messages. Named, so that a runner need not know the device class.
     */
    String DEVICE_LOGGER = "org.metaroce.netty.MetaRoceDevice";

    /** Longest wait for the driver thread to run a setup or close step, or an event loop to end. */
    long SETUP_TIMEOUT_NS = TimeUnit.SECONDS.toNanos(10);

    /**
     * Whether the owning thread of {@code config}'s mode idles blocked in the event loop, which
     * decides the receive path; known before the runner exists, so that a configuration that
     * cannot work fails before a driver thread starts.
     */
    static boolean idlesInEventLoop(final DeviceConfig config) {
        return switch (config.threadingMode()) {
            case INVOKER -> false; // awaitWork chooses its wait each time
            case DEDICATED -> config.idleStrategy() instanceof EventLoopIdleStrategy;
            case SHARED -> config.sharedDriver().loop().blocksInEventLoop();
        };
    }

    /** @return the mode this runner drives */
    ThreadingMode mode();

    /** @return the event loop of the owning thread (its {@code inEventLoop()} names the owning thread) */
    ManualIoEventLoop eventLoop();

    /**
     * Runs {@code setup} on the owning thread and then drives the device.
     *
     * @throws Exception what {@code setup} threw, or why the owning thread could not run it
     */
    void start(OwnerSetup setup) throws Exception;

    /** After {@link #start} failed: stops what the runner started. */
    void abandon();

    /** @return what the endpoint's owner-thread check tells a caller on the wrong thread */
    String ownerCheckMessage();

    /** @return appended to the message of a {@code call} that timed out: what to check, or "" */
    String callTimeoutHint();

    /** A command was queued: wakes the owning thread if it waits. Any thread, never blocks. */
    void wakeup();

    /** @see MetaRoceDevice#doWork() */
    int doWork();

    /** @see MetaRoceDevice#doWork(IntSupplier) */
    int doWork(IntSupplier application);

    /** @see MetaRoceDevice#awaitWork(long); {@code maxWaitNs} is already checked to be positive */
    boolean awaitWork(long maxWaitNs);

    /** @see MetaRoceDevice#close() */
    void close();

    /** Owning thread, releasing: stops waits on the device's sockets; before they close (descriptors are reused). */
    void unwatchSockets();

    /** Owning thread, releasing: after the sockets closed, ends an event loop only this device used. */
    void releaseEventLoop();

    /** Opens the device on its owning thread (names the owner, opens the sockets; releases on failure). */
    @FunctionalInterface
    interface OwnerSetup {
        /** @throws Exception if the device cannot open */
        void open() throws Exception;
    }
}
