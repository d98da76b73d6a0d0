// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.sim.scenario;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.metaroce.core.engine.EndpointCounter;
import org.metaroce.core.engine.EndpointCounters;
import org.metaroce.sim.Simulator;
import org.metaroce.sim.net.Host;
import org.metaroce.sim.net.Link;
import org.metaroce.sim.net.Network;
import org.metaroce.sim.net.Port;
import org.metaroce.sim.net.Switch;
import org.metaroce.sim.net.TopologyBuilder;
import org.metaroce.sim.measure.QueueSampler;
import org.metaroce.sim.workload.AllToAll;
import org.metaroce.sim.workload.FanOut;
import org.metaroce.sim.workload.Flow;
import org.metaroce.sim.workload.FlowSizeDistribution;
import org.metaroce.sim.workload.Incast;
import org.metaroce.sim.workload.Permutation;
import org.metaroce.sim.workload.PoissonBackground;
import org.metaroce.sim.workload.RingAllReduce;
import org.metaroce.sim.workload.Traffic;
import org.metaroce.sim.workload.Workload;

/** Builds the fabric a {@link ScenarioConfig} describes, runs its workload, and collects the metrics. */
public final class ScenarioRunner {
    private ScenarioRunner() {
    }

    /**
     * @param config what to run
     * @return what it measured
     */
    public static RunResult run(final ScenarioConfig config) {
        final Simulator sim = new Simulator(config.seed);
        final Network net = build(sim, config);
        final Traffic traffic = new Traffic(net, config.profile);
        final Workload workload = workload(sim, net, config);
        if (config.scenario == Scenario.LOSS) {
            net.randomLoss(lossyLink(net), config.lossRate);
        }
        final Port watched = watchedPort(net, config);
        final QueueSampler sampler = new QueueSampler(sim, net.switchPorts(), net.switches(), watched,
            config.sampleIntervalNs);
        sampler.start();
        workload.start(traffic);
        while (!workload.isDone() && sim.nowNs() < config.timeLimitNs && traffic.failedFlows() == 0) {
            if (sim.run(config.timeLimitNs) && !workload.isDone() && sim.pendingEvents() == 0) {
                break;
            }
        }
        sampler.stop();
        final List<String> incomplete = new ArrayList<>();
        for (final Flow f : traffic.flows()) {
            if (!f.isDone() && incomplete.size() < 20) {
                incomplete.add("flow " + f.id() + " host" + f.src() + "->host" + f.dst() + " (" + f.bytes() + " B): "
                    + traffic.connectionState(f.src(), f.dst()));
            }
        }
        return new RunResult(config, workload.name(), net.description(), workload.isDone(), sim.nowNs(), sim.eventsRun(),
            traffic.flows(), sampler, workload.completionNs(), counters(net, traffic), incomplete);
    }

    static Network build(final Simulator sim, final ScenarioConfig c) {
        final TopologyBuilder b = new TopologyBuilder(sim, c.fabric(), c.profile.endpointConfig())
            .hostRate(c.hostRateBps).fabricRate(c.fabricRateBps)
            .hostPropagation(c.hostPropagationNs).fabricPropagation(c.fabricPropagationNs);
        return switch (c.topology) {
            case SINGLE_SWITCH -> b.singleSwitch(c.hosts);
            case LEAF_SPINE -> b.leafSpine(c.hosts, Math.min(c.hostsPerLeaf, c.hosts), c.effectiveOversubscription());
            case FAT_TREE -> {
                final int k = TopologyBuilder.fatTreeArityFor(c.hosts);
                yield b.fatTree(c.hosts, k, k / 2);
            }
        };
    }

    private static Workload workload(final Simulator sim, final Network net, final ScenarioConfig c) {
        final int n = net.hosts().size();
        return switch (c.scenario) {
            case INCAST -> {
                final int[] senders = new int[n - 1];
                for (int i = 1; i < n; i++) {
                    senders[i - 1] = i;
                }
                yield new Incast(0, senders, c.effectiveBytes());
            }
            case PERMUTATION -> new Permutation(n, c.effectiveBytes(), sim.newRandom());
            case LOSS -> {
                final int[] receivers = new int[n - 1];
                for (int i = 1; i < n; i++) {
                    receivers[i - 1] = i;
                }
                yield new FanOut(0, receivers, c.effectiveBytes());
            }
            case ALLTOALL -> new AllToAll(n, c.effectiveBytes());
            case ALLREDUCE -> new RingAllReduce(c.topology == ScenarioConfig.Topology.LEAF_SPINE
                ? RingAllReduce.acrossLeaves(n, Math.min(c.hostsPerLeaf, n), n) : identity(n), c.effectiveBytes());
            case WEBSEARCH -> new PoissonBackground(n, c.load, c.durationNs, c.hostRateBps,
                FlowSizeDistribution.webSearch(), sim.newRandom());
        };
    }

    private static int[] identity(final int n) {
        final int[] r = new int[n];
        for (int i = 0; i < n; i++) {
            r[i] = i;
        }
        return r;
    }

    /**
     * Host 0's link to its switch: in the LOSS scenario host 0 sends every flow, so every data
     * packet and every ACK of the workload crosses it, under either profile. (A leaf–spine link
     * carried a few of a single-path baseline's flows and a sixteenth of a sprayed QP's packets,
     * and lost only a handful of packets in a run.)
     */
    static Link lossyLink(final Network net) {
        final Host sender = net.hosts().get(0);
        for (final Link l : net.links()) {
            if (l.a().owner() == sender || l.b().owner() == sender) {
                return l;
            }
        }
        throw new IllegalStateException("host 0 has no link");
    }

    /** Incast: the receiver's downlink; otherwise none. */
    private static Port watchedPort(final Network net, final ScenarioConfig c) {
        if (c.scenario == Scenario.INCAST) {
            return net.hosts().get(0).nic().peer();
        }
        return null;
    }

    private static Map<String, Long> counters(final Network net, final Traffic traffic) {
        final Map<String, Long> m = new LinkedHashMap<>();
        long tail = 0;
        long trims = 0;
        long marks = 0;
        long random = 0;
        long down = 0;
        long pauses = 0;
        long pausedNs = 0;
        long maxQueue = 0;
        final long now = net.simulator().nowNs();
        for (final Port p : net.allPorts()) {
            tail += p.tailDrops();
            trims += p.trims();
            marks += p.ecnMarks();
            random += p.randomLosses();
            down += p.linkDownLosses();
            pauses += p.pausesSent();
            pausedNs += p.pausedNs(now);
            maxQueue = Math.max(maxQueue, p.maxQueuedBytes());
        }
        long noRoute = 0;
        long maxBuffer = 0;
        for (final Switch s : net.switches()) {
            noRoute += s.noRouteDrops();
            maxBuffer = Math.max(maxBuffer, s.maxUsedBytes());
        }
        m.put("flows", (long) traffic.flows().size());
        m.put("flows_failed", (long) traffic.failedFlows());
        m.put("queue_pairs", 2L * traffic.connectionCount());
        m.put("tail_drops", tail);
        m.put("trims", trims);
        m.put("ecn_marks", marks);
        m.put("random_losses", random);
        m.put("link_down_losses", down);
        m.put("no_route_drops", noRoute);
        m.put("pfc_pauses", pauses);
        m.put("pfc_paused_ns_total", pausedNs);
        m.put("max_port_queue_bytes", maxQueue);
        m.put("max_switch_buffer_bytes", maxBuffer);
        final EndpointCounter[] wanted = {EndpointCounter.REQUEST_PACKETS_OUT, EndpointCounter.ACKS_OUT,
            EndpointCounter.NACKS_OUT, EndpointCounter.RETRANSMITS_LOSS_DETECTED, EndpointCounter.RETRANSMITS_TIMEOUT,
            EndpointCounter.RETRANSMITS_TAIL_PROBE, EndpointCounter.RETRANSMITS_TRIMMED,
            EndpointCounter.RETRANSMITS_PSN_WINDOW, EndpointCounter.SPURIOUS_RETRANSMITS, EndpointCounter.TIMEOUTS,
            EndpointCounter.DUPLICATE_REQUESTS, EndpointCounter.MALFORMED, EndpointCounter.QP_ERRORS};
        long retransmits = 0;
        final long[] sums = new long[wanted.length];
        for (final Host h : net.hosts()) {
            final EndpointCounters ec = h.endpoint().counters();
            retransmits += ec.retransmits();
            for (int i = 0; i < wanted.length; i++) {
                sums[i] += ec.get(wanted[i]);
            }
        }
        for (int i = 0; i < wanted.length; i++) {
            m.put(wanted[i].name().toLowerCase(java.util.Locale.ROOT), sums[i]);
        }
        // The fabric knows what the requester can only infer: a retransmission was unnecessary
        // exactly when the responder already held that PSN (a duplicate request). The requester's
        // own SPURIOUS_RETRANSMITS relies on duplicate flags that ACK coalescing can merge away.
        final long duplicates = m.get("duplicate_requests");
        m.put("retransmits", retransmits);
        m.put("retransmits_unneeded", Math.min(retransmits, duplicates));
        m.put("retransmits_needed", Math.max(0, retransmits - duplicates));
        m.put("packets_created", net.pool().created());
        return m;
    }
}
