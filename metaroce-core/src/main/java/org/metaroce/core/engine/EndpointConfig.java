// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.engine;

import org.metaroce.core.congestion.CongestionControlAlgorithm;

/**
 * Endpoint-wide protocol parameters (specification section 6 defaults). Mutable until the
 * endpoint is built; each setter validates and names the parameter it rejects.
 */
public final class EndpointConfig {
    /**
     * Default RETRY_TIMEOUT [REL-060]: longer than the stalls a busy training host or a JVM pause
     * causes (seconds), short enough that a dead peer is noticed before a job's own watchdogs.
     */
    public static final long DEFAULT_RETRY_TIMEOUT_NS = 15_000_000_000L;

    private int receiveWindowPackets = 1024;
    private int ackCoalescePackets = 16;
    private long ackCoalesceDelayNs = 10_000;
    private int readChunkPackets = 64;
    private long minRtoNs = 100_000;
    private long maxRtoNs = 100_000_000;
    private long minTailProbeNs = 20_000;
    private long minReorderWindowNs = 1_000;
    private int maxPacketsPerPoll = 256;
    private int maxInlineData = 256;
    private long qpnQuarantineNs = 10_000_000_000L;
    private int pathBurstPackets = 1;
    private long keepaliveIdleNs = 1_000_000_000L;
    private long keepaliveIntervalNs = 200_000_000L;
    private int keepaliveProbes = 5;
    private long retryTimeoutNs = DEFAULT_RETRY_TIMEOUT_NS;
    private CongestionControlAlgorithm congestionControl = CongestionControlAlgorithm.DEFAULT;
    private boolean delayOnlyFallback = true;
    private boolean softwareEndpoint;
    private boolean datagramEcn;
    private boolean attachedAck = true;
    private boolean deferredAck;
    private long ackDeferDelayNs = ACK_DEFER_DELAY_NS;
    private long linkRateBitsPerSecond = 100_000_000_000L;
    private long cnpIntervalNs = 50_000;
    private long hostDelayAllowanceNs;
    private long baseRttMaxNs;
    private int eventTraceRecords = EventTrace.DEFAULT_CAPACITY;

    public int receiveWindowPackets() {
        return receiveWindowPackets;
    }

    /**
     * @param packets PSNs a responder tracks beyond its cumulative point, and the most a requester
     *     keeps outstanding; a power of two from 64 to 65536
     * @return this
     */
    public EndpointConfig receiveWindowPackets(final int packets) {
        if (packets < 64 || packets > 65536 || Integer.bitCount(packets) != 1) {
            throw new IllegalArgumentException("receiveWindowPackets must be a power of two in 64..65536, got " + packets);
        }
        this.receiveWindowPackets = packets;
        return this;
    }

    public int ackCoalescePackets() {
        return ackCoalescePackets;
    }

    /**
     * @param packets the responder acknowledges at least every this many packets (1..64)
     * @return this
     */
    public EndpointConfig ackCoalescePackets(final int packets) {
        if (packets < 1 || packets > 64) {
            throw new IllegalArgumentException("ackCoalescePackets must be in 1..64, got " + packets);
        }
        this.ackCoalescePackets = packets;
        return this;
    }

    public long ackCoalesceDelayNs() {
        return ackCoalesceDelayNs;
    }

    /**
     * @param ns longest the responder holds an acknowledgement back (0 = acknowledge every packet)
     * @return this
     */
    public EndpointConfig ackCoalesceDelayNs(final long ns) {
        if (ns < 0) {
            throw new IllegalArgumentException("ackCoalesceDelayNs must be >= 0, got " + ns);
        }
        this.ackCoalesceDelayNs = ns;
        return this;
    }

    public int readChunkPackets() {
        return readChunkPackets;
    }

    /**
     * @param packets most response packets one READ_REQUEST asks for; larger reads are requested in
     *     chunks so they fit the window (1..receiveWindowPackets/2)
     * @return this
     */
    public EndpointConfig readChunkPackets(final int packets) {
        if (packets < 1 || packets > 32768) {
            throw new IllegalArgumentException("readChunkPackets must be in 1..32768, got " + packets);
        }
        this.readChunkPackets = packets;
        return this;
    }

    public long minRtoNs() {
        return minRtoNs;
    }

    /**
     * @param ns floor of the retransmission timeout
     * @return this
     */
    public EndpointConfig minRtoNs(final long ns) {
        if (ns <= 0) {
            throw new IllegalArgumentException("minRtoNs must be > 0, got " + ns);
        }
        this.minRtoNs = ns;
        return this;
    }

    public long maxRtoNs() {
        return maxRtoNs;
    }

    /**
     * @param ns ceiling of the retransmission timeout, backoff included
     * @return this
     */
    public EndpointConfig maxRtoNs(final long ns) {
        if (ns <= 0) {
            throw new IllegalArgumentException("maxRtoNs must be > 0, got " + ns);
        }
        this.maxRtoNs = ns;
        return this;
    }

    public long minTailProbeNs() {
        return minTailProbeNs;
    }

    /**
     * @param ns floor of the tail-loss probe timeout (0 disables tail-loss probes)
     * @return this
     */
    public EndpointConfig minTailProbeNs(final long ns) {
        if (ns < 0) {
            throw new IllegalArgumentException("minTailProbeNs must be >= 0, got " + ns);
        }
        this.minTailProbeNs = ns;
        return this;
    }

    public long minReorderWindowNs() {
        return minReorderWindowNs;
    }

    /**
     * @param ns floor of the reordering window of loss detection
     * @return this
     */
    public EndpointConfig minReorderWindowNs(final long ns) {
        if (ns < 0) {
            throw new IllegalArgumentException("minReorderWindowNs must be >= 0, got " + ns);
        }
        this.minReorderWindowNs = ns;
        return this;
    }

    public int maxPacketsPerPoll() {
        return maxPacketsPerPoll;
    }

    /**
     * @param packets most packets one queue pair emits per poll, so one busy QP cannot starve others
     * @return this
     */
    public EndpointConfig maxPacketsPerPoll(final int packets) {
        if (packets < 1) {
            throw new IllegalArgumentException("maxPacketsPerPoll must be >= 1, got " + packets);
        }
        this.maxPacketsPerPoll = packets;
        return this;
    }

    public int maxInlineData() {
        return maxInlineData;
    }

    /**
     * @param bytes largest payload of an INLINE send (copied at post time)
     * @return this
     */
    public EndpointConfig maxInlineData(final int bytes) {
        if (bytes < 0 || bytes > 8192) {
            throw new IllegalArgumentException("maxInlineData must be in 0..8192, got " + bytes);
        }
        this.maxInlineData = bytes;
        return this;
    }

    public long qpnQuarantineNs() {
        return qpnQuarantineNs;
    }

    /**
     * @param ns a destroyed QPN is not reused for this long, so late packets for an old QP cannot
     *     reach a new one [CM-035]; measured on the endpoint's clock (the latest time it was given)
     * @return this
     */
    public EndpointConfig qpnQuarantineNs(final long ns) {
        if (ns < 0) {
            throw new IllegalArgumentException("qpnQuarantineNs must be >= 0, got " + ns);
        }
        this.qpnQuarantineNs = ns;
        return this;
    }

    public int pathBurstPackets() {
        return pathBurstPackets;
    }

    /**
     * @param packets new packets a QP sends on one path before choosing the next (1 = per-packet
     *     spraying, the default); a software sender with segmentation offload uses a burst so each
     *     socket gets a run of consecutive PSNs [MP-020]
     * @return this
     */
    public EndpointConfig pathBurstPackets(final int packets) {
        if (packets < 1 || packets > 64) {
            throw new IllegalArgumentException("pathBurstPackets must be in 1..64, got " + packets);
        }
        this.pathBurstPackets = packets;
        return this;
    }

    public long keepaliveIdleNs() {
        return keepaliveIdleNs;
    }

    /**
     * @param ns silence from the peer after which a QP starts probing with KEEPALIVE [CM-027]; 0
     *     disables keepalive
     * @return this
     */
    public EndpointConfig keepaliveIdleNs(final long ns) {
        if (ns < 0) {
            throw new IllegalArgumentException("keepaliveIdleNs must be >= 0, got " + ns);
        }
        this.keepaliveIdleNs = ns;
        return this;
    }

    public long keepaliveIntervalNs() {
        return keepaliveIntervalNs;
    }

    /**
     * @param ns time between KEEPALIVE probes [CM-027]
     * @return this
     */
    public EndpointConfig keepaliveIntervalNs(final long ns) {
        if (ns <= 0) {
            throw new IllegalArgumentException("keepaliveIntervalNs must be > 0, got " + ns);
        }
        this.keepaliveIntervalNs = ns;
        return this;
    }

    public int keepaliveProbes() {
        return keepaliveProbes;
    }

    /**
     * @param probes unanswered probes after which the peer is declared dead [CM-030]
     * @return this
     */
    public EndpointConfig keepaliveProbes(final int probes) {
        if (probes < 1 || probes > 255) {
            throw new IllegalArgumentException("keepaliveProbes must be in 1..255, got " + probes);
        }
        this.keepaliveProbes = probes;
        return this;
    }

    public long retryTimeoutNs() {
        return retryTimeoutNs;
    }

    /**
     * The retry budget as a time: a queue pair gives up on its peer (RETRY_EXC_ERR, or declares it
     * dead by keepalive) only after this long without progress or without hearing from it
     * [REL-060], [CM-030]. A queue pair's own RETRY_TIMEOUT attribute overrides it.
     *
     * @param ns RETRY_TIMEOUT in nanoseconds, default 15 s; 0 = RETRY_CNT, the transmission limit
     *     and KEEPALIVE_PROBES alone decide, as in verbs (a one-second stall then ends a connection)
     * @return this
     */
    public EndpointConfig retryTimeoutNs(final long ns) {
        if (ns < 0) {
            throw new IllegalArgumentException("retryTimeoutNs must be >= 0 (0 = no time budget), got " + ns);
        }
        this.retryTimeoutNs = ns;
        return this;
    }

    public CongestionControlAlgorithm congestionControl() {
        return congestionControl;
    }

    /**
     * @param algorithm the congestion-control algorithm of queue pairs whose RTR→RTS modify does not
     *     set CC_ALGORITHM; DEFAULT unless configured, as the specification says [CC-008]. Where such
     *     a QP would run DEFAULT on delay alone, see {@link #delayOnlyFallback(boolean)}
     * @return this
     */
    public EndpointConfig congestionControl(final CongestionControlAlgorithm algorithm) {
        if (algorithm == null) {
            throw new IllegalArgumentException("congestionControl must not be null");
        }
        this.congestionControl = algorithm;
        return this;
    }

    public boolean datagramEcn() {
        return datagramEcn;
    }

    /**
     * @param reads whether the datagram layer under this endpoint reads the ECN field of received
     *     datagrams (and sends ECT): then the connection manager offers the ECN capability unless the
     *     application chose the capabilities [ENC-016], [CC-034], so that DEFAULT runs with marks.
     *     Set by the driver from its transport; false by default
     * @return this
     */
    public EndpointConfig datagramEcn(final boolean reads) {
        this.datagramEcn = reads;
        return this;
    }

    public boolean attachedAck() {
        return attachedAck;
    }

    /**
     * @param offer whether the connection manager offers the ATTACHED_ACK capability unless the
     *     application chose the capabilities (v1.0.15): with it in effect (both sides offer it) an
     *     ACK due while the queue pair also sends a request rides on that request instead of leaving
     *     as a datagram of its own [REL-071]. True by default; peers before v1.0.15 never offer it
     * @return this
     */
    public EndpointConfig attachedAck(final boolean offer) {
        this.attachedAck = offer;
        return this;
    }

    /** ACK_DEFER_DELAY's default, 250 µs [REL-073]. */
    public static final long ACK_DEFER_DELAY_NS = 250_000;

    public boolean deferredAck() {
        return deferredAck;
    }

    /**
     * @param offer whether the connection manager offers the DEFERRED_ACK capability unless the
     *     application chose the capabilities (v1.0.16): with it in effect (both sides offer it) the
     *     last packet of an unsignaled SEND or WRITE goes without ACK_REQ while the window has room
     *     for more [REL-074], and the responder holds its ACK for up to {@link #ackDeferDelayNs()},
     *     to attach it to the queue pair's next request [REL-073]. For requesters that post
     *     unsignaled requests back to back (collectives ranks); false by default
     * @return this
     */
    public EndpointConfig deferredAck(final boolean offer) {
        this.deferredAck = offer;
        return this;
    }

    public long ackDeferDelayNs() {
        return ackDeferDelayNs;
    }

    /**
     * @param ns ACK_DEFER_DELAY: how long a responder holds the ACK of a LAST packet without ACK_REQ
     *     on a queue pair with DEFERRED_ACK, and what its requester adds to its timers meanwhile
     *     [REL-073], [REL-074]; 1 µs .. 10 ms, default 250 µs
     * @return this
     */
    public EndpointConfig ackDeferDelayNs(final long ns) {
        if (ns < 1_000 || ns > 10_000_000) {
            throw new IllegalArgumentException("ackDeferDelayNs must be in 1 us .. 10 ms, got " + ns + " ns");
        }
        this.ackDeferDelayNs = ns;
        return this;
    }

    public boolean delayOnlyFallback() {
        return delayOnlyFallback;
    }

    /**
     * @param fallback whether a QP that takes DEFAULT from {@link #congestionControl()} (its RTR→RTS
     *     modify sets no CC_ALGORITHM) runs FIXED instead, raising CC_FALLBACK with
     *     {@code QueuePair.ccFallbackReason()}, when ECN was not negotiated and
     *     {@link #hostDelayAllowanceNs()} is 0 [CC-034]. True by default: a software host's
     *     timestamps include its own scheduling delay, which delay-only DEFAULT takes for a queue.
     *     Set false where the timestamps see only the fabric (hardware timestamps, the simulator)
     * @return this
     */
    public EndpointConfig delayOnlyFallback(final boolean fallback) {
        this.delayOnlyFallback = fallback;
        return this;
    }

    public boolean softwareEndpoint() {
        return softwareEndpoint;
    }

    /**
     * @param software whether this endpoint's timestamps include its own host's delay (a packet's
     *     wait in a socket buffer or for a descheduled thread), as a user-space endpoint's do: with
     *     ECN negotiated the default algorithm then decides on marks alone, shrinking by half the
     *     smoothed marked fraction once per marked round trip [CC-037]. Set by the driver over real
     *     sockets; false by default, for the simulator and the in-memory wire, whose timestamps see
     *     only the (simulated) fabric
     * @return this
     */
    public EndpointConfig softwareEndpoint(final boolean software) {
        this.softwareEndpoint = software;
        return this;
    }

    public long linkRateBitsPerSecond() {
        return linkRateBitsPerSecond;
    }

    /**
     * @param bitsPerSecond LINK_RATE (8.9): the endpoint's link rate, which with baseRTT gives the
     *     BDP of the default algorithm, DCQCN's line rate and the receiver-credit budget; default
     *     100 Gb/s
     * @return this
     */
    public EndpointConfig linkRateBitsPerSecond(final long bitsPerSecond) {
        if (bitsPerSecond < 1_000_000L) {
            throw new IllegalArgumentException("linkRateBitsPerSecond must be >= 1 Mb/s, got " + bitsPerSecond);
        }
        this.linkRateBitsPerSecond = bitsPerSecond;
        return this;
    }

    public long cnpIntervalNs() {
        return cnpIntervalNs;
    }

    /**
     * @param ns CNP_INTERVAL (8.9): a responder sends at most one CNP per QP in this time [CC-020];
     *     default 50 µs
     * @return this
     */
    public EndpointConfig cnpIntervalNs(final long ns) {
        if (ns < 0) {
            throw new IllegalArgumentException("cnpIntervalNs must be >= 0, got " + ns);
        }
        this.cnpIntervalNs = ns;
        return this;
    }

    public long hostDelayAllowanceNs() {
        return hostDelayAllowanceNs;
    }

    /**
     * @param ns HOST_DELAY_ALLOWANCE (8.9): delay the default algorithm attributes to the hosts
     *     rather than the fabric and adds to its target [CC-023]; 0 (the default) for hosts with
     *     hardware-grade timestamps and the simulator, tens of µs for a loaded software host
     * @return this
     */
    public EndpointConfig hostDelayAllowanceNs(final long ns) {
        if (ns < 0) {
            throw new IllegalArgumentException("hostDelayAllowanceNs must be >= 0, got " + ns);
        }
        this.hostDelayAllowanceNs = ns;
        return this;
    }

    public long baseRttMaxNs() {
        return baseRttMaxNs;
    }

    /**
     * @param ns BASE_RTT_MAX (8.9): the largest baseRTT the default algorithm believes, normally the
     *     fabric's unloaded RTT; it keeps a flow that starts behind a standing queue from taking the
     *     queue for propagation [CC-028]. 0 (the default) bounds nothing
     * @return this
     */
    public EndpointConfig baseRttMaxNs(final long ns) {
        if (ns < 0) {
            throw new IllegalArgumentException("baseRttMaxNs must be >= 0, got " + ns);
        }
        this.baseRttMaxNs = ns;
        return this;
    }

    public int eventTraceRecords() {
        return eventTraceRecords;
    }

    /**
     * @param records events the endpoint's {@link EventTrace} keeps (a power of two, 32 or more:
     *     a failing QP keeps its last 24); fewer make an endpoint cheaper to create, as a test
     *     that builds thousands of short-lived endpoints wants
     * @return this
     */
    public EndpointConfig eventTraceRecords(final int records) {
        if (records < 32 || Integer.bitCount(records) != 1) {
            throw new IllegalArgumentException("eventTraceRecords must be a power of two of at least 32, got " + records);
        }
        this.eventTraceRecords = records;
        return this;
    }

    @Override
    public String toString() {
        return "EndpointConfig{window=" + receiveWindowPackets + ", ackEvery=" + ackCoalescePackets
            + ", ackDelayNs=" + ackCoalesceDelayNs + ", readChunk=" + readChunkPackets + ", minRtoNs=" + minRtoNs
            + ", maxRtoNs=" + maxRtoNs + ", minTlpNs=" + minTailProbeNs + ", minReoWndNs=" + minReorderWindowNs
            + ", retryTimeoutNs=" + retryTimeoutNs + ", cc=" + congestionControl + (delayOnlyFallback ? "" : " (no delay-only fallback)") + (attachedAck ? "" : " (no attached ACKs)") + (deferredAck ? " (deferred ACKs, " + ackDeferDelayNs + " ns)" : "") + (softwareEndpoint ? " (software endpoint)" : "") + ", linkRate=" + linkRateBitsPerSecond
            + '}';
    }
}
