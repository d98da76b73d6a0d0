package org.metaroce.sim;

import java.util.function.Consumer;
import java.util.function.Supplier;

import org.metaroce.core.congestion.CongestionControl;
import org.metaroce.core.congestion.DelayBasedCongestionControl;
import org.metaroce.core.congestion.FixedWindowCongestionControl;
import org.metaroce.core.engine.EndpointConfig;
import org.metaroce.core.engine.QueuePair;
import org.metaroce.sim.net.FabricConfig;
import org.metaroce.sim.net.LoadBalancing;

/**
 * Everything that distinguishes one transport set-up from another in a head-to-head run: the
 * congestion-control algorithm each QP gets, how many paths (entropy values) a QP sprays over,
 * what the switches do (ECMP or spraying, PFC, trimming, ECN), and a hook that configures each
 * queue pair (where loss-recovery mode and similar per-QP choices are applied). Immutable; the
 * {@code with*} methods return modified copies.
 */
public final class TransportProfile {
    /** Creates the congestion control of one queue pair. */
    @FunctionalInterface
    public interface CongestionControlFactory {
        /**
         * @param pmtu the QP's path MTU
         * @param linkRateBps the sending host's line rate
         * @param ecn whether CE marks reach this endpoint (the fabric marks and the NIC reads them)
         * @return a fresh instance for one QP
         */
        CongestionControl create(int pmtu, long linkRateBps, boolean ecn);
    }

    /** Window of the RoCEv2 stand-in's fixed-window CC, in packets (about 1.3 BDP at 100 Gb/s, 4 KiB, 12 µs). */
    public static final int ROCEV2_FIXED_WINDOW = 48;

    private final String name;
    private final String ccName;
    private final CongestionControlFactory cc;
    private final String recoveryName;
    private final Consumer<QueuePair> qpSetup;
    private final int pathsPerQp;
    private final LoadBalancing loadBalancing;
    private final boolean pfc;
    private final boolean trimming;
    private final boolean ecn;
    private final int pmtu;
    private final Supplier<EndpointConfig> endpointConfig;

    private TransportProfile(final String name, final String ccName, final CongestionControlFactory cc,
                             final String recoveryName, final Consumer<QueuePair> qpSetup, final int pathsPerQp,
                             final LoadBalancing loadBalancing, final boolean pfc, final boolean trimming,
                             final boolean ecn, final int pmtu, final Supplier<EndpointConfig> endpointConfig) {
        if (pathsPerQp < 1 || pathsPerQp > 256) {
            throw new IllegalArgumentException("pathsPerQp must be in 1..256, got " + pathsPerQp);
        }
        this.name = name;
        this.ccName = ccName;
        this.cc = cc;
        this.recoveryName = recoveryName;
        this.qpSetup = qpSetup;
        this.pathsPerQp = pathsPerQp;
        this.loadBalancing = loadBalancing;
        this.pfc = pfc;
        this.trimming = trimming;
        this.ecn = ecn;
        this.pmtu = pmtu;
        this.endpointConfig = endpointConfig;
    }

    /**
     * MetaRoCE as the specification intends it: no PFC, each QP sprays over 16 entropy values
     * through ordinary ECMP switches, selective repeat, and the default delay-primary congestion
     * control of 8.5 reading ECN marks.
     *
     * @return the profile
     */
    public static TransportProfile metaroce() {
        return new TransportProfile("metaroce", "delay-based (8.5)",
            (pmtu, rate, ecn) -> new DelayBasedCongestionControl(pmtu, rate, ecn),
            "selective repeat", qp -> { }, 16, LoadBalancing.ECMP, false, false, true, 4096, TransportProfile::simEndpointConfig);
    }

    /**
     * The RoCEv2 baseline as far as the engine supports it today: PFC, one path per QP hashed by
     * ECMP. Its congestion control and loss recovery are stand-ins, clearly labelled: the engine's
     * fixed window ({@value #ROCEV2_FIXED_WINDOW} packets) instead of DCQCN, and the engine's
     * selective repeat instead of go-back-N, until those land in core; then this profile's
     * factory and QP hook are where they are wired in.
     *
     * @return the profile
     */
    public static TransportProfile rocev2() {
        return new TransportProfile("rocev2", "fixed window " + ROCEV2_FIXED_WINDOW + " (stand-in for DCQCN)",
            (pmtu, rate, ecn) -> new FixedWindowCongestionControl(ROCEV2_FIXED_WINDOW),
            "selective repeat (stand-in for go-back-N)", qp -> { }, 1, LoadBalancing.ECMP, true, false, true, 4096, TransportProfile::simEndpointConfig);
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
        return new TransportProfile(newName, ccName, cc, recoveryName, qpSetup, pathsPerQp, loadBalancing, pfc, trimming,
            ecn, pmtu, endpointConfig);
    }

    /** @return a copy with another congestion control */
    public TransportProfile withCongestionControl(final String label, final CongestionControlFactory factory) {
        return new TransportProfile(name, label, factory, recoveryName, qpSetup, pathsPerQp, loadBalancing, pfc,
            trimming, ecn, pmtu, endpointConfig);
    }

    /** @return a copy with another per-QP set-up hook (loss-recovery mode and the like) */
    public TransportProfile withQpSetup(final String recoveryLabel, final Consumer<QueuePair> setup) {
        return new TransportProfile(name, ccName, cc, recoveryLabel, setup, pathsPerQp, loadBalancing, pfc,
            trimming, ecn, pmtu, endpointConfig);
    }

    /** @return a copy with another number of paths per QP (1 = single path) */
    public TransportProfile withPaths(final int paths) {
        return new TransportProfile(name, ccName, cc, recoveryName, qpSetup, paths, loadBalancing, pfc, trimming, ecn,
            pmtu, endpointConfig);
    }

    /** @return a copy with another switch load balancing */
    public TransportProfile withLoadBalancing(final LoadBalancing lb) {
        return new TransportProfile(name, ccName, cc, recoveryName, qpSetup, pathsPerQp, lb, pfc, trimming, ecn, pmtu, endpointConfig);
    }

    /** @return a copy with PFC on or off */
    public TransportProfile withPfc(final boolean on) {
        return new TransportProfile(name, ccName, cc, recoveryName, qpSetup, pathsPerQp, loadBalancing, on, trimming,
            ecn, pmtu, endpointConfig);
    }

    /** @return a copy with switch trimming on or off */
    public TransportProfile withTrimming(final boolean on) {
        return new TransportProfile(name, ccName, cc, recoveryName, qpSetup, pathsPerQp, loadBalancing, pfc, on, ecn,
            pmtu, endpointConfig);
    }

    /** @return a copy with ECN marking (switch) and ECT marking (NIC) on or off */
    public TransportProfile withEcn(final boolean on) {
        return new TransportProfile(name, ccName, cc, recoveryName, qpSetup, pathsPerQp, loadBalancing, pfc, trimming,
            on, pmtu, endpointConfig);
    }

    /** @return a copy with another path MTU */
    public TransportProfile withPmtu(final int mtu) {
        return new TransportProfile(name, ccName, cc, recoveryName, qpSetup, pathsPerQp, loadBalancing, pfc, trimming,
            ecn, mtu, endpointConfig);
    }

    /** Applies the profile's fabric choices to a fabric configuration. */
    public FabricConfig applyTo(final FabricConfig fabric) {
        fabric.loadBalancing(loadBalancing).pfc(pfc).trimming(trimming);
        fabric.ecn(ecn, fabric.ecnMinBytes(), fabric.ecnMaxBytes(), fabric.ecnMaxProbability());
        return fabric;
    }

    /**
     * The endpoint configuration both built-in profiles use: the engine's defaults except that
     * the responder acknowledges at least every 4 packets instead of 16. With 16, the delay-based
     * algorithm's window cap of 1.5 × BDP [CC-016] (BDP from the unloaded RTT) is smaller than
     * what is in flight while a coalesced ACK is held back, and a lone flow stalls at about 91% of
     * line rate on a 100 Gb/s leaf-spine (docs/simulation.md). The receive window is 256
     * packets (1 MiB at 4 KiB, eight times the BDP of the default fabric) rather than 1024:
     * per-QP state scales with it, and an all-to-all of 128 hosts has 32 512 QPs.
     *
     * @return a fresh configuration
     */
    public static EndpointConfig simEndpointConfig() {
        return new EndpointConfig().ackCoalescePackets(4).receiveWindowPackets(256);
    }

    /** @return a copy whose hosts' endpoints use configurations from {@code config} */
    public TransportProfile withEndpointConfig(final Supplier<EndpointConfig> config) {
        return new TransportProfile(name, ccName, cc, recoveryName, qpSetup, pathsPerQp, loadBalancing, pfc, trimming,
            ecn, pmtu, config);
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

    public CongestionControlFactory congestionControl() {
        return cc;
    }

    public String recoveryName() {
        return recoveryName;
    }

    public Consumer<QueuePair> qpSetup() {
        return qpSetup;
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
        return name + " (cc=" + ccName + ", recovery=" + recoveryName + ", paths/QP=" + pathsPerQp + ", switch="
            + loadBalancing + ", PFC=" + (pfc ? "on" : "off") + ", trimming=" + (trimming ? "on" : "off") + ", ECN="
            + (ecn ? "on" : "off") + ", PMTU=" + pmtu + ")";
    }
}
