// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty;

import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.IntSupplier;

import io.netty.channel.ManualIoEventLoop;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What {@link DedicatedRunner} and {@link SharedRunner} have in common: the device is driven by the
 * thread of a {@link DriverLoop}, opened there and attached to it, and detached and released there
 * when it closes, from whichever thread closes it. They differ only in who owns the loop: a
 * DEDICATED device stops its own, a SHARED one leaves it to its {@link SharedDriver}.
 */
abstract class DriverThreadRunner implements ModeRunner {
    /** The device's logger: users' logging configuration names the device, not its parts. */
    private static final Logger LOG = LoggerFactory.getLogger(DEVICE_LOGGER);

    private final DriverLoop loop;
    private final DrivenDevice device;
    private final AtomicBoolean closed;

    /**
     * @param loop the loop whose thread owns the device
     * @param device what the loop drives
     * @param closed the device's closed flag
     */
    DriverThreadRunner(final DriverLoop loop, final DrivenDevice device, final AtomicBoolean closed) {
        this.loop = loop;
        this.device = device;
        this.closed = closed;
    }

    /** The device is closing from its own driver thread: stop the loop if it is the device's (after this cycle). */
    abstract void stopLoop();

    /** The device has closed or failed to open: stop the loop if it is the device's, and wait for it. */
    abstract void stopLoopAndJoin();

    @Override
    public final ManualIoEventLoop eventLoop() {
        return loop.eventLoop();
    }

    @Override
    public final void start(final OwnerSetup setup) throws Exception {
        loop.runOnLoop(() -> {
            if (!loop.isRunning()) {
                throw new RejectedExecutionException("driver " + loop.name() + " is stopping");
            }
            setup.open();
            loop.add(device);
            return null;
        }, SETUP_TIMEOUT_NS);
    }

    @Override
    public final void abandon() {
        stopLoopAndJoin();
    }

    @Override
    public final String ownerCheckMessage() {
        return "hand the call to it with MetaRoceDevice.call/submit/execute, or post with WorkRequestPoster "
            + "(DeviceConfig.ownerThreadChecks(false) turns this check off)";
    }

    @Override
    public final String callTimeoutHint() {
        return "";
    }

    @Override
    public final void wakeup() {
        loop.wakeup();
    }

    @Override
    public final int doWork() {
        throw notInvoker("doWork()");
    }

    @Override
    public final int doWork(final IntSupplier application) {
        throw notInvoker("doWork()");
    }

    @Override
    public final boolean awaitWork(final long maxWaitNs) {
        throw notInvoker("awaitWork()");
    }

    private IllegalStateException notInvoker(final String method) {
        return new IllegalStateException(method + " is for INVOKER mode; this device is " + mode());
    }

    @Override
    public final void close() {
        closed.set(true);
        if (Thread.currentThread() == loop.thread()) {
            // Called from a command or a handler on the driver thread.
            device.release();
            loop.remove(device);
            stopLoop();
            return;
        }
        try {
            loop.runOnLoop(() -> {
                device.release();
                loop.remove(device);
                return null;
            }, SETUP_TIMEOUT_NS);
        } catch (final RejectedExecutionException ex) {
            // The driver has stopped: it closed every device it had.
        } catch (final Exception ex) {
            LOG.warn("error while closing {}", device, ex);
        }
        stopLoopAndJoin();
    }

    @Override
    public final void unwatchSockets() {
        loop.unwatch(device);
    }

    @Override
    public final void releaseEventLoop() {
        // The loop's thread shuts its event loop down when it stops (DriverLoop.shutDown).
    }
}
