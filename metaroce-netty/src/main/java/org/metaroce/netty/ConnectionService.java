// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;

import org.metaroce.core.connection.CmConfig;
import org.metaroce.core.connection.CmEvent;
import org.metaroce.core.connection.CmReason;
import org.metaroce.core.connection.ConnectParams;
import org.metaroce.core.connection.Connection;
import org.metaroce.core.connection.ConnectionManager;
import org.metaroce.core.connection.ConnectionState;
import org.metaroce.core.connection.ListenParams;
import org.metaroce.core.connection.Listener;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Blocking and future-based forms of the core's sans-I/O {@link ConnectionManager} over a
 * {@link MetaRoceDevice}, for application threads (rdma_cm's synchronous usage: listen, wait for
 * a request, accept or reject, connect, disconnect).
 *
 * <p>The service builds the device's connection manager on the owning thread (with the device's
 * {@link PeerTable} as peer directory and its endpoint port) and installs itself as the manager's
 * event handler: every event is routed, on the owning thread, to the future waiting for it. A
 * device has one connection manager, so build at most one service per device, and leave the
 * {@code handler} of {@link ListenParams} and {@link ConnectParams} unset (events claimed by such
 * a handler never reach the service). {@link #eventListener(Consumer)} sees every event first.
 *
 * <p>Threading:
 * <ul>
 *   <li>{@link ThreadingMode#DEDICATED} and {@link ThreadingMode#SHARED}: the blocking calls wait on
 *       futures the driver thread completes; they must not be called on the driver thread itself
 *       (use the asynchronous forms there).</li>
 *   <li>{@link ThreadingMode#INVOKER}: the blocking calls must be made on the owning thread (the
 *       thread that built the device) and drive the device themselves, calling
 *       {@link MetaRoceDevice#doWork()} in their wait loop and never idling past
 *       {@link MetaRoceDevice#nextDeadlineNs()}. Other devices owned by the same thread make no
 *       progress meanwhile: give each device its own thread, or use the asynchronous forms and
 *       drive the devices yourself.</li>
 * </ul>
 * The asynchronous forms may be called from any thread; their futures complete on the owning
 * thread, so dependent stages without {@code ...Async} run there and must not block. After
 * {@link #close()} every operation throws an IllegalStateException.
 *
 * <p>A {@link Connection} returned by the service may be read from the thread that received it;
 * its queue pair is used like any other (post on the owning thread, e.g. with
 * {@link MetaRoceDevice#call}; poll its completion queues from the application thread).
 *
 * <p>This class routes the manager's events and runs each call on the owning thread; what waits
 * is kept by parts of its own: the requests per Service ID and their takers ({@link RequestQueue}),
 * the connects and accepts waiting for ESTABLISHED ({@link Handshakes}), the waiters for a
 * connection's end ({@link DisconnectWaiters}), and how a caller's thread waits
 * ({@link BlockingWait}).
 */
public final class ConnectionService implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(ConnectionService.class);

    private final MetaRoceDevice device;
    private final ConnectionManager manager;
    private final BlockingWait waiting;
    private final Set<CompletableFuture<?>> outstanding = ConcurrentHashMap.newKeySet();
    private volatile boolean closed;
    private volatile Consumer<CmEvent> eventListener;

    // ---- owning thread only
    private final RequestQueue<IncomingRequest> requests = new RequestQueue<>(IncomingRequest::serviceId,
        r -> r.connection().state() == ConnectionState.REQUEST_PENDING);
    private final Handshakes<Connection> handshakes = new Handshakes<>();
    private final DisconnectWaiters<Connection> disconnects = new DisconnectWaiters<>();
    private final List<Listener> listeners = new ArrayList<>();

    /**
     * A service with the default {@link CmConfig}.
     *
     * @param device the device; in INVOKER mode call this on its owning thread
     */
    public ConnectionService(final MetaRoceDevice device) {
        this(device, new CmConfig());
    }

    /**
     * Builds the device's connection manager on the owning thread.
     *
     * @param device the device; in INVOKER mode call this on its owning thread
     * @param config connection-manager parameters (kept by reference; do not change afterwards)
     */
    public ConnectionService(final MetaRoceDevice device, final CmConfig config) {
        this.device = Objects.requireNonNull(device, "device");
        Objects.requireNonNull(config, "config");
        this.waiting = new BlockingWait(device);
        this.manager = device.call(ep -> {
            final ConnectionManager cm = new ConnectionManager(ep, device.endpointPort(), device.peers(), config);
            cm.eventHandler(this::onEvent);
            return cm;
        });
    }

    /** @return the device */
    public MetaRoceDevice device() {
        return device;
    }

    /** @return the connection manager; use it on the owning thread only */
    public ConnectionManager manager() {
        return manager;
    }

    /**
     * @param listener runs on the owning thread for every connection-manager event, before the
     *     service routes it (for example to notice a peer's disconnect); must not block. Null for none.
     */
    public void eventListener(final Consumer<CmEvent> listener) {
        this.eventListener = listener;
    }

    // ============================================================================= server side

    /**
     * Starts serving a Service ID (rdma_listen). Runs on the owning thread through
     * {@link MetaRoceDevice#call}.
     *
     * @param serviceId the Service ID
     * @param params resources and negotiation parameters of accepted connections (handler unset)
     * @return the listener (close it on the owning thread, or let {@link #close()} do it)
     * @throws IllegalStateException if the Service ID already has a listener or the service is closed
     */
    public Listener listen(final long serviceId, final ListenParams params) {
        Objects.requireNonNull(params, "params");
        requireOpen();
        return device.call(ep -> {
            final Listener l = manager.listen(serviceId, params);
            listeners.add(l);
            return l;
        });
    }

    /**
     * The next connection request for a Service ID: one already queued, or the next to arrive.
     * Requests the application did not decide on in time (the handshake entry expired) are skipped.
     *
     * @param serviceId a Service ID this service listens on
     * @return a future completed on the owning thread
     */
    public CompletableFuture<IncomingRequest> requestAsync(final long serviceId) {
        final CompletableFuture<IncomingRequest> f = track(new CompletableFuture<>());
        onOwner(f, () -> {
            if (!f.isDone()) {
                requests.take(serviceId, f);
            }
        });
        return f;
    }

    /**
     * Waits for a connection request (a CONNECT_REQUEST event) for a Service ID.
     *
     * @param serviceId a Service ID this service listens on
     * @param timeout how long to wait
     * @return the request: its pending connection and the client's private data
     * @throws TimeoutException if no request arrived in time
     * @throws InterruptedException if the thread was interrupted
     * @throws IllegalStateException if called on the wrong thread (see the class comment)
     */
    public IncomingRequest awaitRequest(final long serviceId, final Duration timeout)
        throws TimeoutException, InterruptedException {
        final long deadline = BlockingWait.deadline(timeout);
        waiting.requireBlockingThread("awaitRequest");
        final CompletableFuture<IncomingRequest> f = requestAsync(serviceId);
        try {
            return waiting.await(f, deadline);
        } catch (final ExecutionException ex) {
            throw BlockingWait.unchecked(ex.getCause());
        } catch (final TimeoutException ex) {
            if (f.completeExceptionally(ex)) {
                throw new TimeoutException("no connection request for service " + serviceId + " within "
                    + timeout.toMillis() + " ms");
            }
            return BlockingWait.resultOf(f);
        } catch (final InterruptedException ex) {
            if (!f.completeExceptionally(new CancellationException("interrupted"))) {
                // A request was handed out: keep it for the next caller.
                final IncomingRequest r = f.getNow(null);
                if (r != null) {
                    requeue(r);
                }
            }
            throw ex;
        }
    }

    /**
     * Accepts a request (rdma_accept); the future completes with the connection on ESTABLISHED, or
     * exceptionally with a {@link ConnectionFailedException} (CONNECT_ERROR, no queue pair, ended
     * first), or with the IllegalStateException of a request that is no longer pending.
     *
     * @param request a request from {@link #awaitRequest} or {@link #requestAsync}
     * @param privateData for the client, at most 256 bytes, or null
     * @return a future completed on the owning thread
     */
    public CompletableFuture<Connection> acceptAsync(final IncomingRequest request, final byte[] privateData) {
        Objects.requireNonNull(request, "request");
        final CompletableFuture<Connection> f = track(new CompletableFuture<>());
        final Handshakes.Pending<Connection> p = new Handshakes.Pending<>(f, request.client(), request.serviceId(),
            false);
        onOwner(f, () -> {
            if (f.isDone()) {
                return;
            }
            final Connection c = request.connection();
            handshakes.started(c, p);
            final boolean accepted;
            try {
                accepted = manager.accept(c, privateData);
            } catch (final RuntimeException ex) {
                handshakes.notStarted(c);
                throw ex;
            }
            if (!accepted) {
                handshakes.notStarted(c);
                f.completeExceptionally(new ConnectionFailedException(p.what()
                    + " failed: no queue pair could be allocated (rejected NO_RESOURCES)", p.peer, p.serviceId, null));
            }
        });
        return f;
    }

    /**
     * Accepts a request and waits until the connection is established.
     *
     * @param request a request from {@link #awaitRequest}
     * @param privateData for the client, at most 256 bytes, or null
     * @param timeout how long to wait for ESTABLISHED; when it passes the connection is torn down
     * @return the established connection
     * @throws ConnectionFailedException if the handshake failed or timed out
     * @throws InterruptedException if the thread was interrupted (the connection is torn down)
     * @throws IllegalStateException if the request is no longer pending, or on the wrong thread
     */
    public Connection accept(final IncomingRequest request, final byte[] privateData, final Duration timeout)
        throws ConnectionFailedException, InterruptedException {
        final long deadline = BlockingWait.deadline(timeout);
        waiting.requireBlockingThread("accept");
        return awaitConnection(acceptAsync(request, privateData), deadline, timeout,
            request.client(), request.serviceId(), "accepting a connection from " + request.client());
    }

    /**
     * Rejects a request (rdma_reject): the client sees REJECTED, REJECTED_BY_APPLICATION, with the
     * private data. Runs on the owning thread through {@link MetaRoceDevice#call}.
     *
     * @param request a request from {@link #awaitRequest}
     * @param privateData for the client, at most 256 bytes, or null
     * @throws IllegalStateException if the request is no longer pending
     */
    public void reject(final IncomingRequest request, final byte[] privateData) {
        Objects.requireNonNull(request, "request");
        device.call(ep -> {
            manager.reject(request.connection(), privateData);
            return null;
        });
    }

    // ============================================================================= client side

    /**
     * Connects to a service (rdma_connect): on the owning thread resolves and pins the server's
     * peer id ({@link MetaRoceDevice#peerId}), sets it and the Service ID on {@code params}, and
     * connects. The future completes with the connection on ESTABLISHED, or exceptionally with a
     * {@link ConnectionRejectedException} (REJECTED) or a {@link ConnectionFailedException}
     * (UNREACHABLE after the connect timeout, CONNECT_ERROR).
     *
     * @param server the server's endpoint address (IP address and endpoint port)
     * @param serviceId the Service ID
     * @param params resources, proposal, private data, connect timeout (peer and Service ID are set here)
     * @return a future completed on the owning thread
     */
    public CompletableFuture<Connection> connectAsync(final InetSocketAddress server, final long serviceId,
                                                      final ConnectParams params) {
        Objects.requireNonNull(server, "server");
        Objects.requireNonNull(params, "params");
        final CompletableFuture<Connection> f = track(new CompletableFuture<>());
        final Handshakes.Pending<Connection> p = new Handshakes.Pending<>(f, server, serviceId, true);
        onOwner(f, () -> {
            if (f.isDone()) {
                return;
            }
            if (server.isUnresolved()) {
                throw new IllegalArgumentException("unresolved server address " + server);
            }
            params.peer(device.peerId(server)).serviceId(serviceId);
            handshakes.started(manager.connect(params), p);
        });
        return f;
    }

    /**
     * Connects and waits until the connection is established.
     *
     * @param server the server's endpoint address (IP address and endpoint port)
     * @param serviceId the Service ID
     * @param params resources, proposal, private data, connect timeout (peer and Service ID are set here)
     * @param timeout how long to wait for ESTABLISHED; when it passes the attempt is abandoned
     * @return the established connection; {@link Connection#peerPrivateData()} is the server's
     * @throws ConnectionRejectedException if the server rejected the request
     * @throws ConnectionFailedException if the server did not answer, the handshake failed, or the
     *     timeout passed
     * @throws InterruptedException if the thread was interrupted (the attempt is abandoned)
     * @throws IllegalStateException if called on the wrong thread (see the class comment)
     */
    public Connection connect(final InetSocketAddress server, final long serviceId, final ConnectParams params,
                              final Duration timeout) throws ConnectionFailedException, InterruptedException {
        final long deadline = BlockingWait.deadline(timeout);
        waiting.requireBlockingThread("connect");
        return awaitConnection(connectAsync(server, serviceId, params), deadline, timeout, server, serviceId,
            "connection to " + server + " (service " + serviceId + ")");
    }

    // ============================================================================= teardown

    /**
     * Disconnects (rdma_disconnect): the queue pair goes to ERR and DISCONNECT_REQUEST is sent; the
     * future completes on DISCONNECTED (on DISCONNECT_REPLY or after DISCONNECT_TIMEOUT), at once if
     * the connection is already over. Disconnecting a connection that is still connecting gives up.
     *
     * @param connection the connection
     * @return a future completed on the owning thread
     */
    public CompletableFuture<Void> disconnectAsync(final Connection connection) {
        return watchDisconnect(connection, true);
    }

    /**
     * A future completed when the connection is over (DISCONNECTED), without starting a
     * disconnect: for the side that waits for its peer to end the connection.
     *
     * @param connection the connection
     * @return a future completed on the owning thread
     */
    public CompletableFuture<Void> disconnectedAsync(final Connection connection) {
        return watchDisconnect(connection, false);
    }

    /**
     * Disconnects and waits for DISCONNECTED; returns at once if the connection is already over.
     *
     * @param connection the connection
     * @param timeout how long to wait
     * @throws TimeoutException if DISCONNECTED did not come in time
     * @throws InterruptedException if the thread was interrupted
     * @throws IllegalStateException if called on the wrong thread (see the class comment)
     */
    public void disconnect(final Connection connection, final Duration timeout)
        throws TimeoutException, InterruptedException {
        final long deadline = BlockingWait.deadline(timeout);
        waiting.requireBlockingThread("disconnect");
        awaitDisconnect(disconnectAsync(connection), deadline, timeout, connection);
    }

    /**
     * Waits until the connection is over (the peer disconnected, or this side did elsewhere),
     * without starting a disconnect. In INVOKER mode this drives the device meanwhile.
     *
     * @param connection the connection
     * @param timeout how long to wait
     * @throws TimeoutException if DISCONNECTED did not come in time
     * @throws InterruptedException if the thread was interrupted
     * @throws IllegalStateException if called on the wrong thread (see the class comment)
     */
    public void awaitDisconnected(final Connection connection, final Duration timeout)
        throws TimeoutException, InterruptedException {
        final long deadline = BlockingWait.deadline(timeout);
        waiting.requireBlockingThread("awaitDisconnected");
        awaitDisconnect(disconnectedAsync(connection), deadline, timeout, connection);
    }

    /**
     * Stops the service: pending futures fail with an IllegalStateException, the service's
     * listeners close, queued undecided requests are rejected (REJECTED_BY_APPLICATION) and later
     * events are dropped. Connections are left as they are, and the device stays open (close it
     * separately, after this). In INVOKER mode call it on the owning thread. Idempotent.
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        final IllegalStateException ex = new IllegalStateException("connection service closed");
        for (final CompletableFuture<?> f : outstanding) {
            f.completeExceptionally(ex);
        }
        outstanding.clear();
        if (device.isClosed()) {
            return;
        }
        final Runnable cleanUp = this::cleanUpOnOwner;
        try {
            if (device.isOwningThread()) {
                cleanUp.run();
            } else if (device.threadingMode() == ThreadingMode.INVOKER) {
                device.offer(cleanUp);
            } else {
                device.call(ep -> {
                    cleanUp.run();
                    return null;
                });
            }
        } catch (final RuntimeException e) {
            LOG.debug("could not clean up the connection service of {}", device, e);
        }
    }

    /** @return whether {@link #close()} was called */
    public boolean isClosed() {
        return closed;
    }

    // ============================================================================= owning thread

    private void onEvent(final CmEvent e) {
        final Consumer<CmEvent> l = eventListener;
        if (l != null) {
            try {
                l.accept(e);
            } catch (final RuntimeException ex) {
                LOG.warn("connection-manager event listener threw on {}", e, ex);
            }
        }
        if (closed) {
            return;
        }
        final Connection c = e.connection();
        switch (e.type()) {
            case CONNECT_REQUEST -> onRequest(e);
            case ESTABLISHED -> handshakes.established(c);
            case REJECTED -> handshakes.rejected(c, e.reason(), e.privateData());
            case UNREACHABLE -> handshakes.failed(c, e.type(),
                "no answer from the server within the connect timeout (UNREACHABLE)");
            case CONNECT_ERROR -> handshakes.failed(c, e.type(), "the handshake failed (CONNECT_ERROR, "
                + CmReason.name(e.reason()) + ")");
            case DISCONNECTED -> {
                handshakes.failed(c, e.type(), "the connection ended before it was established (DISCONNECTED, "
                    + CmReason.name(e.reason()) + ")");
                disconnects.over(c);
            }
            default -> {
                // TIMEWAIT_EXIT: nothing waits for it.
            }
        }
    }

    private void onRequest(final CmEvent e) {
        final Connection c = e.connection();
        requests.arrived(new IncomingRequest(c, e.listener(), device.peers().address(c.remotePeer()),
            e.privateData()));
    }

    /** @return requests queued for a Service ID and not yet handed out, expired ones included (owning thread; tests) */
    int queuedRequests(final long serviceId) {
        return requests.queued(serviceId);
    }

    /** Gives a request an interrupted waiter had taken back to the queue (owning thread). */
    private void requeue(final IncomingRequest r) {
        try {
            onOwner(new CompletableFuture<>(), () -> {
                if (!closed) {
                    requests.giveBack(r);
                }
            });
        } catch (final RuntimeException ex) {
            LOG.debug("could not requeue {}", r, ex);
        }
    }

    private CompletableFuture<Void> watchDisconnect(final Connection connection, final boolean initiate) {
        Objects.requireNonNull(connection, "connection");
        final CompletableFuture<Void> f = track(new CompletableFuture<>());
        onOwner(f, () -> {
            if (f.isDone()) {
                return;
            }
            if (isOver(connection)) {
                f.complete(null);
                return;
            }
            disconnects.add(connection, f);
            if (initiate) {
                manager.disconnect(connection);
                // A pending request is rejected without a DISCONNECTED event.
                if (isOver(connection)) {
                    disconnects.over(connection);
                }
            }
        });
        return f;
    }

    private static boolean isOver(final Connection c) {
        return c.state() == ConnectionState.TIMEWAIT || c.state() == ConnectionState.CLOSED;
    }

    /** The caller gave up on a connect or accept: tear the connection down (owning thread). */
    private void abandon(final CompletableFuture<Connection> f) {
        final Connection c = handshakes.abandoned(f);
        if (c != null) {
            LOG.debug("abandoning {}", c);
            manager.disconnect(c);
        }
    }

    private void cleanUpOnOwner() {
        for (final Listener l : listeners) {
            l.close();
        }
        listeners.clear();
        requests.clear(r -> manager.reject(r.connection(), null));
        handshakes.clear();
        disconnects.clear();
    }

    // ============================================================================= waiting

    private Connection awaitConnection(final CompletableFuture<Connection> f, final long deadline,
                                       final Duration timeout, final InetSocketAddress peer, final long serviceId,
                                       final String what) throws ConnectionFailedException, InterruptedException {
        try {
            return waiting.await(f, deadline);
        } catch (final ExecutionException ex) {
            final Throwable cause = ex.getCause();
            if (cause instanceof ConnectionFailedException cfe) {
                throw cfe;
            }
            throw BlockingWait.unchecked(cause);
        } catch (final TimeoutException ex) {
            if (f.completeExceptionally(ex)) {
                abandonLater(f);
                throw new ConnectionFailedException(what + " timed out after " + timeout.toMillis()
                    + " ms without ESTABLISHED", peer, serviceId, null, true);
            }
            return BlockingWait.resultOf(f);
        } catch (final InterruptedException ex) {
            if (f.completeExceptionally(new CancellationException("interrupted"))) {
                abandonLater(f);
            }
            throw ex;
        }
    }

    private void abandonLater(final CompletableFuture<Connection> f) {
        try {
            onOwner(new CompletableFuture<>(), () -> abandon(f));
        } catch (final RuntimeException ex) {
            LOG.debug("could not abandon a connection attempt", ex);
        }
    }

    private void awaitDisconnect(final CompletableFuture<Void> f, final long deadline, final Duration timeout,
                                 final Connection connection) throws TimeoutException, InterruptedException {
        try {
            waiting.await(f, deadline);
        } catch (final ExecutionException ex) {
            throw BlockingWait.unchecked(ex.getCause());
        } catch (final TimeoutException ex) {
            if (f.completeExceptionally(ex)) {
                throw new TimeoutException("no DISCONNECTED within " + timeout.toMillis() + " ms for " + connection);
            }
        }
    }

    // ============================================================================= helpers

    /** Runs {@code task} on the owning thread (now if this is it); its exception fails {@code f}. */
    private void onOwner(final CompletableFuture<?> f, final Runnable task) {
        final Runnable guarded = () -> {
            try {
                task.run();
            } catch (final RuntimeException | Error ex) {
                f.completeExceptionally(ex);
            }
        };
        if (device.isOwningThread()) {
            guarded.run();
            return;
        }
        if (!device.offer(guarded)) {
            f.completeExceptionally(new java.util.concurrent.RejectedExecutionException(device.isClosed()
                ? "device is closed" : "the device's command queue is full"));
        }
    }

    private <F extends CompletableFuture<?>> F track(final F f) {
        requireOpen();
        outstanding.add(f);
        f.whenComplete((v, t) -> outstanding.remove(f));
        if (closed) {
            f.completeExceptionally(new IllegalStateException("connection service closed"));
        }
        return f;
    }

    private void requireOpen() {
        if (closed) {
            throw new IllegalStateException("connection service closed");
        }
    }

    @Override
    public String toString() {
        return "ConnectionService{" + device + (closed ? ", closed" : "") + '}';
    }
}
