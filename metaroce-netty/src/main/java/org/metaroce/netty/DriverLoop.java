// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty;

import java.util.Arrays;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import io.netty.channel.IoHandlerFactory;
import io.netty.channel.ManualIoEventLoop;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.nio.NioIoHandler;
import io.netty.util.concurrent.FastThreadLocal;
import io.netty.util.concurrent.FastThreadLocalThread;
import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.ManyToOneConcurrentArrayQueue;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A driver thread: one Netty {@link ManualIoEventLoop} that this thread owns, and the duty cycles of
 * every device attached to it. A DEDICATED device has a private loop; SHARED devices attach to the
 * loop of a {@link SharedDriver}. One cycle: run the event loop once without blocking (reads of
 * every device's endpoint socket reach that device's endpoint), then let each device run its
 * commands, poll its endpoint and flush. With no work, idle, never past the earliest deadline of
 * the attached endpoints.
 */
final class DriverLoop implements Runnable {
    private static final Logger LOG = LoggerFactory.getLogger(DriverLoop.class);
    private static final DrivenDevice[] NONE = new DrivenDevice[0];

    /** Shortest wait in epoll_wait's unit. */
    private static final long MIN_NATIVE_WAIT_NS = 1_000_000L;

    private final String name;
    private final Transport transport;
    private final IdleStrategy idleStrategy;
    private final EventLoopIdleStrategy eventLoopIdle;
    private final long deadlineSpinNs;
    private final Thread thread;
    private final ManualIoEventLoop eventLoop;
    /**
     * Native transport with a blocking idle strategy: the wait over the devices' endpoint sockets
     * (none of them is in the event loop); null otherwise.
     */
    private final ReadinessWaiter nativeWaiter;
    private final ManyToOneConcurrentArrayQueue<Runnable> control = new ManyToOneConcurrentArrayQueue<>(256);
    private final CompletableFuture<Void> terminated = new CompletableFuture<>();
    private DrivenDevice[] devices = NONE;
    private volatile boolean running = true;
    private volatile boolean waiting;

    /**
     * @param name thread name
     * @param transport EPOLL or NIO (resolved)
     * @param idleStrategy how to idle; {@link EventLoopIdleStrategy} blocks in the event loop
     * @param deadlineSpinNs below this distance to the next deadline, yield instead of idling
     */
    DriverLoop(final String name, final Transport transport, final IdleStrategy idleStrategy,
               final long deadlineSpinNs) {
        this.name = name;
        this.transport = transport;
        this.idleStrategy = idleStrategy;
        this.eventLoopIdle = idleStrategy instanceof EventLoopIdleStrategy ? (EventLoopIdleStrategy) idleStrategy
            : null;
        this.deadlineSpinNs = deadlineSpinNs;
        this.nativeWaiter = transport == Transport.NATIVE && eventLoopIdle != null ? NativeTransportLoader.waiter()
            : null;
        this.thread = new FastThreadLocalThread(this, name);
        this.thread.setDaemon(true);
        this.eventLoop = new ManualIoEventLoop(thread, ioHandlerFactory(transport));
        this.thread.start();
    }

    static IoHandlerFactory ioHandlerFactory(final Transport transport) {
        return transport == Transport.EPOLL ? EpollIoHandler.newFactory() : NioIoHandler.newFactory();
    }

    Transport transport() {
        return transport;
    }

    ManualIoEventLoop eventLoop() {
        return eventLoop;
    }

    /** @return whether this loop idles by blocking in the event loop (devices on it must use the BATCHED receive path) */
    boolean blocksInEventLoop() {
        return eventLoopIdle != null;
    }

    Thread thread() {
        return thread;
    }

    String name() {
        return name;
    }

    boolean isRunning() {
        return running;
    }

    int deviceCount() {
        return devices.length;
    }

    /** Wakes the loop if it is blocked in the event loop (a command was queued for a device). */
    void wakeup() {
        if (waiting) {
            if (nativeWaiter != null) {
                nativeWaiter.wakeup();
            } else {
                eventLoop.wakeup();
            }
        }
    }

    /**
     * Runs {@code task} on the loop thread and waits for it (directly when already on it).
     *
     * @throws RejectedExecutionException if the loop has stopped (or stops before running it)
     */
    <T> T runOnLoop(final Callable<T> task, final long timeoutNs) throws Exception {
        if (Thread.currentThread() == thread) {
            return task.call();
        }
        final CompletableFuture<T> result = new CompletableFuture<>();
        final Runnable r = () -> {
            try {
                result.complete(task.call());
            } catch (final Throwable t) {
                result.completeExceptionally(t);
            }
        };
        final long deadline = System.nanoTime() + timeoutNs;
        while (!control.offer(r)) {
            if (!running || terminated.isDone() || System.nanoTime() - deadline > 0) {
                throw new RejectedExecutionException("driver " + name + " is not running or is overloaded");
            }
            Thread.onSpinWait();
        }
        eventLoop.wakeup();
        if (nativeWaiter != null) {
            nativeWaiter.wakeup();
        }
        try {
            CompletableFuture.anyOf(result, terminated).get(Math.max(1, deadline - System.nanoTime()),
                TimeUnit.NANOSECONDS);
        } catch (final ExecutionException ex) {
            // result failed: unwrapped below.
        } catch (final TimeoutException ex) {
            throw new IllegalStateException("driver " + name + " did not run a control task within "
                + TimeUnit.NANOSECONDS.toMillis(timeoutNs) + " ms", ex);
        }
        if (!result.isDone()) {
            throw new RejectedExecutionException("driver " + name + " stopped");
        }
        try {
            return result.get();
        } catch (final ExecutionException ex) {
            final Throwable cause = ex.getCause();
            if (cause instanceof Exception) {
                throw (Exception) cause;
            }
            throw (Error) cause;
        }
    }

    /**
     * Loop thread: adds a device whose sockets are open.
     *
     * @throws java.io.IOException if its endpoint socket cannot be watched
     */
    void add(final DrivenDevice device) throws java.io.IOException {
        if (nativeWaiter != null && device.polledSocket() != null) {
            nativeWaiter.watch(device.polledSocket());
            // A send socket whose buffer filled ends the wait when it drains, not the idle timeout.
            device.watchWritabilityWith(nativeWaiter);
        }
        final DrivenDevice[] now = Arrays.copyOf(devices, devices.length + 1);
        now[now.length - 1] = device;
        devices = now;
    }

    /** Loop thread: removes a device. */
    void remove(final DrivenDevice device) {
        final DrivenDevice[] now = new DrivenDevice[Math.max(0, devices.length - 1)];
        int j = 0;
        for (final DrivenDevice d : devices) {
            if (d != device && j < now.length) {
                now[j++] = d;
            }
        }
        devices = j == now.length ? now : Arrays.copyOf(now, j);
    }

    /** Loop thread: stops watching a device's endpoint socket; before the socket closes (its descriptor may be reused). */
    void unwatch(final DrivenDevice device) {
        if (nativeWaiter != null && device.polledSocket() != null) {
            device.watchWritabilityWith(WritabilityWatch.NONE);
            nativeWaiter.unwatch(device.polledSocket());
        }
    }

    /** Asks the loop to stop after its current cycle (closing every attached device). */
    void stop() {
        running = false;
        eventLoop.wakeup();
        if (nativeWaiter != null) {
            nativeWaiter.wakeup();
        }
    }

    /** Stops the loop and waits until it has released everything. */
    void stopAndJoin() {
        stop();
        if (Thread.currentThread() == thread) {
            return;
        }
        try {
            terminated.get(30, TimeUnit.SECONDS);
        } catch (final TimeoutException ex) {
            LOG.error("driver thread {} did not stop within 30 s", name);
        } catch (final InterruptedException ex) {
            Thread.currentThread().interrupt();
        } catch (final ExecutionException ex) {
            // Never completes exceptionally.
        }
    }

    @Override
    public void run() {
        try {
            // Initialises the I/O handler on its thread before any socket registers with it.
            eventLoop.runNow();
            while (running) {
                final int work = cycle();
                if (work > 0) {
                    idleStrategy.reset();
                } else {
                    idle();
                }
            }
        } catch (final Throwable t) {
            LOG.error("driver thread {} failed; its devices are closed", name, t);
        } finally {
            running = false;
            shutDown();
        }
    }

    private void drainControl() {
        Runnable r;
        while ((r = control.poll()) != null) {
            try {
                r.run();
            } catch (final Throwable t) {
                LOG.debug("control task failed during shutdown", t);
            }
        }
    }

    private int cycle() {
        int work = control.drain(Runnable::run);
        final DrivenDevice[] current = devices;
        for (final DrivenDevice device : current) {
            device.beginIo();
        }
        boolean io = current.length == 0;
        for (final DrivenDevice device : current) {
            io |= device.needsEventLoopIo();
        }
        // POLLED devices read their sockets themselves: the readiness poll only when one needs it.
        work += io ? eventLoop.runNow() : eventLoop.runNonBlockingTasks(0);
        for (final DrivenDevice device : current) {
            work += device.readPolledSocket() + device.protocolCycle();
        }
        return work;
    }

    /** Idles after a cycle without work, never past the earliest deadline of the attached endpoints. */
    private void idle() {
        long deadline = Long.MAX_VALUE;
        for (final DrivenDevice device : devices) {
            deadline = Math.min(deadline, device.nextDeadlineNsOnLoop());
        }
        final long untilDeadline = deadline == Long.MAX_VALUE ? Long.MAX_VALUE : deadline - System.nanoTime();
        if (untilDeadline <= 0) {
            return;
        }
        if (eventLoopIdle != null) {
            final long wait = Math.min(untilDeadline, eventLoopIdle.maxWaitNs());
            waiting = true;
            try {
                if (running && control.isEmpty() && noCommandsQueued()) {
                    for (final DrivenDevice device : devices) {
                        device.beginIo();
                    }
                    if (nativeWaiter != null && wait < MIN_NATIVE_WAIT_NS && !nativeWaiter.awaitsToTheNanosecond()) {
                        // epoll_wait counts in milliseconds: a shorter wait parks, as a backoff
                        // would (blind to datagrams); epoll_pwait2, where there is one, does not.
                        java.util.concurrent.locks.LockSupport.parkNanos(wait);
                    } else if (nativeWaiter != null) {
                        // The next cycle reads what woke the wait.
                        nativeWaiter.await(wait);
                    } else {
                        // Datagrams that arrive during the wait are processed right away.
                        eventLoop.run(Math.max(1, wait), 0);
                    }
                }
            } finally {
                waiting = false;
            }
            return;
        }
        if (untilDeadline <= deadlineSpinNs) {
            Thread.onSpinWait();
            return;
        }
        idleStrategy.idle();
    }

    private boolean noCommandsQueued() {
        for (final DrivenDevice device : devices) {
            if (device.hasQueuedCommands()) {
                return false;
            }
        }
        return true;
    }

    private void shutDown() {
        try {
            // Control tasks first: attaching fails (not running), detaching closes its device.
            drainControl();
            for (final DrivenDevice device : devices) {
                try {
                    device.release();
                } catch (final Throwable t) {
                    LOG.error("error while closing {}", device, t);
                }
            }
            devices = NONE;
            drainControl();
            if (!shutDown(eventLoop, TimeUnit.SECONDS.toNanos(10))) {
                LOG.warn("event loop of driver {} did not terminate", name);
            }
        } finally {
            try {
                if (nativeWaiter != null) {
                    nativeWaiter.close();
                }
                FastThreadLocal.removeAll();
            } finally {
                // Whatever the close threw, the loop has ended: stopAndJoin must not wait 30 s for it.
                terminated.complete(null);
            }
        }
    }

    /**
     * Shuts down a manual event loop from its own thread, running it until it has terminated, for
     * at most {@code timeoutNs} (a driver's loop, or an INVOKER device's own).
     *
     * @return whether it terminated
     */
    static boolean shutDown(final ManualIoEventLoop loop, final long timeoutNs) {
        final long deadline = System.nanoTime() + timeoutNs;
        loop.shutdownGracefully(0, 1, TimeUnit.SECONDS);
        while (!loop.isTerminated() && System.nanoTime() - deadline < 0) {
            try {
                loop.runNow();
            } catch (final Throwable t) {
                LOG.debug("error while shutting down the event loop", t);
            }
        }
        return loop.isTerminated();
    }
}
