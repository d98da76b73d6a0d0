// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.engine;

import org.agrona.DirectBuffer;
import org.metaroce.core.congestion.CongestionControl;
import org.metaroce.core.congestion.CongestionControlAlgorithm;
import org.metaroce.core.multipath.PathSelector;
import org.metaroce.core.verbs.AccessFlags;
import org.metaroce.core.verbs.CompletionQueue;
import org.metaroce.core.verbs.PostStatus;
import org.metaroce.core.verbs.ProtectionDomain;
import org.metaroce.core.verbs.QpAttributeMask;
import org.metaroce.core.verbs.QpAttributes;
import org.metaroce.core.verbs.QpState;
import org.metaroce.core.verbs.QpStateMachine;
import org.metaroce.core.verbs.RecvRequest;
import org.metaroce.core.verbs.SendRequest;
import org.metaroce.core.verbs.WorkRequestValidator;
import org.metaroce.core.verbs.WcOpcode;
import org.metaroce.core.verbs.WrOpcode;
import org.metaroce.core.verbs.WcStatus;
import org.metaroce.core.wire.BaseHeader;
import org.metaroce.core.wire.ConnectHeader;
import org.metaroce.core.wire.Flags;
import org.metaroce.core.wire.Opcode;
import org.metaroce.core.wire.WireConstants;

/**
 * A reliable-connected queue pair, as with verbs: created by an {@link Endpoint}, moved through
 * RESET → INIT → RTR → RTS with {@link #modify(QpState, QpAttributes)}, fed with
 * {@link #postSend(SendRequest)} and {@link #postRecv(RecvRequest)}, and reporting through its
 * completion queues. Posting never throws and never allocates: it returns a {@link PostStatus}.
 *
 * <p>Not thread safe: the endpoint's owning thread calls everything here (a driver gives other
 * threads queues to it).
 */
public final class QueuePair {
    /** The endpoint as this queue pair sees it: bound to it, no pointer back to the endpoint. */
    private final QueuePairContext endpoint;
    /** This queue pair as its requester and responder see it. */
    private final QueuePairSides sides;
    private final int qpn;
    private final ProtectionDomain pd;
    private final CompletionQueue sendCq;
    private final CompletionQueue recvCq;
    private final int maxSendSge;
    private final int maxRecvSge;
    private final EndpointCounters counters;
    /** Null once destroyed: destroying frees what the QP preallocated (its rings and scoreboards). */
    private Requester requester;
    private Responder responder;
    private QpState state = QpState.RESET;
    private boolean communicationEstablished;
    private boolean drainedRaised;
    /** When to probe a silent peer and when to declare it dead [CM-027, CM-030]. */
    private final KeepaliveTimer keepaliveTimer = new KeepaliveTimer();
    private boolean peerDead;
    private boolean destroyed;
    /** This QP's retransmissions by cause, counted by the requester as it retransmits. */
    private final RetransmitCauses retransmitCauses = new RetransmitCauses();
    /** {@link #nextSendPsn()} and {@link #expectedReceivePsn()} as they were when the QP was destroyed. */
    private int finalSendPsn;
    private int finalReceivePsn;

    /** The attributes in force, as modify set them. */
    private final CurrentAttributes attributes;
    /** Why the QP entered ERR by itself and what led there, for the application to read. */
    private final FailureRecord failure = new FailureRecord();
    /** The CC_ALGORITHM asked for, the one run and its instance [CC-008, CC-034]. */
    private final CongestionControlChoice cc;

    // Scheduling state owned by the endpoint's PollSchedule.
    /** Position in the endpoint's poll order, -1 once destroyed. */
    int pollIndex = -1;
    /** Position in the schedule's deadline heap, -1 when not in it. */
    int heapIndex = -1;
    /** {@link #nextDeadlineNs()} as of the last refresh. */
    long cachedDeadlineNs = Long.MAX_VALUE;
    /** Whether {@link #cachedDeadlineNs} may be out of date. */
    boolean stale;

    QueuePair(final QueuePairContext endpoint, final int qpn, final ProtectionDomain pd, final CompletionQueue sendCq,
              final CompletionQueue recvCq, final QueuePairCapabilities caps) {
        this.endpoint = endpoint;
        this.qpn = qpn;
        this.pd = pd;
        this.sendCq = sendCq;
        this.recvCq = recvCq;
        this.maxSendSge = caps.maxSendSge();
        this.maxRecvSge = caps.maxRecvSge();
        this.counters = endpoint.counters();
        this.attributes = new CurrentAttributes(endpoint.config().retryTimeoutNs());
        this.cc = new CongestionControlChoice(endpoint.config().receiveWindowPackets());
        this.sides = new QueuePairSides(new Control(), endpoint, qpn, pd, sendCq, recvCq, attributes, cc,
            retransmitCauses);
        this.requester = new Requester(sides, caps.sendQueueDepth(), caps.maxSendSge(), endpoint.config(), counters);
        this.responder = new Responder(sides, caps.recvQueueDepth(), caps.maxRecvSge(), caps.maxDestRdAtomic(),
            endpoint.config(), counters);
    }

    /** @return this queue pair's number (24 bits, never 0) */
    public int qpn() {
        return qpn;
    }

    /**
     * @return scatter/gather entries a send request may carry ({@link QueuePairCapabilities#maxSendSge()},
     *     as ibv_qp_cap.max_send_sge); fixed at creation, so readable from any thread
     */
    public int maxSendSge() {
        return maxSendSge;
    }

    /**
     * @return scatter/gather entries a receive request may carry ({@link QueuePairCapabilities#maxRecvSge()});
     *     fixed at creation, so readable from any thread
     */
    public int maxRecvSge() {
        return maxRecvSge;
    }

    /** @return the current state */
    public QpState state() {
        return state;
    }

    /** @return the protection domain whose memory regions this QP may use */
    public ProtectionDomain pd() {
        return pd;
    }

    /** @return completion queue for send work requests */
    public CompletionQueue sendCq() {
        return sendCq;
    }

    /** @return completion queue for receive work requests */
    public CompletionQueue recvCq() {
        return recvCq;
    }

    /** @return the peer's QPN (valid from RTR on) */
    public int destQpn() {
        return attributes.destQpn();
    }

    /** @return the path MTU in payload bytes */
    public int pathMtu() {
        return attributes.pathMtu();
    }

    /** @return the driver's identifier of the peer's address, or -1 before RTR */
    public int remotePeer() {
        return attributes.remotePeer();
    }

    /** @return the next PSN the requester will assign */
    public int nextSendPsn() {
        return destroyed ? finalSendPsn : requester.nextPsn();
    }

    /** @return the responder's cumulative point: the next PSN it expects */
    public int expectedReceivePsn() {
        return destroyed ? finalReceivePsn : responder.window().expectedPsn();
    }

    /** @return send work requests posted and not yet completed (0 once destroyed: they were discarded) */
    public int outstandingSends() {
        return destroyed ? 0 : requester.queued();
    }

    /**
     * Request packets this QP's requester transmitted, retransmissions included (0 once destroyed).
     * Owning thread; observability tools sample it there.
     *
     * @return the count
     */
    public long packetsSent() {
        return destroyed ? 0 : requester.transmissions();
    }

    /**
     * Retransmissions by this QP's requester, all causes (0 once destroyed); the endpoint's
     * {@link EndpointCounter} RETRANSMITS_* counters split them by cause over all QPs.
     *
     * @return the count
     */
    public long retransmits() {
        return destroyed ? 0 : requester.retransmits();
    }

    /**
     * Retransmissions by this QP's requester for one cause (0 once destroyed); they add up to
     * {@link #retransmits()}. Owning thread.
     *
     * @param cause a {@code RETRANSMITS_*} counter: LOSS_DETECTED, TIMEOUT, TAIL_PROBE, TRIMMED,
     *     PSN_WINDOW, RNR or GO_BACK_N
     * @return the count
     * @throws IllegalArgumentException if {@code cause} is another counter
     */
    public long retransmits(final EndpointCounter cause) {
        final long n = retransmitCauses.get(cause);
        return destroyed ? 0 : n;
    }

    /** @return receive work requests posted and not yet completed (0 once destroyed: they were discarded) */
    public int postedReceives() {
        return destroyed ? 0 : responder.postedReceives();
    }

    /** @return the path selector (per-path weights and counts), or null before RTR */
    public PathSelector paths() {
        return attributes.paths();
    }

    /** @return the congestion-control algorithm in use */
    public CongestionControl congestionControl() {
        return cc.instance();
    }

    /**
     * Replaces the congestion-control instance, for experiments and tests with an algorithm of
     * their own. The RTR→RTS modify builds the algorithm of the CC_ALGORITHM attribute and
     * replaces whatever was set before, so call this in RTS.
     *
     * @param cc the algorithm
     */
    public void congestionControl(final CongestionControl cc) {
        if (cc == null) {
            throw new IllegalArgumentException("congestion control must not be null");
        }
        this.cc.replace(cc);
        endpoint.touched();
    }

    /** @return the negotiated Capability Flags (CAPABILITIES attribute; 0 until RTR) */
    public int capabilities() {
        return attributes.capabilities();
    }

    /** @return whether both directions of this QP run the go-back-N baseline mode [REL-053] */
    public boolean isGoBackN() {
        return attributes.isGoBackN();
    }

    /**
     * @return the algorithm the requester runs: the CC_ALGORITHM attribute, the endpoint's default
     *     when the attribute was not set, DEFAULT when the requested one lacks its capability
     *     [CC-008], or FIXED when the endpoint default DEFAULT would run on delay alone [CC-034]
     */
    public CongestionControlAlgorithm congestionControlAlgorithm() {
        return cc.algorithm();
    }

    /**
     * @return why {@link #congestionControlAlgorithm()} differs from
     *     {@link #requestedCongestionControlAlgorithm()} (the CC_FALLBACK event's reason), or null
     *     when it does not [CC-008], [CC-034]
     */
    public String ccFallbackReason() {
        return cc.fallbackReason();
    }

    /** @return the CC_ALGORITHM asked for at RTS (or the endpoint default), before any fallback */
    public CongestionControlAlgorithm requestedCongestionControlAlgorithm() {
        return cc.requested();
    }

    /**
     * The Credit this QP's responder grants: the whole receive window, or with RECEIVER_CREDIT
     * negotiated its share of one receive BDP among the endpoint's QPs that are receiving requests
     * [CC-018], [REL-013].
     */
    int creditToGrant(final long nowNs, final int window) {
        if ((attributes.capabilities() & ConnectHeader.CAP_RECEIVER_CREDIT) == 0) {
            return window;
        }
        final long baseRtt = creditBaseRttNs();
        final int senders = endpoint.activeRequestSenders(nowNs, 2 * baseRtt);
        final double bdpPackets = endpoint.config().linkRateBitsPerSecond() / 8e9 * baseRtt / attributes.pathMtu();
        return (int) Math.min(window, Math.max(1, (long) (bdpPackets / senders)));
    }

    /** @return whether SENDER_COUNT was negotiated [CC-038] */
    boolean senderCountNegotiated() {
        return (attributes.capabilities() & ConnectHeader.CAP_SENDER_COUNT) != 0;
    }

    /**
     * @return whether this QP, with SENDER_COUNT negotiated, is in RTS, has accepted no request
     *     packet, and has neither sent one nor work posted to send: a connection made ahead of
     *     traffic that may come its way [CC-038]
     */
    boolean waitsForFirstRequest() {
        return untouchedInRts() && requester.queued() == 0;
    }

    /**
     * @return whether this QP, with SENDER_COUNT negotiated, is in RTS and has neither accepted nor
     *     sent a request packet: it waits for its first request unless it has work posted [CC-038]
     */
    boolean untouchedInRts() {
        return !destroyed && state == QpState.RTS && senderCountNegotiated()
            && responder.lastRequestNs() == Long.MIN_VALUE && requester.transmissions() == 0;
    }

    /** Sends the peer an ACK carrying the current Sender Count [CC-038]. */
    void announceSenderCount() {
        responder.announceSenderCount();
        endpoint.touched();
    }

    /** @return the Sender Count this QP's ACKs carry: 0 without SENDER_COUNT [CC-038] */
    int senderCountToAdvertise(final long nowNs) {
        return senderCountNegotiated() ? endpoint.receivingSenders(nowNs, 2 * creditBaseRttNs()) : 0;
    }

    /** baseRTT for the credit: this QP's minRTT if its requester has a sample, else BASE_RTT_INIT [CC-018]. */
    private long creditBaseRttNs() {
        final org.metaroce.core.reliability.RttEstimator rtt = requester.rtt();
        return rtt != null && rtt.hasSample() ? Math.max(1, rtt.minRttNs())
            : org.metaroce.core.congestion.DelayBasedCongestionControl.BASE_RTT_INIT_NS;
    }

    /** @return time of the latest request packet this QP's responder classified (MIN_VALUE before any) */
    long lastRequestNs() {
        return responder.lastRequestNs();
    }

    /** @return smoothed RTT measured by the requester, 0 before the first sample or before RTS */
    public long smoothedRttNs() {
        return !destroyed && (state == QpState.RTS || state == QpState.SQD) ? requester.rtt().srttNs() : 0;
    }

    /** @return the requester's current retransmission timeout, backoff included; 0 before RTS */
    public long retransmitTimeoutNs() {
        return !destroyed && (state == QpState.RTS || state == QpState.SQD) ? requester.rtt().rtoNs() : 0;
    }

    /** @return RETRY_TIMEOUT in nanoseconds, 0 for none [REL-060] */
    long retryTimeoutNs() {
        return attributes.retryTimeoutNs();
    }

    /**
     * Moves the QP to {@code target}, applying the attributes that transition needs (verbs
     * ibv_modify_qp). Setup is not the hot path, so misuse is reported by exceptions that name the
     * problem.
     *
     * @param target the state to move to
     * @param attrs the attributes; those the transition requires must be set
     * @throws IllegalStateException if the transition is illegal from the current state, or the
     *     queue pair was destroyed
     * @throws IllegalArgumentException if a required attribute is missing or inconsistent
     */
    public void modify(final QpState target, final QpAttributes attrs) {
        endpoint.owningThread().check("modify");
        if (destroyed) {
            throw new IllegalStateException("queue pair " + qpn + " was destroyed");
        }
        if (!QpStateMachine.isLegal(state, target)) {
            throw new IllegalStateException(QpStateMachine.describeIllegal(state, target));
        }
        endpoint.touched();
        final String missing = attrs.validateFor(state, target);
        if (missing != null) {
            throw new IllegalArgumentException(missing);
        }
        if (target == QpState.ERR) {
            // Requested by the application, not automatic: no asynchronous event.
            if (state != QpState.ERR) {
                state = QpState.ERR;
                sides.trace(TraceEvent.STATE, 0, QpState.ERR.ordinal(), -1, 0);
                requester.flush();
                responder.flush();
                endpoint.firstRequestWaitMayChange();
            }
            return;
        }
        if (target == QpState.RESET) {
            requester.discard();
            responder.discard();
            communicationEstablished = false;
            keepaliveTimer.restart();
            peerDead = false;
            state = QpState.RESET;
            sides.trace(TraceEvent.STATE, 0, QpState.RESET.ordinal(), -1, 0);
            endpoint.firstRequestWaitMayChange();
            return;
        }
        // Optional attributes of table 4.4 (validateFor has rejected any the move does not take).
        attributes.applyOptional(attrs);
        if (state == QpState.INIT && target == QpState.RTR) {
            attributes.applyPeer(attrs, endpoint.hostOf(attrs.remotePeer()), endpoint.config().pathBurstPackets());
            responder.start(attrs.rqPsn());
        } else if (state == QpState.RTR && target == QpState.RTS) {
            requester.start(attrs.sqPsn(), attrs.timeoutNs());
            if (cc.start(attrs, attributes.capabilities(), attributes.pathMtu(), endpoint.config())) {
                counters.increment(EndpointCounter.CC_FALLBACKS);
                endpoint.raise(AsyncEventType.CC_FALLBACK);
            }
            if (senderCountNegotiated()) {
                // One more QP waits for its first request: those waiting learn the new count [CC-038].
                state = target;
                endpoint.firstRequestWaitMayChange();
                endpoint.senderCountChanged();
            }
        } else if (attrs.isSet(QpAttributeMask.TIMEOUT)) {
            requester.timeout(attrs.timeoutNs());
        }
        if (target == QpState.SQD && state != QpState.SQD) {
            drainedRaised = false;
        }
        state = target;
        sides.trace(TraceEvent.STATE, 0, target.ordinal(), -1, 0);
        endpoint.firstRequestWaitMayChange();
    }

    /**
     * Test-only hook: starts this QP's MSN and RSN sequences at chosen values instead of 0, so that
     * tests can take every sequence space across 2^32 without sending 2^32 messages [OPS-043]. A
     * conforming QP starts both at 0 [OPS-009, OPS-010]; the initial PSNs are the RQ_PSN and
     * SQ_PSN attributes already. The peer's hook must agree: {@code responderRsn} here is the
     * peer requester's {@code requesterRsn}. Modify to RESET puts all three back to 0.
     *
     * @param requesterMsn the MSN of the first request message this QP sends
     * @param requesterRsn the RSN of the first receive-consuming message this QP sends
     * @param responderRsn the RSN that the first receive WR posted to this QP answers to
     * @throws IllegalStateException unless the QP is in RESET or INIT with nothing posted
     */
    void startSequencesForTesting(final int requesterMsn, final int requesterRsn, final int responderRsn) {
        if ((state != QpState.RESET && state != QpState.INIT) || requester.queued() != 0
            || responder.postedReceives() != 0) {
            throw new IllegalStateException("sequence numbers can only be chosen in RESET or INIT with nothing "
                + "posted; state " + state);
        }
        requester.startSequences(requesterMsn, requesterRsn);
        responder.startRsn(responderRsn);
    }

    /**
     * Posts a send work request (verbs ibv_post_send). The request object may be reused as soon as
     * this returns. In ERR the request is accepted and completed at once with WR_FLUSH_ERR, as
     * libibverbs does; so does a destroyed QP (destroyed in ERR by the connection manager, or by
     * the application in any state).
     *
     * @param wr the request
     * @return {@link PostStatus#OK} or the reason it was refused
     */
    public int postSend(final SendRequest wr) {
        endpoint.owningThread().check("postSend");
        if (state != QpState.RTS && state != QpState.SQD && state != QpState.ERR) {
            return PostStatus.INVALID_QP_STATE;
        }
        final int status = WorkRequestValidator.validateSend(wr, pd, maxSendSge, endpoint.config().maxInlineData());
        if (status != PostStatus.OK) {
            return status;
        }
        if (wr.opcode() == WrOpcode.RDMA_READ || wr.opcode() == WrOpcode.ATOMIC_CMP_SWAP
            || wr.opcode() == WrOpcode.ATOMIC_FETCH_ADD) {
            if (wr.opcode() != WrOpcode.RDMA_READ && (wr.numSge() != 1 || wr.sge(0).length() != 8)) {
                return PostStatus.INVALID_ARGUMENT;
            }
        }
        if (destroyed) {
            return flushDestroyed(sendCq, wr.wrId(), SendQueue.wcOpcode(wr.opcode()),
                wr.opcode() == WrOpcode.ATOMIC_CMP_SWAP || wr.opcode() == WrOpcode.ATOMIC_FETCH_ADD ? 8
                    : (int) wr.totalLength());
        }
        endpoint.touched();
        final int result = requester.post(wr, attributes.pathMtu());
        endpoint.firstRequestWaitMayChange();
        if (result == PostStatus.OK && state == QpState.ERR) {
            requester.flush();
        }
        return result;
    }

    /**
     * Posts a receive work request (verbs ibv_post_recv). Allowed from INIT on; in ERR it completes
     * at once with WR_FLUSH_ERR, and so does a destroyed QP.
     *
     * @param wr the request
     * @return {@link PostStatus#OK} or the reason it was refused
     */
    public int postRecv(final RecvRequest wr) {
        endpoint.owningThread().check("postRecv");
        if (state == QpState.RESET) {
            return PostStatus.INVALID_QP_STATE;
        }
        final int status = WorkRequestValidator.validateRecv(wr, pd, maxRecvSge);
        if (status != PostStatus.OK) {
            return status;
        }
        if (destroyed) {
            return flushDestroyed(recvCq, wr.wrId(), WcOpcode.RECV, 0);
        }
        endpoint.touched();
        final int result = responder.postRecv(wr);
        if (result == PostStatus.OK && state == QpState.ERR) {
            responder.flush();
        }
        return result;
    }

    /**
     * A work request posted to a destroyed QP completes at once with WR_FLUSH_ERR, as in ERR: the
     * connection manager destroys the QP of a connection that ended [CM-039], and an application
     * that still posts to it (it saw the QP in ERR) must get the completions it got before.
     */
    private int flushDestroyed(final CompletionQueue cq, final long wrId, final WcOpcode opcode, final int byteLen) {
        if (!cq.push(wrId, WcStatus.WR_FLUSH_ERR, opcode, byteLen, 0, 0, qpn, attributes.destQpn())) {
            counters.increment(EndpointCounter.CQ_OVERFLOWS);
            endpoint.onCompletionQueueOverflow(cq);
        }
        return PostStatus.OK;
    }

    /** @return the requester half (package-private: the engine's tests read its estimators) */
    Requester requester() {
        return requester;
    }

    /** @return the responder half (package-private: the engine's tests model its answers) */
    Responder responder() {
        return responder;
    }

    // ------------------------------------------------------------------ engine side

    /**
     * @param nowNs the current time
     * @param arrivalNs when the packet reached the host (at most {@code nowNs}): round trips and ACK
     *     Delay are measured from it [REL-066]
     */
    void onPacket(final long nowNs, final long arrivalNs, final DirectBuffer buffer, final int offset,
                  final int length, final int peer, final Opcode opcode, final int ecn) {
        endpoint.touched();
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
        keepaliveTimer.heard(nowNs);
        if (opcode == Opcode.KEEPALIVE) {
            if (state == QpState.RTR || state == QpState.RTS || state == QpState.SQD || state == QpState.SQE) {
                responder.onKeepalive(nowNs, arrivalNs, buffer, offset);
            } else {
                counters.increment(EndpointCounter.INVALID_QP_STATE);
            }
            return;
        }
        if (opcode.isRequest()) {
            if (state == QpState.ERR) {
                responder.onRequestInError(nowNs, arrivalNs, buffer, offset);
                return;
            }
            if (state != QpState.RTR && state != QpState.RTS && state != QpState.SQD && state != QpState.SQE) {
                counters.increment(EndpointCounter.INVALID_QP_STATE);
                return;
            }
            final long lastRequestNs = responder.lastRequestNs();
            responder.onRequest(nowNs, arrivalNs, buffer, offset, opcode, ecn);
            if (responder.lastRequestNs() != lastRequestNs) {
                endpoint.requestAccepted();
            }
            if (state == QpState.RTR && !communicationEstablished && responder.hasAccepted()) {
                communicationEstablished = true;
                endpoint.raise(AsyncEventType.COMM_EST);
            }
            return;
        }
        if (state != QpState.RTS && state != QpState.SQD) {
            counters.increment(EndpointCounter.INVALID_QP_STATE);
            return;
        }
        switch (opcode) {
            case ACK -> {
                counters.increment(EndpointCounter.ACKS_IN);
                requester.onAck(nowNs, arrivalNs, buffer, offset, opcode);
            }
            case NACK -> {
                counters.increment(EndpointCounter.NACKS_IN);
                requester.onAck(nowNs, arrivalNs, buffer, offset, opcode);
                if (state == QpState.RTS || state == QpState.SQD) {
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

    int poll(final long nowNs, final TransmitSink sink, final int budget) {
        int emitted = 0;
        if (state == QpState.RESET || state == QpState.INIT) {
            return 0;
        }
        // A bare ACK goes after the QP's own requests of this poll [REL-008]: when the application
        // answers a request with a request of its own (a reply), the reply leaves first and the ACK's
        // transmission is off the request-reply path. NACKs, CNPs and responses keep going first.
        final boolean ackAfterRequests = responder.onlyCoalescedAckPending()
            && (state == QpState.RTS || state == QpState.SQD);
        if (!ackAfterRequests) {
            emitted += responder.emit(nowNs, sink, budget);
        }
        if (state == QpState.RTS || state == QpState.SQD) {
            emitted += keepalive(nowNs, sink);
            if (state != QpState.RTS && state != QpState.SQD) {
                return emitted;
            }
            requester.onTimers(nowNs);
            if (state == QpState.RTS || state == QpState.SQD) {
                // One slot stays for the ACK.
                emitted += requester.emit(nowNs, sink, budget - emitted - (ackAfterRequests ? 1 : 0));
            }
            if (ackAfterRequests) {
                emitted += responder.emit(nowNs, sink, budget - emitted);
            }
            if (state == QpState.SQD && !drainedRaised && requester.startedOutstanding() == 0) {
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
        final KeepaliveTimer.Due due = keepaliveTimer.due(nowNs, endpoint.config(), attributes.retryTimeoutNs());
        if (due == KeepaliveTimer.Due.PROBE) {
            if (!sendProbe(nowNs, sink, keepaliveTimer.probesSent())) {
                return 0;
            }
            keepaliveTimer.probed(nowNs);
            return 1;
        }
        if (due == KeepaliveTimer.Due.PEER_DEAD) {
            final long silentFor = keepaliveTimer.silentForNs(nowNs);
            final int probes = keepaliveTimer.probesSent();
            peerDead = true;
            counters.increment(EndpointCounter.PEERS_DEAD);
            sides.trace(nowNs, TraceEvent.PEER_DEAD, 0, probes, 0, silentFor);
            recordFailure("peer dead: nothing heard from it for " + Seconds.of(silentFor) + " despite " + probes
                + " KEEPALIVE probes (RETRY_TIMEOUT " + Seconds.of(attributes.retryTimeoutNs()) + ") [CM-030]");
            requester.failOldest(WcStatus.RETRY_EXC_ERR);
            enterError(AsyncEventType.QP_FATAL);
        }
        return 0;
    }

    /**
     * Sends one KEEPALIVE with ACK_REQ: a keepalive probe [CM-027], or a requester's request for a
     * fresh Credit [REL-019]. Successive probes ({@code attempt}) try the paths in turn.
     *
     * @return false when the sink had no room
     */
    private boolean sendProbe(final long nowNs, final TransmitSink sink, final int attempt) {
        final PathSelector paths = attributes.paths();
        final Opcode opcode = Opcode.KEEPALIVE;
        final int pathId = paths.forRetransmission(nowNs, attempt % paths.pathCount());
        final int offset = sink.claim(opcode.headerLength() + WireConstants.INTEGRITY_CHECK_LENGTH, paths.entropy(pathId));
        if (offset == TransmitSink.NO_ROOM) {
            return false;
        }
        final PacketWriter w = endpoint.writer();
        w.header(sink.buffer(), offset, opcode, Flags.ACK_REQ, attributes.destQpn(), requester.nextPsn(), 0, pathId,
            nowNs, qpn);
        final int length = w.seal(sink.buffer(), offset, opcode, 0);
        sides.commit(sink, offset, length, paths.entropy(pathId));
        requester.onProbeSent(nowNs);
        counters.increment(EndpointCounter.KEEPALIVES_OUT);
        return true;
    }

    /** @return whether keepalive declared the peer dead (the QP is then in ERR) [CM-030] */
    public boolean isPeerDead() {
        return peerDead;
    }

    /**
     * @return whether the responder still has an ACK or NACK of its own to emit at the next poll:
     *     in ERR the last packets the QP sends (a fatal NACK tells the peer why [REL-007]), so
     *     whoever destroys a QP that has just failed should wait until this is false
     */
    public boolean hasAcknowledgementsToSend() {
        return !destroyed && responder.hasOwnPackets();
    }

    /** @return whether the endpoint destroyed this queue pair */
    public boolean isDestroyed() {
        return destroyed;
    }

    /**
     * The endpoint forgot this QP [QP-022]: its work requests are discarded and what it
     * preallocated is released, so that a destroyed QP an application (or a connection in
     * time-wait) still refers to costs only this object [CM-039]. The getters keep answering, and
     * posted work requests complete at once with WR_FLUSH_ERR.
     */
    void onDestroyed() {
        endpoint.destroyed();
        finalSendPsn = requester.nextPsn();
        finalReceivePsn = responder.window().expectedPsn();
        destroyed = true;
        requester = null;
        responder = null;
    }

    long nextDeadlineNs() {
        if (state == QpState.RESET || state == QpState.INIT) {
            return Long.MAX_VALUE;
        }
        long deadline = responder.nextDeadlineNs();
        if ((state == QpState.RTS || state == QpState.SQD) && endpoint.config().keepaliveIdleNs() > 0) {
            deadline = Math.min(deadline, keepaliveTimer.deadlineNs(endpoint.config()));
        }
        if (state == QpState.RTS || state == QpState.SQD) {
            // Work the window holds back waits for an ACK (which makes the driver poll) or a timer.
            deadline = Math.min(deadline, requester.nextDeadlineNs());
        }
        return deadline;
    }

    boolean hasImmediateWork() {
        return state == QpState.RTS && requester.hasWork();
    }

    /** @return whether the requester has work that only a fresh Credit from the peer can release [REL-019] */
    boolean isCreditBlocked() {
        return requester.isCreditBlocked();
    }

    /**
     * Why this queue pair entered ERR, root cause first — e.g. "peer dead: nothing heard from it
     * for 15.0 s despite 70 KEEPALIVE probes (RETRY_TIMEOUT 15.0 s)" — so that an application
     * reporting a WR_FLUSH_ERR completion can say what failed. Any thread.
     *
     * @return the reason, or null if the QP is not in ERR or was moved there by a modify
     */
    public String failure() {
        return failure.reason();
    }

    /**
     * The last events of this queue pair's trace ({@link EventTrace}) when it entered ERR by itself,
     * oldest first, times relative to the failure — what happened just before, to print with
     * {@link #failure()}. Any thread once the QP is in ERR.
     *
     * @return the lines (empty if the QP did not fail)
     */
    public java.util.List<String> failureTrace() {
        return failure.trace();
    }

    /** Records the first reason the QP fails for (cold path: called once, before enterError). */
    void recordFailure(final String reason) {
        if (state != QpState.ERR) {
            failure.reason(reason);
        }
    }

    /**
     * Moves the QP to ERR: every outstanding work request completes (in post order) with its error
     * or WR_FLUSH_ERR, and the QP accepts no more traffic.
     */
    void enterError(final AsyncEventType cause) {
        if (state == QpState.ERR) {
            return;
        }
        endpoint.touched();
        state = QpState.ERR;
        endpoint.firstRequestWaitMayChange();
        counters.increment(EndpointCounter.QP_ERRORS);
        sides.trace(TraceEvent.STATE, 0, QpState.ERR.ordinal(), cause.ordinal(), 0);
        // Cold path: keep what led here before later events of other QPs overwrite it.
        failure.capture(endpoint.trace(), qpn, endpoint.nowNs());
        endpoint.raise(cause);
        requester.flush();
        responder.flush();
    }

    /**
     * A one-line account of the QP's send side (outstanding work, PSNs in flight and lost, credit,
     * timers), for an application that waits too long for completions and wants to say why. It
     * allocates; call it on the owning thread, not on the data path.
     *
     * @param nowNs the time the device's clock reads now (the driver's, as the endpoint was given)
     * @return e.g. "state RTS; send queue: 3 WRs outstanding ..."
     */
    public String describeSendSide(final long nowNs) {
        final CongestionControl congestionControl = cc.instance();
        return "state " + state + (requester == null ? "" : "; " + requester.describe(nowNs))
            + "; congestion control " + cc.algorithm() + " " + congestionControl
            + (congestionControl.nextSendTimeNs(nowNs) - nowNs > 0 ? ", next send paced in "
            + String.format(java.util.Locale.ROOT, "%.3f s", (congestionControl.nextSendTimeNs(nowNs) - nowNs) / 1e9) : "");
    }

    /** What {@link QueuePairSides} asks of this queue pair: its state and the moves only it makes. */
    private final class Control implements QueuePairSides.Owner {
        @Override
        public QpState state() {
            return state;
        }

        @Override
        public boolean sendProbe(final long nowNs, final TransmitSink sink, final int attempt) {
            return QueuePair.this.sendProbe(nowNs, sink, attempt);
        }

        @Override
        public int creditToGrant(final long nowNs, final int window) {
            return QueuePair.this.creditToGrant(nowNs, window);
        }

        @Override
        public int senderCountToAdvertise(final long nowNs) {
            return QueuePair.this.senderCountToAdvertise(nowNs);
        }

        @Override
        public void recordFailure(final String reason) {
            QueuePair.this.recordFailure(reason);
        }

        @Override
        public void enterError(final AsyncEventType cause) {
            QueuePair.this.enterError(cause);
        }
    }

    @Override
    public String toString() {
        return "QueuePair{qpn=" + qpn + ", state=" + state + ", destQpn=" + attributes.destQpn() + ", peer="
            + attributes.remotePeer() + ", mtu=" + attributes.pathMtu() + ", access="
            + AccessFlags.toString(attributes.accessFlags()) + '}';
    }
}
