// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.sim.net;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

import org.metaroce.core.engine.EndpointConfig;
import org.metaroce.sim.Simulator;

/**
 * Builds the fabrics the issue asks for: a single switch (for sanity checks), a two-tier
 * leaf-spine, and a three-tier k-ary fat-tree, each with configurable host count, link rates,
 * propagation delays and oversubscription.
 */
public final class TopologyBuilder {
    /** 100 Gb/s. */
    public static final long GBPS_100 = 100_000_000_000L;

    private final Simulator simulator;
    private final FabricConfig fabric;
    private final EndpointConfig endpointConfig;
    private long hostRateBps = GBPS_100;
    private long fabricRateBps = GBPS_100;
    private long hostPropagationNs = 500;
    private long fabricPropagationNs = 1_000;

    /**
     * @param simulator the event kernel
     * @param fabric switch and NIC behaviour
     * @param endpointConfig protocol parameters of every host's endpoint
     */
    public TopologyBuilder(final Simulator simulator, final FabricConfig fabric, final EndpointConfig endpointConfig) {
        this.simulator = simulator;
        this.fabric = fabric;
        this.endpointConfig = endpointConfig;
    }

    /** @param bps rate of host-to-leaf links @return this */
    public TopologyBuilder hostRate(final long bps) {
        this.hostRateBps = bps;
        return this;
    }

    /** @param bps rate of switch-to-switch links @return this */
    public TopologyBuilder fabricRate(final long bps) {
        this.fabricRateBps = bps;
        return this;
    }

    /** @param ns one-way propagation of host links @return this */
    public TopologyBuilder hostPropagation(final long ns) {
        this.hostPropagationNs = ns;
        return this;
    }

    /** @param ns one-way propagation of switch-to-switch links @return this */
    public TopologyBuilder fabricPropagation(final long ns) {
        this.fabricPropagationNs = ns;
        return this;
    }

    /** @return rate of host links */
    public long hostRateBps() {
        return hostRateBps;
    }

    /**
     * Hosts on one switch.
     *
     * @param hosts number of hosts, at least 2
     * @return the network
     */
    public Network singleSwitch(final int hosts) {
        require(hosts >= 2, "a single-switch fabric needs at least 2 hosts, got " + hosts);
        final Network n = new Network(simulator, fabric);
        final Switch s = n.addSwitch("tor0");
        for (int i = 0; i < hosts; i++) {
            n.connect(n.addHost(endpointConfig), s, hostRateBps, hostPropagationNs);
        }
        n.description(String.format(Locale.ROOT, "single switch, %d hosts at %s", hosts, gbps(hostRateBps)));
        n.finish();
        return n;
    }

    /**
     * A leaf-spine fabric. The number of spines follows from the oversubscription ratio: uplink
     * capacity of a leaf = its host capacity / oversubscription.
     *
     * @param hosts number of hosts, filled leaf by leaf
     * @param hostsPerLeaf hosts on each leaf
     * @param oversubscription downlink to uplink capacity ratio of a leaf, at least 1
     * @return the network
     */
    public Network leafSpine(final int hosts, final int hostsPerLeaf, final double oversubscription) {
        require(hosts >= 2 && hostsPerLeaf >= 1, "leaf-spine needs >= 2 hosts and >= 1 host per leaf");
        require(oversubscription >= 1, "oversubscription must be >= 1, got " + oversubscription);
        final double uplinkCapacity = hostsPerLeaf * (double) hostRateBps / oversubscription;
        final int spines = Math.max(1, (int) Math.round(uplinkCapacity / fabricRateBps));
        return leafSpineWithSpines(hosts, hostsPerLeaf, spines);
    }

    /**
     * A leaf-spine fabric with an explicit number of spines (one link from every leaf to every spine).
     *
     * @param hosts number of hosts
     * @param hostsPerLeaf hosts on each leaf
     * @param spines number of spine switches
     * @return the network
     */
    public Network leafSpineWithSpines(final int hosts, final int hostsPerLeaf, final int spines) {
        require(spines >= 1, "spines must be >= 1");
        final int leaves = (hosts + hostsPerLeaf - 1) / hostsPerLeaf;
        final Network n = new Network(simulator, fabric);
        final List<Switch> leafList = new ArrayList<>();
        for (int l = 0; l < leaves; l++) {
            leafList.add(n.addSwitch("leaf" + l));
        }
        final List<Switch> spineList = new ArrayList<>();
        for (int s = 0; s < spines; s++) {
            spineList.add(n.addSwitch("spine" + s));
        }
        for (int i = 0; i < hosts; i++) {
            n.connect(n.addHost(endpointConfig), leafList.get(i / hostsPerLeaf), hostRateBps, hostPropagationNs);
        }
        for (final Switch leaf : leafList) {
            for (final Switch spine : spineList) {
                n.connect(leaf, spine, fabricRateBps, fabricPropagationNs);
            }
        }
        final double ratio = hostsPerLeaf * (double) hostRateBps / (spines * (double) fabricRateBps);
        n.description(String.format(Locale.ROOT,
            "leaf-spine, %d hosts, %d leaves x %d hosts, %d spines, hosts at %s, fabric at %s, oversubscription %.2f:1",
            hosts, leaves, hostsPerLeaf, spines, gbps(hostRateBps), gbps(fabricRateBps), ratio));
        n.finish();
        return n;
    }

    /**
     * A three-tier k-ary fat-tree (k pods of k/2 edge and k/2 aggregation switches, (k/2)^2 cores),
     * with {@code hostsPerEdge} hosts per edge switch (k/2 is non-blocking; more oversubscribes).
     * Hosts fill edge switches in order; switches without hosts are still built.
     *
     * @param hosts number of hosts, at most k * k/2 * hostsPerEdge
     * @param k even arity, at least 2
     * @param hostsPerEdge hosts per edge switch
     * @return the network
     */
    public Network fatTree(final int hosts, final int k, final int hostsPerEdge) {
        require(k >= 2 && k % 2 == 0, "fat-tree arity k must be even and >= 2, got " + k);
        final int half = k / 2;
        require(hosts >= 2 && hosts <= k * half * hostsPerEdge,
            "a k=" + k + " fat-tree with " + hostsPerEdge + " hosts per edge holds 2.." + (k * half * hostsPerEdge)
                + " hosts, got " + hosts);
        final Network n = new Network(simulator, fabric);
        final Switch[][] edge = new Switch[k][half];
        final Switch[][] agg = new Switch[k][half];
        final Switch[] core = new Switch[half * half];
        for (int p = 0; p < k; p++) {
            for (int i = 0; i < half; i++) {
                edge[p][i] = n.addSwitch("edge" + p + "_" + i);
            }
            for (int i = 0; i < half; i++) {
                agg[p][i] = n.addSwitch("agg" + p + "_" + i);
            }
        }
        for (int c = 0; c < core.length; c++) {
            core[c] = n.addSwitch("core" + c);
        }
        for (int h = 0; h < hosts; h++) {
            final int e = h / hostsPerEdge;
            n.connect(n.addHost(endpointConfig), edge[e / half][e % half], hostRateBps, hostPropagationNs);
        }
        for (int p = 0; p < k; p++) {
            for (int i = 0; i < half; i++) {
                for (int j = 0; j < half; j++) {
                    n.connect(edge[p][i], agg[p][j], fabricRateBps, fabricPropagationNs);
                }
            }
            for (int j = 0; j < half; j++) {
                for (int c = 0; c < half; c++) {
                    n.connect(agg[p][j], core[j * half + c], fabricRateBps, fabricPropagationNs);
                }
            }
        }
        n.description(String.format(Locale.ROOT,
            "3-tier fat-tree k=%d, %d hosts, %d per edge, hosts at %s, fabric at %s, edge oversubscription %.2f:1",
            k, hosts, hostsPerEdge, gbps(hostRateBps), gbps(fabricRateBps),
            hostsPerEdge * (double) hostRateBps / (half * (double) fabricRateBps)));
        n.finish();
        return n;
    }

    /**
     * @param hosts hosts wanted
     * @return the smallest even k whose non-blocking fat-tree holds them
     */
    public static int fatTreeArityFor(final int hosts) {
        int k = 2;
        while (k * k * k / 4 < hosts) {
            k += 2;
        }
        return k;
    }

    static String gbps(final long bps) {
        return String.format(Locale.ROOT, "%d Gb/s", bps / 1_000_000_000L);
    }

    private static void require(final boolean ok, final String message) {
        if (!ok) {
            throw new IllegalArgumentException(message);
        }
    }
}
