// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.congestion;

/**
 * DCQCN, the rate-based congestion control of RoCEv2, as specification 8.7 defines it for the
 * RoCEv2 baseline: the responder turns CE marks into CNPs [CC-020], and the requester cuts its
 * current rate Rc on each CNP by α/2, keeps a target rate Rt to recover towards, and raises the
 * rate in stages driven by a timer and a byte counter: fast recovery, additive increase, hyper
 * increase [CC-021]. Packets are paced at Rc through {@link #nextSendTimeNs(long)}; there is no
 * window (the engine's credit and receive window still bound what is in flight).
 *
 * <p>Timers run on the injected time: every callback first replays the timer expiries that fell
 * due since the previous one, in time order, so the result does not depend on how often the
 * engine calls. Allocation-free; called from the endpoint's owning thread only.
 */
public final class DcqcnCongestionControl implements CongestionControl {
    /** g, the gain of the α estimate (8.9). */
    public static final double G = 1.0 / 256;
    /** ALPHA_TIMER: α decays by (1 − g) every this long without a CNP (8.9). */
    public static final long ALPHA_TIMER_NS = 55_000;
    /** RATE_TIMER: one increase stage every this long (8.9). */
    public static final long RATE_TIMER_NS = 55_000;
    /** BYTE_COUNTER: one increase stage every this many bytes sent (8.9). */
    public static final long BYTE_COUNTER = 10L * 1024 * 1024;
    /** F: fast-recovery stages before additive increase (8.9). */
    public static final int F = 5;
    /** R_AI at 40 Gb/s; scaled with LINK_RATE (8.9). */
    public static final double R_AI_AT_40G = 40e6;
    /** R_HAI at 40 Gb/s; scaled with LINK_RATE (8.9). */
    public static final double R_HAI_AT_40G = 400e6;
    /** MIN_RATE, 10 Mb/s (8.9). */
    public static final double MIN_RATE = 10e6;
    /** RTT assumed before the first sample, for the post-RTO rate of one PMTU per SRTT. */
    private static final long RTT_INIT_NS = 10_000;
    /** Timer expiries replayed per callback at most; beyond that the rates have long converged. */
    private static final int MAX_CATCH_UP = 4096;

    private final int pmtu;
    private final double linkRate;
    private final double rAi;
    private final double rHai;
    private double rc;
    private double rt;
    private double alpha = 1;
    private int timerStages;
    private int byteStages;
    private long bytesSinceStage;
    private long nextAlphaNs = Long.MAX_VALUE;
    private long nextRateNs = Long.MAX_VALUE;
    private long nextSendNs = Long.MIN_VALUE;
    private long srttNs;
    private long lastDecreaseNs = Long.MIN_VALUE / 2;
    private long cnps;

    /**
     * @param pmtu the QP's path MTU in bytes
     * @param linkRateBitsPerSecond LINK_RATE, the initial and highest rate
     */
    public DcqcnCongestionControl(final int pmtu, final long linkRateBitsPerSecond) {
        if (pmtu <= 0 || linkRateBitsPerSecond <= 0) {
            throw new IllegalArgumentException("pmtu and link rate must be positive, got " + pmtu + " and "
                + linkRateBitsPerSecond);
        }
        this.pmtu = pmtu;
        this.linkRate = linkRateBitsPerSecond;
        final double scale = linkRateBitsPerSecond / 40e9;
        this.rAi = R_AI_AT_40G * scale;
        this.rHai = R_HAI_AT_40G * scale;
        this.rc = linkRate;
        this.rt = linkRate;
    }

    /** @return the current rate Rc in bits per second */
    public double currentRate() {
        return rc;
    }

    /** @return the target rate Rt in bits per second */
    public double targetRate() {
        return rt;
    }

    /** @return the congestion estimate α */
    public double alpha() {
        return alpha;
    }

    /** @return CNPs this instance has reacted to */
    public long cnps() {
        return cnps;
    }

    @Override
    public int windowPackets() {
        // Rate-based: no window of its own [CC-001].
        return Integer.MAX_VALUE / 4;
    }

    @Override
    public long nextSendTimeNs(final long nowNs) {
        return nextSendNs;
    }

    @Override
    public void onPacketSent(final long nowNs, final int bytes, final int pathId) {
        advance(nowNs);
        // An idle sender earns no burst: spacing starts from now.
        nextSendNs = Math.max(nextSendNs, nowNs) + (long) Math.ceil(bytes * 8e9 / rc);
        if (nextAlphaNs == Long.MAX_VALUE) {
            return; // no CNP yet: at line rate, nothing to increase
        }
        bytesSinceStage += bytes;
        while (bytesSinceStage >= BYTE_COUNTER) {
            bytesSinceStage -= BYTE_COUNTER;
            byteStages++;
            increase();
        }
    }

    @Override
    public void onAck(final long nowNs, final int packets, final long rttNs, final boolean ecnEcho, final int pathId) {
        advance(nowNs);
        if (rttNs > 0) {
            srttNs = srttNs == 0 ? rttNs : srttNs + ((rttNs - srttNs) >> 3);
        }
    }

    @Override
    public boolean onCongestionNotification(final long nowNs) {
        advance(nowNs);
        cnps++;
        rt = rc;
        rc = Math.max(MIN_RATE, rc * (1 - alpha / 2));
        alpha = (1 - G) * alpha + G;
        timerStages = 0;
        byteStages = 0;
        bytesSinceStage = 0;
        nextAlphaNs = nowNs + ALPHA_TIMER_NS;
        nextRateNs = nowNs + RATE_TIMER_NS;
        return true;
    }

    @Override
    public void onLoss(final long nowNs, final int pathId, final boolean trimmed) {
        advance(nowNs);
        if (nowNs - lastDecreaseNs < srttNs) {
            return; // at most once per SRTT [CC-003]
        }
        lastDecreaseNs = nowNs;
        rt = rc;
        rc = Math.max(MIN_RATE, rc / 2);
        restartIncrease(nowNs);
    }

    @Override
    public void onRetransmitTimeout(final long nowNs) {
        advance(nowNs);
        lastDecreaseNs = nowNs;
        // One PMTU per SRTT [CC-003].
        final long rtt = srttNs > 0 ? srttNs : RTT_INIT_NS;
        rt = rc;
        rc = Math.max(MIN_RATE, Math.min(linkRate, pmtu * 8e9 / rtt));
        restartIncrease(nowNs);
    }

    private void restartIncrease(final long nowNs) {
        timerStages = 0;
        byteStages = 0;
        bytesSinceStage = 0;
        if (nextAlphaNs == Long.MAX_VALUE) {
            nextAlphaNs = nowNs + ALPHA_TIMER_NS;
        }
        nextRateNs = nowNs + RATE_TIMER_NS;
    }

    /** Replays, in time order, the alpha and rate timer expiries due by {@code nowNs}. */
    private void advance(final long nowNs) {
        int budget = MAX_CATCH_UP;
        while (budget-- > 0) {
            if (nextAlphaNs <= nowNs && nextAlphaNs <= nextRateNs) {
                alpha *= 1 - G;
                nextAlphaNs += ALPHA_TIMER_NS;
            } else if (nextRateNs <= nowNs) {
                timerStages++;
                increase();
                nextRateNs += RATE_TIMER_NS;
            } else {
                return;
            }
        }
        // A long idle period: the rates have converged; restart the timers from now.
        if (nextAlphaNs <= nowNs) {
            nextAlphaNs = nowNs + ALPHA_TIMER_NS;
        }
        if (nextRateNs <= nowNs) {
            nextRateNs = nowNs + RATE_TIMER_NS;
        }
    }

    /** One increase stage: fast recovery, additive or hyper increase [CC-021]. */
    private void increase() {
        if (timerStages > F && byteStages > F) {
            rt += (Math.min(timerStages, byteStages) - F) * rHai;
        } else if (timerStages > F || byteStages > F) {
            rt += rAi;
        }
        rt = Math.min(rt, linkRate);
        rc = Math.max(MIN_RATE, Math.min(linkRate, (rt + rc) / 2));
    }

    @Override
    public String toString() {
        return "Dcqcn{rc=" + (long) rc + " b/s, rt=" + (long) rt + " b/s, alpha=" + alpha + '}';
    }
}
