// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.congestion;

/**
 * The receiver-credit algorithm of specification 8.6, in the spirit of EQDS, UET's RCCC and
 * Meta's clear-to-send: the responder divides one receive BDP among the QPs that are sending to
 * it and grants each its share as Credit [CC-018]; the requester's window is simply that credit
 * [CC-019]. An incast of n senders onto one receiver is thereby held to about one receive BDP
 * in total, whatever n is, before any queue builds.
 *
 * <p>After a loss or trim the window is capped at half the credit for one SRTT, and after a
 * retransmission timeout at one packet until the next progress [CC-019], [CC-003].
 * Allocation-free; called from the endpoint's owning thread only.
 */
public final class ReceiverCreditCongestionControl implements CongestionControl {
    /** SRTT assumed before the first sample, and BASE_RTT_INIT of the first window. */
    private static final long RTT_INIT_NS = 10_000;

    private long credit;
    private long srttNs;
    private long nowNs = Long.MIN_VALUE;
    private long halfUntilNs = Long.MIN_VALUE;
    private boolean afterTimeout;

    /**
     * @param pmtu the QP's path MTU in bytes
     * @param linkRateBitsPerSecond LINK_RATE: before the first credit the window is one BDP at
     *     BASE_RTT_INIT, not the 64 packets the engine would allow, so that n senders starting at
     *     once put n BDPs, not n × 64 packets, on the receiver's port [CC-019]
     */
    public ReceiverCreditCongestionControl(final int pmtu, final long linkRateBitsPerSecond) {
        if (pmtu <= 0 || linkRateBitsPerSecond <= 0) {
            throw new IllegalArgumentException("pmtu and link rate must be positive, got " + pmtu + " and "
                + linkRateBitsPerSecond);
        }
        this.credit = Math.max(1, Math.min(64, (long) (linkRateBitsPerSecond / 8e9 * RTT_INIT_NS / pmtu)));
    }

    @Override
    public int windowPackets() {
        if (afterTimeout) {
            return 1;
        }
        final long w = nowNs < halfUntilNs ? credit / 2 : credit;
        return (int) Math.max(1, Math.min(Integer.MAX_VALUE / 4, w));
    }

    /** @return the latest credit granted, in packets */
    public long credit() {
        return credit;
    }

    @Override
    public long nextSendTimeNs(final long nowNs) {
        // A query, not an event: the engine asks it for deadlines too, and the window must not
        // depend on how often it asks. The half-credit cap ends at the first event after it expired.
        return nowNs;
    }

    @Override
    public void onPacketSent(final long nowNs, final int bytes, final int pathId) {
        this.nowNs = nowNs;
    }

    @Override
    public void onAck(final long nowNs, final int packets, final long rttNs, final boolean ecnEcho, final int pathId) {
        this.nowNs = nowNs;
        if (rttNs > 0) {
            srttNs = srttNs == 0 ? rttNs : srttNs + ((rttNs - srttNs) >> 3);
        }
        if (packets > 0) {
            afterTimeout = false;
        }
    }

    @Override
    public void onCredit(final long nowNs, final long creditPackets) {
        this.nowNs = nowNs;
        this.credit = creditPackets;
    }

    @Override
    public void onLoss(final long nowNs, final int pathId, final boolean trimmed) {
        this.nowNs = nowNs;
        halfUntilNs = nowNs + (srttNs > 0 ? srttNs : RTT_INIT_NS);
    }

    @Override
    public void onRetransmitTimeout(final long nowNs) {
        this.nowNs = nowNs;
        afterTimeout = true;
    }

    @Override
    public String toString() {
        return "ReceiverCredit{credit=" + credit + ", window=" + windowPackets() + '}';
    }
}
