// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.connection;

import org.agrona.DirectBuffer;
import org.agrona.collections.Long2ObjectHashMap;
import org.metaroce.core.RandomSource;
import org.metaroce.core.engine.AsyncEventType;
import org.metaroce.core.engine.ConnectionManagerHandler;
import org.metaroce.core.engine.Endpoint;
import org.metaroce.core.engine.PeerDirectory;
import org.metaroce.core.engine.QueuePair;
import org.metaroce.core.engine.TransmitSink;
import org.metaroce.core.verbs.QpAttributes;
import org.metaroce.core.verbs.QpState;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The connection manager of one {@link Endpoint} (specification section 9), in the role of
 * rdma_cm: a server {@link #listen}s on a Service ID, a client {@link #connect}s a queue pair to
 * it, the server application {@link #accept}s or {@link #reject}s, and either side
 * {@link #disconnect}s. The handshake runs in band on QPN 0:
 * CONNECT_REQUEST, CONNECT_CHALLENGE (stateless cookie), CONNECT_REQUEST with the cookie,
 * CONNECT_REPLY, READY_TO_USE. The connection manager creates the server's queue pair and moves
 * both queue pairs through INIT, RTR and RTS with the negotiated parameters (4.4 row 13).
 *
 * <p>Until a client has returned a valid cookie, the server keeps no state for it [CM-011]: a
 * CONNECT_REQUEST costs one or two HMACs, and the answers (one header-only packet, never larger
 * than the request, [SEC-005]) are rate-limited per source address through a fixed table
 * [SEC-008] and buffered in a bounded queue until the next poll.
 *
 * <p>Sans-I/O and single-threaded like the endpoint: packets arrive through {@link #onPacket},
 * leave through {@link #poll} (called by {@link Endpoint#poll} before the queue pairs), all from
 * the endpoint's owning thread, which also makes every API call. Connection-manager packets are
 * sent from the endpoint port ([ENC-003]): their entropy value is the endpoint port given to the
 * constructor, and the driver maps it to its endpoint socket.
 *
 * <p>Queue pairs report to it through the engine's hooks ({@link #onQueuePairEvent},
 * {@link #onQueuePairDestroyed}): COMM_EST establishes a server connection whose READY_TO_USE
 * was lost [CM-013]; a QP that fails by itself ends its connection [CM-030, CM-033]; a destroyed
 * QP is disconnected. The hooks only queue the event; the next {@link #poll} acts on it, so the
 * manager never scans its connections to find out what their queue pairs did. A QP the
 * application moves to ERR itself raises no event (as with verbs): call {@link #disconnect}
 * instead.
 *
 * <p>Events: each goes to the handler of the connection's parameters, else to the manager's
 * {@link #eventHandler(CmEventHandler) handler}, else to the queue read by {@link #pollEvent()}.
 * They are queued when raised and handed out only once the endpoint has finished the step that
 * raised them ({@link #deliverEvents()}), so a handler may call back into the manager and
 * the endpoint, and finds them consistent; nothing here calls a handler from inside a packet, a
 * poll or an API call.
 *
 * <p>This class is the rdma_cm surface and the engine's hook; it builds its parts and hands
 * each only what it needs (a {@link CmContext} for the step, never the manager itself):
 * {@link CmPacketReceiver} decides what a CM packet means for a connection, with
 * {@link RequestAdmission} for the server's CONNECT_REQUESTs; {@link ConnectionPoll} sends what a
 * connection owes and runs its {@link CmTimers}; {@link QpEventActions} acts on the queue pairs'
 * reports; {@link ConnectionLifecycle} makes the moves those causes share, checked by
 * {@link ConnectionStateMachine}; {@link ConnectionQueuePairs} ends the queue pairs;
 * {@link ConnectionTable} finds connections; {@link HandshakeTable} remembers verified requests,
 * {@link CmPacketWriter} builds the packets and {@link CmPacketOut} sends them,
 * {@link StatelessAnswers} writes, rate-limits and queues the header-only answers, and
 * {@link CmEventDispatcher} delivers events.
 */
public final class ConnectionManager implements ConnectionManagerHandler {
    private static final Logger LOG = LoggerFactory.getLogger(ConnectionManager.class);
    private static final int PORT = 1;
    private static final byte[] NONE = PrivateData.NONE;

    private final Endpoint endpoint;
    private final int endpointPort;
    private final PeerDirectory directory;
    private final CmConfig config;
    private final RandomSource random;
    private final CookieJar cookies;
    private final CmCounters counters = new CmCounters();
    private final Long2ObjectHashMap<Listener> listeners = new Long2ObjectHashMap<>();
    /** The parameters of each listener in {@link #listeners}, kept here because a listener must not name them. */
    private final Long2ObjectHashMap<ListenParams> listenParams = new Long2ObjectHashMap<>();
    /** Verified requests the server remembers for their duplicates, bounded in all and per host [CM-040]. */
    private final HandshakeTable handshakes;
    private final ConnectionTable connections = new ConnectionTable();
    private final CmEventDispatcher events = new CmEventDispatcher();
    /** Header-only answers waiting for the next poll: stateless ones, READY_TO_USE, DISCONNECT_REPLY. */
    private final StatelessAnswers answers;
    private final CmPacketWriter writer = new CmPacketWriter();
    private final CmContext context = new Context();
    private final ConnectionQueuePairs queuePairs;
    private final ConnectionLifecycle lifecycle;
    private final CmPacketReceiver receiver;
    private final ConnectionPoll connectionPoll;
    private final QpEventActions qpEvents;
    /** Where every CM packet leaves: sealed, from the endpoint port, counted. */
    private final CmPacketOut out;

    private boolean needPoll;
    private long cachedDeadlineNs = Long.MAX_VALUE;
    private long lastNowNs;
    private boolean timeKnown;

    /**
     * Creates a connection manager for an endpoint whose peer ids are host ids (the in-memory
     * wire, the simulator) and installs it.
     *
     * @param endpoint the endpoint whose connection-manager packets this handles
     * @param endpointPort the endpoint's UDP port ([ENC-002]); CM packets are committed with it as
     *     their entropy value ([ENC-003])
     */
    public ConnectionManager(final Endpoint endpoint, final int endpointPort) {
        this(endpoint, endpointPort, PeerDirectory.IDENTITY, new CmConfig());
    }

    /**
     * Creates a connection manager and installs it: it becomes the endpoint's connection-manager
     * handler, and {@code directory} becomes the endpoint's peer directory (the engine's host
     * check and the handshake must agree on it).
     *
     * @param endpoint the endpoint whose connection-manager packets this handles
     * @param endpointPort the endpoint's UDP port, 1..65535
     * @param directory the driver's peer directory
     * @param config parameters (kept by reference; do not change afterwards)
     */
    public ConnectionManager(final Endpoint endpoint, final int endpointPort, final PeerDirectory directory,
                             final CmConfig config) {
        if (endpoint == null || directory == null || config == null) {
            throw new IllegalArgumentException("endpoint, directory and config are required");
        }
        if (endpointPort < 1 || endpointPort > 65535) {
            throw new IllegalArgumentException("endpointPort must be in 1..65535, got " + endpointPort);
        }
        this.endpoint = endpoint;
        this.endpointPort = endpointPort;
        this.directory = directory;
        this.config = config;
        this.random = endpoint.random();
        this.cookies = new CookieJar(random, config.secretRotationNs(), config.cookieLifetimeSeconds());
        this.handshakes = new HandshakeTable(config.maxHandshakes(), config.maxHandshakesPerHost(),
            config.cookieLifetimeSeconds());
        this.answers = new StatelessAnswers(config, writer, cookies, directory, counters);
        final CmPacketOut out = new CmPacketOut(writer, counters, endpointPort);
        this.queuePairs = new ConnectionQueuePairs(endpoint, context);
        this.lifecycle = new ConnectionLifecycle(config, directory, writer, counters, connections, queuePairs,
            context);
        final RequestAdmission admission = new RequestAdmission(listeners::get, listenParams::get, config,
            directory, cookies, counters, handshakes, answers, connections, lifecycle, context);
        this.receiver = new CmPacketReceiver(admission, connections, qpn -> endpoint.queuePair(qpn) != null,
            directory, counters, answers, queuePairs, lifecycle, context);
        this.connectionPoll = new ConnectionPoll(config, counters, out, handshakes, queuePairs, lifecycle, context);
        this.qpEvents = new QpEventActions(config, counters, connections, lifecycle, context);
        this.out = out;
        endpoint.peerDirectory(directory);
        endpoint.connectionManager(this);
    }

    // =============================================================================== application API

    /** @return the endpoint port CM packets are sent from */
    public int endpointPort() {
        return endpointPort;
    }

    /** @return the parameters */
    public CmConfig config() {
        return config;
    }

    /** @return what this manager counted */
    public CmCounters counters() {
        return counters;
    }

    /** @return verified handshakes remembered by the server (the only per-client state before accept) */
    public int handshakeTableSize() {
        return handshakes.size();
    }

    /** @return connections not yet forgotten (pending, connecting, established, disconnecting, time-wait) */
    public int connectionCount() {
        return connections.liveCount();
    }

    /** @return number of cookie secret rotations so far [CM-017] */
    public long secretRotations() {
        return cookies.rotations();
    }

    /**
     * @param handler receives every event not claimed by a connection's or listener's own handler;
     *     null to queue them for {@link #pollEvent()}
     */
    public void eventHandler(final CmEventHandler handler) {
        events.handler(handler);
    }

    /** @return the oldest undelivered event, or null */
    public CmEvent pollEvent() {
        return events.poll();
    }

    /**
     * Starts serving a Service ID (rdma_listen).
     *
     * @param serviceId the Service ID
     * @param params resources and negotiation parameters of accepted connections; copied
     * @return the listener
     * @throws IllegalStateException if the Service ID already has a listener
     */
    public Listener listen(final long serviceId, final ListenParams params) {
        params.validate(true);
        if (listeners.containsKey(serviceId)) {
            throw new IllegalStateException("service " + serviceId + " already has a listener");
        }
        final ListenParams copy = params.copy();
        final Listener listener = new Listener(this::stopListening, serviceId, copy.context,
            copy.limit > 0 ? copy.limit : config.listenerLimit());
        listeners.put(serviceId, listener);
        listenParams.put(serviceId, copy);
        return listener;
    }

    /** @return the listener of a Service ID, or null */
    public Listener listener(final long serviceId) {
        return listeners.get(serviceId);
    }

    void stopListening(final Listener listener) {
        if (listeners.get(listener.serviceId()) == listener) {
            listeners.remove(listener.serviceId());
            listenParams.remove(listener.serviceId());
        }
        listener.closed = true;
    }

    /**
     * Connects to a service (rdma_connect) [CM-005]: creates the queue pair (or takes the given
     * one) in INIT, chooses the Transaction ID and initial PSN at random, and sends the first
     * CONNECT_REQUEST at the next poll. The outcome arrives as ESTABLISHED, REJECTED,
     * UNREACHABLE or CONNECT_ERROR.
     *
     * @param params whom to connect to and with what; copied
     * @return the connection, whose {@link Connection#queuePair()} may get receives posted now
     */
    public Connection connect(final ConnectParams params) {
        params.validate();
        QueuePair qp = params.queuePair;
        if (qp != null && endpoint.queuePair(qp.qpn()) != qp) {
            throw new IllegalArgumentException("queuePair does not belong to this endpoint");
        }
        if (qp != null && qp.state() != QpState.RESET && qp.state() != QpState.INIT) {
            throw new IllegalArgumentException("queuePair must be in RESET or INIT [CM-005], is " + qp.state());
        }
        if (qp != null) {
            final Connection existing = connections.byQpn(qp.qpn());
            if (existing != null && existing.state() != ConnectionState.TIMEWAIT) {
                throw new IllegalStateException("queue pair " + qp.qpn() + " already has a connection: " + existing);
            }
        } else {
            qp = endpoint.createQueuePair(params.pd, params.sendCq, params.recvCq, params.caps);
        }
        if (qp.state() == QpState.RESET) {
            qp.modify(QpState.INIT, new QpAttributes().port(PORT).accessFlags(params.accessFlags));
        }
        final boolean created = params.queuePair == null;
        final ConnectParams local = params.copy();
        final Connection c = new Connection(false, params.serviceId, random.nextLong(), null);
        c.ownsQueuePair = created;
        c.context = local.context;
        c.connectTimeoutNs = local.connectTimeoutNs > 0 ? local.connectTimeoutNs : config.connectTimeoutNs();
        c.qp = qp;
        c.localQpn = qp.qpn();
        c.localInitialPsn = random.nextInt();
        c.remotePeer = directory.pin(params.peerId);
        c.remoteHost = directory.hostOf(c.remotePeer);
        c.proposedMtu = local.pathMtu;
        c.proposedCapabilities = local.offeredCapabilities(endpoint.config());
        c.proposedInitiatorDepth = local.initiatorDepth;
        c.proposedResponderResources = local.effectiveResponderResources();
        c.proposedPathCount = local.paths.length;
        c.localPrivateData = local.privateData;
        lifecycle.registerQpn(c);
        connections.add(c, local);
        c.outLength = writer.request(c, c.out);
        lifecycle.armRetransmit(c, c.connectTimeoutNs);
        LOG.debug("connect {}", c);
        needPoll = true;
        return c;
    }

    /**
     * Accepts a pending request (rdma_accept) [CM-012]: creates the queue pair with the listener's
     * resources, moves it through INIT to RTR with the negotiated parameters [CM-019], and sends
     * CONNECT_REPLY at the next poll. ESTABLISHED follows on READY_TO_USE or the first request
     * packet [CM-013]. Receives may be posted to {@link Connection#queuePair()} as soon as this
     * returns.
     *
     * @param request the connection of a CONNECT_REQUEST event
     * @param privateData for the client, at most 256 bytes, or null
     * @return true if accepted; false if no queue pair could be allocated, in which case
     *     CONNECT_REJECT NO_RESOURCES is sent instead
     * @throws IllegalStateException if the request is not pending (already decided or expired)
     */
    public boolean accept(final Connection request, final byte[] privateData) {
        final byte[] data = QpParams.checkPrivateData(privateData);
        requirePending(request);
        final QpParams<?> lp = connections.params(request);
        final QueuePair qp;
        try {
            qp = endpoint.createQueuePair(lp.pd, lp.sendCq, lp.recvCq, lp.caps);
        } catch (final RuntimeException ex) {
            LOG.warn("cannot allocate a queue pair for {}: {}", request, ex.getMessage());
            lifecycle.rejectPending(request, CmReason.NO_RESOURCES, NONE);
            return false;
        }
        final Connection c = request;
        c.mtu = Math.min(c.proposedMtu, lp.pathMtu);
        c.pathCount = Math.min(c.proposedPathCount, lp.paths.length);
        c.capabilities = c.proposedCapabilities & lp.offeredCapabilities(endpoint.config());
        c.replyInitiatorDepth = Math.min(lp.initiatorDepth, c.proposedResponderResources);
        c.replyResponderResources = Math.min(lp.effectiveResponderResources(), c.proposedInitiatorDepth);
        c.localInitialPsn = random.nextInt();
        c.localPrivateData = data;
        c.qp = qp;
        c.ownsQueuePair = true;
        c.localQpn = qp.qpn();
        try {
            qp.modify(QpState.INIT, new QpAttributes().port(PORT).accessFlags(lp.accessFlags));
            qp.modify(QpState.RTR, lp.rtrAttributes(c, c.replyResponderResources));
        } catch (final RuntimeException ex) {
            LOG.warn("cannot bring up the queue pair of {}: {}", c, ex.getMessage());
            endpoint.destroyQueuePair(qp);
            c.qp = null;
            c.ownsQueuePair = false;
            c.localQpn = 0;
            lifecycle.rejectPending(c, CmReason.NO_RESOURCES, NONE);
            return false;
        }
        lifecycle.registerQpn(c);
        c.answerLength = writer.reply(c, c.answer);
        c.out.putBytes(0, c.answer, 0, c.answerLength);
        c.outLength = c.answerLength;
        c.moveTo(ConnectionState.ACCEPTED);
        lifecycle.armRetransmit(c, c.connectTimeoutNs);
        LOG.debug("accepted {}", c);
        needPoll = true;
        return true;
    }

    /**
     * Accepts the request of a CONNECT_REQUEST event.
     *
     * @param event the event
     * @param privateData for the client, or null
     * @return see {@link #accept(Connection, byte[])}
     */
    public boolean accept(final CmEvent event, final byte[] privateData) {
        return accept(requestOf(event), privateData);
    }

    /**
     * Rejects a pending request (rdma_reject): sends CONNECT_REJECT REJECTED_BY_APPLICATION with
     * the private data, re-sent to duplicates of the request [CM-012, CM-025].
     *
     * @param request the connection of a CONNECT_REQUEST event
     * @param privateData for the client, at most 256 bytes, or null
     */
    public void reject(final Connection request, final byte[] privateData) {
        final byte[] data = QpParams.checkPrivateData(privateData);
        requirePending(request);
        lifecycle.rejectPending(request, CmReason.REJECTED_BY_APPLICATION, data);
    }

    /**
     * Rejects the request of a CONNECT_REQUEST event.
     *
     * @param event the event
     * @param privateData for the client, or null
     */
    public void reject(final CmEvent event, final byte[] privateData) {
        reject(requestOf(event), privateData);
    }

    /**
     * Ends a connection (rdma_disconnect) [CM-031]: the QP moves to ERR now (outstanding work
     * requests complete with WR_FLUSH_ERR), DISCONNECT_REQUEST goes out at the next poll, and
     * DISCONNECTED is raised on DISCONNECT_REPLY or after DISCONNECT_TIMEOUT [CM-032]. A client
     * still connecting gives up at once (DISCONNECTED); a pending request is rejected. Calling it
     * again, or on a finished connection, does nothing.
     *
     * @param connection the connection
     */
    public void disconnect(final Connection connection) {
        switch (connection.state()) {
            case ESTABLISHED, ACCEPTED -> lifecycle.startDisconnect(connection, CmReason.NORMAL, true);
            case CONNECTING -> {
                queuePairs.toError(connection);
                context.raise(CmEventType.DISCONNECTED, connection, CmReason.NORMAL, NONE);
                lifecycle.close(connection);
            }
            case REQUEST_PENDING -> lifecycle.rejectPending(connection, CmReason.REJECTED_BY_APPLICATION, NONE);
            default -> {
                return;
            }
        }
        needPoll = true;
    }

    // =============================================================================== engine side

    @Override
    public void onPacket(final long nowNs, final DirectBuffer buffer, final int offset, final int length,
                         final int peerId) {
        touch(nowNs);
        receiver.onPacket(nowNs, buffer, offset, peerId);
    }

    @Override
    public int poll(final long nowNs, final TransmitSink sink) {
        touch(nowNs);
        if (cookies.maintain(nowNs)) {
            counters.increment(CmCounter.SECRET_ROTATIONS);
        }
        qpEvents.process(nowNs);
        queuePairs.destroyRetired(nowNs);
        // Connections are visited only when one of them changed or a timer is due, so a poll that
        // the data path causes costs nothing per connection.
        final boolean due = needPoll || nowNs >= cachedDeadlineNs;
        needPoll = false;
        int emitted = answers.emit(nowNs, sink, out);
        if (!answers.isEmpty()) {
            needPoll = true; // the sink ran out of room
        }
        if (due) {
            long next = Long.MAX_VALUE;
            for (int i = connections.size() - 1; i >= 0; i--) {
                final Connection c = connections.get(i);
                if (!c.freed) {
                    emitted += connectionPoll.service(nowNs, c, sink);
                }
                if (c.freed) {
                    connections.removeAt(i);
                    continue;
                }
                next = Math.min(next, c.nextDeadlineNs());
            }
            cachedDeadlineNs = next;
        }
        return emitted;
    }

    /**
     * Hands out the events raised since the last call: each to its connection's handler,
     * else to the {@link #eventHandler(CmEventHandler) default handler}, else to the queue of
     * {@link #pollEvent()}. The endpoint calls this when it has finished a step and is consistent
     * again: right after a connection-manager packet, and in its poll after this manager's poll
     * and before the queue pairs' (so work a handler posts goes out in that same poll). Events
     * raised by a call of the application ({@link #connect}, {@link #disconnect}, ...) wait for
     * the next of those; none is delivered inside the call that raised it.
     */
    @Override
    public void deliverEvents() {
        events.dispatch();
    }

    @Override
    public long nextDeadlineNs() {
        if (needPoll || !answers.isEmpty() || qpEvents.hasPending() || events.hasPending()) {
            return timeKnown ? lastNowNs : Long.MIN_VALUE;
        }
        return Math.min(cachedDeadlineNs, queuePairs.deadlineNs());
    }

    /**
     * Queues what a connection's queue pair reports for the next poll [CM-013, CM-030, CM-033]; the
     * engine may be in the middle of a packet or its own poll, so nothing is done here.
     */
    @Override
    public void onQueuePairEvent(final QueuePair qp, final AsyncEventType type) {
        switch (type) {
            case QP_FATAL, QP_REQ_ERR, QP_ACCESS_ERR, COMM_EST -> qpEvents.report(qp, type);
            default -> {
                // SQ_DRAINED and CQ_ERR concern the application only.
            }
        }
    }

    @Override
    public void onQueuePairDestroyed(final QueuePair qp) {
        qpEvents.report(qp, null);
    }

    private void requirePending(final Connection request) {
        if (request == null || !request.server || request.state() != ConnectionState.REQUEST_PENDING) {
            throw new IllegalStateException("not a pending connection request: " + request);
        }
    }

    private static Connection requestOf(final CmEvent event) {
        if (event == null || event.type() != CmEventType.CONNECT_REQUEST) {
            throw new IllegalArgumentException("not a CONNECT_REQUEST event: " + event);
        }
        return event.connection();
    }


    private void touch(final long nowNs) {
        lastNowNs = nowNs;
        timeKnown = true;
    }

    /** The manager's step as its parts see it. */
    private final class Context implements CmContext {
        @Override
        public long nowNs() {
            return lastNowNs;
        }

        @Override
        public void changed() {
            needPoll = true;
        }

        @Override
        public void raise(final CmEventType type, final Connection c, final int reason, final byte[] privateData) {
            final QpParams<?> params = connections.params(c);
            events.raise(new CmEvent(type, c, c.listener, reason, privateData), params == null ? null : params.handler);
            endpoint.trace().recordConnectionEvent(lastNowNs, c.qp == null ? 0 : c.qp.qpn(), type.ordinal(),
                reason);
        }
    }

    @Override
    public String toString() {
        return "ConnectionManager{port=" + endpointPort + ", listeners=" + listeners.size() + ", connections="
            + connectionCount() + ", handshakes=" + handshakes.size() + ", " + counters + '}';
    }
}
