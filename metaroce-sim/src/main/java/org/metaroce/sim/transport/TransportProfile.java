// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.sim.transport;

import java.util.function.Supplier;

import org.metaroce.core.congestion.CongestionControlAlgorithm;
import org.metaroce.core.engine.EndpointConfig;
import org.metaroce.core.wire.ConnectHeader;
import org.metaroce.sim.net.FabricConfig;
import org.metaroce.sim.net.LoadBalancing;

/**
 * Everything that distinguishes one transport set-up from another in a head-to-head run: the
 * congestion-control algorithm each QP runs (its CC_ALGORITHM attribute, and CONGESTION_WINDOW
 * for FIXED), the capabilities the two ends negotiated (ECN, GO_BACK_N), how many paths (entropy
 * values) a QP sprays over, what the switches do (ECMP or spraying, PFC, trimming, ECN marking),
 * and whether the endpoints bound baseRTT by the fabric's unloaded RTT [CC-028]. Everything is
 * applied through the engine's own selection mechanism (QP attributes and
 * {@link EndpointConfig}), so the QPs run exactly what a deployment with these settings would.
 * Immutable; the {@code with*} methods return modified copies.
 */
public final class TransportProfile {
    private final String name;
    private final String ccName;
    private final CongestionControlAlgorithm ccAlgorithm;
    private final int congestionWindowPackets;
    private final boolean goBackN;
    private final boolean boundBaseRtt;
    private final int pathsPerQp;
    private final LoadBalancing loadBalancing;
    private final boolean pfc;
    private final boolean trimming;
    private final boolean ecn;
    private final int pmtu;
    private final Supplier<EndpointConfig> endpointConfig;
    /** RECEIVER_CREDIT negotiated whatever the algorithm (set only by {@link #withReceiverCredit}, kept by every copy). */
    private boolean receiverCredit;
    /** Whether every QP negotiates SENDER_COUNT [CC-038]. */
    private boolean senderCount;

    private TransportProfile(final String name, final String ccName, final CongestionControlAlgorithm ccAlgorithm,
                             final int congestionWindowPackets, final boolean goBackN, final boolean boundBaseRtt,
                             final int pathsPerQp, final LoadBalancing loadBalancing, final boolean pfc,
                             final boolean trimming, final boolean ecn, final int pmtu,
                             final Supplier<EndpointConfig> endpointConfig) {
        if (pathsPerQp < 1 || pathsPerQp > 256) {
            throw new IllegalArgumentException("pathsPerQp must be in 1..256, got " + pathsPerQp);
        }
        if (congestionWindowPackets < 0) {
            throw new IllegalArgumentException("congestionWindowPackets must be >= 0, got " + congestionWindowPackets);
        }
        this.name = name;
        this.ccName = ccName;
        this.ccAlgorithm = ccAlgorithm;
        this.congestionWindowPackets = congestionWindowPackets;
        this.goBackN = goBackN;
        this.boundBaseRtt = boundBaseRtt;
        this.pathsPerQp = pathsPerQp;
        this.loadBalancing = loadBalancing;
        this.pfc = pfc;
        this.trimming = trimming;
        this.ecn = ecn;
        this.pmtu = pmtu;
        this.endpointConfig = endpointConfig;
    }

    private TransportProfile copy(final String newName, final String newCcName, final CongestionControlAlgorithm alg,
                                  final int window, final boolean gbn, final boolean bound, final int paths,
                                  final LoadBalancing lb, final boolean newPfc, final boolean trim, final boolean newEcn,
                                  final int mtu, final Supplier<EndpointConfig> config) {
        final TransportProfile p =
            new TransportProfile(newName, newCcName, alg, window, gbn, bound, paths, lb, newPfc, trim, newEcn, mtu, config);
        p.receiverCredit = receiverCredit;
        p.senderCount = senderCount;
        return p;
    }

    /**
     * @param on whether every QP negotiates the RECEIVER_CREDIT capability: the responder then
     *     grants each QP its share of one receive BDP [CC-018] and whatever algorithm the QP runs
     *     works under that share as its cap [CC-024] (the DEFAULT + credit combination of 8.4)
     * @return a copy
     */
    public TransportProfile withReceiverCredit(final boolean on) {
        final TransportProfile p = copy(name, ccName, ccAlgorithm, congestionWindowPackets, goBackN, boundBaseRtt,
            pathsPerQp, loadBalancing, pfc, trimming, ecn, pmtu, endpointConfig);
        p.receiverCredit = on;
        return p;
    }

    /**
     * @param on whether every QP negotiates SENDER_COUNT: responders report their count of senders
     *     in every ACK and announce it to QPs connected ahead of their traffic, and DEFAULT sizes
     *     its first window and its increases by it [CC-038], [CC-039]
     * @return a copy
     */
    public TransportProfile withSenderCount(final boolean on) {
        final TransportProfile p = copy(name, ccName, ccAlgorithm, congestionWindowPackets, goBackN, boundBaseRtt,
            pathsPerQp, loadBalancing, pfc, trimming, ecn, pmtu, endpointConfig);
        p.senderCount = on;
        return p;
    }

    /**
     * MetaRoCE as the specification intends it: no PFC, each QP sprays over 16 entropy values
     * through ordinary ECMP switches, selective repeat, the default delay-primary congestion
     * control of 8.5 with ECN and SENDER_COUNT negotiated (the NSCC quadrants; the responder's
     * count of senders, [CC-038]), and BASE_RTT_MAX set to the fabric's largest unloaded RTT as
     * [CC-028] tells deployments to.
     *
     * @return the profile
     */
    public static TransportProfile metaroce() {
        final TransportProfile p = new TransportProfile("metaroce", "DEFAULT (delay-based, 8.5)",
            CongestionControlAlgorithm.DEFAULT, 0, false, true, 16, LoadBalancing.ECMP, false, false, true, 4096,
            TransportProfile::simEndpointConfig);
        p.senderCount = true;
        return p;
    }

    /**
     * The RoCEv2 baseline: DCQCN (8.7; ECN negotiated, switches mark, responders send CNPs
     * [CC-020]), go-back-N loss recovery (6.11; GO_BACK_N negotiated, every packet on one path
     * [REL-056]), PFC, and ECMP pinning each QP to one path.
     *
     * @return the profile
     */
    public static TransportProfile rocev2() {
        return new TransportProfile("rocev2", "DCQCN (8.7)", CongestionControlAlgorithm.DCQCN, 0, true, false, 1,
            LoadBalancing.ECMP, true, false, true, 4096, TransportProfile::simEndpointConfig);
    }

    /**
     * @param profileName {@code metaroce} or {@code rocev2}
     * @return the named profile
     */
    public static TransportProfile named(final String profileName) {
        return switch (profileName) {
            case "metaroce" -> metaroce();
            case "rocev2" -> rocev2();
            default -> throw new IllegalArgumentException("unknown transport '" + profileName + "': use metaroce or rocev2");
        };
    }

    /** @return a copy with another name (for variants in reports) */
    public TransportProfile withName(final String newName) {
        return copy(newName, ccName, ccAlgorithm, congestionWindowPackets, goBackN, boundBaseRtt, pathsPerQp,
            loadBalancing, pfc, trimming, ecn, pmtu, endpointConfig);
    }

    /**
     * @param label how reports name it
     * @param algorithm the CC_ALGORITHM attribute every QP gets at RTS [CC-008]
     * @param windowPackets the CONGESTION_WINDOW attribute (FIXED's window, or the initial window), 0 for none
     * @return a copy with another congestion control
     */
    public TransportProfile withCongestionControl(final String label, final CongestionControlAlgorithm algorithm,
                                                  final int windowPackets) {
        return copy(name, label, algorithm, windowPackets, goBackN, boundBaseRtt, pathsPerQp, loadBalancing, pfc,
            trimming, ecn, pmtu, endpointConfig);
    }

    /** @return a copy that negotiates GO_BACK_N (6.11) or not (selective repeat) */
    public TransportProfile withGoBackN(final boolean on) {
        return copy(name, ccName, ccAlgorithm, congestionWindowPackets, on, boundBaseRtt, pathsPerQp, loadBalancing,
            pfc, trimming, ecn, pmtu, endpointConfig);
    }

    /** @return a copy whose endpoints set BASE_RTT_MAX to the fabric's largest unloaded RTT [CC-028], or not */
    public TransportProfile withBaseRttBound(final boolean on) {
        return copy(name, ccName, ccAlgorithm, congestionWindowPackets, goBackN, on, pathsPerQp, loadBalancing, pfc,
            trimming, ecn, pmtu, endpointConfig);
    }

    /** @return a copy with another number of paths per QP (1 = single path) */
    public TransportProfile withPaths(final int paths) {
        return copy(name, ccName, ccAlgorithm, congestionWindowPackets, goBackN, boundBaseRtt, paths, loadBalancing,
            pfc, trimming, ecn, pmtu, endpointConfig);
    }

    /** @return a copy with another switch load balancing */
    public TransportProfile withLoadBalancing(final LoadBalancing lb) {
        return copy(name, ccName, ccAlgorithm, congestionWindowPackets, goBackN, boundBaseRtt, pathsPerQp, lb, pfc,
            trimming, ecn, pmtu, endpointConfig);
    }

    /** @return a copy with PFC on or off */
    public TransportProfile withPfc(final boolean on) {
        return copy(name, ccName, ccAlgorithm, congestionWindowPackets, goBackN, boundBaseRtt, pathsPerQp,
            loadBalancing, on, trimming, ecn, pmtu, endpointConfig);
    }

    /** @return a copy with switch trimming on or off */
    public TransportProfile withTrimming(final boolean on) {
        return copy(name, ccName, ccAlgorithm, congestionWindowPackets, goBackN, boundBaseRtt, pathsPerQp,
            loadBalancing, pfc, on, ecn, pmtu, endpointConfig);
    }

    /**
     * @return a copy with ECN on or off: switch marking, ECT marking by the NICs, and the ECN
     *     capability the QPs negotiate (without it no CNPs are sent and DCQCN falls back [CC-008])
     */
    public TransportProfile withEcn(final boolean on) {
        return copy(name, ccName, ccAlgorithm, congestionWindowPackets, goBackN, boundBaseRtt, pathsPerQp,
            loadBalancing, pfc, trimming, on, pmtu, endpointConfig);
    }

    /** @return a copy with another path MTU */
    public TransportProfile withPmtu(final int mtu) {
        return copy(name, ccName, ccAlgorithm, congestionWindowPackets, goBackN, boundBaseRtt, pathsPerQp,
            loadBalancing, pfc, trimming, ecn, mtu, endpointConfig);
    }

    /** Applies the profile's fabric choices to a fabric configuration. */
    public FabricConfig applyTo(final FabricConfig fabric) {
        fabric.loadBalancing(loadBalancing).pfc(pfc).trimming(trimming);
        fabric.ecn(ecn, fabric.ecnMinBytes(), fabric.ecnMaxBytes(), fabric.ecnMaxProbability());
        return fabric;
    }

    /**
     * The endpoint configuration both built-in profiles use: the engine's defaults except that
     * the responder acknowledges every packet (ACK_COALESCE_PACKETS = 1 instead of 16) and the
     * receive window is 256 packets. Coalescing delays the ACK of a packet by up to N − 1 of the
     * flow's packet gaps; ACK Delay hides that from the RTT sample, but a window-limited sender
     * still waits for it, and it is longest for the slowest flows: with windows of a dozen
     * packets (four flows sharing a 100 Gb/s port) N = 4 made the shares diverge (max/min rate
     * 1.03–1.16 over nine seeds with per-packet ACKs, up to 1.42 with 4; docs/simulation.md).
     * With 16 a lone flow also stalls at about 91% of line rate under the delay-based window
     * cap [CC-016]. 256 packets (1 MiB at 4 KiB, eight times the BDP of the default fabric)
     * rather than 1024 because per-QP state scales with it and an all-to-all of 128 hosts has
     * 32 512 QPs. For the same reason no INLINE data (the workloads never post it; each of the 64
     * send WQEs of a QP would otherwise carry a 256-byte copy buffer).
     *
     * @return a fresh configuration
     */
    public static EndpointConfig simEndpointConfig() {
        return new EndpointConfig().ackCoalescePackets(1).receiveWindowPackets(256).maxInlineData(0);
    }

    /** @return a copy whose hosts' endpoints use configurations from {@code config} */
    public TransportProfile withEndpointConfig(final Supplier<EndpointConfig> config) {
        return copy(name, ccName, ccAlgorithm, congestionWindowPackets, goBackN, boundBaseRtt, pathsPerQp,
            loadBalancing, pfc, trimming, ecn, pmtu, config);
    }

    /** @return a fresh endpoint configuration for one host of this profile */
    public EndpointConfig endpointConfig() {
        return endpointConfig.get();
    }

    public String name() {
        return name;
    }

    public String ccName() {
        return ccName;
    }

    /** @return the CC_ALGORITHM attribute of every QP */
    public CongestionControlAlgorithm ccAlgorithm() {
        return ccAlgorithm;
    }

    /** @return the CONGESTION_WINDOW attribute of every QP, 0 when not set */
    public int congestionWindowPackets() {
        return congestionWindowPackets;
    }

    /** @return whether the QPs negotiate GO_BACK_N */
    public boolean goBackN() {
        return goBackN;
    }

    /** @return whether the endpoints bound baseRTT by the fabric's largest unloaded RTT [CC-028] */
    public boolean boundBaseRtt() {
        return boundBaseRtt;
    }

    /**
     * @return the Capability Flags both ends of every QP negotiate (CAPABILITIES attribute, [CC-024]):
     *     ECN, GO_BACK_N and SENDER_COUNT as the profile says, and RECEIVER_CREDIT when the algorithm is
     *     RECEIVER_CREDIT (without it the QP would fall back to DEFAULT [CC-008]) or the profile
     *     asks for credit on its own ({@link #withReceiverCredit})
     */
    public int capabilities() {
        return (ecn ? ConnectHeader.CAP_ECN : 0) | (goBackN ? ConnectHeader.CAP_GO_BACK_N : 0)
            | (senderCount ? ConnectHeader.CAP_SENDER_COUNT : 0)
            | (receiverCredit || ccAlgorithm == CongestionControlAlgorithm.RECEIVER_CREDIT
                ? ConnectHeader.CAP_RECEIVER_CREDIT : 0);
    }

    public String recoveryName() {
        return goBackN ? "go-back-N" : "selective repeat";
    }

    public int pathsPerQp() {
        return pathsPerQp;
    }

    public LoadBalancing loadBalancing() {
        return loadBalancing;
    }

    public boolean pfc() {
        return pfc;
    }

    public boolean trimming() {
        return trimming;
    }

    public boolean ecn() {
        return ecn;
    }

    public int pmtu() {
        return pmtu;
    }

    @Override
    public String toString() {
        return name + " (cc=" + ccName + ", recovery=" + recoveryName() + ", paths/QP=" + pathsPerQp + ", switch="
            + loadBalancing + ", PFC=" + (pfc ? "on" : "off") + ", trimming=" + (trimming ? "on" : "off") + ", ECN="
            + (ecn ? "on" : "off") + ", PMTU=" + pmtu + ")";
    }
}
