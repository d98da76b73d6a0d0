// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.congestion;

/**
 * The default congestion-control algorithm of specification 8.5: window-based and delay-primary in
 * the spirit of Swift, combined with ECN in the four quadrants of UET's NSCC when marks are
 * visible. The window is kept in bytes so it can fall below one packet; below one packet the
 * requester is paced [CC-002], [CC-017].
 *
 * <ul>
 *   <li>the delay of a path is its <em>standing</em> delay, the smallest RTT sample of the last
 *       one to two SRTTs: a queue persists across every sample of an RTT, while host scheduling
 *       noise and ACK batching inflate some samples only [CC-026];</li>
 *   <li>queueing delay q = D − baseRTT, with D the median of the paths' standing delays (so one
 *       congested path cannot drag the whole window down) [CC-011];</li>
 *   <li>the target T = max(4 µs, baseRTT / 2) + flow scaling + HOST_DELAY_ALLOWANCE: as in Swift,
 *       small windows tolerate more delay (many senders add noise, and a collapsed window has few
 *       samples to filter), and delay the hosts add is not the fabric's [CC-023], [CC-027];</li>
 *   <li>q below T: fast additive increase, up to FAST_AI packets per RTT scaled by the remaining
 *       headroom (T − q) / T, at most the bytes acknowledged [CC-033]; q at or above T without ECN: multiplicative decrease by
 *       max(1 − β(q − T)/q, 1 − MAX_MDF) [CC-012], [CC-013]; with ECN visible, the quadrants of
 *       [CC-012];</li>
 *   <li>at most one decrease per SRTT, and ACKs inside that time neither increase nor decrease
 *       [CC-014]; loss halves, a trim takes a quarter at once, an RTO resets to one packet [CC-015],
 *       and an RTO that proves spurious gives the window back unless congestion is evident [CC-036];</li>
 *   <li>on a software endpoint with ECN ({@link #softwareEndpoint}), whose delay is its hosts',
 *       marks alone decide: DCTCP's smoothed marked fraction α per round trip, cwnd × (1 − α/2)
 *       once per marked round trip ({@code MarkedFraction}) [CC-037];</li>
 *   <li>cwnd stays within [PMTU / 100, 1.5 × BDP], BDP = LINK_RATE × (baseRTT + HOST_DELAY_ALLOWANCE)
 *       [CC-016].</li>
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
    /** FS_RANGE: the most flow scaling adds to the target, as a multiple of the base target (8.9). */
    public static final double FS_RANGE = 5;
    /** FS_MIN_CWND, FS_MAX_CWND: windows (packets) at which flow scaling is full and zero (8.9). */
    public static final double FS_MIN_CWND = 0.1;
    /** @see #FS_MIN_CWND */
    public static final double FS_MAX_CWND = 100;
    private static final double BETA = 0.8;
    private static final double MAX_MDF = 0.5;
    private static final double LOSS_MDF = 0.5;
    /**
     * LOSS_FLOOR [CC-035]: with ECN negotiated, a loss that no congestion signal confirms takes the
     * window no lower than this many BDPs (a window already below stays). Random loss, a corrupting
     * link or a fault injector, otherwise halves the window at every round trip with a loss: at
     * 20% loss the window sat at MIN_CWND, tails were lost with nothing behind them to reveal it,
     * and the QP spent its time in retransmission timeouts (in memory, 10 Gb/s: 0.33 Gb/s against
     * FIXED's 4.19, 321 timeouts; with the floor 3.55 Gb/s, 1 timeout). Half a BDP, not one: at
     * one BDP the p99 slowdown of the simulated all-reduce, whose losses are packets overtaken on
     * sprayed paths, grew by 9-31% on seeds 1-3. Public for tests.
     */
    public static final double LOSS_FLOOR_BDPS = 0.5;
    private static final double TRIM_MDF = 0.25;
    private static final int MAX_PATHS = 256;
    /** Per-path room at first: the tools' 4 paths and the simulator's 16 never grow it. */
    private static final int INITIAL_PATHS = 16;
    private static final double FS_MIN_INV = 1 / Math.sqrt(FS_MIN_CWND);
    private static final double FS_MAX_INV = 1 / Math.sqrt(FS_MAX_CWND);
    /**
     * CE_MEMORY, in SRTTs: delay above target counts as a queue at a marking switch while a CE
     * mark arrived this recently [CC-030]. Switches mark at random (RED), a few per cent of
     * packets at the target queue, so one unmarked ACK is no evidence that no switch is congested.
     */
    public static final int CE_MEMORY_SRTTS = 4;
    /**
     * PACING_GAIN [CC-041]: a software endpoint with ECN never sends faster than this many times its
     * delivery rate. Twice, not BBR's 1.25: the cap follows the delivery rate only as fast as
     * acknowledgements come, so a tight cap makes a slow sender's growth as slow as its ACK clock and
     * keeps it slow; in memory (eight senders, 400 Mb/s policer, PolicedIncastTest, before the other
     * two constants were settled) 1.25 left Jain's index at 0.85 with host waits and 0.95 without,
     * 2 at 0.97 in both. Public for tests.
     */
    public static final double PACING_GAIN = 2;
    /**
     * PACING_CREDIT [CC-041]: the fewest slots of the rate's schedule a late sender may catch up; it
     * catches up one window's worth (cwnd / rate of schedule) when that is more. As the only bound
     * (the first form of CC-041) two slots held senders whose wake-ups came late to three packets
     * per wake-up: 0.06 of the rig's policer rate on real sockets, 0.76 in memory with wake-ups up to
     * 5 ms late (PolicedIncastTest.lateSendersKeepTheirRate).
     */
    public static final int PACING_CREDIT = 2;
    /**
     * RATE_DOUBLING [CC-041]: without a CE signal a software endpoint's rate doubles in this time.
     * Growth in time, not per acknowledgement, so that a slow sender grows as fast as a fast one.
     * With it a marked round trip takes α/4 off the rate, half the window's decrease of CC-037: the
     * senders settle where the marks balance the growth, so the shorter this time and the gentler
     * the decrease, the higher above the marking rate they run, and the less fairly. In memory, with
     * the first form of CC-041 (PolicedIncastTest: a 400 Mb/s policer marking above 320 Mb/s, steady
     * state, with and without host waits) eight senders ran at 0.93 of the policer's rate, Jain's
     * index 0.97-0.98 (four senders 0.88, sixteen 0.98, nothing retransmitted); with α/2 and 20 ms at
     * 0.91, Jain 0.97;
     * α/2 and 15 ms 0.93, Jain 0.92; α/4 and 20 ms 0.95, Jain 0.90-0.94. Public for tests.
     */
    public static final long RATE_DOUBLING_NS = 30_000_000;
    /**
     * MIN_PACING_RATE [CC-041], bytes per ns (1 Mb/s, a 4 KiB packet per 33 ms): the rate never paces
     * slower, so that a delivery rate measured from a handful of sparse ACKs cannot hold a
     * retransmission, which waits for the rate too, for seconds.
     */
    public static final double MIN_PACING_RATE = 1e6 / 8 / 1e9;
    private static final double RATE_GROWTH_PER_NS = Math.log(2) / RATE_DOUBLING_NS;

    private final int pmtu;
    private final double bytesPerNs;
    private final boolean ecn;
    private final long hostDelayAllowanceNs;
    private long baseRttMaxNs;
    /** With ECN: EWMA of the queueing delay of ACKs without a CE signal, taken as host delay [CC-029]. */
    private double unmarkedDelayNs;
    // Per path, a two-bucket windowed minimum of RTT samples: the current bucket and the previous.
    // Sized for the paths seen so far and grown (doubling, at most MAX_PATHS) when a higher Path ID
    // appears: at 256 paths from the start they took 12 KB per QP, which a connection kept in
    // time-wait holds with its destroyed QP [CM-039] (1,000 of them: 12 MB).
    private long[] curMinNs = new long[INITIAL_PATHS];
    private long[] curStartNs = new long[INITIAL_PATHS];
    private long[] prevMinNs = new long[INITIAL_PATHS];
    private long[] prevStartNs = new long[INITIAL_PATHS];
    private long[] latestSampleAtNs = new long[INITIAL_PATHS];
    private long[] scratch = new long[INITIAL_PATHS];
    /** One past the highest path id sampled: bounds the per-ACK scan to the paths in use. */
    private int pathLimit;
    private long baseRttNs;
    private long srttNs;
    private double cwnd;
    /** W0, the initial window of [CC-010], which the Sender Count divides before the first packet [CC-039]. */
    private final double initialWindow;
    /** Whether a packet has been sent: the Sender Count sizes the first window only before it [CC-039]. */
    private boolean sentAny;
    /** The latest Sender Count from the responder (1 without one): it divides the increases [CC-039]. */
    private int senders = 1;
    /**
     * Whether a count above 1 sized the first window: the QP started in a group of senders told n
     * together, with equal windows, so a falling count hands it the leavers' shares [CC-039].
     */
    private boolean startedInGroup;
    private long lastDecreaseNs = Long.MIN_VALUE / 2;
    private long nextSendNs = Long.MIN_VALUE;
    private long decreases;
    private long lastCeNs = Long.MIN_VALUE / 2;
    private static final long NOT_APP_LIMITED = Long.MIN_VALUE;
    /** Since when the sender has been application-limited, or NOT_APP_LIMITED [CC-005]. */
    private long appLimitedSinceNs = NOT_APP_LIMITED;
    /** Time of the first RTT sample: a flow has seen no unmarked CE_MEMORY before it [CC-031]. */
    private long firstSampleNs = Long.MIN_VALUE / 2;
    private static final double NO_UNDO = -1;
    /**
     * The window before the first expiry of the current retransmission-timeout episode, which a
     * proof that the episode was spurious restores [CC-036]; NO_UNDO outside an episode, or once
     * any other reaction or progress has ended it.
     */
    private double windowBeforeTimeout = NO_UNDO;
    /** The marked fraction on a software endpoint with ECN [CC-037]; null where delay decides. */
    private MarkedFraction marks;
    /** The delivery rate that paces a software endpoint with ECN [CC-041]; null where delay decides. */
    private DeliveryRate delivery;
    /** The rate that paces a software endpoint with ECN, bytes per ns; 0 until its first marked round trip [CC-041]. */
    private double rateBytesPerNs;
    private long rateRaisedNs;
    private long undoneTimeouts;

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
     * @param hostDelayAllowanceNs HOST_DELAY_ALLOWANCE, delay attributed to the hosts [CC-023]
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
        this.hostDelayAllowanceNs = Math.max(0, hostDelayAllowanceNs);
        // Start near line rate: one BDP at the initial baseRTT, at least one packet [CC-010].
        this.cwnd = initialWindowBytes > 0 ? initialWindowBytes : Math.max(pmtu, bdpBytes());
        clamp();
        this.initialWindow = cwnd;
    }

    /**
     * Sets BASE_RTT_MAX [CC-028]: the largest baseRTT the algorithm believes. A flow that starts
     * while others keep a queue standing never sees the empty fabric, takes the queue for
     * propagation, and would crowd out the earlier flows; bounding baseRTT by the fabric's known
     * unloaded RTT gives every flow the same reference. 0 (the default) bounds nothing.
     *
     * @param ns the bound, or 0
     * @return this
     */
    public DelayBasedCongestionControl baseRttMaxNs(final long ns) {
        if (ns < 0) {
            throw new IllegalArgumentException("baseRttMaxNs must be >= 0, got " + ns);
        }
        this.baseRttMaxNs = ns;
        return this;
    }

    /**
     * Declares a software endpoint [CC-034]: its timestamps include its own host's delay (a
     * packet's wait in a socket or for a descheduled thread). With ECN negotiated the algorithm
     * then runs on marks alone [CC-037]; without ECN this changes nothing.
     *
     * @param software whether this endpoint's timestamps include its host's delay
     * @return this
     */
    public DelayBasedCongestionControl softwareEndpoint(final boolean software) {
        this.marks = software && ecn ? new MarkedFraction() : null;
        this.delivery = software && ecn ? new DeliveryRate() : null;
        return this;
    }

    /** @return α, the smoothed marked fraction of a software endpoint with ECN, or NaN [CC-037] */
    public double markedFraction() {
        return marks == null ? Double.NaN : marks.alpha();
    }

    /** @return the congestion window in bytes */
    public double windowBytes() {
        return cwnd;
    }

    /** @return retransmission timeouts whose window reduction was undone as spurious [CC-036] */
    public long undoneTimeouts() {
        return undoneTimeouts;
    }

    /** @return multiplicative decreases applied so far (delay, loss, trim or timeout) */
    public long decreases() {
        return decreases;
    }

    /** @return baseRTT: the smallest RTT seen, or BASE_RTT_INIT before the first sample */
    public long baseRttNs() {
        final long base = baseRttNs > 0 ? baseRttNs : BASE_RTT_INIT_NS;
        return baseRttMaxNs > 0 ? Math.min(base, baseRttMaxNs) : base;
    }

    /** @return the fabric part of the target, max(4 µs, baseRTT / 2) */
    public long targetQueueingDelayNs() {
        return Math.max(TARGET_QDELAY_MIN_NS, baseRttNs() / 2);
    }

    /**
     * @return the whole target T: the fabric target, plus flow scaling for the current window,
     *     plus HOST_DELAY_ALLOWANCE [CC-023], [CC-027]
     */
    public double targetNs() {
        final double base = targetQueueingDelayNs();
        final double packets = Math.max(cwnd / pmtu, 1e-9);
        final double fs = (1 / Math.sqrt(packets) - FS_MAX_INV) / (FS_MIN_INV - FS_MAX_INV);
        return base + FS_RANGE * base * Math.min(1, Math.max(0, fs)) + hostDelayAllowanceNs;
    }

    private double bdpBytes() {
        return bytesPerNs * (baseRttNs() + Math.max(hostDelayAllowanceNs, unmarkedDelayNs));
    }

    /** @return the host delay estimated from unmarked delay (ECN only, [CC-029]), 0 without ECN */
    public long unmarkedDelayNs() {
        return (long) unmarkedDelayNs;
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
        if (pacingRate() > 0) {
            // Paced at the delivery rate whatever the window [CC-041].
            return nextSendNs;
        }
        return cwnd >= pmtu ? nowNs : nextSendNs;
    }

    @Override
    public long probeNotBeforeNs() {
        return pacingRate() > 0 ? nextSendNs : Long.MIN_VALUE;
    }

    @Override
    public void onPacketSent(final long nowNs, final int bytes, final int pathId) {
        sentAny = true;
        final double rate = pacingRate();
        long next = Long.MIN_VALUE;
        if (cwnd < pmtu) {
            // Below one packet per RTT: space packets so that cwnd bytes leave per SRTT [CC-002].
            final long rtt = srttNs > 0 ? srttNs : baseRttNs();
            next = nowNs + (long) (rtt * (pmtu / cwnd));
        }
        if (rate > 0) {
            // No faster than the rate, however large the window, on a schedule: a packet's slot
            // follows the previous one's, and a sender that fell behind it (its thread descheduled,
            // a poll late) catches up the slots of at most one window, and at least PACING_CREDIT
            // [CC-041]. Slots counted from the late send itself lose the lateness for good: on the
            // real rig, where 16 JVMs share two cores, a sleeping sender's wake-ups came 15-30 ms
            // late, and with two slots of catch-up it sent three packets per wake-up, a tenth of its
            // rate. A window's worth is no larger a burst than the window itself releases.
            final long slot = (long) (bytes / rate);
            final long horizon = Math.max(PACING_CREDIT * slot, (long) (cwnd / rate));
            next = Math.max(next, Math.max(nextSendNs, nowNs - horizon) + slot);
        }
        if (next != Long.MIN_VALUE) {
            nextSendNs = next;
        }
    }

    /** @return the pacing rate of a software endpoint with ECN in bytes per ns, 0 for none [CC-041] */
    private double pacingRate() {
        if (delivery == null || rateBytesPerNs <= 0) {
            return 0;
        }
        return Math.max(MIN_PACING_RATE, Math.min(rateBytesPerNs, PACING_GAIN * delivery.rateBytesPerNs()));
    }

    /**
     * The rate of a software endpoint with ECN [CC-041]: none until a round trip closes with a CE
     * signal while the delivery rate is known, which sets it to the delivery rate × (1 − α/4); from
     * then on a round trip that closes with a CE signal takes it to min(rate, delivery
     * rate) × (1 − α/4), and an ACK without one raises it by RATE_GROWTH_PER_NS × rate × the time since
     * the previous raise. The decrease comes with each marked round trip, so a sender meets
     * decreases in proportion to its rate and its decreases grow with the square of its rate, while
     * its growth grows with the rate alone: a faster sender loses more than it gains, a slower one
     * gains more than it loses, and the senders behind one marker converge to equal rates. Never
     * above PACING_GAIN × the delivery rate ({@link #pacingRate()}).
     */
    private void updateRate(final long nowNs, final double markFactor, final boolean ce) {
        final double delivered = delivery.rateBytesPerNs();
        if (delivered <= 0) {
            return;
        }
        if (rateBytesPerNs <= 0 && markFactor >= 1) {
            // No rate before the first marked round trip: pacing at a measured rate answers
            // congestion, and a path that marks nothing (loopback, an idle fabric) would only pay
            // for it with a start-up paced at RATE_DOUBLING (write_bw --loopback 18 Gb/s over 3 s
            // against 22 unpaced, the first second at 14) [CC-041].
            return;
        }
        if (markFactor < 1) {
            // markFactor is 1 - alpha/2, the window's decrease; the rate takes half of it. The first
            // marked round trip starts from the delivery rate (no rate yet: the return above).
            rateBytesPerNs = (rateBytesPerNs <= 0 ? delivered : Math.min(rateBytesPerNs, delivered))
                * (1 - (1 - markFactor) / 2);
            rateRaisedNs = nowNs;
        } else if (!ce) {
            rateBytesPerNs = Math.min(PACING_GAIN * delivered,
                rateBytesPerNs * (1 + RATE_GROWTH_PER_NS * (nowNs - rateRaisedNs)));
            rateRaisedNs = nowNs;
        }
    }

    /**
     * The responder's Sender Count n [CC-038]: before the first packet the window becomes
     * min(cwnd, max(PMTU, W0 / n)), so that n requesters told before a burst put about W0 on the
     * receiver's port in their first round trip, not n × W0; and the fast and fair increases are
     * divided by n from now on, so that n flows into one port add FAST_AI (or one PMTU) per round
     * trip together [CC-039]. A QP whose first window a count above 1 sized multiplies its window
     * by n' / n when the count falls from n' to n: the group started with equal windows and grew
     * them alike, so each leaver held about what each stayer holds, and the stayers take its share
     * at once instead of regrowing it by FAST_AI / n per round trip while the receiver's link
     * idles (the end of an incast) [CC-039].
     */
    @Override
    public void onSenderCount(final long nowNs, final int count) {
        final int previous = senders;
        senders = Math.max(1, count);
        if (!sentAny) {
            cwnd = Math.min(cwnd, Math.max(pmtu, initialWindow / senders));
            startedInGroup |= senders > 1;
            clamp();
        } else if (startedInGroup && senders < previous) {
            // Only for a group told n before its first packet: flows that started uninformed, at
            // different times, hold unequal windows, and a flow that ended with little in flight
            // would hand the stayers a share it never had (web-search: a queue for the next flows).
            cwnd = cwnd * previous / senders;
            clamp();
        }
    }

    @Override
    public void onSendOpportunity(final long nowNs, final int packetsInFlight, final boolean workLeft) {
        if (!workLeft && (double) packetsInFlight * pmtu < cwnd / 2) {
            if (appLimitedSinceNs == NOT_APP_LIMITED) {
                appLimitedSinceNs = nowNs;
            }
        } else {
            appLimitedSinceNs = NOT_APP_LIMITED;
        }
    }

    /**
     * Application-limited [CC-005]: for a whole SRTT the sender had nothing left to send and less
     * than half its window in flight. Its ACKs then say nothing about whether the network would
     * carry a larger window, so they must not grow it (a window grown while idle would be sent as
     * one burst when the application next has data).
     */
    private boolean applicationLimited(final long nowNs) {
        return appLimitedSinceNs != NOT_APP_LIMITED && nowNs - appLimitedSinceNs >= srttNs;
    }

    @Override
    public void onAck(final long nowNs, final int packets, final long rttNs, final boolean ecnEcho, final int pathId) {
        if (rttNs > 0) {
            baseRttNs = baseRttNs == 0 ? rttNs : Math.min(baseRttNs, rttNs);
            srttNs = srttNs == 0 ? rttNs : srttNs + ((rttNs - srttNs) >> 3);
            if (pathId >= 0 && pathId < MAX_PATHS) {
                recordSample(nowNs, pathId, rttNs);
            }
        }
        if (ecnEcho) {
            lastCeNs = nowNs;
            if (marks == null) {
                // A marked queue is in the fabric: the delay seen so far was not the hosts' [CC-031].
                // On a software endpoint the delay is the hosts' whatever is marked, and H keeps
                // MAX_CWND above the window its host's round trip needs [CC-037].
                unmarkedDelayNs = 0;
            }
        }
        if (rttNs > 0 && firstSampleNs == Long.MIN_VALUE / 2) {
            firstSampleNs = nowNs;
        }
        if (packets <= 0 && !ecnEcho) {
            return;
        }
        if (packets > 0) {
            // Progress that did not prove the expiry spurious (that comes before this call)
            // ends the episode: its retransmission was needed, and the reduction stands [CC-036].
            windowBeforeTimeout = NO_UNDO;
        }
        // Every acknowledgement counts towards the round trip's marked fraction [CC-037].
        final double markFactor = marks == null ? 1 : marks.onAck(nowNs, srttNs, ecnEcho);
        if (delivery != null) {
            delivery.onAck(nowNs, (long) Math.max(0, packets) * pmtu, srttNs,
                appLimitedSinceNs != NOT_APP_LIMITED);
            updateRate(nowNs, markFactor, ecnEcho);
        }
        if (nowNs - lastDecreaseNs < srttNs) {
            // Inside the SRTT after a decrease: neither increase nor decrease [CC-014].
            return;
        }
        final long delay = delaySignalNs(nowNs);
        if (delay == 0 && marks == null) {
            return;
        }
        final double q = Math.max(0, delay - baseRttNs());
        final double target = targetNs();
        final double acked = (double) packets * pmtu;
        final boolean ce = ecn && ecnEcho;
        if (ecn && !ce && q >= target && nowNs - Math.max(lastCeNs, firstSampleNs) >= CE_MEMORY_SRTTS * srttNs
            && cwnd < bytesPerNs * (baseRttNs() + q)) {
            // Delay above the target that no switch has marked for CE_MEMORY, while the window is
            // too small to have queued behind itself, is the hosts' [CC-029]. Only then: in an
            // incast the shared queue builds before RED marks it, behind many small windows, and
            // learning from that delay widened MAX_CWND for exactly the flows that had to shrink
            // [CC-031].
            unmarkedDelayNs += (q - unmarkedDelayNs) / 8;
        }
        final boolean mayGrow = !applicationLimited(nowNs);
        if (marks != null) {
            // A software endpoint: delay measures the hosts, marks alone measure the network.
            // Once per marked round trip the window shrinks by α/2; otherwise it grows by one
            // PMTU per round trip while a mark is recent (AIMD converges to fair shares), by
            // FAST_AI while none is: the hosts' scheduling makes the loop that clocks the ACKs
            // far longer than the SRTT of the timestamps, and one PMTU per window of ACKs left a
            // rig of eight senders at 0.81-0.82 of its bottleneck instead of 0.88-0.98 [CC-037].
            if (markFactor < 1) {
                cwnd *= markFactor;
                decreased(nowNs);
            } else if (!ce && mayGrow) {
                final boolean recentMark = nowNs - lastCeNs < CE_MEMORY_SRTTS * srttNs;
                cwnd += Math.min((recentMark ? 1 : FAST_AI) / senders * pmtu * acked / cwnd, acked);
            }
            clamp();
            return;
        }
        if (q < target) {
            if (!ce && mayGrow) {
                // Additive, scaled by headroom: an increase proportional to cwnd would keep the
                // ratio of competing windows forever (MIMD never converges to fairness). At most
                // the bytes acknowledged, so the window at most doubles per round trip: below
                // FAST_AI packets the formula adds more than an ACK acknowledges, and below one
                // packet (one ACK per PMTU / cwnd round trips) one ACK multiplied the window [CC-033].
                cwnd += Math.min(FAST_AI / senders * pmtu * (acked / cwnd) * (target - q) / target, acked);
            }
            // ECN with low delay: hold; the path selector moves traffic away from the marking path.
            // High delay with a recent mark (below): a queue at a switch, decrease [CC-012].
        } else if (ecn && !ce && nowNs - lastCeNs >= CE_MEMORY_SRTTS * srttNs) {
            // High delay and no mark for CE_MEMORY: the queue is not at a marking switch (the
            // receiver host, say): fair (additive) increase of one PMTU per window [CC-029].
            if (mayGrow) {
                cwnd += pmtu / (double) senders * acked / cwnd;
            }
        } else {
            cwnd *= Math.max(1 - BETA * (q - target) / q, 1 - MAX_MDF);
            decreased(nowNs);
        }
        clamp();
    }

    /** Keeps the path's minimum RTT over the current and the previous window of one SRTT [CC-026]. */
    private void recordSample(final long nowNs, final int path, final long rttNs) {
        if (path >= curMinNs.length) {
            growPaths(path);
        }
        final long window = Math.max(srttNs, 1_000);
        if (curMinNs[path] == 0 || nowNs - curStartNs[path] >= window) {
            prevMinNs[path] = curMinNs[path];
            prevStartNs[path] = curStartNs[path];
            curMinNs[path] = rttNs;
            curStartNs[path] = nowNs;
        } else if (rttNs < curMinNs[path]) {
            curMinNs[path] = rttNs;
        }
        latestSampleAtNs[path] = nowNs;
        pathLimit = Math.max(pathLimit, path + 1);
    }

    /** Room for {@code path}: allocates only the first time a QP uses a Path ID this high. */
    private void growPaths(final int path) {
        final int length = Math.min(MAX_PATHS, Math.max(path + 1, 2 * curMinNs.length));
        curMinNs = java.util.Arrays.copyOf(curMinNs, length);
        curStartNs = java.util.Arrays.copyOf(curStartNs, length);
        prevMinNs = java.util.Arrays.copyOf(prevMinNs, length);
        prevStartNs = java.util.Arrays.copyOf(prevStartNs, length);
        latestSampleAtNs = java.util.Arrays.copyOf(latestSampleAtNs, length);
        scratch = new long[length];
    }

    /**
     * Median over paths with a sample younger than 2 × SRTT of their standing delay: the smallest
     * sample of the current and previous windows [CC-011], [CC-026].
     */
    private long delaySignalNs(final long nowNs) {
        int n = 0;
        for (int i = 0; i < pathLimit; i++) {
            final long standing = standingDelayNs(nowNs, i);
            if (standing > 0) {
                scratch[n++] = standing;
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
        windowBeforeTimeout = NO_UNDO;
        final double reduced = cwnd * (1 - (trimmed ? TRIM_MDF : LOSS_MDF));
        if (!trimmed && ecn && !congestionEvident(nowNs)) {
            cwnd = Math.max(reduced, Math.min(cwnd, LOSS_FLOOR_BDPS * bdpBytes()));
        } else {
            cwnd = reduced;
        }
        decreased(nowNs);
        clamp();
    }

    /**
     * Whether anything but the loss itself says the network is congested [CC-035]: a CE signal
     * within CE_MEMORY; or, while the host delay H is below the fabric target (delay then
     * measures the fabric), any path whose standing delay is at or above baseRTT + T, or no
     * fresh delay sample at all (nothing to go on: assume congestion). The worst path, not the
     * median of the delay signal: a loss declared on a sprayed QP is often a packet overtaken on
     * a queued path while the others are fast (in the simulated all-reduce the median alone kept
     * windows up after those losses and slowed its p99). With H at or above the target the
     * delay is the hosts' (CC-029 treats it so for increases too) and only marks count: on real
     * sockets, where H is tens to hundreds of microseconds, some path's standing delay was above
     * the target at nearly every loss, and DEFAULT at 20% loss both ways sat at 1 to 4 KB.
     */
    private boolean congestionEvident(final long nowNs) {
        if (nowNs - lastCeNs < CE_MEMORY_SRTTS * srttNs) {
            return true;
        }
        if (marks != null) {
            // A software endpoint's delay is the hosts' whatever H says [CC-037].
            return false;
        }
        if (unmarkedDelayNs >= targetQueueingDelayNs()) {
            return false;
        }
        final double limit = baseRttNs() + targetNs();
        boolean sampled = false;
        for (int i = 0; i < pathLimit; i++) {
            final long standing = standingDelayNs(nowNs, i);
            if (standing >= limit) {
                return true;
            }
            sampled |= standing > 0;
        }
        return !sampled;
    }

    /**
     * A path's standing delay: the smallest sample of its current and previous windows, 0 when
     * its latest sample is older than 2 × SRTT [CC-026].
     */
    private long standingDelayNs(final long nowNs, final int path) {
        final long freshness = 2 * Math.max(srttNs, 1);
        if (curMinNs[path] == 0 || nowNs - latestSampleAtNs[path] > freshness) {
            return 0;
        }
        long standing = curMinNs[path];
        if (prevMinNs[path] > 0 && nowNs - prevStartNs[path] <= 2 * freshness) {
            standing = Math.min(standing, prevMinNs[path]);
        }
        return standing;
    }

    @Override
    public void onRetransmitTimeout(final long nowNs) {
        if (windowBeforeTimeout == NO_UNDO) {
            // The first expiry of an episode: later ones (the backoff) find the window at one packet.
            windowBeforeTimeout = cwnd;
        }
        // One packet at most, never more than before: a window already below one packet (paced,
        // CC-002) stays where it is, as CC-003 asks of every algorithm. Raising it to one packet
        // made every expiry a jump in rate for the flows that had slowed the most: eight paced
        // senders through a 400 Mb/s policer, each with a fair share of a tenth of a packet per
        // round trip, went back to one packet at each expiry, were dropped again, and resent six
        // bytes for every byte delivered (in memory: docs/congestion-control.md, "The rig on a quiet host") [CC-015].
        cwnd = Math.min(cwnd, pmtu);
        decreased(nowNs);
        clamp();
    }

    /**
     * Restores the window the episode's first expiry took, when nothing but the expiry said the
     * network is congested (the test of CC-035) [CC-036]. A host that was descheduled for longer
     * than the RTO, as loaded software hosts and JVM pauses are, otherwise restarts every flow
     * from one packet and regrows it by the fair increase, one PMTU per round trip: on a 2-core
     * host under load, four senders through a 400 Mb/s bottleneck ran at about 1 Mb/s each,
     * with nothing marked and nothing dropped. Where congestion is evident (a mark within
     * CE_MEMORY, or, when the delay measures the fabric, a path's queue above the target, or no
     * fresh sample) the late packets were queued, and the reduction stands. TCP's Eifel response
     * does the same (RFC 4015).
     */
    @Override
    public void onSpuriousTimeout(final long nowNs) {
        if (windowBeforeTimeout != NO_UNDO && !congestionEvident(nowNs)) {
            cwnd = Math.max(cwnd, windowBeforeTimeout);
            undoneTimeouts++;
            clamp();
        }
        windowBeforeTimeout = NO_UNDO;
    }

    private void decreased(final long nowNs) {
        lastDecreaseNs = nowNs;
        decreases++;
    }

    private void clamp() {
        cwnd = Math.min(maxCwnd(), Math.max(minCwnd(), cwnd));
    }

    @Override
    public String toString() {
        return "DelayBased{cwnd=" + (long) cwnd + " B, maxCwnd=" + (long) maxCwnd() + " B, baseRTT=" + baseRttNs()
            + " ns, srtt=" + srttNs + " ns, T=" + (long) targetNs() + " ns, H=" + (long) unmarkedDelayNs
            + " ns, decreases=" + decreases + ", undone=" + undoneTimeouts
            + (marks == null ? "" : String.format(java.util.Locale.ROOT, ", marks-only alpha=%.3f, pacing %.1f Mb/s",
                marks.alpha(), pacingRate() * 8e3)) + '}';
    }
}
