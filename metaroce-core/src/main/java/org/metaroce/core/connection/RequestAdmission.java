// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.connection;

import java.util.function.LongFunction;

import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.metaroce.core.engine.PeerDirectory;
import org.metaroce.core.wire.BaseHeader;
import org.metaroce.core.wire.ConnectHeader;
import org.metaroce.core.wire.WireConstants;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The server's side of a CONNECT_REQUEST to QPN 0 ([CM-010] steps 1 to 6, [CM-012]): a request
 * for no listener or with bad parameters is rejected, one without a valid cookie is challenged
 * and nothing is kept [CM-011], a verified duplicate gets the answer already sent [CM-025], and a
 * verified new one, if the handshake table and the listener have room, becomes a pending
 * connection and a CONNECT_REQUEST event. Stateless answers go through {@link StatelessAnswers},
 * which rate-limits them per source [SEC-008].
 */
final class RequestAdmission {
    private static final Logger LOG = LoggerFactory.getLogger(RequestAdmission.class);
    private static final int CM = CmPacketWriter.CM;

    private final LongFunction<Listener> listeners;
    private final LongFunction<ListenParams> listenParams;
    private final CmConfig config;
    private final PeerDirectory directory;
    private final CookieJar cookies;
    private final CmCounters counters;
    private final HandshakeTable handshakes;
    private final StatelessAnswers answers;
    private final ConnectionTable connections;
    private final ConnectionLifecycle lifecycle;
    private final CmContext context;
    /** The requesting peer's address bytes: what cookies are bound to and the handshake table's key. */
    private final UnsafeBuffer address = new UnsafeBuffer(new byte[PeerDirectory.MAX_ADDRESS_BYTES]);

    /**
     * @param listeners the live listener of a Service ID, or null
     * @param listenParams the parameters of that listener
     * @param handshakes verified requests remembered for their duplicates
     * @param answers where stateless challenges and rejects go
     */
    RequestAdmission(final LongFunction<Listener> listeners, final LongFunction<ListenParams> listenParams,
                     final CmConfig config, final PeerDirectory directory, final CookieJar cookies,
                     final CmCounters counters, final HandshakeTable handshakes, final StatelessAnswers answers,
                     final ConnectionTable connections, final ConnectionLifecycle lifecycle,
                     final CmContext context) {
        this.listeners = listeners;
        this.listenParams = listenParams;
        this.config = config;
        this.directory = directory;
        this.cookies = cookies;
        this.counters = counters;
        this.handshakes = handshakes;
        this.answers = answers;
        this.connections = connections;
        this.lifecycle = lifecycle;
        this.context = context;
    }

    /** [CM-010] steps 1 to 6 and [CM-012]. */
    void onConnectRequest(final long now, final DirectBuffer b, final int off, final int peerId) {
        final int h = off + CM;
        final long serviceId = ConnectHeader.serviceId(b, h);
        final int sourceQpn = BaseHeader.sourceQpn(b, off);
        final Listener listener = listeners.apply(serviceId);
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
            onDuplicateRequest(known, serviceId, sourceQpn);
            return;
        }
        final HandshakeTable.Admission admission = handshakes.admit(directory.hostOf(peerId));
        if (admission != HandshakeTable.Admission.ADMITTED) {
            counters.increment(admission == HandshakeTable.Admission.TABLE_FULL ? CmCounter.HANDSHAKE_TABLE_FULL
                : CmCounter.HOST_HANDSHAKES_FULL);
            answers.reject(b, off, peerId, CmReason.NO_RESOURCES);
            return;
        }
        final ListenParams params = listenParams.apply(serviceId);
        final Connection c = new Connection(true, serviceId, transactionId, listener);
        c.context = listener.context();
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
        c.peerPrivateData = PrivateData.of(b, off);
        c.answer = new UnsafeBuffer(new byte[Connection.MAX_PACKET]);
        handshakes.insert(c, address, addressLength, now);
        connections.add(c, params);
        restartedPeers(c);
        if (listener.connections >= listener.limit) {
            LOG.debug("listener {} is full; rejecting {}", listener, c);
            lifecycle.rejectPending(c, CmReason.NO_RESOURCES, PrivateData.NONE);
            return;
        }
        listener.connections++;
        c.countedInListener = true;
        context.changed();
        context.raise(CmEventType.CONNECT_REQUEST, c, CmReason.NORMAL, c.peerPrivateData);
    }

    /** [CM-025]: answer a duplicate second CONNECT_REQUEST with what was sent, never a second event. */
    private void onDuplicateRequest(final Connection c, final long serviceId, final int sourceQpn) {
        if (c.serviceId != serviceId || c.remoteQpn != sourceQpn) {
            counters.increment(CmCounter.CM_MISMATCH);
            return;
        }
        switch (c.state()) {
            case ACCEPTED, ESTABLISHED, CLOSED -> {
                if (c.answerLength > 0) {
                    c.sendAnswer = true;
                    context.changed();
                }
            }
            default -> {
                // Undecided, or already tearing down: nothing to repeat.
            }
        }
    }

    /** [CM-036]: a verified request from the address and QPN of a live connection with another Transaction ID. */
    private void restartedPeers(final Connection fresh) {
        for (int i = 0, n = connections.size(); i < n; i++) {
            final Connection old = connections.get(i);
            if (old != fresh && !old.freed && old.remoteHost == fresh.remoteHost && old.remoteQpn == fresh.remoteQpn
                && old.transactionId != fresh.transactionId
                && (old.state() == ConnectionState.ACCEPTED || old.state() == ConnectionState.ESTABLISHED)) {
                LOG.debug("peer of {} restarted", old);
                lifecycle.endedByPeer(context.nowNs(), old, CmEventType.DISCONNECTED, CmReason.PEER_RESTARTED);
            }
        }
    }

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
}
