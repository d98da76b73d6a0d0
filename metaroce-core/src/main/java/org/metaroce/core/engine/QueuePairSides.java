// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.engine;

import org.metaroce.core.congestion.CongestionControl;
import org.metaroce.core.multipath.PathSelector;
import org.metaroce.core.verbs.CompletionQueue;
import org.metaroce.core.verbs.ProtectionDomain;
import org.metaroce.core.verbs.QpState;

/**
 * A queue pair as its {@link Requester} and {@link Responder} see it ({@link RequesterContext},
 * {@link ResponderContext}): its identity, its {@link CurrentAttributes}, its congestion control,
 * packet output, probes ({@link ProbeWriter}), the Credit and Sender Count ({@link ReceiverShare})
 * and trace. What only the queue pair itself can do (its state, failing) it asks through
 * {@link Owner}, so neither this class nor the sides name the queue pair.
 */
final class QueuePairSides implements RequesterContext, ResponderContext {
    /** What the sides, and the queue pair's traffic, ask of the queue pair itself: its state and failing. */
    interface Owner {
        /** @return the queue pair's verbs state */
        QpState state();

        /** Keeps the first reason the queue pair fails for (cold path). */
        void recordFailure(String reason);

        /** Moves the queue pair to ERR, raising {@code cause}. */
        void enterError(AsyncEventType cause);
    }

    private final Owner owner;
    private final QueuePairContext endpoint;
    private final int qpn;
    private final ProtectionDomain pd;
    private final CompletionQueue sendCq;
    private final CompletionQueue recvCq;
    private final CurrentAttributes attributes;
    private final CongestionControlChoice cc;
    private final RetransmitCauses retransmitCauses;
    private final EndpointCounters counters;
    /** The Credit and Sender Count the responder advertises [CC-018, CC-038]. */
    private final ReceiverShare share;
    /** KEEPALIVEs with ACK_REQ, for the requester's credit probe and for keepalive. */
    private final ProbeWriter probes;

    QueuePairSides(final Owner owner, final QueuePairContext endpoint, final int qpn, final ProtectionDomain pd,
                   final CompletionQueue sendCq, final CompletionQueue recvCq, final CurrentAttributes attributes,
                   final CongestionControlChoice cc, final RetransmitCauses retransmitCauses,
                   final ReceiverShare share) {
        this.owner = owner;
        this.endpoint = endpoint;
        this.qpn = qpn;
        this.pd = pd;
        this.sendCq = sendCq;
        this.recvCq = recvCq;
        this.attributes = attributes;
        this.cc = cc;
        this.retransmitCauses = retransmitCauses;
        this.counters = endpoint.counters();
        this.share = share;
        this.probes = new ProbeWriter(qpn, attributes, endpoint.writer(), this::commit, counters);
    }

    @Override
    public int qpn() {
        return qpn;
    }

    @Override
    public int destQpn() {
        return attributes.destQpn();
    }

    @Override
    public int destQpnOrZero() {
        return attributes.destQpn();
    }

    @Override
    public QpState state() {
        return owner.state();
    }

    @Override
    public int pathMtu() {
        return attributes.pathMtu();
    }

    @Override
    public int accessFlags() {
        return attributes.accessFlags();
    }

    @Override
    public int capabilities() {
        return attributes.capabilities();
    }

    @Override
    public ProtectionDomain pd() {
        return pd;
    }

    @Override
    public CompletionQueue sendCq() {
        return sendCq;
    }

    @Override
    public CompletionQueue recvCq() {
        return recvCq;
    }

    @Override
    public boolean isGoBackN() {
        return attributes.isGoBackN();
    }

    @Override
    public int retryCount() {
        return attributes.retryCount();
    }

    @Override
    public long retryTimeoutNs() {
        return attributes.retryTimeoutNs();
    }

    @Override
    public int rnrRetry() {
        return attributes.rnrRetry();
    }

    @Override
    public long minRnrTimerNs() {
        return attributes.minRnrTimerNs();
    }

    @Override
    public int maxRdAtomic() {
        return attributes.maxRdAtomic();
    }

    @Override
    public boolean isSendQueueDraining() {
        return owner.state() == QpState.SQD;
    }

    @Override
    public CongestionControl congestionControl() {
        return cc.instance();
    }

    @Override
    public PathSelector paths() {
        return attributes.paths();
    }

    @Override
    public PacketWriter writer() {
        return endpoint.writer();
    }

    @Override
    public int creditToGrant(final long nowNs, final int window) {
        return share.creditToGrant(nowNs, window);
    }

    @Override
    public int senderCountToAdvertise(final long nowNs) {
        return share.senderCountToAdvertise(nowNs);
    }

    /** Hands a written packet to the driver, addressed to the peer, and counts it. */
    @Override
    public void commit(final TransmitSink sink, final int offset, final int length, final int entropy) {
        sink.commit(offset, length, attributes.remotePeer(), entropy);
        counters.increment(EndpointCounter.PACKETS_OUT);
        counters.add(EndpointCounter.BYTES_OUT, length);
    }

    @Override
    public boolean sendProbe(final long nowNs, final TransmitSink sink, final int attempt, final int psn) {
        return probes.write(nowNs, sink, attempt, psn);
    }

    @Override
    public void countRetransmit(final EndpointCounter cause) {
        retransmitCauses.count(cause);
    }

    /** Records an event of this queue pair in the endpoint's trace (allocates nothing). */
    @Override
    public void trace(final long nowNs, final TraceEvent event, final int psn, final int a, final int b,
                      final long c) {
        endpoint.trace().record(nowNs, qpn, event, psn, a, b, c);
    }

    /** Records an event of this queue pair in the endpoint's trace at the endpoint's latest time. */
    @Override
    public void trace(final TraceEvent event, final int psn, final int a, final int b, final long c) {
        trace(endpoint.nowNs(), event, psn, a, b, c);
    }

    @Override
    public void recordFailure(final String reason) {
        owner.recordFailure(reason);
    }

    @Override
    public void enterError(final AsyncEventType cause) {
        owner.enterError(cause);
    }

    @Override
    public void onCompletionQueueOverflow(final CompletionQueue cq) {
        // The CQ has latched its error (CQ_ERR): the QPs using it cannot report further work, so
        // they fail too; their flushed completions are counted by the CQ as overflow [QP-021].
        endpoint.onCompletionQueueOverflow(cq);
    }
}
