// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import java.util.function.Function;

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
    private final DeviceConfig config;
    private final Transport transport;
    private final ReceivePath receivePath;
    private final Endpoint endpoint;
    private final PeerTable peers;
    private final DriverCounters counters;
    /** The counters file's writer, or null; set once open, then used by the owning thread only. */
    private volatile CounterPublisher counterPublisher;
    /** Records received packets when a capture is configured, else null. */
    private final CapturingEndpoint capturingEndpoint;
    /** Records sent packets when a capture is configured, else null; set once the sockets are bound. */
    private volatile CapturingSink capturingSink;
    private final ReceiveDispatcher receiver;
    private final DeviceSockets sockets;
    /** Set by whichever thread closes the device (or finds it failed); refuses commands from then on. */
    private final AtomicBoolean closed = new AtomicBoolean();
    /** Drives the duty cycles as the threading mode says, and answers what differs between modes. */
    private final ModeRunner runner;
    private final CommandQueue commands;
    private final Consumer<Runnable> commandRunner = this::runCommand;
    private final java.util.function.LongSupplier completionCount;
    /** Cycles since the event loop last polled for I/O (POLLED path). */
    private int eventLoopSkips;
    /** A POLLED device polls the event loop for I/O at least every this many cycles (a power of two). */
    static final int EVENT_LOOP_POLL_EVERY = 64;
    /** Owning thread: whether the device released its sockets and buffers (after {@link #closed} was set). */
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
        this.transport = TransportChoice.transport(config);
        // Where the transport reads the ECN field, QPs that leave their capabilities unset offer
        // ECN, so that DEFAULT, the endpoint's default algorithm, runs with marks [CC-034, ENC-016].
        config.endpointConfig().datagramEcn(TransportChoice.readsEcn(transport));
        // Whatever the transport, a packet waits in this host's sockets and for its threads, and
        // the timestamps include that wait: with ECN, DEFAULT decides on marks alone [CC-037].
        config.endpointConfig().softwareEndpoint(true);
        this.endpoint = new Endpoint(config.endpointConfig(), config.randomSource());
        this.completionCount = endpoint::completionsPushed;
        this.peers = new PeerTable(config.transientPeers());
        this.endpoint.peerDirectory(peers);
        this.counters = new DriverCounters(config.entropyPortCount());
        final PcapWriter capture = config.observability().capture();
        this.capturingEndpoint = capture != null && config.observability().captureReceived()
            ? new CapturingEndpoint(endpoint, capture, peers) : null;
        this.receiver = new ReceiveDispatcher(capturingEndpoint != null ? capturingEndpoint : endpoint, peers, counters);
        if (config.inboundFaults() != null) {
            receiver.injectFaults(config.inboundFaults(), config.maxDatagramBytes());
        }
        receiver.dropRule(config.inboundDropRule());
        // Before the runner: a receive path the mode cannot serve fails before a driver thread starts.
        this.receivePath = TransportChoice.receivePath(config, transport, ModeRunner.idlesInEventLoop(config));
        this.sockets = new DeviceSockets(config, transport, receivePath, peers, counters, receiver);
        this.runner = runnerFor(config, transport, new OwningSide(), closed, counters);
        this.commands = new CommandQueue(config.commandQueueCapacity(), endpoint, closed, counters, runner::wakeup);
        try {
            runner.start(this::openOnOwningThread);
        } catch (final Throwable t) {
            closed.set(true);
            runner.abandon();
            throw asUnchecked("cannot open device " + config, t);
        }
        counterPublisher = openCounterFile();
        if (capture != null) {
            if (capturingEndpoint != null) {
                capturingEndpoint.localAddress(sockets.localAddress());
            }
            capturingSink = new CapturingSink(capture, peers, sockets.localAddress(), sockets.entropyPorts());
        }
        LOG.debug("opened {} device on {} with entropy ports {} ({}, gso={}, gro={}, receive path {})", runner.mode(),
            sockets.localAddress(), java.util.Arrays.toString(sockets.entropyPorts()), transport, sockets.gsoActive(),
            sockets.groActive(), receivePath);
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
                "device " + localAddress() + " entropy ports " + java.util.Arrays.toString(sockets.entropyPorts()) + " "
                    + transport + " " + runner.mode(), endpoint, counters, sockets.entropyPorts(), endpointPort(),
                obs.countersIntervalNs());
        } catch (final RuntimeException ex) {
            LOG.warn("device {} runs without a counters file: {}", localAddress(), ex.toString());
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
                    + "ObservabilityConfig.countersCapacity", localAddress(), group.size(), group.label(0));
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

    /** @return how this device reads its endpoint socket (POLLED or BATCHED) */
    public ReceivePath receivePath() {
        return receivePath;
    }

    /**
     * Owning thread: makes it the only thread the endpoint's objects accept, then opens the sockets
     * (releasing what opened if one fails).
     */
    private void openOnOwningThread() throws Exception {
        if (config.ownerThreadChecks()) {
            endpoint.owningThread().set(Thread.currentThread(), runner.ownerCheckMessage());
        }
        try {
            sockets.open(runner.eventLoop());
        } catch (final Throwable t) {
            cleanUpOnLoop();
            throw t;
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
        return sockets.localAddress();
    }

    /** @return the endpoint port */
    public int endpointPort() {
        return sockets.localAddress().getPort();
    }

    /** @return the entropy values: local ports of the send sockets (a copy), for a QP's PATHS */
    public int[] entropyPorts() {
        return sockets.entropyPorts().clone();
    }

    /** @return the transport in use (AUTO resolved) */
    public Transport transport() {
        return transport;
    }

    /** @return the threading mode */
    public ThreadingMode threadingMode() {
        return runner.mode();
    }

    /**
     * @return whether the device reads the ECN field of received datagrams and marks what it sends
     *     ECT(0) (the native transport): only then may its QPs offer the ECN capability [ENC-016]
     */
    public boolean readsEcn() {
        return TransportChoice.readsEcn(transport);
    }

    /** @return whether UDP GSO writes are in use */
    public boolean gsoActive() {
        return sockets.gsoActive();
    }

    /**
     * @return whether the endpoint socket reads with UDP GRO: the kernel may hand over datagrams of
     *     one flow coalesced, which the device splits ({@link DeviceConfig#groFor(Transport)})
     */
    public boolean groActive() {
        return sockets.groActive();
    }

    /**
     * @return whether a blocking wait on the endpoint socket ({@link #awaitWork}, a driver thread
     *     that blocks when idle) keeps to deadlines closer than a millisecond, and so still sees a
     *     datagram that arrives before them: the native transport where libc and the kernel have
     *     {@code epoll_pwait2} (glibc 2.35, Linux 5.11). Otherwise such a wait parks to the
     *     deadline, blind to the socket.
     */
    public boolean waitsToTheNanosecond() {
        final PolledUdpSocket socket = sockets.polledSocket();
        return socket != null && socket.awaitsToTheNanosecond();
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
        return sockets.sink();
    }

    /** @return whether the calling thread is the owning thread */
    public boolean isOwningThread() {
        return runner.eventLoop().inEventLoop();
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
        return commands.call(function, config.callTimeoutNs(), runner.callTimeoutHint());
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
        return runner.doWork();
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
        return runner.doWork(application);
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
        return runner.awaitWork(maxWaitNs);
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

    /**
     * The device as its runner and a {@link DriverLoop} see it: the steps of a duty cycle, run by
     * the owning thread. A nested class, so that these steps stay out of the public API.
     */
    private final class OwningSide implements DrivenDevice {
        @Override
        public void beginIo() {
            receiver.beginCycle();
        }

        @Override
        public boolean needsEventLoopIo() {
            if (transport == Transport.NATIVE) {
                return false; // no socket of the device is in the event loop
            }
            // With the POLLED path the readiness poll (one epoll_wait or select) is needed only
            // while a send socket waits to become writable again; else every EVENT_LOOP_POLL_EVERY
            // cycles as a safety net.
            final NettySink sink = sockets.sink();
            return sockets.polledSocket() == null || sink == null || sink.hasPendingOutbound()
                || (++eventLoopSkips & (EVENT_LOOP_POLL_EVERY - 1)) == 0;
        }

        @Override
        public int readPolledSocket() {
            return readPolled(null);
        }

        @Override
        public int readPolledSocketUntilCompletion() {
            return readPolled(completionCount);
        }

        private int readPolled(final java.util.function.LongSupplier stopOnCompletion) {
            final PolledUdpSocket socket = sockets.polledSocket();
            return socket == null || cleanedUp ? 0
                : receiver.readFrom(socket, config.maxDatagramsPerRead(), stopOnCompletion);
        }

        @Override
        public int protocolCycle() {
            if (cleanedUp) {
                return 0;
            }
            int work = commands.drain(commandRunner);
            if (cleanedUp) {
                // A command closed the device.
                return work;
            }
            final long nowNs = System.nanoTime();
            final NettySink sink = sockets.sink();
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

        @Override
        public long nextDeadlineNs() {
            return MetaRoceDevice.this.nextDeadlineNs();
        }

        @Override
        public long nextDeadlineNsOnLoop() {
            return cleanedUp ? Long.MAX_VALUE : MetaRoceDevice.this.nextDeadlineNs();
        }

        @Override
        public boolean hasQueuedCommands() {
            return !commands.isEmpty();
        }

        @Override
        public boolean hasPendingOutbound() {
            return sockets.sink().hasPendingOutbound();
        }

        @Override
        public PolledUdpSocket polledSocket() {
            return sockets.polledSocket();
        }

        @Override
        public void watchWritabilityWith(final WritabilityWatch watch) {
            final NettySink sink = sockets.sink();
            if (sink != null) {
                sink.watchWritabilityWith(watch);
            }
        }

        @Override
        public boolean isReleased() {
            return cleanedUp;
        }

        @Override
        public void release() {
            cleanUpOnLoop();
        }

        @Override
        public InetSocketAddress localAddress() {
            return sockets.localAddress();
        }

        @Override
        public String toString() {
            return MetaRoceDevice.this.toString();
        }
    }

    // ------------------------------------------------------------------ shutdown

    /**
     * Stops the device: queued commands fail, the sockets close, every buffer is released; a
     * DEDICATED device's driver thread ends and an INVOKER device's event loop shuts down (a SHARED
     * device just detaches from its driver). Idempotent. In INVOKER mode it must be called by the
     * owning thread.
     */
    @Override
    public void close() {
        runner.close();
    }

    /**
     * Owning thread: fails queued commands, closes the sockets, releases buffers and, in INVOKER
     * mode, shuts the device's own event loop down. Idempotent. The order matters: the sink lets go
     * of its buffers before the sockets close, a driver's wait stops watching the endpoint socket
     * before its descriptor can be reused, and commands queued meanwhile fail at the very end.
     */
    private void cleanUpOnLoop() {
        if (cleanedUp) {
            return;
        }
        cleanedUp = true;
        closed.set(true);
        final NettySink sink = sockets.sink();
        if (sink != null) {
            sink.close();
        }
        final CounterPublisher publisher = counterPublisher;
        if (publisher != null) {
            publisher.close();
        }
        commands.failQueued();
        runner.unwatchSockets();
        sockets.close();
        runner.releaseEventLoop();
        commands.failQueued();
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
        return "MetaRoceDevice{" + sockets.localAddress() + ", entropyPorts="
            + java.util.Arrays.toString(sockets.entropyPorts()) + ", " + transport + ", " + runner.mode() + '}';
    }

    /**
     * The runner of {@code config}'s threading mode; a DEDICATED runner starts its driver thread.
     *
     * @param config the device's configuration
     * @param transport the resolved transport
     * @param device what the runner drives
     * @param closed the device's closed flag (closing sets it)
     * @param counters the device's counters (a failed wait is counted)
     */
    private static ModeRunner runnerFor(final DeviceConfig config, final Transport transport,
                                        final DrivenDevice device, final AtomicBoolean closed,
                                        final DriverCounters counters) {
        return switch (config.threadingMode()) {
            case INVOKER -> new InvokerRunner(transport, device, closed, counters);
            case DEDICATED -> new DedicatedRunner(config, transport, device, closed);
            case SHARED -> new SharedRunner(config.sharedDriver(), device, closed);
        };
    }
}
