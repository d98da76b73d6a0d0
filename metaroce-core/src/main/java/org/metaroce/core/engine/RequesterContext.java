// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.engine;

import org.metaroce.core.congestion.CongestionControl;
import org.metaroce.core.multipath.PathSelector;
import org.metaroce.core.verbs.CompletionQueue;
import org.metaroce.core.verbs.ProtectionDomain;

/**
 * The queue pair as its {@link Requester} sees it: the attributes the send side runs on, the
 * shared parts it uses (paths, congestion control, packet writer), and the few things it may ask
 * of the queue pair (commit a packet, send a probe, count, trace, fail). Handed in instead of the
 * queue pair itself, so the requester cannot reach the rest of it and no class cycle runs through
 * it (issue 19); the queue pair implements it with an inner class.
 */
interface RequesterContext {
    /** @return the QPN */
    int qpn();

    /** @return the peer's QPN (valid from RTR) */
    int destQpn();

    /** @return the peer's QPN, or 0 before RTR (what completions report) */
    int destQpnOrZero();

    /** @return the path MTU in bytes */
    int pathMtu();

    /** @return the protection domain whose keys the work requests name */
    ProtectionDomain pd();

    /** @return where send completions go */
    CompletionQueue sendCq();

    /** @return whether the connection runs the go-back-N baseline */
    boolean isGoBackN();

    /** @return the negotiated Capability Flags */
    int capabilities();

    /** @return RETRY_CNT [REL-029] */
    int retryCount();

    /** @return RETRY_TIMEOUT [REL-060] */
    long retryTimeoutNs();

    /** @return RNR_RETRY */
    int rnrRetry();

    /** @return the minimum RNR wait */
    long minRnrTimerNs();

    /** @return MAX_RD_ATOMIC: READs and atomics outstanding at most */
    int maxRdAtomic();

    /** @return whether the queue pair is draining its send queue (SQD) */
    boolean isSendQueueDraining();

    /** @return the queue pair's congestion control */
    CongestionControl congestionControl();

    /** @return the queue pair's path selector */
    PathSelector paths();

    /** @return the endpoint's packet writer */
    PacketWriter writer();

    /** Commits a packet written at {@code offset} to the peer, counted as sent. */
    void commit(TransmitSink sink, int offset, int length, int entropy);

    /**
     * Sends a KEEPALIVE with ACK_REQ, a credit probe [REL-019], on the {@code attempt}th path.
     *
     * @param psn its PSN field: the requester's next PSN [WIRE-065]
     * @return whether it went out
     */
    boolean sendProbe(long nowNs, TransmitSink sink, int attempt, int psn);

    /** Counts a retransmission under its cause. */
    void countRetransmit(EndpointCounter cause);

    /** Records an event in the endpoint's trace. */
    void trace(long nowNs, TraceEvent event, int psn, int a, int b, long c);

    /** Records an event in the endpoint's trace at the endpoint's latest time. */
    void trace(TraceEvent event, int psn, int a, int b, long c);

    /** Records the first reason the queue pair fails for. */
    void recordFailure(String reason);

    /** Moves the queue pair to ERR. */
    void enterError(AsyncEventType cause);

    /** A completion queue overflowed: every queue pair using it fails [QP-021]. */
    void onCompletionQueueOverflow(CompletionQueue cq);
}
