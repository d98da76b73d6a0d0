// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.sim.scenario;

import org.metaroce.sim.transport.TransportProfile;
import org.metaroce.sim.net.FabricConfig;
import org.metaroce.sim.net.TopologyBuilder;

/**
 * Parameters of one scenario run. Defaults are the documented head-to-head set-up: a leaf-spine
 * of 100 Gb/s links with 8 hosts per leaf, 500 ns host links and 1 µs fabric links.
 */
public final class ScenarioConfig {
    /** Topology families. */
    public enum Topology { LEAF_SPINE, FAT_TREE, SINGLE_SWITCH }

    public Scenario scenario = Scenario.INCAST;
    public TransportProfile profile = TransportProfile.metaroce();
    public Topology topology = Topology.LEAF_SPINE;
    public int hosts = 32;
    public int hostsPerLeaf = 8;
    /** Leaf oversubscription; -1 means the scenario's default (2 for ALLREDUCE, 1 otherwise). */
    public double oversubscription = -1;
    public long seed = 1;
    public long hostRateBps = TopologyBuilder.GBPS_100;
    public long fabricRateBps = TopologyBuilder.GBPS_100;
    public long hostPropagationNs = 500;
    public long fabricPropagationNs = 1_000;
    /** Flow size (per sender, per pair, or the all-reduce buffer); -1 means the scenario's default. */
    public long bytes = -1;
    public double load = 0.5;
    /** Arrival window of background traffic. */
    public long durationNs = 1_000_000;
    /** Hard stop of virtual time. */
    public long timeLimitNs = 100_000_000;
    public long sampleIntervalNs = 1_000;
    public double lossRate = 0.01;
    public long bufferBytesPerPort = 512 * 1024;

    /** @return the fabric configuration this run uses (profile applied) */
    public FabricConfig fabric() {
        return profile.applyTo(new FabricConfig().bufferBytesPerPort(bufferBytesPerPort));
    }

    /** @return the oversubscription in effect */
    public double effectiveOversubscription() {
        if (oversubscription > 0) {
            return oversubscription;
        }
        return scenario == Scenario.ALLREDUCE ? 2 : 1;
    }

    /** @return the flow size in effect */
    public long effectiveBytes() {
        if (bytes > 0) {
            return bytes;
        }
        return switch (scenario) {
            case INCAST -> 256 * 1024;
            case PERMUTATION, LOSS -> 1 << 20;
            case ALLTOALL -> 64 * 1024;
            case ALLREDUCE -> 8L << 20;
            case WEBSEARCH -> 0;
        };
    }

    /** @return a copy */
    public ScenarioConfig copy() {
        final ScenarioConfig c = new ScenarioConfig();
        c.scenario = scenario;
        c.profile = profile;
        c.topology = topology;
        c.hosts = hosts;
        c.hostsPerLeaf = hostsPerLeaf;
        c.oversubscription = oversubscription;
        c.seed = seed;
        c.hostRateBps = hostRateBps;
        c.fabricRateBps = fabricRateBps;
        c.hostPropagationNs = hostPropagationNs;
        c.fabricPropagationNs = fabricPropagationNs;
        c.bytes = bytes;
        c.load = load;
        c.durationNs = durationNs;
        c.timeLimitNs = timeLimitNs;
        c.sampleIntervalNs = sampleIntervalNs;
        c.lossRate = lossRate;
        c.bufferBytesPerPort = bufferBytesPerPort;
        return c;
    }
}
