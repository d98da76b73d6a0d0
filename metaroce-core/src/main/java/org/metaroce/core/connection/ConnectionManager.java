// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.connection;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import org.agrona.DirectBuffer;
import org.agrona.collections.Int2ObjectHashMap;
import org.agrona.collections.Long2ObjectHashMap;
import org.agrona.concurrent.UnsafeBuffer;
import org.metaroce.core.RandomSource;
import org.metaroce.core.engine.AsyncEventType;
import org.metaroce.core.engine.ConnectionManagerHandler;
import org.metaroce.core.engine.Endpoint;
import org.metaroce.core.engine.PeerDirectory;
import org.metaroce.core.engine.QueuePair;
import org.metaroce.core.engine.TransmitSink;
import org.metaroce.core.verbs.QpAttributes;
import org.metaroce.core.verbs.QpState;
import org.metaroce.core.wire.BaseHeader;
import org.metaroce.core.wire.ConnectHeader;
import org.metaroce.core.wire.Opcode;
import org.metaroce.core.wire.WireConstants;
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
 * <p>This class decides what a packet, a call, a timer or a queue-pair event means for a
 * connection; the mechanisms are classes of their own, handed only what they need:
 * {@link ConnectionStateMachine} checks every change of a connection's state, {@link HandshakeTable}
 * remembers verified requests, {@link CmPacketWriter} builds the packets and {@link CmPacketOut}
 * sends them, {@link StatelessAnswers} writes, rate-limits and queues the header-only answers,
 * {@link QpEventQueue} holds the engine's reports, {@link CmEventDispatcher} delivers events, and
 * each connection's {@link CmTimers} run its retransmission and deadline.
 */
public final class ConnectionManager implements ConnectionManagerHandler {
    private static final Logger LOG = LoggerFactory.getLogger(ConnectionManager.class);
    private static final int CM = CmPacketWriter.CM;
    private static final int HEADER = CmPacketWriter.HEADER;
    private static final int PORT = 1;
    private static final QpAttributes NO_ATTRIBUTES = new QpAttributes();
    private static final byte[] NONE = new byte[0];

    private final Endpoint endpoint;
    private final int endpointPort;
    private final PeerDirectory directory;
    private final CmConfig config;
    private final RandomSource random;
    private final CookieJar cookies;
    private final CmCounters counters = new CmCounters();

    private final Long2ObjectHashMap<Listener> listeners = new Long2ObjectHashMap<>();
    /** Verified requests the server remembers for their duplicates, bounded in all and per host [CM-040]. */
    private final HandshakeTable handshakes;
    /** Every connection that has a local QPN and is not yet closed, by that QPN. */
    private final Int2ObjectHashMap<Connection> byQpn = new Int2ObjectHashMap<>();
    /** Every connection not yet freed; scanned by {@link #poll} when something changed or a timer is due. */
    private final List<Connection> active = new ArrayList<>();
    /**
     * Ended connections whose queue pair (in ERR, created by this manager) is still to be destroyed
     * [CM-039]: once it has emitted its last ACK or NACK, and, after a fatal NACK, once it may no
     * longer have to repeat it [REL-052]. Usually only those of the last poll or two.
     */
    private final List<Connection> retiring = new ArrayList<>();
    /** Earliest {@link Connection#retireAtNs} among {@link #retiring}, as of the last poll. */
    private long retireDeadlineNs = Long.MAX_VALUE;

    /** Queue-pair events reported by the engine and not yet acted on (at the next poll). */
    private final QpEventQueue qpEvents = new QpEventQueue();

    private final CmEventDispatcher events = new CmEventDispatcher();

    /** Header-only answers waiting for the next poll: stateless ones, READY_TO_USE, DISCONNECT_REPLY. */
    private final StatelessAnswers answers;

    private final UnsafeBuffer address = new UnsafeBuffer(new byte[PeerDirectory.MAX_ADDRESS_BYTES]);
    private final CmPacketWriter writer = new CmPacketWriter();
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
        this.out = new CmPacketOut(writer, counters, endpointPort);
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
        int n = 0;
        for (int i = 0, size = active.size(); i < size; i++) {
            final Connection c = active.get(i);
            if (!c.freed && c.state() != ConnectionState.CLOSED) {
                n++;
            }
        }
        return n;
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
        final Listener listener = new Listener(this::stopListening, serviceId, copy,
            copy.limit > 0 ? copy.limit : config.listenerLimit());
        listeners.put(serviceId, listener);
        return listener;
    }

    /** @return the listener of a Service ID, or null */
    public Listener listener(final long serviceId) {
        return listeners.get(serviceId);
    }

    void stopListening(final Listener listener) {
        if (listeners.get(listener.serviceId()) == listener) {
            listeners.remove(listener.serviceId());
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
            final Connection existing = byQpn.get(qp.qpn());
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
        c.params = local;
        c.handler = local.handler;
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
        registerQpn(c);
        active.add(c);
        c.outLength = writer.request(c, c.out);
        armRetransmit(c, c.connectTimeoutNs);
        LOG.debug("connect {}", c);
        changed();
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
        final ListenParams lp = request.listener.params;
        final QueuePair qp;
        try {
            qp = endpoint.createQueuePair(lp.pd, lp.sendCq, lp.recvCq, lp.caps);
        } catch (final RuntimeException ex) {
            LOG.warn("cannot allocate a queue pair for {}: {}", request, ex.getMessage());
            rejectPending(request, CmReason.NO_RESOURCES, NONE);
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
            qp.modify(QpState.RTR, new QpAttributes().pathMtu(c.mtu).destQpn(c.remoteQpn).rqPsn(c.remoteInitialPsn)
                .maxDestRdAtomic(Math.max(1, c.replyResponderResources)).minRnrTimerNs(lp.minRnrTimerNs)
                .paths(Arrays.copyOf(lp.paths, c.pathCount)).remotePeer(c.remotePeer).capabilities(c.capabilities));
        } catch (final RuntimeException ex) {
            LOG.warn("cannot bring up the queue pair of {}: {}", c, ex.getMessage());
            endpoint.destroyQueuePair(qp);
            c.qp = null;
            c.ownsQueuePair = false;
            c.localQpn = 0;
            rejectPending(c, CmReason.NO_RESOURCES, NONE);
            return false;
        }
        registerQpn(c);
        c.answerLength = writer.reply(c, c.answer);
        c.out.putBytes(0, c.answer, 0, c.answerLength);
        c.outLength = c.answerLength;
        c.moveTo(ConnectionState.ACCEPTED);
        armRetransmit(c, c.connectTimeoutNs);
        LOG.debug("accepted {}", c);
        changed();
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
        rejectPending(request, CmReason.REJECTED_BY_APPLICATION, data);
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
            case ESTABLISHED, ACCEPTED -> startDisconnect(connection, CmReason.NORMAL, true);
            case CONNECTING -> {
                qpToError(connection);
                raise(CmEventType.DISCONNECTED, connection, CmReason.NORMAL, NONE);
                close(connection);
            }
            case REQUEST_PENDING -> rejectPending(connection, CmReason.REJECTED_BY_APPLICATION, NONE);
            default -> {
                return;
            }
        }
        changed();
    }

    // =============================================================================== engine side

    @Override
    public void onPacket(final long nowNs, final DirectBuffer buffer, final int offset, final int length,
                         final int peerId) {
        touch(nowNs);
        counters.increment(CmCounter.PACKETS_IN);
        final Opcode opcode = Opcode.of(BaseHeader.opcode(buffer, offset));
        final int destQpn = BaseHeader.destQpn(buffer, offset);
        if (opcode == Opcode.CONNECT_REQUEST) {
            if (destQpn != WireConstants.CONNECTION_MANAGER_QPN) {
                // [WIRE-070] a request goes to QPN 0; to another QPN it is dropped at step 10 of
                // 4.8 if that QPN is unknown [QP-024], and is not valid there if it is known [CM-003].
                counters.increment(byQpn.containsKey(destQpn) || endpoint.queuePair(destQpn) != null
                    ? CmCounter.CM_UNEXPECTED : CmCounter.UNKNOWN_QPN);
                return;
            }
            onConnectRequest(nowNs, buffer, offset, peerId);
        } else if (destQpn == WireConstants.CONNECTION_MANAGER_QPN) {
            counters.increment(CmCounter.CM_UNEXPECTED);
            return;
        } else {
            final Connection c = byQpn.get(destQpn);
            if (c == null) {
                // A live QP wired by hand [CM-038] has no handshake state for the packet [CM-003].
                counters.increment(endpoint.queuePair(destQpn) != null ? CmCounter.CM_UNEXPECTED
                    : CmCounter.UNKNOWN_QPN);
                return;
            }
            onConnectionPacket(nowNs, c, opcode, buffer, offset, peerId);
        }
    }

    @Override
    public int poll(final long nowNs, final TransmitSink sink) {
        touch(nowNs);
        if (cookies.maintain(nowNs)) {
            counters.increment(CmCounter.SECRET_ROTATIONS);
        }
        processQueuePairEvents(nowNs);
        destroyRetiredQueuePairs(nowNs);
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
            for (int i = active.size() - 1; i >= 0; i--) {
                final Connection c = active.get(i);
                if (!c.freed) {
                    emitted += service(nowNs, c, sink);
                }
                if (c.freed) {
                    final int last = active.size() - 1;
                    active.set(i, active.get(last));
                    active.remove(last);
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
        if (needPoll || !answers.isEmpty() || !qpEvents.isEmpty() || events.hasPending()) {
            return timeKnown ? lastNowNs : Long.MIN_VALUE;
        }
        return Math.min(cachedDeadlineNs, retireDeadlineNs);
    }

    /**
     * Queues what a connection's queue pair reports for the next poll [CM-013, CM-030, CM-033]; the
     * engine may be in the middle of a packet or its own poll, so nothing is done here.
     */
    @Override
    public void onQueuePairEvent(final QueuePair qp, final AsyncEventType type) {
        switch (type) {
            case QP_FATAL, QP_REQ_ERR, QP_ACCESS_ERR, COMM_EST -> queueQpEvent(qp, type);
            default -> {
                // SQ_DRAINED and CQ_ERR concern the application only.
            }
        }
    }

    @Override
    public void onQueuePairDestroyed(final QueuePair qp) {
        queueQpEvent(qp, null);
    }

    private void queueQpEvent(final QueuePair qp, final AsyncEventType type) {
        final Connection c = byQpn.get(qp.qpn());
        if (c == null || c.qp != qp || c.state() == ConnectionState.TIMEWAIT || c.state() == ConnectionState.CLOSED) {
            // A QP the application wired by hand, or of a connection that has ended (whose QP
            // this manager may be destroying right now): nothing left to act on.
            return;
        }
        qpEvents.add(qp, type);
        changed();
    }

    private void processQueuePairEvents(final long now) {
        while (!qpEvents.isEmpty()) {
            final QueuePair qp = qpEvents.headQueuePair();
            final AsyncEventType type = qpEvents.headType();
            qpEvents.removeHead();
            final Connection c = byQpn.get(qp.qpn());
            if (c == null || c.qp != qp) {
                continue;
            }
            if (type == null) {
                onQueuePairDestroyed(c);
            } else if (type == AsyncEventType.COMM_EST) {
                onCommunicationEstablished(c);
            } else {
                onQueuePairError(now, c, type);
            }
        }
    }

    // =============================================================================== server: requests

    /** [CM-010] steps 1 to 6 and [CM-012]. */
    private void onConnectRequest(final long now, final DirectBuffer b, final int off, final int peerId) {
        final int h = off + CM;
        final long serviceId = ConnectHeader.serviceId(b, h);
        final int sourceQpn = BaseHeader.sourceQpn(b, off);
        final Listener listener = listeners.get(serviceId);
        if (listener == null) {
            answers.rejectIfAllowed(now, b, off, peerId, CmReason.NO_LISTENER);
            return;
        }
        if (!WireConstants.isValidPathMtu(ConnectHeader.pathMtu(b, h)) || ConnectHeader.pathCount(b, h) == 0
            || sourceQpn == 0) {
            answers.rejectIfAllowed(now, b, off, peerId, CmReason.BAD_PARAMETERS);
            return;
        }
        final int addressLength = addressOf(peerId);
        final long transactionId = ConnectHeader.transactionId(b, h);
        if (cookies.maintain(now)) {
            counters.increment(CmCounter.SECRET_ROTATIONS);
        }
        if (CookieJar.isZero(b, h + ConnectHeader.COOKIE_OFFSET)) {
            answers.challenge(now, b, off, peerId, address, addressLength);
            return;
        }
        final int verdict = cookies.verify(now, address, addressLength, serviceId, transactionId, sourceQpn, b,
            h + ConnectHeader.COOKIE_OFFSET);
        if (verdict == CookieJar.BAD) {
            counters.increment(CmCounter.BAD_COOKIE);
            answers.challenge(now, b, off, peerId, address, addressLength);
            return;
        }
        if (verdict == CookieJar.STALE) {
            counters.increment(CmCounter.STALE_COOKIE);
            answers.rejectIfAllowed(now, b, off, peerId, CmReason.STALE_COOKIE);
            return;
        }
        // Step 6: the client receives packets at its address.
        final Connection known = handshakes.find(transactionId, address, addressLength);
        if (known != null) {
            onDuplicateRequest(known, b, off, serviceId, sourceQpn);
            return;
        }
        final HandshakeTable.Admission admission = handshakes.admit(directory.hostOf(peerId));
        if (admission != HandshakeTable.Admission.ADMITTED) {
            counters.increment(admission == HandshakeTable.Admission.TABLE_FULL ? CmCounter.HANDSHAKE_TABLE_FULL
                : CmCounter.HOST_HANDSHAKES_FULL);
            answers.reject(b, off, peerId, CmReason.NO_RESOURCES);
            return;
        }
        final Connection c = new Connection(true, serviceId, transactionId, listener);
        c.params = listener.params;
        c.handler = listener.params.handler;
        c.context = listener.params.context;
        c.connectTimeoutNs = config.connectTimeoutNs();
        c.remotePeer = directory.pin(peerId);
        c.remoteHost = directory.hostOf(c.remotePeer);
        c.remoteQpn = sourceQpn;
        c.remoteInitialPsn = ConnectHeader.initialPsn(b, h);
        c.proposedMtu = ConnectHeader.pathMtu(b, h);
        c.proposedCapabilities = ConnectHeader.capabilities(b, h);
        c.proposedInitiatorDepth = ConnectHeader.initiatorDepth(b, h);
        c.proposedResponderResources = ConnectHeader.responderResources(b, h);
        c.proposedPathCount = ConnectHeader.pathCount(b, h);
        c.peerPrivateData = payloadOf(b, off);
        c.answer = new UnsafeBuffer(new byte[Connection.MAX_PACKET]);
        handshakes.insert(c, address, addressLength, now);
        active.add(c);
        restartedPeers(c);
        if (listener.connections >= listener.limit) {
            LOG.debug("listener {} is full; rejecting {}", listener, c);
            rejectPending(c, CmReason.NO_RESOURCES, NONE);
            return;
        }
        listener.connections++;
        c.countedInListener = true;
        changed();
        raise(CmEventType.CONNECT_REQUEST, c, c.peerPrivateData);
    }

    /** [CM-025]: answer a duplicate second CONNECT_REQUEST with what was sent, never a second event. */
    private void onDuplicateRequest(final Connection c, final DirectBuffer b, final int off, final long serviceId,
                                    final int sourceQpn) {
        if (c.serviceId != serviceId || c.remoteQpn != sourceQpn) {
            counters.increment(CmCounter.CM_MISMATCH);
            return;
        }
        switch (c.state()) {
            case ACCEPTED, ESTABLISHED, CLOSED -> {
                if (c.answerLength > 0) {
                    c.sendAnswer = true;
                    changed();
                }
            }
            default -> {
                // Undecided, or already tearing down: nothing to repeat.
            }
        }
    }

    /** [CM-036]: a verified request from the address and QPN of a live connection with another Transaction ID. */
    private void restartedPeers(final Connection fresh) {
        for (int i = 0, n = active.size(); i < n; i++) {
            final Connection old = active.get(i);
            if (old != fresh && !old.freed && old.remoteHost == fresh.remoteHost && old.remoteQpn == fresh.remoteQpn
                && old.transactionId != fresh.transactionId
                && (old.state() == ConnectionState.ACCEPTED || old.state() == ConnectionState.ESTABLISHED)) {
                LOG.debug("peer of {} restarted", old);
                qpToError(old);
                raise(CmEventType.DISCONNECTED, old, CmReason.PEER_RESTARTED, NONE);
                enterTimewait(lastNowNs, old);
            }
        }
    }

    // =============================================================================== packets to a QPN

    private void onConnectionPacket(final long now, final Connection c, final Opcode opcode, final DirectBuffer b,
                                    final int off, final int peerId) {
        final int h = off + CM;
        if (ConnectHeader.transactionId(b, h) != c.transactionId || ConnectHeader.serviceId(b, h) != c.serviceId
            || directory.hostOf(peerId) != c.remoteHost) {
            counters.increment(CmCounter.CM_MISMATCH);
            return;
        }
        final int sourceQpn = BaseHeader.sourceQpn(b, off);
        if (c.remoteQpn != 0 && sourceQpn != c.remoteQpn) {
            if (sourceQpn == 0 && opcode == Opcode.CONNECT_CHALLENGE && !c.server) {
                return; // [CM-026] a late duplicate challenge for a connection that has its reply
            }
            counters.increment(CmCounter.CM_MISMATCH);
            return;
        }
        switch (opcode) {
            case CONNECT_CHALLENGE -> onChallenge(c, b, h);
            case CONNECT_REPLY -> onReply(c, b, off);
            case CONNECT_REJECT -> onReject(c, b, off);
            case READY_TO_USE -> onReadyToUse(c);
            case DISCONNECT_REQUEST -> onDisconnectRequest(now, c, b, off);
            case DISCONNECT_REPLY -> onDisconnectReply(now, c);
            default -> counters.increment(CmCounter.CM_UNEXPECTED);
        }
    }

    /** [CM-006]: send (again) the second CONNECT_REQUEST with the newest cookie. */
    private void onChallenge(final Connection c, final DirectBuffer b, final int h) {
        if (c.server || c.state() != ConnectionState.CONNECTING) {
            if (c.server || c.state() != ConnectionState.ESTABLISHED) {
                counters.increment(CmCounter.CM_UNEXPECTED);
            }
            return; // [CM-026] ignored once established
        }
        c.out.putBytes(CM + ConnectHeader.COOKIE_OFFSET, b, h + ConnectHeader.COOKIE_OFFSET,
            WireConstants.COOKIE_LENGTH);
        c.challenged = true;
        armRetransmit(c, 0);
        changed();
    }

    /** [CM-007, CM-009, CM-026]. */
    private void onReply(final Connection c, final DirectBuffer b, final int off) {
        if (c.server) {
            counters.increment(CmCounter.CM_UNEXPECTED);
            return;
        }
        final int sourceQpn = BaseHeader.sourceQpn(b, off);
        if (c.state() == ConnectionState.ESTABLISHED) {
            answers.headerOnly(c, Opcode.READY_TO_USE, 0); // [CM-026] our READY_TO_USE was lost
            return;
        }
        if (c.state() != ConnectionState.CONNECTING || sourceQpn == 0) {
            counters.increment(CmCounter.CM_UNEXPECTED);
            return;
        }
        final int h = off + CM;
        final int mtu = ConnectHeader.pathMtu(b, h);
        final int pathCount = ConnectHeader.pathCount(b, h);
        final int caps = ConnectHeader.capabilities(b, h);
        final int depth = ConnectHeader.initiatorDepth(b, h);
        final int resources = ConnectHeader.responderResources(b, h);
        c.remoteQpn = sourceQpn;
        c.remoteInitialPsn = ConnectHeader.initialPsn(b, h);
        c.mtu = mtu;
        c.pathCount = pathCount;
        c.capabilities = caps;
        c.replyInitiatorDepth = depth;
        c.replyResponderResources = resources;
        c.peerPrivateData = payloadOf(b, off);
        c.timers.stop();
        final boolean acceptable = WireConstants.isValidPathMtu(mtu) && mtu <= c.proposedMtu && pathCount >= 1
            && pathCount <= c.proposedPathCount && (caps & ~c.proposedCapabilities) == 0
            && depth <= c.proposedResponderResources && resources <= c.proposedInitiatorDepth;
        if (!acceptable) {
            LOG.debug("unacceptable reply for {}", c);
            raise(CmEventType.CONNECT_ERROR, c, CmReason.BAD_PARAMETERS, NONE);
            startDisconnect(c, CmReason.BAD_PARAMETERS, false);
            return;
        }
        final QpParams<?> p = c.params;
        try {
            c.qp.modify(QpState.RTR, new QpAttributes().pathMtu(mtu).destQpn(sourceQpn).rqPsn(c.remoteInitialPsn)
                .maxDestRdAtomic(Math.max(1, c.proposedResponderResources)).minRnrTimerNs(p.minRnrTimerNs)
                .paths(Arrays.copyOf(p.paths, pathCount)).remotePeer(c.remotePeer).capabilities(caps));
            c.qp.modify(QpState.RTS, p.congestionAttributes(new QpAttributes().sqPsn(c.localInitialPsn)
                .timeoutNs(p.timeoutNs).retryCount(p.retryCount).rnrRetry(p.rnrRetry)
                .maxRdAtomic(Math.max(1, resources))));
        } catch (final RuntimeException ex) {
            LOG.warn("cannot bring up the queue pair of {}: {}", c, ex.getMessage());
            raise(CmEventType.CONNECT_ERROR, c, CmReason.QP_ERROR, NONE);
            startDisconnect(c, CmReason.QP_ERROR, false);
            return;
        }
        answers.headerOnly(c, Opcode.READY_TO_USE, 0);
        c.moveTo(ConnectionState.ESTABLISHED);
        c.timers.clearDeadline();
        LOG.debug("established {}", c);
        raise(CmEventType.ESTABLISHED, c, c.peerPrivateData);
        changed();
    }

    /** [CM-008, CM-018]. */
    private void onReject(final Connection c, final DirectBuffer b, final int off) {
        if (c.server || c.state() != ConnectionState.CONNECTING) {
            counters.increment(CmCounter.CM_UNEXPECTED);
            return;
        }
        final int reason = ConnectHeader.reason(b, off + CM);
        if (reason == CmReason.STALE_COOKIE && !c.staleRetried) {
            c.staleRetried = true;
            c.challenged = false;
            c.out.setMemory(CM + ConnectHeader.COOKIE_OFFSET, WireConstants.COOKIE_LENGTH, (byte) 0);
            armRetransmit(c, 0);
            changed();
            return;
        }
        qpToError(c);
        LOG.debug("rejected {} ({})", c, CmReason.name(reason));
        raise(CmEventType.REJECTED, c, reason, payloadOf(b, off));
        close(c);
    }

    /** [CM-013]. */
    private void onReadyToUse(final Connection c) {
        if (!c.server) {
            counters.increment(CmCounter.CM_UNEXPECTED);
            return;
        }
        if (c.state() == ConnectionState.ACCEPTED) {
            establishServer(c);
        } else if (c.state() != ConnectionState.ESTABLISHED) {
            counters.increment(CmCounter.CM_UNEXPECTED);
        }
        // A duplicate READY_TO_USE of an established connection is ignored [CM-026].
    }

    /** [CM-031, CM-034]. */
    private void onDisconnectRequest(final long now, final Connection c, final DirectBuffer b, final int off) {
        final int reason = disconnectReason(ConnectHeader.reason(b, off + CM));
        final int peerQpn = BaseHeader.sourceQpn(b, off);
        switch (c.state()) {
            case ESTABLISHED, ACCEPTED -> {
                if (c.remoteQpn == 0) {
                    c.remoteQpn = peerQpn;
                }
                answers.headerOnly(c, Opcode.DISCONNECT_REPLY, reason);
                qpToError(c);
                raise(CmEventType.DISCONNECTED, c, reason, NONE);
                enterTimewait(now, c);
            }
            case CONNECTING -> {
                // The server gave up on a reply we never received.
                if (peerQpn != 0) {
                    c.remoteQpn = peerQpn;
                    answers.headerOnly(c, Opcode.DISCONNECT_REPLY, reason);
                }
                qpToError(c);
                raise(CmEventType.CONNECT_ERROR, c, reason, NONE);
                enterTimewait(now, c);
            }
            case DISCONNECTING -> {
                answers.headerOnly(c, Opcode.DISCONNECT_REPLY, reason);
                finishDisconnect(now, c);
            }
            case TIMEWAIT -> {
                answers.headerOnly(c, Opcode.DISCONNECT_REPLY, reason);
                if (c.retiring) {
                    // A peer that disconnects has learned why the QP failed: no fatal NACK to repeat.
                    c.retireAtNs = Math.min(c.retireAtNs, now);
                }
            }
            default -> counters.increment(CmCounter.CM_UNEXPECTED);
        }
        changed();
    }

    private void onDisconnectReply(final long now, final Connection c) {
        if (c.state() == ConnectionState.DISCONNECTING) {
            finishDisconnect(now, c);
            changed();
        } else if (c.state() != ConnectionState.TIMEWAIT) {
            counters.increment(CmCounter.CM_UNEXPECTED);
        }
    }

    // =============================================================================== timers

    /** Emits what the connection owes and runs its timers; returns packets emitted. */
    private int service(final long now, final Connection c, final TransmitSink sink) {
        int emitted = 0;
        final CmTimers timers = c.timers;
        if (timers.sendPending()) {
            if (!emit(now, sink, c.out, 0, c.outLength, c.remotePeer)) {
                return emitted;
            }
            emitted++;
            timers.sent(now);
        } else if (timers.retransmitDue(now)) {
            if (!emit(now, sink, c.out, 0, c.outLength, c.remotePeer)) {
                return emitted;
            }
            emitted++;
            counters.increment(CmCounter.RETRANSMITS);
            timers.retransmitted(now, config.retransmitMaxNs());
        }
        if (c.sendAnswer) {
            if (!emit(now, sink, c.answer, 0, c.answerLength, c.remotePeer)) {
                return emitted;
            }
            emitted++;
            c.sendAnswer = false;
        }
        if (timers.deadlineDue(now)) {
            onDeadline(now, c);
        }
        if (now >= c.handshakeExpiryNs()) {
            handshakes.remove(c);
            if (c.state() == ConnectionState.REQUEST_PENDING) {
                LOG.debug("application did not decide on {} in time", c);
                close(c);
            }
            maybeFree(c);
        }
        return emitted;
    }

    private void onDeadline(final long now, final Connection c) {
        c.timers.clearDeadline();
        switch (c.state()) {
            case CONNECTING -> { // [CM-023]
                LOG.debug("unreachable: {}", c);
                qpToError(c);
                raise(CmEventType.UNREACHABLE, c, CmReason.NORMAL, NONE);
                close(c);
            }
            case ACCEPTED -> { // [CM-024]
                LOG.debug("no READY_TO_USE for {}", c);
                raise(CmEventType.CONNECT_ERROR, c, CmReason.QP_ERROR, NONE);
                startDisconnect(c, CmReason.QP_ERROR, false);
            }
            case DISCONNECTING -> finishDisconnect(now, c); // [CM-032]
            case TIMEWAIT -> { // [CM-034]
                raise(CmEventType.TIMEWAIT_EXIT, c, CmReason.NORMAL, NONE);
                close(c);
            }
            default -> {
                // No timer in other states.
            }
        }
    }

    /** [CM-013]: the first request packet reached the server's QP in RTR before READY_TO_USE. */
    private void onCommunicationEstablished(final Connection c) {
        if (c.server && c.state() == ConnectionState.ACCEPTED && c.qp.state() == QpState.RTR) {
            counters.increment(CmCounter.COMM_EST);
            establishServer(c);
        }
        // Otherwise READY_TO_USE came first (or the connection is being torn down): nothing to do.
    }

    /**
     * A connection's QP entered ERR by itself. A peer declared dead by keepalive ends the
     * connection at once, without a disconnect exchange nobody would answer [CM-030]. After a fatal
     * NACK this side sent (QP_REQ_ERR, QP_ACCESS_ERR), the peer learns from the NACK, so the
     * connection ends without DISCONNECT_REQUEST too; it waits in time-wait to answer the peer's
     * [CM-033, CM-034]. Any other failure is announced with DISCONNECT_REQUEST QP_ERROR [CM-033].
     * Before ESTABLISHED the failure is a CONNECT_ERROR.
     */
    private void onQueuePairError(final long now, final Connection c, final AsyncEventType cause) {
        final boolean peerDead = c.qp.isPeerDead();
        final boolean sentFatalNack = cause == AsyncEventType.QP_REQ_ERR || cause == AsyncEventType.QP_ACCESS_ERR;
        switch (c.state()) {
            case CONNECTING -> {
                LOG.debug("queue pair failed ({}) while connecting: {}", cause, c);
                raise(CmEventType.CONNECT_ERROR, c, CmReason.QP_ERROR, NONE);
                close(c);
            }
            case ACCEPTED -> {
                LOG.debug("queue pair failed ({}) before READY_TO_USE: {}", cause, c);
                raise(CmEventType.CONNECT_ERROR, c, CmReason.QP_ERROR, NONE);
                if (sentFatalNack) {
                    enterTimewait(now, c, config.disconnectTimeoutNs());
                } else {
                    startDisconnect(c, CmReason.QP_ERROR, false);
                }
            }
            case ESTABLISHED -> {
                if (peerDead || sentFatalNack) {
                    LOG.debug("{}: {}", peerDead ? "peer dead" : "fatal NACK sent", c);
                    if (peerDead) {
                        counters.increment(CmCounter.PEERS_DEAD);
                    }
                    raise(CmEventType.DISCONNECTED, c, CmReason.QP_ERROR, NONE);
                    enterTimewait(now, c, sentFatalNack ? config.disconnectTimeoutNs() : 0);
                } else {
                    LOG.debug("queue pair failed ({}): {}", cause, c);
                    startDisconnect(c, CmReason.QP_ERROR, true);
                }
            }
            default -> {
                // Already tearing down: the CM put the QP in ERR itself.
            }
        }
    }

    /** The application destroyed a connection's QP: the connection ends as by {@link #disconnect}. */
    private void onQueuePairDestroyed(final Connection c) {
        switch (c.state()) {
            case CONNECTING -> {
                raise(CmEventType.CONNECT_ERROR, c, CmReason.QP_ERROR, NONE);
                close(c);
            }
            case ACCEPTED, ESTABLISHED -> startDisconnect(c, CmReason.NORMAL, true);
            default -> {
                // Tearing down already; time-wait answers from the kept identity [CM-034].
            }
        }
    }

    // =============================================================================== transitions

    private void establishServer(final Connection c) {
        final QpParams<?> p = c.params;
        if (c.qp.state() != QpState.RTR) {
            return; // in ERR: its QP event ends the connection at the next poll
        }
        try {
            c.qp.modify(QpState.RTS, p.congestionAttributes(new QpAttributes().sqPsn(c.localInitialPsn)
                .timeoutNs(p.timeoutNs).retryCount(p.retryCount).rnrRetry(p.rnrRetry)
                .maxRdAtomic(Math.max(1, c.replyInitiatorDepth))));
        } catch (final RuntimeException ex) {
            LOG.warn("cannot move the queue pair of {} to RTS: {}", c, ex.getMessage());
            raise(CmEventType.CONNECT_ERROR, c, CmReason.QP_ERROR, NONE);
            startDisconnect(c, CmReason.QP_ERROR, false);
            return;
        }
        c.timers.stop();
        c.timers.clearDeadline();
        c.moveTo(ConnectionState.ESTABLISHED);
        LOG.debug("established {}", c);
        raise(CmEventType.ESTABLISHED, c, NONE);
        changed();
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

    /** Answers a verified request with CONNECT_REJECT and remembers the answer for duplicates. */
    private void rejectPending(final Connection c, final int reason, final byte[] data) {
        c.answerLength = writer.reject(c, reason, data, c.answer);
        c.sendAnswer = true;
        counters.increment(CmCounter.REJECTS_SENT);
        close(c);
    }

    /** [CM-031, CM-033, CM-009]: QP to ERR, DISCONNECT_REQUEST retransmitted until answered. */
    private void startDisconnect(final Connection c, final int reason, final boolean raiseDisconnected) {
        qpToError(c);
        c.disconnectReason = reason;
        c.raiseDisconnected = raiseDisconnected;
        if (c.remoteQpn == 0) {
            finishDisconnect(lastNowNs, c);
            return;
        }
        writer.headerOnly(c.out, 0, c, Opcode.DISCONNECT_REQUEST, reason);
        c.outLength = HEADER;
        c.moveTo(ConnectionState.DISCONNECTING);
        armRetransmit(c, config.disconnectTimeoutNs());
        changed();
    }

    private void finishDisconnect(final long now, final Connection c) {
        if (c.raiseDisconnected) {
            c.raiseDisconnected = false;
            raise(CmEventType.DISCONNECTED, c, c.disconnectReason, NONE);
        }
        enterTimewait(now, c);
    }

    /**
     * [CM-034, CM-039]: the connection is over but its identity is kept to answer the peer's
     * duplicate DISCONNECT_REQUESTs. Everything else goes now, not when time-wait ends: the queue
     * pair the manager created (with the listener slot, at the next poll or after a fatal NACK's
     * linger) and the packet buffers (time-wait answers are built from the identity), so that a
     * peer that connects and disconnects in a loop leaves behind one small record per connection
     * for QPN_QUARANTINE, not a queue pair.
     */
    private void enterTimewait(final long now, final Connection c) {
        enterTimewait(now, c, 0);
    }

    /**
     * @param lingerNs how long the QP stays (in ERR) before it is destroyed: after a fatal NACK it
     *     repeats that NACK to retransmissions of the offending packet [REL-052]
     */
    private void enterTimewait(final long now, final Connection c, final long lingerNs) {
        c.timers.stop();
        releaseQueuePair(now, c, lingerNs);
        c.sendAnswer = false;
        c.out = null;
        c.answer = null;
        c.answerLength = 0;
        c.localPrivateData = NONE;
        c.moveTo(ConnectionState.TIMEWAIT);
        c.timers.deadline(now + config.timewaitNs());
        changed();
    }

    /**
     * The connection is finished without time-wait (failed handshake, rejected request, time-wait
     * over). A server's CONNECT_REJECT stays in {@link Connection#answer} while the handshake table
     * remembers the request, for its duplicates [CM-025].
     */
    private void close(final Connection c) {
        c.timers.stop();
        releaseQueuePair(lastNowNs, c, 0);
        c.out = null;
        c.moveTo(ConnectionState.CLOSED);
        c.timers.clearDeadline();
        if (c.inQpnTable && byQpn.get(c.localQpn) == c) {
            byQpn.remove(c.localQpn);
        }
        c.inQpnTable = false;
        maybeFree(c);
        changed();
    }

    private void maybeFree(final Connection c) {
        if (!c.freed && c.state() == ConnectionState.CLOSED && c.handshakeExpiryNs() == Long.MAX_VALUE) {
            c.freed = true;
            directory.unpin(c.remotePeer);
            changed();
        }
    }

    /**
     * Moves the queue pair the manager created for a connection that has ended to ERR, so that its
     * outstanding work requests complete with WR_FLUSH_ERR rather than vanish [QP-022], and has it
     * destroyed at a coming poll [CM-039]. The listener slot is released when the QP is gone, so
     * the listener limit bounds the QPs a listener's connections hold, lingering ones included. A
     * QP the application destroyed itself, or passed to {@link #connect}, is left alone.
     */
    private void releaseQueuePair(final long now, final Connection c, final long lingerNs) {
        final QueuePair qp = c.qp;
        if (c.retiring) {
            c.retireAtNs = Math.min(c.retireAtNs, now + lingerNs); // closing ends a linger
        } else if (c.ownsQueuePair && qp != null && endpoint.queuePair(c.localQpn) == qp) {
            qpToError(c);
            c.retiring = true;
            c.retireAtNs = now + lingerNs;
            retiring.add(c);
            changed();
        } else {
            releaseListenerSlot(c);
        }
        c.ownsQueuePair = false;
    }

    /**
     * Destroys the retiring queue pairs that have nothing left to send and no reason to linger.
     * Runs at the start of a poll, before the endpoint polls its queue pairs, so a QP that failed
     * with a NACK to send emits it in this poll and is destroyed in the next.
     */
    private void destroyRetiredQueuePairs(final long now) {
        long next = Long.MAX_VALUE;
        for (int i = retiring.size() - 1; i >= 0; i--) {
            final Connection c = retiring.get(i);
            final QueuePair qp = c.qp;
            final boolean live = endpoint.queuePair(c.localQpn) == qp;
            if (live && qp.hasAcknowledgementsToSend()) {
                next = now; // sent by the endpoint in this poll: destroy it at the next
                continue;
            }
            if (live && now < c.retireAtNs) {
                next = Math.min(next, c.retireAtNs);
                continue;
            }
            final int last = retiring.size() - 1;
            retiring.set(i, retiring.get(last));
            retiring.remove(last);
            c.retiring = false;
            if (live) {
                endpoint.destroyQueuePair(qp);
            }
            releaseListenerSlot(c);
        }
        retireDeadlineNs = next;
    }

    private void releaseListenerSlot(final Connection c) {
        if (c.countedInListener) {
            c.countedInListener = false;
            c.listener.connections--;
        }
    }

    private void registerQpn(final Connection c) {
        final Connection old = byQpn.get(c.localQpn);
        if (old != null && old != c) {
            // The engine reused a QPN still in our time-wait (its quarantine counts allocations).
            raise(CmEventType.TIMEWAIT_EXIT, old, CmReason.NORMAL, NONE);
            old.inQpnTable = false;
            close(old);
        }
        byQpn.put(c.localQpn, c);
        c.inQpnTable = true;
    }

    private void qpToError(final Connection c) {
        final QueuePair qp = c.qp;
        if (qp != null && endpoint.queuePair(c.localQpn) == qp && qp.state() != QpState.ERR) {
            qp.modify(QpState.ERR, NO_ATTRIBUTES);
        }
    }

    /** Sends the connection's {@link Connection#out} at the next poll and until answered [CM-022]. */
    private void armRetransmit(final Connection c, final long deadlineAfterSendNs) {
        c.timers.arm(config.retransmitInitialNs(), deadlineAfterSendNs);
    }

    private static int disconnectReason(final int reason) {
        return reason <= CmReason.PEER_RESTARTED ? reason : CmReason.NORMAL; // [CM-018]
    }

    // =============================================================================== addresses

    /**
     * Writes a peer's address bytes into {@link #address}: what cookies are bound to [CM-015] and,
     * with the Transaction ID, the handshake table's key [CM-012].
     *
     * @return their number
     */
    private int addressOf(final int peerId) {
        final int n = directory.addressBytes(peerId, address, 0);
        if (n < 1 || n > PeerDirectory.MAX_ADDRESS_BYTES) {
            throw new IllegalStateException("PeerDirectory.addressBytes wrote " + n + " bytes; must be 1.."
                + PeerDirectory.MAX_ADDRESS_BYTES);
        }
        return n;
    }

    // =============================================================================== packets out

    /** Sends a connection's packet; when the sink has no room, the next poll visits the connections again. */
    private boolean emit(final long now, final TransmitSink sink, final DirectBuffer src, final int srcOffset,
                         final int length, final int peerId) {
        if (out.send(now, sink, src, srcOffset, length, peerId)) {
            return true;
        }
        needPoll = true;
        return false;
    }

    private static byte[] payloadOf(final DirectBuffer b, final int off) {
        final int n = BaseHeader.payloadLength(b, off);
        if (n == 0) {
            return NONE;
        }
        final byte[] data = new byte[n];
        b.getBytes(off + HEADER, data);
        return data;
    }

    // =============================================================================== events

    private void raise(final CmEventType type, final Connection c, final byte[] privateData) {
        raise(type, c, CmReason.NORMAL, privateData);
    }

    private void raise(final CmEventType type, final Connection c, final int reason, final byte[] privateData) {
        events.raise(new CmEvent(type, c, c.listener, reason, privateData));
        endpoint.trace().recordConnectionEvent(lastNowNs, c.qp == null ? 0 : c.qp.qpn(), type.ordinal(), reason);
    }

    private void touch(final long nowNs) {
        lastNowNs = nowNs;
        timeKnown = true;
    }

    private void changed() {
        needPoll = true;
    }

    @Override
    public String toString() {
        return "ConnectionManager{port=" + endpointPort + ", listeners=" + listeners.size() + ", connections="
            + connectionCount() + ", handshakes=" + handshakes.size() + ", " + counters + '}';
    }
}
