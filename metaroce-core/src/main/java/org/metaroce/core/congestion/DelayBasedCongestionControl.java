package org.metaroce.core.congestion;

/**
 * The default congestion-control algorithm of specification 8.5: window-based and delay-primary in
 * the spirit of Swift, combined with ECN in the four quadrants of UET's NSCC when marks are
 * visible. The window is kept in bytes so it can fall below one packet; below one packet the
 * requester is paced [CC-002], [CC-017].
 *
 * <ul>
 *   <li>queueing delay q = D − baseRTT, with D the median of the paths' latest RTT samples (so one
 *       congested path cannot drag the whole window down) [CC-011];</li>
 *   <li>q below the target T: fast additive increase, up to FAST_AI packets per RTT scaled by the
 *       remaining headroom (T − q) / T; q at or above T without ECN:
 *       multiplicative decrease by max(1 − β(q − T)/q, 1 − MAX_MDF) [CC-012], [CC-013]; with ECN
 *       visible, the quadrants of [CC-012];</li>
 *   <li>at most one decrease per SRTT, and ACKs inside that time neither increase nor decrease
 *       [CC-014]; loss halves, a trim takes a quarter, an RTO resets to one packet [CC-015];</li>
 *   <li>cwnd stays within [PMTU / 100, 1.5 × BDP] [CC-016].</li>
 * </ul>
 *
 * <p>Allocation-free; called from the endpoint's owning thread only.
 */
public final class DelayBasedCongestionControl implements CongestionControl {
    /** Target queueing delay floor, 4 µs (8.9). */
    public static final long TARGET_QDELAY_MIN_NS = 4_000;
    /** baseRTT assumed before the first sample, 10 µs (8.9). */
    public static final long BASE_RTT_INIT_NS = 10_000;
    /** Packets per RTT added by fast increase at zero queueing delay (8.9). */
    public static final double FAST_AI = 8;
    private static final double BETA = 0.8;
    private static final double MAX_MDF = 0.5;
    private static final double LOSS_MDF = 0.5;
    private static final double TRIM_MDF = 0.25;
    private static final int MAX_PATHS = 256;

    private final int pmtu;
    private final double bytesPerNs;
    private final boolean ecn;
    private final long hostDelayAllowanceNs;
    private final long[] latestSampleNs = new long[MAX_PATHS];
    private final long[] latestSampleAtNs = new long[MAX_PATHS];
    private final long[] scratch = new long[MAX_PATHS];
    /** One past the highest path id sampled: bounds the per-ACK scan to the paths in use. */
    private int pathLimit;
    private long baseRttNs;
    private long srttNs;
    private double cwnd;
    private long lastDecreaseNs = Long.MIN_VALUE / 2;
    private long lastSendNs = Long.MIN_VALUE / 2;
    private long nextSendNs = Long.MIN_VALUE;

    /**
     * @param pmtu the QP's path MTU in bytes
     * @param linkRateBitsPerSecond the sender's link rate, which with baseRTT gives the BDP
     * @param ecn whether ECN marks are negotiated and visible to this endpoint
     */
    public DelayBasedCongestionControl(final int pmtu, final long linkRateBitsPerSecond, final boolean ecn) {
        this(pmtu, linkRateBitsPerSecond, ecn, 0, 0);
    }

    /**
     * @param pmtu the QP's path MTU in bytes
     * @param linkRateBitsPerSecond the sender's link rate, which with baseRTT gives the BDP
     * @param ecn whether ECN marks are negotiated and visible to this endpoint
     * @param initialWindowBytes initial window (the CONGESTION_WINDOW attribute), or 0 for one BDP [CC-010]
     * @param hostDelayAllowanceNs delay attributed to the hosts, added to the target [CC-023]
     */
    public DelayBasedCongestionControl(final int pmtu, final long linkRateBitsPerSecond, final boolean ecn,
                                       final double initialWindowBytes, final long hostDelayAllowanceNs) {
        if (pmtu <= 0 || linkRateBitsPerSecond <= 0) {
            throw new IllegalArgumentException("pmtu and link rate must be positive, got " + pmtu + " and "
                + linkRateBitsPerSecond);
        }
        this.pmtu = pmtu;
        this.bytesPerNs = linkRateBitsPerSecond / 8e9;
        this.ecn = ecn;
        // Start near line rate: one BDP at the initial baseRTT, at least one packet [CC-010].
        this.hostDelayAllowanceNs = Math.max(0, hostDelayAllowanceNs);
        this.cwnd = initialWindowBytes > 0 ? initialWindowBytes : Math.max(pmtu, bdpBytes());
        clamp();
    }

    /** @return the congestion window in bytes */
    public double windowBytes() {
        return cwnd;
    }

    /** @return baseRTT: the smallest RTT seen, or BASE_RTT_INIT before the first sample */
    public long baseRttNs() {
        return baseRttNs > 0 ? baseRttNs : BASE_RTT_INIT_NS;
    }

    /** @return the target queueing delay T = max(4 µs, baseRTT / 2) */
    public long targetQueueingDelayNs() {
        return Math.max(TARGET_QDELAY_MIN_NS, baseRttNs() / 2);
    }

    private double bdpBytes() {
        return bytesPerNs * baseRttNs();
    }

    private double minCwnd() {
        return pmtu / 100.0;
    }

    private double maxCwnd() {
        return Math.max(pmtu, 1.5 * bdpBytes());
    }

    @Override
    public int windowPackets() {
        return Math.max(1, (int) (cwnd / pmtu));
    }

    @Override
    public long nextSendTimeNs(final long nowNs) {
        return cwnd >= pmtu ? nowNs : nextSendNs;
    }

    @Override
    public void onPacketSent(final long nowNs, final int bytes, final int pathId) {
        lastSendNs = nowNs;
        if (cwnd < pmtu) {
            // Below one packet per RTT: space packets so that cwnd bytes leave per SRTT [CC-002].
            final long rtt = srttNs > 0 ? srttNs : baseRttNs();
            nextSendNs = nowNs + (long) (rtt * (pmtu / cwnd));
        }
    }

    @Override
    public void onAck(final long nowNs, final int packets, final long rttNs, final boolean ecnEcho, final int pathId) {
        if (rttNs > 0) {
            baseRttNs = baseRttNs == 0 ? rttNs : Math.min(baseRttNs, rttNs);
            srttNs = srttNs == 0 ? rttNs : srttNs + ((rttNs - srttNs) >> 3);
            if (pathId >= 0 && pathId < MAX_PATHS) {
                latestSampleNs[pathId] = rttNs;
                latestSampleAtNs[pathId] = nowNs;
                pathLimit = Math.max(pathLimit, pathId + 1);
            }
        }
        if (packets <= 0 && !ecnEcho) {
            return;
        }
        if (nowNs - lastDecreaseNs < srttNs) {
            // Inside the SRTT after a decrease: neither increase nor decrease [CC-014].
            return;
        }
        final long delay = delaySignalNs(nowNs);
        if (delay == 0) {
            return;
        }
        final double q = Math.max(0, delay - baseRttNs());
        final double target = targetQueueingDelayNs();
        final double acked = (double) packets * pmtu;
        final boolean ce = ecn && ecnEcho;
        if (q < target) {
            if (!ce) {
                // Additive, scaled by headroom: an increase proportional to cwnd would keep the
                // ratio of competing windows forever (MIMD never converges to fairness).
                cwnd += FAST_AI * pmtu * (acked / cwnd) * (target - q) / target;
            }
            // ECN with low delay: hold; the path selector moves traffic away from the marking path.
        } else if (ecn && !ce) {
            // High delay without marks: fair (additive) increase of one PMTU per window.
            cwnd += pmtu * acked / cwnd;
        } else {
            cwnd *= Math.max(1 - BETA * (q - target) / q, 1 - MAX_MDF);
            lastDecreaseNs = nowNs;
        }
        clamp();
    }

    /** Median over paths with a sample younger than 2 × SRTT of their latest sample [CC-011]. */
    private long delaySignalNs(final long nowNs) {
        final long freshness = 2 * Math.max(srttNs, 1);
        int n = 0;
        for (int i = 0; i < pathLimit; i++) {
            if (latestSampleNs[i] > 0 && nowNs - latestSampleAtNs[i] <= freshness) {
                scratch[n++] = latestSampleNs[i];
            }
        }
        if (n == 0) {
            return 0;
        }
        java.util.Arrays.sort(scratch, 0, n);
        return scratch[n / 2];
    }

    @Override
    public void onLoss(final long nowNs, final int pathId, final boolean trimmed) {
        if (nowNs - lastDecreaseNs < srttNs) {
            return;
        }
        cwnd *= 1 - (trimmed ? TRIM_MDF : LOSS_MDF);
        lastDecreaseNs = nowNs;
        clamp();
    }

    @Override
    public void onRetransmitTimeout(final long nowNs) {
        cwnd = pmtu;
        lastDecreaseNs = nowNs;
        clamp();
    }

    private void clamp() {
        cwnd = Math.min(maxCwnd(), Math.max(minCwnd(), cwnd));
    }

    @Override
    public String toString() {
        return "DelayBased{cwnd=" + (long) cwnd + " B, baseRTT=" + baseRttNs() + " ns, srtt=" + srttNs + " ns}";
    }
}
