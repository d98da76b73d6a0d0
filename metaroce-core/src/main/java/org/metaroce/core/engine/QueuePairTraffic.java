// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.engine;

import java.nio.ByteOrder;

import org.agrona.DirectBuffer;
import org.metaroce.core.verbs.QpState;
import org.metaroce.core.verbs.WcStatus;
import org.metaroce.core.wire.BaseHeader;
import org.metaroce.core.wire.ConnectHeader;
import org.metaroce.core.wire.Flags;
import org.metaroce.core.wire.Opcode;
import org.metaroce.core.wire.WireConstants;

/**
 * A queue pair's traffic, gated by its state (table 4.2 of the specification): which packets a state
 * admits and which half takes them [QP-011], the order of a poll (the responder's answers, keepalive
 * [CM-027, CM-030], the requester's timers and packets, a bare ACK after the requests [REL-008] or
 * the same ACK riding on the first of them [REL-071]), an attached ACK before its request [REL-070],
 * when the queue pair next needs a poll, and the events the traffic causes (COMM_EST, SQ_DRAINED).
 * The verbs side ({@link QueuePair}) changes the state; this class reads it at every step through
 * {@link QueuePairSides.Owner}, since a half may move the queue pair to ERR in the middle of a step,
 * and fails it through the same interface.
 */
final class QueuePairTraffic {
    private final QueuePairSides.Owner qp;
    private final QueuePairContext endpoint;
    private final QueuePairSides sides;
    private final CurrentAttributes attributes;
    private final CongestionControlChoice cc;
    private final KeepaliveTimer keepalive;
    private final Requester requester;
    private final Responder responder;
    private final EndpointCounters counters;
    private boolean communicationEstablished;
    private boolean drainedRaised;

    QueuePairTraffic(final QueuePairSides.Owner qp, final QueuePairContext endpoint, final QueuePairSides sides,
                     final CurrentAttributes attributes, final CongestionControlChoice cc,
                     final KeepaliveTimer keepalive, final Requester requester, final Responder responder) {
        this.qp = qp;
        this.endpoint = endpoint;
        this.sides = sides;
        this.attributes = attributes;
        this.cc = cc;
        this.keepalive = keepalive;
        this.requester = requester;
        this.responder = responder;
        this.counters = endpoint.counters();
    }

    /** The queue pair went back to RESET: COMM_EST is raised again by the next first request. */
    void reset() {
        communicationEstablished = false;
    }

    /** The queue pair enters SQD: SQ_DRAINED is raised once its started work has completed. */
    void draining() {
        drainedRaised = false;
    }

    /**
     * @param nowNs the current time
     * @param arrivalNs when the packet reached the host (at most {@code nowNs}): round trips and ACK
     *     Delay are measured from it [REL-066]
     */
    void onPacket(final long nowNs, final long arrivalNs, final DirectBuffer buffer, final int offset,
                  final int length, final int peer, final Opcode opcode, final int ecn) {
        final QpState state = qp.state();
        if (state == QpState.RESET || state == QpState.INIT) {
            counters.increment(EndpointCounter.INVALID_QP_STATE);
            return;
        }
        if (endpoint.hostOf(peer) != attributes.remoteHost()
            || BaseHeader.sourceQpn(buffer, offset) != attributes.destQpn()) {
            counters.increment(EndpointCounter.PEER_MISMATCH);
            return;
        }
        // Any valid packet from the peer restarts the keepalive idle time [CM-028].
        keepalive.heard(nowNs);
        if (opcode == Opcode.KEEPALIVE) {
            if (state == QpState.RTR || state == QpState.RTS || state == QpState.SQD || state == QpState.SQE) {
                responder.onKeepalive(nowNs, arrivalNs, buffer, offset);
            } else {
                counters.increment(EndpointCounter.INVALID_QP_STATE);
            }
            return;
        }
        if (opcode.isRequest()) {
            onRequest(nowNs, arrivalNs, buffer, offset, opcode, ecn, state);
            return;
        }
        if (state != QpState.RTS && state != QpState.SQD) {
            counters.increment(EndpointCounter.INVALID_QP_STATE);
            return;
        }
        onResponse(nowNs, arrivalNs, buffer, offset, opcode, ecn);
    }

    private void onRequest(final long nowNs, final long arrivalNs, final DirectBuffer buffer, final int offset,
                           final Opcode opcode, final int ecn, final QpState state) {
        if (state == QpState.ERR) {
            if ((BaseHeader.flags(buffer, offset) & Flags.ATTACHED_ACK) == 0
                || attachedAck(nowNs, arrivalNs, buffer, offset, opcode, state)) {
                responder.onRequestInError(nowNs, arrivalNs, buffer, offset);
            }
            return;
        }
        if (state != QpState.RTR && state != QpState.RTS && state != QpState.SQD && state != QpState.SQE) {
            counters.increment(EndpointCounter.INVALID_QP_STATE);
            return;
        }
        if ((BaseHeader.flags(buffer, offset) & Flags.ATTACHED_ACK) != 0) {
            if (!attachedAck(nowNs, arrivalNs, buffer, offset, opcode, state)) {
                return;
            }
            if (qp.state() == QpState.ERR) {
                // The ACK part ended the connection [REL-068]: the request meets a QP in ERR.
                responder.onRequestInError(nowNs, arrivalNs, buffer, offset);
                return;
            }
        }
        final long lastRequestNs = responder.lastRequestNs();
        responder.onRequest(nowNs, arrivalNs, buffer, offset, opcode, ecn);
        if (responder.lastRequestNs() != lastRequestNs) {
            endpoint.requestAccepted();
        }
        if (qp.state() == QpState.RTR && !communicationEstablished && responder.hasAccepted()) {
            communicationEstablished = true;
            endpoint.raise(AsyncEventType.COMM_EST);
        }
    }

    /**
     * The ACK part of a request packet with ATTACHED_ACK, applied before its request part [REL-070]:
     * as a bare ACK with the trailer's Triggering PSN, in the states where the requester takes ACKs,
     * whatever the responder then does with the request. A trimmed packet lost its trailer with its
     * payload [WIRE-074].
     *
     * @return false when the packet is dropped whole: the capability is not in effect
     */
    private boolean attachedAck(final long nowNs, final long arrivalNs, final DirectBuffer buffer, final int offset,
                                final Opcode opcode, final QpState state) {
        if ((attributes.capabilities() & ConnectHeader.CAP_ATTACHED_ACK) == 0) {
            counters.increment(EndpointCounter.ATTACHED_ACK_NOT_NEGOTIATED);
            return false;
        }
        if ((BaseHeader.flags(buffer, offset) & Flags.TRIMMED) != 0) {
            return true;
        }
        if (state != QpState.RTS && state != QpState.SQD) {
            // The requester takes no ACK in this state; the packet is not dropped (its request part
            // goes on), so no drop is counted.
            return true;
        }
        final int trailer = offset + opcode.headerLength() + BaseHeader.payloadLength(buffer, offset);
        counters.increment(EndpointCounter.ACKS_ATTACHED_IN);
        requester.onAck(nowNs, arrivalNs, buffer, trailer + WireConstants.TRIGGER_PSN_LENGTH,
            buffer.getInt(trailer, ByteOrder.BIG_ENDIAN), false);
        return true;
    }

    /** A response-class packet in RTS or SQD: ACKs, NACKs and responses to the requester, a CNP to congestion control. */
    private void onResponse(final long nowNs, final long arrivalNs, final DirectBuffer buffer, final int offset,
                            final Opcode opcode, final int ecn) {
        switch (opcode) {
            case ACK -> {
                counters.increment(EndpointCounter.ACKS_IN);
                requester.onAck(nowNs, arrivalNs, buffer, offset + Opcode.ACK.ackOffset(), BaseHeader.psn(buffer, offset),
                    false);
            }
            case NACK -> {
                counters.increment(EndpointCounter.NACKS_IN);
                requester.onAck(nowNs, arrivalNs, buffer, offset + Opcode.NACK.ackOffset(),
                    BaseHeader.psn(buffer, offset), true);
                if (sendsRequests()) {
                    requester.onNack(nowNs, buffer, offset);
                }
            }
            case READ_RESPONSE -> requester.onReadResponse(nowNs, arrivalNs, buffer, offset,
                BaseHeader.payloadLength(buffer, offset), ecn == DatagramEndpoint.ECN_CE);
            case ATOMIC_RESPONSE -> requester.onAtomicResponse(nowNs, arrivalNs, buffer, offset,
                ecn == DatagramEndpoint.ECN_CE);
            case CNP -> {
                // Only DCQCN reacts to CNPs; every other algorithm ignores them [CC-007].
                if (cc.instance().onCongestionNotification(nowNs)) {
                    counters.increment(EndpointCounter.CNPS_IN);
                } else {
                    counters.increment(EndpointCounter.CNP_IGNORED);
                }
            }
            default -> counters.increment(EndpointCounter.UNEXPECTED_RESPONSE);
        }
    }

    /** @return whether the queue pair is in RTS or SQD, the states whose requester runs */
    private boolean sendsRequests() {
        final QpState state = qp.state();
        return state == QpState.RTS || state == QpState.SQD;
    }

    /** Emits what is due, at most {@code budget} packets, and returns how many. */
    int poll(final long nowNs, final TransmitSink sink, final int budget) {
        int emitted = 0;
        final QpState state = qp.state();
        if (state == QpState.RESET || state == QpState.INIT) {
            return 0;
        }
        // A bare ACK goes after the QP's own requests of this poll [REL-008]: when the application
        // answers a request with a request of its own (a reply), the reply leaves first and the ACK's
        // transmission is off the request-reply path. NACKs, CNPs and responses keep going first.
        final boolean ackAfterRequests = responder.onlyCoalescedAckPending() && sendsRequests();
        if (!ackAfterRequests) {
            emitted += responder.emit(nowNs, sink, budget);
        }
        if (sendsRequests()) {
            emitted += keepalive(nowNs, sink);
            if (!sendsRequests()) {
                return emitted;
            }
            requester.onTimers(nowNs);
            if (sendsRequests()) {
                if (ackAfterRequests) {
                    // It rides on the first request that has room for it, if it may [REL-071]; one
                    // slot stays for it should none.
                    responder.attachToRequests(nowNs);
                }
                emitted += requester.emit(nowNs, sink, budget - emitted - (ackAfterRequests ? 1 : 0));
                responder.requestsSent();
            }
            if (ackAfterRequests) {
                emitted += responder.emit(nowNs, sink, budget - emitted);
            }
            if (qp.state() == QpState.SQD && !drainedRaised && requester.startedOutstanding() == 0) {
                drainedRaised = true;
                endpoint.raise(AsyncEventType.SQ_DRAINED);
            }
        }
        return emitted;
    }

    /**
     * Probes a silent peer with KEEPALIVE and declares it dead when the probes go unanswered
     * [CM-027], [CM-030].
     */
    private int keepalive(final long nowNs, final TransmitSink sink) {
        final KeepaliveTimer.Due due = keepalive.due(nowNs, endpoint.config(), attributes.retryTimeoutNs());
        if (due == KeepaliveTimer.Due.PROBE) {
            if (!sides.sendProbe(nowNs, sink, keepalive.probesSent(), requester.nextPsn())) {
                return 0;
            }
            requester.onProbeSent(nowNs);
            keepalive.probed(nowNs);
            return 1;
        }
        if (due == KeepaliveTimer.Due.PEER_DEAD) {
            final long silentFor = keepalive.silentForNs(nowNs);
            final int probes = keepalive.probesSent();
            keepalive.declaredDead();
            counters.increment(EndpointCounter.PEERS_DEAD);
            sides.trace(nowNs, TraceEvent.PEER_DEAD, 0, probes, 0, silentFor);
            qp.recordFailure("peer dead: nothing heard from it for " + Seconds.of(silentFor) + " despite " + probes
                + " KEEPALIVE probes (RETRY_TIMEOUT " + Seconds.of(attributes.retryTimeoutNs()) + ") [CM-030]");
            requester.failOldest(WcStatus.RETRY_EXC_ERR);
            qp.enterError(AsyncEventType.QP_FATAL);
        }
        return 0;
    }

    /** @return when the queue pair next needs a poll: MIN_VALUE for now, MAX_VALUE for never */
    long nextDeadlineNs() {
        final QpState state = qp.state();
        if (state == QpState.RESET || state == QpState.INIT) {
            return Long.MAX_VALUE;
        }
        long deadline = responder.nextDeadlineNs();
        if (sendsRequests() && endpoint.config().keepaliveIdleNs() > 0) {
            deadline = Math.min(deadline, keepalive.deadlineNs(endpoint.config()));
        }
        if (sendsRequests()) {
            // Work the window holds back waits for an ACK (which makes the driver poll) or a timer.
            deadline = Math.min(deadline, requester.nextDeadlineNs());
        }
        return deadline;
    }

    /** @return whether the requester has work it can send now */
    boolean hasImmediateWork() {
        return qp.state() == QpState.RTS && requester.hasWork();
    }
}
