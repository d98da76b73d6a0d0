// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.connection;

import java.util.function.IntPredicate;

import org.agrona.DirectBuffer;
import org.metaroce.core.engine.PeerDirectory;
import org.metaroce.core.verbs.QpState;
import org.metaroce.core.wire.BaseHeader;
import org.metaroce.core.wire.ConnectHeader;
import org.metaroce.core.wire.Opcode;
import org.metaroce.core.wire.WireConstants;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Every connection-manager packet the endpoint hands over: a CONNECT_REQUEST to QPN 0 goes to
 * {@link RequestAdmission}; a packet to a QPN is checked against the identity of the connection
 * holding that QPN (Transaction ID, Service ID, peer host and QPN) and then means, by opcode,
 * what the handlers below say: CONNECT_CHALLENGE, CONNECT_REPLY, CONNECT_REJECT, READY_TO_USE,
 * DISCONNECT_REQUEST and DISCONNECT_REPLY. What does not fit is counted, never answered.
 */
final class CmPacketReceiver {
    private static final Logger LOG = LoggerFactory.getLogger(CmPacketReceiver.class);
    private static final int CM = CmPacketWriter.CM;
    private static final byte[] NONE = PrivateData.NONE;

    private final RequestAdmission admission;
    private final ConnectionTable connections;
    private final IntPredicate hasQueuePair;
    private final PeerDirectory directory;
    private final CmCounters counters;
    private final StatelessAnswers answers;
    private final ConnectionQueuePairs queuePairs;
    private final ConnectionLifecycle lifecycle;
    private final CmContext context;

    /**
     * @param admission the server's handling of CONNECT_REQUESTs to QPN 0
     * @param hasQueuePair whether the endpoint has a queue pair with the QPN (wired by hand when no
     *     connection holds it)
     * @param answers where header-only answers (READY_TO_USE, DISCONNECT_REPLY) go
     */
    CmPacketReceiver(final RequestAdmission admission, final ConnectionTable connections,
                     final IntPredicate hasQueuePair, final PeerDirectory directory, final CmCounters counters,
                     final StatelessAnswers answers, final ConnectionQueuePairs queuePairs,
                     final ConnectionLifecycle lifecycle, final CmContext context) {
        this.admission = admission;
        this.connections = connections;
        this.hasQueuePair = hasQueuePair;
        this.directory = directory;
        this.counters = counters;
        this.answers = answers;
        this.queuePairs = queuePairs;
        this.lifecycle = lifecycle;
        this.context = context;
    }

    /** A CM packet (validated by the engine) from a peer: routed by opcode and destination QPN. */
    void onPacket(final long now, final DirectBuffer buffer, final int offset, final int peerId) {
        counters.increment(CmCounter.PACKETS_IN);
        final Opcode opcode = Opcode.of(BaseHeader.opcode(buffer, offset));
        final int destQpn = BaseHeader.destQpn(buffer, offset);
        if (opcode == Opcode.CONNECT_REQUEST) {
            if (destQpn != WireConstants.CONNECTION_MANAGER_QPN) {
                // [WIRE-070] a request goes to QPN 0; to another QPN it is dropped at step 10 of
                // 4.8 if that QPN is unknown [QP-024], and is not valid there if it is known [CM-003].
                counters.increment(connections.holdsQpn(destQpn) || hasQueuePair.test(destQpn)
                    ? CmCounter.CM_UNEXPECTED : CmCounter.UNKNOWN_QPN);
                return;
            }
            admission.onConnectRequest(now, buffer, offset, peerId);
        } else if (destQpn == WireConstants.CONNECTION_MANAGER_QPN) {
            counters.increment(CmCounter.CM_UNEXPECTED);
        } else {
            final Connection c = connections.byQpn(destQpn);
            if (c == null) {
                // A live QP wired by hand [CM-038] has no handshake state for the packet [CM-003].
                counters.increment(hasQueuePair.test(destQpn) ? CmCounter.CM_UNEXPECTED : CmCounter.UNKNOWN_QPN);
                return;
            }
            onConnectionPacket(now, c, opcode, buffer, offset, peerId);
        }
    }

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
        lifecycle.armRetransmit(c, 0);
        context.changed();
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
        c.peerPrivateData = PrivateData.of(b, off);
        c.timers.stop();
        final boolean acceptable = WireConstants.isValidPathMtu(mtu) && mtu <= c.proposedMtu && pathCount >= 1
            && pathCount <= c.proposedPathCount && (caps & ~c.proposedCapabilities) == 0
            && depth <= c.proposedResponderResources && resources <= c.proposedInitiatorDepth;
        if (!acceptable) {
            LOG.debug("unacceptable reply for {}", c);
            context.raise(CmEventType.CONNECT_ERROR, c, CmReason.BAD_PARAMETERS, NONE);
            lifecycle.startDisconnect(c, CmReason.BAD_PARAMETERS, false);
            return;
        }
        final QpParams<?> p = connections.params(c);
        try {
            c.qp.modify(QpState.RTR, p.rtrAttributes(c, c.proposedResponderResources));
            c.qp.modify(QpState.RTS, p.rtsAttributes(c.localInitialPsn, resources));
        } catch (final RuntimeException ex) {
            LOG.warn("cannot bring up the queue pair of {}: {}", c, ex.getMessage());
            context.raise(CmEventType.CONNECT_ERROR, c, CmReason.QP_ERROR, NONE);
            lifecycle.startDisconnect(c, CmReason.QP_ERROR, false);
            return;
        }
        answers.headerOnly(c, Opcode.READY_TO_USE, 0);
        c.moveTo(ConnectionState.ESTABLISHED);
        c.timers.clearDeadline();
        LOG.debug("established {}", c);
        context.raise(CmEventType.ESTABLISHED, c, CmReason.NORMAL, c.peerPrivateData);
        context.changed();
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
            lifecycle.armRetransmit(c, 0);
            context.changed();
            return;
        }
        queuePairs.toError(c);
        LOG.debug("rejected {} ({})", c, CmReason.name(reason));
        context.raise(CmEventType.REJECTED, c, reason, PrivateData.of(b, off));
        lifecycle.close(c);
    }

    /** [CM-013]. */
    private void onReadyToUse(final Connection c) {
        if (!c.server) {
            counters.increment(CmCounter.CM_UNEXPECTED);
            return;
        }
        if (c.state() == ConnectionState.ACCEPTED) {
            lifecycle.establishServer(c);
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
                lifecycle.endedByPeer(now, c, CmEventType.DISCONNECTED, reason);
            }
            case CONNECTING -> {
                // The server gave up on a reply we never received.
                if (peerQpn != 0) {
                    c.remoteQpn = peerQpn;
                    answers.headerOnly(c, Opcode.DISCONNECT_REPLY, reason);
                }
                lifecycle.endedByPeer(now, c, CmEventType.CONNECT_ERROR, reason);
            }
            case DISCONNECTING -> {
                answers.headerOnly(c, Opcode.DISCONNECT_REPLY, reason);
                lifecycle.finishDisconnect(now, c);
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
        context.changed();
    }

    private void onDisconnectReply(final long now, final Connection c) {
        if (c.state() == ConnectionState.DISCONNECTING) {
            lifecycle.finishDisconnect(now, c);
            context.changed();
        } else if (c.state() != ConnectionState.TIMEWAIT) {
            counters.increment(CmCounter.CM_UNEXPECTED);
        }
    }

    private static int disconnectReason(final int reason) {
        return reason <= CmReason.PEER_RESTARTED ? reason : CmReason.NORMAL; // [CM-018]
    }
}
