// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;
import java.util.function.IntSupplier;

import io.netty.channel.ManualIoEventLoop;
import io.netty.util.concurrent.FastThreadLocalThread;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@link ThreadingMode#INVOKER}: the thread that builds the device owns it, with an event loop of
 * its own, and makes progress by calling {@code doWork}; between cycles without work it blocks in
 * {@code awaitWork}, which another thread's command ends ({@link #wakeup()}). Closing shuts the
 * event loop down, since nothing else uses it.
 */
final class InvokerRunner implements ModeRunner {
    /** The device's logger: users' logging configuration names the device, not its parts. */
    private static final Logger LOG = LoggerFactory.getLogger(DEVICE_LOGGER);
    /** Longest wait in the event loop while a send socket of a POLLED device drains (its reads are not watched then). */
    private static final long DRAIN_WAIT_NS = TimeUnit.MILLISECONDS.toNanos(1);

    /** What the owner blocked in {@link #awaitWork} waits on, so that {@link #wakeup()} can end that wait. */
    private enum Awaiting { NOTHING, EVENT_LOOP, SOCKET }

    private final Transport transport;
    private final DrivenDevice device;
    private final AtomicBoolean closed;
    private final DriverCounters counters;
    private final ManualIoEventLoop eventLoop;
    private volatile Awaiting awaiting = Awaiting.NOTHING;

    /**
     * Makes the calling thread the owning thread: its event loop is created here.
     *
     * @param transport the resolved transport
     * @param device what {@code doWork} drives
     * @param closed the device's closed flag
     * @param counters where a failed wait is counted
     */
    InvokerRunner(final Transport transport, final DrivenDevice device, final AtomicBoolean closed,
                  final DriverCounters counters) {
        this.transport = transport;
        this.device = device;
        this.closed = closed;
        this.counters = counters;
        if (transport != Transport.NATIVE && LOG.isDebugEnabled()
            && !FastThreadLocalThread.currentThreadWillCleanupFastThreadLocals()) {
            // Netty 4.2's Recycler pools only on FastThreadLocalThreads. The per-datagram path
            // does not use it (the POLLED endpoint socket is a JDK channel; separate datagrams
            // go to sendto from the driver's chunk), so only writes through a channel pipeline
            // allocate their bookkeeping: GSO messages, datagrams queued behind a full socket
            // buffer, every NIO send. Measured on loopback, bytes allocated per WRITE with both
            // devices on one thread, plain thread against FastThreadLocalThread: epoll 4 KiB
            // 97 against 96, epoll 64 KiB (one GSO message) 441 against 127, NIO 4 KiB 673
            // against 400. Not worth a warning on the thread the README tells users to use.
            LOG.debug("INVOKER device built on {}, not a Netty FastThreadLocalThread: writes through "
                + "the channel pipeline (UDP GSO messages, datagrams queued behind a full socket buffer, "
                + "NIO sends) allocate Netty's bookkeeping objects (about 300 B each) instead of reusing "
                + "them; direct sends and the POLLED receive path are unaffected", Thread.currentThread().getName());
        }
        this.eventLoop = new ManualIoEventLoop(Thread.currentThread(), DriverLoop.ioHandlerFactory(transport));
    }

    @Override
    public ThreadingMode mode() {
        return ThreadingMode.INVOKER;
    }

    @Override
    public ManualIoEventLoop eventLoop() {
        return eventLoop;
    }

    @Override
    public void start(final OwnerSetup setup) throws Exception {
        setup.open();
        if (device.polledSocket() instanceof WritabilityWatch ownWait) {
            // A native endpoint socket: awaitWork blocks in its epoll_wait, so a full send socket
            // must end that wait too when it drains.
            device.watchWritabilityWith(ownWait);
        }
    }

    @Override
    public void abandon() {
        device.release();
    }

    @Override
    public String ownerCheckMessage() {
        return "an INVOKER device is owned by the thread that built it; call it there";
    }

    @Override
    public String callTimeoutHint() {
        return " (INVOKER mode: is someone calling doWork()?)";
    }

    @Override
    public void wakeup() {
        final Awaiting on = awaiting;
        if (on == Awaiting.EVENT_LOOP) {
            eventLoop.wakeup();
        } else if (on == Awaiting.SOCKET) {
            final PolledUdpSocket socket = device.polledSocket();
            if (socket != null) {
                socket.wakeup();
            }
        }
    }

    @Override
    public int doWork() {
        checkOwner("doWork()");
        device.beginIo();
        final int io = runEventLoop() + device.readPolledSocket();
        return io + device.protocolCycle();
    }

    @Override
    public int doWork(final IntSupplier application) {
        checkOwner("doWork()");
        device.beginIo();
        // A datagram that completes a work request ends the read: the application reacts to it
        // before the datagrams behind it (often the ACK that travelled with a reply) are read.
        final int loop = runEventLoop();
        final int read = device.readPolledSocketUntilCompletion();
        final int io = loop + read;
        final int app = application.getAsInt();
        final int protocol = device.protocolCycle();
        // What the early stop left unread is read now, after the reply left: otherwise a stream
        // whose every few datagrams complete something reads a handful of ACKs per cycle while the
        // cycle may emit a thousand packets, the socket backlog grows to seconds, its ACKs overflow
        // and are dropped, and the requester retransmits what the responder has long acknowledged.
        // A first read that found the socket empty stopped nowhere: what arrived since is the next
        // cycle's first read, and an idle spinning owner makes one receive call per cycle, not two.
        return io + app + protocol + (read > 0 ? device.readPolledSocket() : 0);
    }

    /**
     * Runs Netty's event loop: the readiness poll only when the device needs it (see
     * {@link DrivenDevice#needsEventLoopIo()}), else just the queued tasks.
     */
    private int runEventLoop() {
        return device.needsEventLoopIo() ? eventLoop.runNow() : eventLoop.runNonBlockingTasks(0);
    }

    @Override
    public boolean awaitWork(final long maxWaitNs) {
        checkOwner("awaitWork()");
        final long deadline = device.nextDeadlineNs();
        final long wait = deadline == Long.MAX_VALUE ? maxWaitNs
            : Math.min(maxWaitNs, deadline - System.nanoTime());
        if (wait <= 0) {
            return false;
        }
        final PolledUdpSocket socket = device.polledSocket();
        // A native device has no socket in the event loop: it always waits on its endpoint socket,
        // whose epoll also watches the send sockets that wait to drain (the sink registers them).
        final boolean nativeSockets = transport == Transport.NATIVE;
        final boolean draining = device.hasPendingOutbound();
        final boolean onSocket = socket != null && (nativeSockets || !draining);
        if (onSocket && wait < TimeUnit.MILLISECONDS.toNanos(1) && !socket.awaitsToTheNanosecond()) {
            // The socket's wait counts whole milliseconds: park to the deadline instead (a
            // datagram arriving meanwhile waits for it).
            LockSupport.parkNanos(wait);
            return true;
        }
        // Published before the queue is checked: a command queued after the check sees it and wakes us.
        awaiting = onSocket ? Awaiting.SOCKET : Awaiting.EVENT_LOOP;
        try {
            if (device.hasQueuedCommands() || closed.get()) {
                return false;
            }
            if (onSocket) {
                socket.awaitReadable(wait);
            } else {
                // BATCHED: the event loop reads the endpoint socket and delivers what arrives. POLLED
                // with a send socket draining: wait for it to become writable, not long, since the
                // endpoint socket is not watched meanwhile.
                device.beginIo();
                eventLoop.run(socket == null ? wait : Math.min(wait, DRAIN_WAIT_NS), 0);
            }
            return true;
        } catch (final java.io.IOException ex) {
            counters.increment(DriverCounter.RECEIVE_ERRORS);
            LOG.debug("waiting for the endpoint socket failed: {}", ex.toString());
            return false;
        } finally {
            awaiting = Awaiting.NOTHING;
        }
    }

    private void checkOwner(final String method) {
        if (!eventLoop.inEventLoop()) {
            throw new IllegalStateException(method + " must be called by the thread that built the device ("
                + "INVOKER mode), not " + Thread.currentThread().getName());
        }
        if (device.isReleased()) {
            throw new IllegalStateException("device is closed");
        }
    }

    @Override
    public void close() {
        if (!eventLoop.inEventLoop()) {
            throw new IllegalStateException("close() of an INVOKER device must be called by its owning thread");
        }
        closed.set(true);
        device.release();
    }

    @Override
    public void unwatchSockets() {
        // Nothing to undo: the endpoint socket's own epoll is the only wait, and closes with it.
    }

    @Override
    public void releaseEventLoop() {
        if (!DriverLoop.shutDown(eventLoop, SETUP_TIMEOUT_NS)) {
            LOG.warn("event loop of {} did not terminate", device.localAddress());
        }
    }
}
