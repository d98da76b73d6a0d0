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
import org.metaroce.core.verbs.QpAttributes;
import org.metaroce.core.verbs.QpState;
import org.metaroce.core.verbs.QpStateMachine;
import org.metaroce.core.verbs.RecvRequest;
import org.metaroce.core.verbs.SendRequest;
import org.metaroce.core.verbs.WorkRequestValidator;
import org.metaroce.core.verbs.WcOpcode;
import org.metaroce.core.verbs.WrOpcode;
import org.metaroce.core.verbs.WcStatus;
import org.metaroce.core.wire.Opcode;

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
    /** Packets and polls, gated by the state; null once destroyed, with the halves. */
    private QueuePairTraffic traffic;
    private QpState state = QpState.RESET;
    /** When to probe a silent peer and when to declare it dead [CM-027, CM-030]. */
    private final KeepaliveTimer keepaliveTimer = new KeepaliveTimer();
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
    /** The Credit and Sender Count this QP's responder advertises [CC-018, CC-038]. */
    private final ReceiverShare share;
    /** What the moves up to RTS set in the parts. */
    private final QueuePairSetup setup;

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
        this.share = new ReceiverShare(endpoint, attributes, () -> requester.rtt());
        this.setup = new QueuePairSetup(endpoint, attributes, cc, share);
        final Control control = new Control();
        this.sides = new QueuePairSides(control, endpoint, qpn, pd, sendCq, recvCq, attributes, cc,
            retransmitCauses, share);
        this.responder = new Responder(sides, caps.recvQueueDepth(), caps.maxRecvSge(), caps.maxDestRdAtomic(),
            endpoint.config(), counters);
        this.requester = new Requester(sides, caps.sendQueueDepth(), caps.maxSendSge(), endpoint.config(), counters,
            responder.ackTrailer());
        this.traffic = new QueuePairTraffic(control, endpoint, sides, attributes, cc, keepaliveTimer, requester,
            responder);
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
        return !destroyed && state == QpState.RTS && share.senderCountNegotiated()
            && responder.lastRequestNs() == Long.MIN_VALUE && requester.transmissions() == 0;
    }

    /** Sends the peer an ACK carrying the current Sender Count [CC-038]. */
    void announceSenderCount() {
        responder.announceSenderCount();
        endpoint.touched();
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
            traffic.reset();
            keepaliveTimer.restart();
            state = QpState.RESET;
            sides.trace(TraceEvent.STATE, 0, QpState.RESET.ordinal(), -1, 0);
            endpoint.firstRequestWaitMayChange();
            return;
        }
        if (setup.apply(state, target, attrs, requester, responder)) {
            // One more QP waits for its first request: those waiting learn the new count [CC-038].
            state = target;
            endpoint.firstRequestWaitMayChange();
            endpoint.senderCountChanged();
        }
        if (target == QpState.SQD && state != QpState.SQD) {
            traffic.draining();
        }
        state = target;
        sides.trace(TraceEvent.STATE, 0, target.ordinal(), -1, 0);
        endpoint.firstRequestWaitMayChange();
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
        final boolean atomic = wr.opcode() == WrOpcode.ATOMIC_CMP_SWAP || wr.opcode() == WrOpcode.ATOMIC_FETCH_ADD;
        if (atomic && (wr.numSge() != 1 || wr.sge(0).length() != 8)) {
            // An atomic's result lands in one 8-byte buffer.
            return PostStatus.INVALID_ARGUMENT;
        }
        if (destroyed) {
            return flushDestroyed(sendCq, wr.wrId(), SendQueue.wcOpcode(wr.opcode()), atomic ? 8 : (int) wr.totalLength());
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
        traffic.onPacket(nowNs, arrivalNs, buffer, offset, length, peer, opcode, ecn);
    }

    int poll(final long nowNs, final TransmitSink sink, final int budget) {
        return traffic.poll(nowNs, sink, budget);
    }

    /** @return whether keepalive declared the peer dead (the QP is then in ERR) [CM-030] */
    public boolean isPeerDead() {
        return keepaliveTimer.isPeerDead();
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
        traffic = null;
    }

    long nextDeadlineNs() {
        return traffic.nextDeadlineNs();
    }

    boolean hasImmediateWork() {
        return traffic.hasImmediateWork();
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
        return "state " + state + (requester == null ? "" : "; " + requester.describe(nowNs)) + "; " + cc.describe(nowNs);
    }

    /** What {@link QueuePairSides} asks of this queue pair: its state and the moves only it makes. */
    private final class Control implements QueuePairSides.Owner {
        @Override
        public QpState state() {
            return state;
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
