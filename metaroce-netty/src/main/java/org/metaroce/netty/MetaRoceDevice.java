// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.Inet6Address;
import java.net.InetSocketAddress;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;
import java.util.function.Function;

import io.netty.channel.ManualIoEventLoop;
import org.agrona.concurrent.IdleStrategy;
import org.metaroce.core.JvmAccess;
import org.metaroce.core.engine.Endpoint;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A MetaRoCE device over UDP: one core {@link Endpoint} driven by Netty.
 *
 * <p>It binds one receive socket on the <em>endpoint port</em>, where every packet for this
 * device arrives [ENC-002], and one send socket per entropy value, whose local port <em>is</em> the
 * entropy value [ENC-006]: give {@link #entropyPorts()} to a queue pair as its PATHS attribute. The
 * remote side of a queue pair is named by a peer id from {@link #peerId(InetSocketAddress)}.
 *
 * <p>Threading: exactly one thread owns the device (its I/O, its endpoint and every queue pair).
 * In {@link ThreadingMode#DEDICATED} mode that is the device's own driver thread; in
 * {@link ThreadingMode#SHARED} mode the thread of a {@link SharedDriver} that drives several
 * devices; in {@link ThreadingMode#INVOKER} mode the thread that constructed the device, which
 * makes progress by calling {@link #doWork()}. Other threads run code on the owning thread with
 * {@link #submit}, {@link #execute} or {@link #call} (a bounded lock-free queue), and poll
 * completion queues directly (they are single-producer/single-consumer rings).
 *
 * <p>One duty cycle: run the event loop without blocking (reads reach
 * {@link Endpoint#onDatagram}, with recvmmsg under epoll), run queued commands, then
 * {@link Endpoint#poll} into the sink, whose packets are written to the sockets and flushed once
 * (sendmmsg under epoll, GSO where possible).
 *
 * <p>{@link #close()} closes the sockets, releases every buffer and stops what the device owns
 * (its driver thread or its event loop).
 */
public final class MetaRoceDevice implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(MetaRoceDevice.class);
    private static final AtomicInteger THREAD_IDS = new AtomicInteger();
    private static final long SETUP_TIMEOUT_NS = TimeUnit.SECONDS.toNanos(10);

    private final DeviceConfig config;
    private final Transport transport;
    private final ThreadingMode mode;
    private final Endpoint endpoint;
    private final PeerTable peers;
    private final DriverCounters counters;
    /** The counters file's writer, or null; set once open, then used by the owning thread only. */
    private volatile CounterPublisher counterPublisher;
    /** Records received packets when a capture is configured, else null. */
    private final CapturingEndpoint capturingEndpoint;
    /** Records sent packets when a capture is configured, else null; set once the sockets are bound. */
    private volatile CapturingSink capturingSink;
    private final CommandQueue commands;
    private final Consumer<Runnable> commandRunner = this::runCommand;
    private final ManualIoEventLoop eventLoop;
    /** The driver thread's loop (DEDICATED: private; SHARED: the shared driver's); null in INVOKER mode. */
    private final DriverLoop loop;
    private final ReceiveDispatcher receiver;
    private final AtomicBoolean closed = new AtomicBoolean();
    /** What an INVOKER owner blocked in {@link #awaitWork} waits on, so {@link #offer} can wake it. */
    private volatile int awaitingOn = AWAIT_NONE;
    private static final int AWAIT_NONE = 0;
    private static final int AWAIT_EVENT_LOOP = 1;
    private static final int AWAIT_SOCKET = 2;
    /** Longest wait in the event loop while a send socket of a POLLED device drains (its reads are not watched then). */
    private static final long DRAIN_WAIT_NS = TimeUnit.MILLISECONDS.toNanos(1);

    private volatile boolean gsoActive;
    private UdpSocket endpointSocket;
    /** The endpoint socket when the owning thread reads it itself (POLLED receive path), else null. */
    private PolledUdpSocket polledSocket;
    private ReceivePath receivePath;
    private final java.util.function.LongSupplier completionCount;
    /** Cycles since the event loop last polled for I/O (POLLED path). */
    private int eventLoopSkips;
    /** A POLLED device polls the event loop for I/O at least every this many cycles (a power of two). */
    static final int EVENT_LOOP_POLL_EVERY = 64;
    private UdpSocket[] sendSockets = new UdpSocket[0];
    private int[] entropyPorts = new int[0];
    private InetSocketAddress localAddress;
    private volatile NettySink sink;
    private boolean cleanedUp;
    private long errorsLogged;

    /**
     * Binds the sockets: in DEDICATED mode on a new driver thread, in SHARED mode on the shared
     * driver's thread, in INVOKER mode on the calling thread (which then owns the device).
     *
     * @param config the device's configuration (kept by reference: do not change it afterwards)
     * @throws UncheckedIOException if a socket cannot be bound
     * @throws IllegalStateException if EPOLL is asked for and unavailable, or the JVM lacks the
     *     export Agrona needs (the message names the flag: {@link JvmAccess})
     */
    public MetaRoceDevice(final DeviceConfig config) {
        JvmAccess.requireUnsafeExport();
        config.validate();
        this.config = config;
        this.transport = config.threadingMode() == ThreadingMode.SHARED ? config.sharedDriver().transport()
            : resolveTransport(config);
        this.mode = config.threadingMode();
        // Where the transport reads the ECN field, QPs that leave their capabilities unset offer
        // ECN, so that DEFAULT, the endpoint's default algorithm, runs with marks [CC-034, ENC-016].
        config.endpointConfig().datagramEcn(readsEcn(transport));
        this.endpoint = new Endpoint(config.endpointConfig(), config.randomSource());
        this.completionCount = endpoint::completionsPushed;
        this.peers = new PeerTable(config.transientPeers());
        this.endpoint.peerDirectory(peers);
        this.counters = new DriverCounters(config.entropyPortCount());
        this.commands = new CommandQueue(config.commandQueueCapacity(), endpoint, closed, counters, this::wakeOwner);
        final PcapWriter capture = config.observability().capture();
        this.capturingEndpoint = capture != null && config.observability().captureReceived()
            ? new CapturingEndpoint(endpoint, capture, peers) : null;
        this.receiver = new ReceiveDispatcher(capturingEndpoint != null ? capturingEndpoint : endpoint, peers, counters);
        if (config.inboundFaults() != null) {
            receiver.injectFaults(config.inboundFaults(), config.maxDatagramBytes());
        }
        switch (mode) {
            case INVOKER -> {
                loop = null;
                if (transport != Transport.NATIVE && LOG.isDebugEnabled()
                    && !io.netty.util.concurrent.FastThreadLocalThread.currentThreadWillCleanupFastThreadLocals()) {
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
                eventLoop = new ManualIoEventLoop(Thread.currentThread(), DriverLoop.ioHandlerFactory(transport));
                nameOwner();
                try {
                    receivePath = resolveReceivePath(config, transport, false);
                    openChannels();
                } catch (final Throwable t) {
                    closed.set(true);
                    cleanUpOnLoop();
                    throw asUnchecked("cannot open device " + config, t);
                }
            }
            case DEDICATED -> {
                final String name = config.threadName() != null ? config.threadName()
                    : "metaroce-driver-" + THREAD_IDS.incrementAndGet();
                final IdleStrategy idle = config.idleStrategy();
                receivePath = resolveReceivePath(config, transport, idle instanceof EventLoopIdleStrategy);
                loop = new DriverLoop(name, transport, idle, config.deadlineSpinNs());
                eventLoop = loop.eventLoop();
                attach();
            }
            case SHARED -> {
                loop = config.sharedDriver().loop();
                receivePath = resolveReceivePath(config, transport, loop.blocksInEventLoop());
                eventLoop = loop.eventLoop();
                attach();
            }
            default -> throw new IllegalArgumentException("unknown threading mode " + mode);
        }
        counterPublisher = openCounterFile();
        if (capture != null) {
            if (capturingEndpoint != null) {
                capturingEndpoint.localAddress(localAddress);
            }
            capturingSink = new CapturingSink(capture, peers, localAddress, entropyPorts);
        }
        LOG.debug("opened {} device on {} with entropy ports {} ({}, gso={}, gro={}, receive path {})", mode,
            localAddress, java.util.Arrays.toString(entropyPorts), transport, gsoActive, config.gro(), receivePath);
    }

    /**
     * Opens the device's counters file (see {@link CounterDirectory}) unless configured off. A
     * device that cannot write one (no space, no permission) runs without it: observability must
     * not stop the transport.
     */
    private CounterPublisher openCounterFile() {
        final ObservabilityConfig obs = config.observability();
        if (!obs.counters()) {
            return null;
        }
        final java.nio.file.Path base = obs.countersBase() != null ? obs.countersBase() : CounterDirectory.base();
        try {
            CounterDirectory.deleteStale(base);
            CounterDirectory.createProcessDirectory(base);
            return new CounterPublisher(CounterDirectory.deviceFile(base, endpointPort()), obs.countersCapacity(),
                "device " + localAddress + " entropy ports " + java.util.Arrays.toString(entropyPorts) + " "
                    + transport + " " + mode, endpoint, counters, entropyPorts, endpointPort(),
                obs.countersIntervalNs());
        } catch (final RuntimeException ex) {
            LOG.warn("device {} runs without a counters file: {}", localAddress, ex.toString());
            return null;
        }
    }

    /**
     * Publishes a layer's counters in this device's counters file from the next publication on
     * (nothing happens when the device has no file, or the file has no room for them). Setup, not
     * the data path: on another thread than the owning one it queues a command and returns.
     *
     * @param group the counters; detach them with {@link #detachCounters} when their layer closes
     */
    public void attachCounters(final CounterGroup group) {
        onOwningThread(() -> {
            final CounterPublisher publisher = counterPublisher;
            if (publisher != null && !publisher.attach(group)) {
                LOG.warn("device {}: no room in the counters file for {} counters ({} ...); raise "
                    + "ObservabilityConfig.countersCapacity", localAddress, group.size(), group.label(0));
            }
        });
    }

    /**
     * Removes counters given to {@link #attachCounters} from the counters file (their slots are
     * reused). Does nothing once the device is closed (the file is gone).
     *
     * @param group the counters
     */
    public void detachCounters(final CounterGroup group) {
        onOwningThread(() -> {
            final CounterPublisher publisher = counterPublisher;
            if (publisher != null) {
                publisher.detach(group);
            }
        });
    }

    /** Runs a setup step now on the owning thread, else queues it for that thread (dropped once closed). */
    private void onOwningThread(final Runnable step) {
        if (isOwningThread()) {
            if (!cleanedUp) {
                step.run();
            }
        } else {
            offer(step);
        }
    }

    /**
     * @return the device's counters file (read with {@link CounterFile#reader()}), or null when it
     *     has none; it is unmapped and deleted when the device closes
     */
    public CounterFile counterFile() {
        final CounterPublisher publisher = counterPublisher;
        return publisher == null ? null : publisher.file();
    }

    /**
     * AUTO resolves to NATIVE where it can, unless the configuration asks for Netty's BATCHED
     * receive path: then to the best Netty transport.
     */
    private static Transport resolveTransport(final DeviceConfig config) {
        if (config.transport() == Transport.AUTO && config.receivePath() == ReceivePath.BATCHED) {
            return Transport.epollAvailable() ? Transport.EPOLL : Transport.NIO;
        }
        return config.transport().resolve();
    }

    /**
     * The receive path: on the native transport always POLLED (its sockets read GRO batches and
     * are waited on with their own epoll, so neither GRO nor a blocking idle strategy needs Netty).
     */
    private static ReceivePath resolveReceivePath(final DeviceConfig config, final Transport transport,
                                                  final boolean blockingIdle) {
        if (transport == Transport.NATIVE) {
            if (config.receivePath() == ReceivePath.BATCHED) {
                throw new IllegalArgumentException("cannot open device " + config + ": receivePath BATCHED needs a "
                    + "Netty transport (epoll or nio); the native transport reads every socket itself (POLLED)");
            }
            return ReceivePath.POLLED;
        }
        try {
            return config.resolveReceivePath(blockingIdle);
        } catch (final IllegalArgumentException ex) {
            throw new IllegalArgumentException("cannot open device " + config + ": " + ex.getMessage(), ex);
        }
    }

    /** @return how this device reads its endpoint socket (POLLED or BATCHED) */
    public ReceivePath receivePath() {
        return receivePath;
    }

    private void attach() {
        final boolean privateLoop = mode == ThreadingMode.DEDICATED;
        try {
            loop.runOnLoop(() -> {
                if (!loop.isRunning()) {
                    throw new RejectedExecutionException("driver " + loop.name() + " is stopping");
                }
                nameOwner();
                try {
                    openChannels();
                } catch (final Throwable t) {
                    cleanUpOnLoop();
                    throw t;
                }
                loop.add(this);
                return null;
            }, SETUP_TIMEOUT_NS);
        } catch (final Throwable t) {
            closed.set(true);
            if (privateLoop) {
                loop.stopAndJoin();
            }
            throw asUnchecked("cannot open device " + config, t);
        }
    }

    /** Makes the calling thread (the owning thread) the only one the endpoint's objects accept. */
    private void nameOwner() {
        if (config.ownerThreadChecks()) {
            endpoint.owningThread().set(Thread.currentThread(), mode == ThreadingMode.INVOKER
                ? "an INVOKER device is owned by the thread that built it; call it there"
                : "hand the call to it with MetaRoceDevice.call/submit/execute, or post with WorkRequestPoster "
                    + "(DeviceConfig.ownerThreadChecks(false) turns this check off)");
        }
    }

    // ------------------------------------------------------------------ accessors

    /**
     * The device's protocol endpoint. Use it only on the owning thread: in INVOKER mode the thread
     * that built the device; in DEDICATED and SHARED modes from code run with
     * {@link #submit}/{@link #call}. Its counters may be read from any thread.
     *
     * @return the endpoint
     */
    public Endpoint endpoint() {
        return endpoint;
    }

    /** @return the bound endpoint socket address (its port is the endpoint port) */
    public InetSocketAddress localAddress() {
        return localAddress;
    }

    /** @return the endpoint port */
    public int endpointPort() {
        return localAddress.getPort();
    }

    /** @return the entropy values: local ports of the send sockets (a copy), for a QP's PATHS */
    public int[] entropyPorts() {
        return entropyPorts.clone();
    }

    /** @return the transport in use (AUTO resolved) */
    public Transport transport() {
        return transport;
    }

    /** @return the threading mode */
    public ThreadingMode threadingMode() {
        return mode;
    }

    /**
     * @return whether the device reads the ECN field of received datagrams and marks what it sends
     *     ECT(0) (the native transport): only then may its QPs offer the ECN capability [ENC-016]
     */
    public boolean readsEcn() {
        return readsEcn(transport);
    }

    private static boolean readsEcn(final Transport transport) {
        return transport == Transport.NATIVE;
    }

    /** @return the endpoint socket when the owning thread reads it (POLLED path), else null; owning thread */
    PolledUdpSocket polledSocket() {
        return polledSocket;
    }

    /** @return whether UDP GSO writes are in use */
    public boolean gsoActive() {
        return gsoActive;
    }

    /** @return the driver's counters (readable from any thread) */
    public DriverCounters counters() {
        return counters;
    }

    /** @return the peer table; owning thread only */
    public PeerTable peers() {
        return peers;
    }

    /** @return the configuration the device was built from */
    public DeviceConfig config() {
        return config;
    }

    /** @return the sink (tests in this package; owning thread only) */
    NettySink sinkForTest() {
        return sink;
    }

    /** @return whether the calling thread is the owning thread */
    public boolean isOwningThread() {
        return eventLoop.inEventLoop();
    }

    /** @return whether {@link #close()} was called (or the driver failed) */
    public boolean isClosed() {
        return closed.get();
    }

    // ------------------------------------------------------------------ peers

    /**
     * The permanent peer id of a remote endpoint address (a QP's remotePeer attribute). Runs on the
     * owning thread (via {@link #call} when called from another thread).
     *
     * @param address the remote endpoint's IP address and endpoint port
     * @return its pinned peer id
     */
    public int peerId(final InetSocketAddress address) {
        return call(ep -> peers.peerId(address));
    }

    /**
     * Pins a peer id (see {@link PeerTable#pin}); the connection manager does this through the
     * endpoint's peer directory, which is the device's {@link #peers()} table.
     *
     * @param peerId a current peer id
     * @return the pinned id of the same address
     */
    public int pin(final int peerId) {
        return call(ep -> peers.pin(peerId));
    }

    /**
     * Releases one pin (see {@link PeerTable#unpin}).
     *
     * @param peerId an id {@link #pin} returned
     */
    public void unpin(final int peerId) {
        call(ep -> {
            peers.unpin(peerId);
            return null;
        });
    }

    // ------------------------------------------------------------------ commands

    /**
     * Runs {@code function} on the owning thread (at the next duty cycle) and completes the future
     * with its result. Never blocks: a full queue or a closed device fails the future with a
     * {@link RejectedExecutionException}.
     *
     * @param function code that uses the endpoint
     * @param <T> result type
     * @return the future result
     */
    public <T> CompletableFuture<T> submit(final Function<Endpoint, T> function) {
        return commands.submit(function);
    }

    /**
     * Queues {@code command} for the owning thread without blocking or allocating.
     *
     * @param command code to run on the owning thread; its exceptions are logged and counted
     * @return false if the queue is full or the device closed
     */
    public boolean offer(final Runnable command) {
        return commands.offer(command);
    }

    /** Wakes the owning thread for a command just queued; any thread. */
    private void wakeOwner() {
        if (loop != null) {
            loop.wakeup();
        } else {
            wakeAwaiting();
        }
    }

    private void wakeAwaiting() {
        final int on = awaitingOn;
        if (on == AWAIT_EVENT_LOOP) {
            eventLoop.wakeup();
        } else if (on == AWAIT_SOCKET) {
            final PolledUdpSocket socket = polledSocket;
            if (socket != null) {
                socket.wakeup();
            }
        }
    }

    /**
     * Queues {@code command} for the owning thread.
     *
     * @param command code to run on the owning thread
     * @throws RejectedExecutionException if the queue is full or the device closed
     */
    public void execute(final Runnable command) {
        if (!offer(command)) {
            throw commands.rejection();
        }
    }

    /**
     * Runs {@code function} on the owning thread and waits for its result: directly when called on
     * the owning thread, else through the command queue. In INVOKER mode a call from another thread
     * waits until the owning thread next calls {@link #doWork()}.
     *
     * @param function code that uses the endpoint
     * @param <T> result type
     * @return its result
     * @throws RuntimeException whatever {@code function} threw, or an IllegalStateException on timeout
     */
    public <T> T call(final Function<Endpoint, T> function) {
        if (isOwningThread()) {
            if (cleanedUp) {
                throw new IllegalStateException("device is closed");
            }
            return function.apply(endpoint);
        }
        return commands.call(function, config.callTimeoutNs(),
            mode == ThreadingMode.INVOKER ? " (INVOKER mode: is someone calling doWork()?)" : "");
    }

    private void runCommand(final Runnable command) {
        counters.increment(DriverCounter.COMMANDS_RUN);
        try {
            command.run();
        } catch (final Throwable t) {
            counters.increment(DriverCounter.ENGINE_ERRORS);
            logError("a command threw", t);
        }
    }

    // ------------------------------------------------------------------ duty cycle

    /**
     * Performs one duty cycle (INVOKER mode, owning thread only): reads what has arrived, runs queued
     * commands, emits what is due and flushes.
     *
     * @return amount of work done (0 when there was nothing to do)
     * @throws IllegalStateException in DEDICATED mode, from another thread, or after close
     */
    public int doWork() {
        checkInvoker();
        return dutyCycle();
    }

    /**
     * Performs one duty cycle (INVOKER mode, owning thread only) with the application's step between
     * reading and sending: first what has arrived is read (completions appear), then
     * {@code application} runs (it may reap completions and post), then queued commands run, the
     * endpoint emits what is due and the sockets are flushed. A reply posted on a completion reaped
     * in {@code application} leaves in this cycle, ahead of the acknowledgement of the request it
     * answers (a queue pair sends its requests before a bare ACK), so the ACK is not on the path of
     * request-reply latency [REL-008]. Reading stops at the first datagram that completes a work
     * request, so that the application reacts before the datagrams behind it are read; whatever
     * that stop left in the socket is read at the end of the same cycle, after the flush, so a
     * stream of completions never leaves acknowledgements waiting in the socket.
     *
     * @param application the application's step; returns the work it did (0 for none)
     * @return amount of work done by the device and the application (0 when there was nothing to do)
     * @throws IllegalStateException in DEDICATED or SHARED mode, from another thread, or after close
     */
    public int doWork(final java.util.function.IntSupplier application) {
        checkInvoker();
        beginIo();
        // A datagram that completes a work request ends the read: the application reacts to it
        // before the datagrams behind it (often the ACK that travelled with a reply) are read.
        final int io = runEventLoop() + readPolledSocket(completionCount);
        final int app = application.getAsInt();
        final int protocol = protocolCycle();
        // What the early stop left unread is read now, after the reply left: otherwise a stream
        // whose every few datagrams complete something reads a handful of ACKs per cycle while the
        // cycle may emit a thousand packets, the socket backlog grows to seconds, its ACKs overflow
        // and are dropped, and the requester retransmits what the responder has long acknowledged.
        return io + app + protocol + readPolledSocket();
    }

    /**
     * Blocks the owning thread (INVOKER mode) until there may be work for {@link #doWork()}: a
     * datagram arrives at the endpoint socket, a command is queued ({@link #offer}, {@link #submit},
     * {@link #call} from another thread), the endpoint's next deadline comes, or {@code maxWaitNs}
     * passes, whichever is first. It costs no CPU while it waits: the BATCHED receive path waits in
     * the event loop ({@code epoll_wait} or {@code select}, and reads what arrives), the POLLED path
     * in a selector on the endpoint socket (the next {@code doWork} reads). Call it after a duty
     * cycle that did no work, as an idle strategy would be called:
     * <pre>{@code
     * while (running) {
     *     if (device.doWork() == 0) {
     *         device.awaitWork(1_000_000);   // at most 1 ms
     *     }
     * }
     * }</pre>
     * On the native transport the wait also ends when a send socket whose buffer was full can take
     * datagrams again (the rest of its batch goes out in the next {@code doWork}).
     * A wait shorter than a millisecond on the POLLED path parks the thread for that long without
     * watching the socket (a selector counts in milliseconds), as a backoff idle strategy would.
     * Waking up costs a few microseconds more than spinning; latency-critical loops spin instead.
     *
     * @param maxWaitNs longest wait in nanoseconds (&gt; 0)
     * @return whether it waited; false when work was already due (a queued command, a deadline
     *     reached) or the device is closed
     * @throws IllegalArgumentException if {@code maxWaitNs <= 0}
     * @throws IllegalStateException in DEDICATED or SHARED mode, from another thread, or after close
     */
    public boolean awaitWork(final long maxWaitNs) {
        if (maxWaitNs <= 0) {
            throw new IllegalArgumentException("maxWaitNs must be > 0, got " + maxWaitNs);
        }
        checkInvoker("awaitWork()");
        final long deadline = nextDeadlineNs();
        final long wait = deadline == Long.MAX_VALUE ? maxWaitNs
            : Math.min(maxWaitNs, deadline - System.nanoTime());
        if (wait <= 0) {
            return false;
        }
        final PolledUdpSocket socket = polledSocket;
        // A native device has no socket in the event loop: it always waits on its endpoint socket,
        // whose epoll also watches the send sockets that wait to drain (the sink registers them).
        final boolean nativeSockets = transport == Transport.NATIVE;
        final boolean draining = sink.hasPendingOutbound();
        final boolean onSocket = socket != null && (nativeSockets || !draining);
        if (onSocket && wait < TimeUnit.MILLISECONDS.toNanos(1)) {
            LockSupport.parkNanos(wait);
            return true;
        }
        // Published before the queue is checked: an offer() after the check sees it and wakes us.
        awaitingOn = onSocket ? AWAIT_SOCKET : AWAIT_EVENT_LOOP;
        try {
            if (!commands.isEmpty() || closed.get()) {
                return false;
            }
            if (onSocket) {
                socket.awaitReadable(wait);
            } else {
                // BATCHED: the event loop reads the endpoint socket and delivers what arrives. POLLED
                // with a send socket draining: wait for it to become writable, not long, since the
                // endpoint socket is not watched meanwhile.
                beginIo();
                eventLoop.run(socket == null ? wait : Math.min(wait, DRAIN_WAIT_NS), 0);
            }
            return true;
        } catch (final java.io.IOException ex) {
            counters.increment(DriverCounter.RECEIVE_ERRORS);
            LOG.debug("waiting for the endpoint socket failed: {}", ex.toString());
            return false;
        } finally {
            awaitingOn = AWAIT_NONE;
        }
    }

    private void checkInvoker() {
        checkInvoker("doWork()");
    }

    private void checkInvoker(final String method) {
        if (mode != ThreadingMode.INVOKER) {
            throw new IllegalStateException(method + " is for INVOKER mode; this device is " + mode);
        }
        if (!eventLoop.inEventLoop()) {
            throw new IllegalStateException(method + " must be called by the thread that built the device ("
                + "INVOKER mode), not " + Thread.currentThread().getName());
        }
        if (cleanedUp) {
            throw new IllegalStateException("device is closed");
        }
    }

    /**
     * @return when the device next needs a duty cycle ({@link Long#MAX_VALUE} when nothing is
     *     due), in {@link System#nanoTime()} time: the endpoint's next deadline, or the end of the
     *     counters file's publication interval when changes await publication; owning thread only
     */
    public long nextDeadlineNs() {
        final CounterPublisher publisher = counterPublisher;
        final long deadline = endpoint.nextDeadlineNs();
        return publisher == null ? deadline : Math.min(deadline, publisher.nextDeadlineNs());
    }

    /** Marks the start of a duty cycle: datagrams read from now on get a fresh timestamp. */
    void beginIo() {
        receiver.beginCycle();
    }

    /** Owning thread: runs queued commands, polls the endpoint into the sink and flushes. */
    int protocolCycle() {
        if (cleanedUp) {
            return 0;
        }
        int work = commands.drain(commandRunner);
        if (cleanedUp) {
            // A command closed the device.
            return work;
        }
        final long nowNs = System.nanoTime();
        sink.beginCycle();
        try {
            final CapturingSink capturing = capturingSink;
            work += endpoint.poll(nowNs, capturing == null ? sink : capturing.wrap(sink));
        } catch (final Throwable t) {
            counters.increment(DriverCounter.ENGINE_ERRORS);
            logError("endpoint.poll threw", t);
        }
        work += sink.flush();
        counters.increment(DriverCounter.DUTY_CYCLES);
        final CounterPublisher publisher = counterPublisher;
        if (publisher != null) {
            publisher.onDutyCycle(nowNs);
        }
        return work;
    }

    /** Owning thread: the endpoint's next deadline, or {@link Long#MAX_VALUE} once closed. */
    long nextDeadlineNsOnLoop() {
        return cleanedUp ? Long.MAX_VALUE : nextDeadlineNs();
    }

    /** @return whether commands wait for the owning thread */
    boolean hasQueuedCommands() {
        return !commands.isEmpty();
    }

    private int dutyCycle() {
        beginIo();
        final int io = runEventLoop() + readPolledSocket();
        return io + protocolCycle();
    }

    /**
     * Owning thread: runs Netty's event loop. With the POLLED receive path no socket of the device
     * is read by the event loop, so the readiness poll (one {@code epoll_wait} or {@code select}) is
     * needed only while a send socket waits to become writable again; otherwise only queued tasks
     * run, and the poll happens every {@value #EVENT_LOOP_POLL_EVERY} cycles as a safety net.
     *
     * @return I/O events and tasks handled
     */
    private int runEventLoop() {
        return needsEventLoopIo() ? eventLoop.runNow() : eventLoop.runNonBlockingTasks(0);
    }

    /**
     * Owning thread: where the sink registers send sockets whose buffer filled, so that the
     * readiness wait the driver thread blocks in ends when they drain (see {@link WritabilityWatch}).
     */
    void watchWritabilityWith(final WritabilityWatch watch) {
        if (sink != null) {
            sink.watchWritabilityWith(watch);
        }
    }

    /** Owning thread: whether this cycle must poll the event loop for I/O (see {@link #runEventLoop()}). */
    boolean needsEventLoopIo() {
        if (transport == Transport.NATIVE) {
            return false; // no socket of the device is in the event loop
        }
        return polledSocket == null || sink == null || sink.hasPendingOutbound()
            || (++eventLoopSkips & (EVENT_LOOP_POLL_EVERY - 1)) == 0;
    }

    /**
     * Owning thread: reads the endpoint socket of the POLLED receive path (nothing on the BATCHED
     * path, where the event loop delivers datagrams).
     *
     * @return datagrams read
     */
    int readPolledSocket() {
        return readPolledSocket(null);
    }

    private int readPolledSocket(final java.util.function.LongSupplier stopOnCompletion) {
        final PolledUdpSocket socket = polledSocket;
        return socket == null || cleanedUp ? 0
            : receiver.readFrom(socket, config.maxDatagramsPerRead(), stopOnCompletion);
    }

    // ------------------------------------------------------------------ sockets

    private void openChannels() throws Exception {
        // Initialises the I/O handler on the owning thread before anything registers with it.
        eventLoop.runNow();
        if (transport == Transport.NATIVE) {
            openNativeSockets();
            return;
        }
        // Writes that fail later in Netty's pipeline are the sink's to count (and may turn GSO off).
        final NettyUdpTransport netty = new NettyUdpTransport(eventLoop, transport, config, counters, failure -> {
            final NettySink current = sink;
            if (current != null) {
                current.sendFailed(failure);
            } else {
                counters.sendFailed(failure);
            }
        });
        final InetSocketAddress endpointBind = new InetSocketAddress(config.bindAddress(), config.endpointPort());
        // IP_TOS (IPV6_TCLASS on IPv6 sockets): DSCP in the upper six bits, ECN Not-ECT.
        final SocketOptions endpointOptions = new SocketOptions(endpointBind, config.receiveBufferBytes(),
            config.sendBufferBytes(), config.controlDscp() << 2);
        if (receivePath == ReceivePath.POLLED) {
            polledSocket = new JdkUdpTransport(config.maxDatagramBytes()).open(endpointOptions, receiver);
            endpointSocket = polledSocket;
        } else {
            endpointSocket = netty.open(endpointOptions, receiver);
        }
        localAddress = endpointSocket.localAddress();

        // Send sockets: never read (everything arrives on the endpoint port [ENC-002]).
        final int[] requested = config.requestedEntropyPorts();
        final int[] ports = new int[requested.length];
        sendSockets = new UdpSocket[requested.length];
        // GSO when asked for and every send socket can (there is at least one).
        boolean gso = config.gso();
        for (int i = 0; i < requested.length; i++) {
            final UdpSocket socket = netty.open(new SocketOptions(new InetSocketAddress(config.bindAddress(),
                requested[i]), 4096, config.sendBufferBytes(), config.dataDscp() << 2), null);
            sendSockets[i] = socket;
            ports[i] = socket.localAddress().getPort();
            gso &= socket.capabilities().gso();
        }
        entropyPorts = ports;
        sink = new NettySink(netty, config.sinkChunkBytes(), config.maxPacketsPerCycle(), peers, counters, sendSockets,
            entropyPorts, endpointSocket, gso, config.gsoMinSegments(), config.connectEntropySockets(),
            config.preserveSendOrder());
        gsoActive = gso;
    }

    /**
     * The native transport: every socket a native one read or written by the owning thread, the
     * endpoint socket polled; packets leave ECT(0) [ENC-015] with the data or control DSCP
     * [ENC-012, ENC-013].
     */
    private void openNativeSockets() throws java.io.IOException {
        final UdpTransport nat = NativeTransportLoader.transport(config.maxDatagramBytes(), config.receiveBatch(),
            config.gro());
        final InetSocketAddress endpointBind = new InetSocketAddress(config.bindAddress(), config.endpointPort());
        polledSocket = (PolledUdpSocket) nat.open(new SocketOptions(endpointBind, config.receiveBufferBytes(),
            config.sendBufferBytes(), config.controlDscp() << 2 | ECT_0), receiver);
        endpointSocket = polledSocket;
        localAddress = endpointSocket.localAddress();
        final int[] requested = config.requestedEntropyPorts();
        final int[] ports = new int[requested.length];
        sendSockets = new UdpSocket[requested.length];
        for (int i = 0; i < requested.length; i++) {
            final UdpSocket socket = nat.open(new SocketOptions(new InetSocketAddress(config.bindAddress(),
                requested[i]), 4096, config.sendBufferBytes(), config.dataDscp() << 2 | ECT_0), null);
            sendSockets[i] = socket;
            ports[i] = socket.localAddress().getPort();
        }
        entropyPorts = ports;
        sink = new NettySink(nat, config.sinkChunkBytes(), config.maxPacketsPerCycle(), peers, counters, sendSockets,
            entropyPorts, endpointSocket, config.gso(), config.gsoMinSegments(), config.connectEntropySockets(),
            config.preserveSendOrder());
        if (mode == ThreadingMode.INVOKER && polledSocket instanceof WritabilityWatch ownWait) {
            // awaitWork blocks in the endpoint socket's epoll_wait: a full send socket ends it too.
            sink.watchWritabilityWith(ownWait);
        }
        gsoActive = config.gso();
    }

    /** The ECN codepoint ECT(0) (RFC 3168), in the low two bits of IP_TOS / IPV6_TCLASS. */
    private static final int ECT_0 = 2;

    // ------------------------------------------------------------------ shutdown

    /**
     * Stops the device: queued commands fail, the sockets close, every buffer is released; a
     * DEDICATED device's driver thread ends and an INVOKER device's event loop shuts down (a SHARED
     * device just detaches from its driver). Idempotent. In INVOKER mode it must be called by the
     * owning thread.
     */
    @Override
    public void close() {
        if (mode == ThreadingMode.INVOKER) {
            if (!eventLoop.inEventLoop()) {
                throw new IllegalStateException("close() of an INVOKER device must be called by its owning thread");
            }
            closed.set(true);
            cleanUpOnLoop();
            return;
        }
        closed.set(true);
        final boolean privateLoop = mode == ThreadingMode.DEDICATED;
        if (Thread.currentThread() == loop.thread()) {
            // Called from a command or a handler on the driver thread.
            cleanUpOnLoop();
            loop.remove(this);
            if (privateLoop) {
                loop.stop();
            }
            return;
        }
        try {
            loop.runOnLoop(() -> {
                cleanUpOnLoop();
                loop.remove(this);
                return null;
            }, SETUP_TIMEOUT_NS);
        } catch (final RejectedExecutionException ex) {
            // The driver has stopped: it closed every device it had.
        } catch (final Exception ex) {
            LOG.warn("error while closing {}", this, ex);
        }
        if (privateLoop) {
            loop.stopAndJoin();
        }
    }

    /**
     * Owning thread: fails queued commands, closes the sockets, releases buffers and, in INVOKER
     * mode, shuts the device's own event loop down. Idempotent.
     */
    void cleanUpOnLoop() {
        if (cleanedUp) {
            return;
        }
        cleanedUp = true;
        closed.set(true);
        if (sink != null) {
            sink.close();
        }
        final CounterPublisher publisher = counterPublisher;
        if (publisher != null) {
            publisher.close();
        }
        commands.failQueued();
        if (loop != null) {
            loop.unwatch(this);
        }
        if (endpointSocket != null) {
            endpointSocket.close();
        }
        for (final UdpSocket socket : sendSockets) {
            if (socket != null) {
                socket.close();
            }
        }
        final long deadline = System.nanoTime() + SETUP_TIMEOUT_NS;
        if (mode == ThreadingMode.INVOKER) {
            eventLoop.shutdownGracefully(0, 1, TimeUnit.SECONDS);
            while (!eventLoop.isTerminated() && System.nanoTime() - deadline < 0) {
                runQuietly();
            }
            if (!eventLoop.isTerminated()) {
                LOG.warn("event loop of {} did not terminate", localAddress);
            }
        }
        commands.failQueued();
    }

    private void runQuietly() {
        try {
            eventLoop.runNow();
        } catch (final Throwable t) {
            LOG.debug("error while shutting down the event loop", t);
        }
    }

    private void logError(final String what, final Throwable t) {
        final long n = errorsLogged++;
        if (n < 10 || n % 10_000 == 0) {
            LOG.error("{} (occurrence {})", what, n + 1, t);
        }
    }

    private static RuntimeException asUnchecked(final String message, final Throwable cause) {
        if (cause instanceof UncheckedIOException || cause instanceof IllegalStateException
            || cause instanceof IllegalArgumentException) {
            return (RuntimeException) cause;
        }
        if (cause instanceof IOException) {
            return new UncheckedIOException(message + ": " + cause.getMessage(), (IOException) cause);
        }
        if (cause instanceof RuntimeException) {
            return (RuntimeException) cause;
        }
        if (cause instanceof Error) {
            throw (Error) cause;
        }
        return new IllegalStateException(message, cause);
    }

    @Override
    public String toString() {
        return "MetaRoceDevice{" + localAddress + ", entropyPorts=" + java.util.Arrays.toString(entropyPorts)
            + ", " + transport + ", " + mode + '}';
    }
}
