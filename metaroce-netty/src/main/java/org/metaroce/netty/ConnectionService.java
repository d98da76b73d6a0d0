// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;

import org.metaroce.core.connection.CmConfig;
import org.metaroce.core.connection.CmEvent;
import org.metaroce.core.connection.CmEventType;
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
 */
public final class ConnectionService implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(ConnectionService.class);
    /** Longest park of an INVOKER wait loop that found nothing to do (datagrams do not wake it). */
    private static final long INVOKER_MAX_PARK_NS = TimeUnit.MICROSECONDS.toNanos(50);
    /** Caps timeouts so that deadline arithmetic cannot overflow. */
    private static final long MAX_TIMEOUT_NS = Long.MAX_VALUE / 4;

    private final MetaRoceDevice device;
    private final ConnectionManager manager;
    private final Set<CompletableFuture<?>> outstanding = ConcurrentHashMap.newKeySet();
    private volatile boolean closed;
    private volatile Consumer<CmEvent> eventListener;

    // ---- owning thread only
    private final Map<Long, ArrayDeque<IncomingRequest>> requests = new HashMap<>();
    private final Map<Long, ArrayDeque<CompletableFuture<IncomingRequest>>> requestWaiters = new HashMap<>();
    private final Map<Connection, Pending> establishing = new IdentityHashMap<>();
    private final Map<Connection, List<CompletableFuture<Void>>> disconnectWaiters = new IdentityHashMap<>();
    private final List<Listener> listeners = new ArrayList<>();

    /** A connect or accept waiting for ESTABLISHED. */
    private static final class Pending {
        final CompletableFuture<Connection> future;
        final InetSocketAddress peer;
        final long serviceId;
        final boolean client;
        Connection connection;

        Pending(final CompletableFuture<Connection> future, final InetSocketAddress peer, final long serviceId,
                final boolean client) {
            this.future = future;
            this.peer = peer;
            this.serviceId = serviceId;
            this.client = client;
        }

        String what() {
            return client ? "connection to " + peer + " (service " + serviceId + ")"
                : "accepted connection from " + peer + " (service " + serviceId + ")";
        }
    }

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
            if (f.isDone()) {
                return;
            }
            final ArrayDeque<IncomingRequest> queued = requests.get(serviceId);
            IncomingRequest r;
            while (queued != null && (r = queued.poll()) != null) {
                if (r.connection().state() == ConnectionState.REQUEST_PENDING) {
                    if (!f.complete(r)) {
                        queued.addFirst(r);
                    }
                    return;
                }
            }
            final ArrayDeque<CompletableFuture<IncomingRequest>> waiters =
                requestWaiters.computeIfAbsent(serviceId, k -> new ArrayDeque<>());
            waiters.removeIf(CompletableFuture::isDone);
            waiters.add(f);
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
        final long deadline = deadline(timeout);
        requireBlockingThread("awaitRequest");
        final CompletableFuture<IncomingRequest> f = requestAsync(serviceId);
        try {
            return await(f, deadline);
        } catch (final ExecutionException ex) {
            throw unchecked(ex.getCause());
        } catch (final TimeoutException ex) {
            if (f.completeExceptionally(ex)) {
                throw new TimeoutException("no connection request for service " + serviceId + " within "
                    + timeout.toMillis() + " ms");
            }
            return resultOf(f);
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
        final Pending p = new Pending(f, request.client(), request.serviceId(), false);
        onOwner(f, () -> {
            if (f.isDone()) {
                return;
            }
            final Connection c = request.connection();
            p.connection = c;
            establishing.put(c, p);
            final boolean accepted;
            try {
                accepted = manager.accept(c, privateData);
            } catch (final RuntimeException ex) {
                establishing.remove(c);
                throw ex;
            }
            if (!accepted) {
                establishing.remove(c);
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
        final long deadline = deadline(timeout);
        requireBlockingThread("accept");
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
        final Pending p = new Pending(f, server, serviceId, true);
        onOwner(f, () -> {
            if (f.isDone()) {
                return;
            }
            if (server.isUnresolved()) {
                throw new IllegalArgumentException("unresolved server address " + server);
            }
            params.peer(device.peerId(server)).serviceId(serviceId);
            final Connection c = manager.connect(params);
            p.connection = c;
            establishing.put(c, p);
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
        final long deadline = deadline(timeout);
        requireBlockingThread("connect");
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
        final long deadline = deadline(timeout);
        requireBlockingThread("disconnect");
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
        final long deadline = deadline(timeout);
        requireBlockingThread("awaitDisconnected");
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
            case ESTABLISHED -> {
                final Pending p = establishing.remove(c);
                if (p != null) {
                    p.future.complete(c);
                }
            }
            case REJECTED -> {
                final Pending p = establishing.remove(c);
                if (p != null) {
                    p.future.completeExceptionally(new ConnectionRejectedException(p.peer, p.serviceId, e.reason(),
                        e.privateData()));
                }
            }
            case UNREACHABLE -> fail(c, e, "no answer from the server within the connect timeout (UNREACHABLE)");
            case CONNECT_ERROR -> fail(c, e, "the handshake failed (CONNECT_ERROR, " + CmReason.name(e.reason())
                + ")");
            case DISCONNECTED -> {
                fail(c, e, "the connection ended before it was established (DISCONNECTED, "
                    + CmReason.name(e.reason()) + ")");
                completeDisconnect(c);
            }
            default -> {
                // TIMEWAIT_EXIT: nothing waits for it.
            }
        }
    }

    private void fail(final Connection c, final CmEvent e, final String cause) {
        final Pending p = establishing.remove(c);
        if (p != null) {
            p.future.completeExceptionally(new ConnectionFailedException(p.what() + " failed: " + cause, p.peer,
                p.serviceId, e.type()));
        }
    }

    private void onRequest(final CmEvent e) {
        final Connection c = e.connection();
        final IncomingRequest r = new IncomingRequest(c, e.listener(), device.peers().address(c.remotePeer()),
            e.privateData());
        final ArrayDeque<CompletableFuture<IncomingRequest>> waiters = requestWaiters.get(c.serviceId());
        CompletableFuture<IncomingRequest> w;
        while (waiters != null && (w = waiters.poll()) != null) {
            if (w.complete(r)) {
                return;
            }
        }
        final ArrayDeque<IncomingRequest> queued = requests.computeIfAbsent(c.serviceId(), k -> new ArrayDeque<>());
        // Requests nobody asked for expire in arrival order (the handshake entry's lifetime) and
        // are skipped when handed out; drop the expired ones at the head here too, so that a peer
        // sending verified requests to a service whose application does not take them cannot grow
        // the queue beyond what the listener limit lets be pending at once [CM-039].
        IncomingRequest head;
        while ((head = queued.peekFirst()) != null && head.connection().state() != ConnectionState.REQUEST_PENDING) {
            queued.pollFirst();
        }
        queued.add(r);
    }

    /** @return requests queued for a Service ID and not yet handed out, expired ones included (owning thread; tests) */
    int queuedRequests(final long serviceId) {
        final ArrayDeque<IncomingRequest> queued = requests.get(serviceId);
        return queued == null ? 0 : queued.size();
    }

    /** Gives a request an interrupted waiter had taken back to the queue (owning thread). */
    private void requeue(final IncomingRequest r) {
        try {
            onOwner(new CompletableFuture<>(), () -> {
                if (!closed) {
                    requests.computeIfAbsent(r.serviceId(), k -> new ArrayDeque<>()).addFirst(r);
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
            disconnectWaiters.computeIfAbsent(connection, k -> new ArrayList<>()).add(f);
            if (initiate) {
                manager.disconnect(connection);
                // A pending request is rejected without a DISCONNECTED event.
                if (isOver(connection)) {
                    completeDisconnect(connection);
                }
            }
        });
        return f;
    }

    private static boolean isOver(final Connection c) {
        return c.state() == ConnectionState.TIMEWAIT || c.state() == ConnectionState.CLOSED;
    }

    private void completeDisconnect(final Connection c) {
        final List<CompletableFuture<Void>> waiters = disconnectWaiters.remove(c);
        if (waiters != null) {
            for (final CompletableFuture<Void> w : waiters) {
                w.complete(null);
            }
        }
    }

    /** The caller gave up on a connect or accept: tear the connection down (owning thread). */
    private void abandon(final CompletableFuture<Connection> f) {
        final Iterator<Map.Entry<Connection, Pending>> it = establishing.entrySet().iterator();
        while (it.hasNext()) {
            final Map.Entry<Connection, Pending> entry = it.next();
            if (entry.getValue().future == f) {
                // IdentityHashMap entries are unusable once removed: take the key first.
                final Connection c = entry.getKey();
                it.remove();
                LOG.debug("abandoning {}", c);
                manager.disconnect(c);
                return;
            }
        }
    }

    private void cleanUpOnOwner() {
        for (final Listener l : listeners) {
            l.close();
        }
        listeners.clear();
        for (final ArrayDeque<IncomingRequest> q : requests.values()) {
            for (final IncomingRequest r : q) {
                if (r.connection().state() == ConnectionState.REQUEST_PENDING) {
                    manager.reject(r.connection(), null);
                }
            }
        }
        requests.clear();
        requestWaiters.clear();
        establishing.clear();
        disconnectWaiters.clear();
    }

    // ============================================================================= waiting

    private Connection awaitConnection(final CompletableFuture<Connection> f, final long deadline,
                                       final Duration timeout, final InetSocketAddress peer, final long serviceId,
                                       final String what) throws ConnectionFailedException, InterruptedException {
        try {
            return await(f, deadline);
        } catch (final ExecutionException ex) {
            final Throwable cause = ex.getCause();
            if (cause instanceof ConnectionFailedException cfe) {
                throw cfe;
            }
            throw unchecked(cause);
        } catch (final TimeoutException ex) {
            if (f.completeExceptionally(ex)) {
                abandonLater(f);
                throw new ConnectionFailedException(what + " timed out after " + timeout.toMillis()
                    + " ms without ESTABLISHED", peer, serviceId, null, true);
            }
            return resultOf(f);
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
            await(f, deadline);
        } catch (final ExecutionException ex) {
            throw unchecked(ex.getCause());
        } catch (final TimeoutException ex) {
            if (f.completeExceptionally(ex)) {
                throw new TimeoutException("no DISCONNECTED within " + timeout.toMillis() + " ms for " + connection);
            }
        }
    }

    /**
     * Waits for {@code f}: INVOKER drives the device until it completes; other modes block on it.
     *
     * @throws ExecutionException if it completed exceptionally
     * @throws TimeoutException if the deadline passed first (the future is left as it is)
     */
    private <T> T await(final CompletableFuture<T> f, final long deadline)
        throws ExecutionException, TimeoutException, InterruptedException {
        if (device.threadingMode() == ThreadingMode.INVOKER) {
            while (!f.isDone()) {
                final int work = device.doWork();
                if (f.isDone()) {
                    break;
                }
                if (Thread.interrupted()) {
                    throw new InterruptedException();
                }
                final long now = System.nanoTime();
                if (now - deadline >= 0) {
                    throw new TimeoutException();
                }
                if (work == 0) {
                    long park = Math.min(INVOKER_MAX_PARK_NS, deadline - now);
                    final long next = device.nextDeadlineNs();
                    if (next != Long.MAX_VALUE) {
                        park = Math.min(park, next - now);
                    }
                    if (park > 0) {
                        LockSupport.parkNanos(park);
                    }
                }
            }
            return f.get();
        }
        final long remaining = deadline - System.nanoTime();
        return f.get(Math.max(0, remaining), TimeUnit.NANOSECONDS);
    }

    /** A future that completed before the caller's timeout could fail it. */
    private static <T> T resultOf(final CompletableFuture<T> f) {
        try {
            return f.join();
        } catch (final java.util.concurrent.CompletionException ex) {
            throw unchecked(ex.getCause());
        }
    }

    private static RuntimeException unchecked(final Throwable t) {
        if (t instanceof RuntimeException re) {
            return re;
        }
        if (t instanceof Error err) {
            throw err;
        }
        return new IllegalStateException(t);
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

    private void requireBlockingThread(final String operation) {
        if (device.threadingMode() == ThreadingMode.INVOKER) {
            if (!device.isOwningThread()) {
                throw new IllegalStateException("ConnectionService." + operation + " on an INVOKER device must be "
                    + "called by the device's owning thread (the thread that built it), which it drives with "
                    + "doWork(); called from " + Thread.currentThread().getName()
                    + " (use the ...Async form from other threads)");
            }
        } else if (device.isOwningThread()) {
            throw new IllegalStateException("ConnectionService." + operation + " blocks and must not be called on "
                + "the driver thread of a " + device.threadingMode() + " device (use the ...Async form)");
        }
    }

    private static long deadline(final Duration timeout) {
        Objects.requireNonNull(timeout, "timeout");
        if (timeout.isNegative()) {
            throw new IllegalArgumentException("timeout must not be negative, got " + timeout);
        }
        long ns;
        try {
            ns = timeout.toNanos();
        } catch (final ArithmeticException ex) {
            ns = MAX_TIMEOUT_NS;
        }
        return System.nanoTime() + Math.min(ns, MAX_TIMEOUT_NS);
    }

    @Override
    public String toString() {
        return "ConnectionService{" + device + (closed ? ", closed" : "") + '}';
    }
}
