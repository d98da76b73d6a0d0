// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.sim.scenario;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.metaroce.sim.measure.Percentiles;
import org.metaroce.sim.measure.QueueSampler;
import org.metaroce.sim.workload.Flow;

/** What one run measured. Everything here is derived from virtual time, so it is seed-deterministic. */
public final class RunResult {
    public final ScenarioConfig config;
    public final String workload;
    public final String topology;
    public final boolean completed;
    public final long endNs;
    public final long events;
    public final List<Flow> flows;
    public final QueueSampler queues;
    /** Collective / workload completion time, -1 when not completed. */
    public final long completionNs;
    /** Fabric and endpoint counters, in a fixed order. */
    public final Map<String, Long> counters;
    /** For each flow that did not complete, its sending QP's state at the end of the run. */
    public final List<String> incomplete;

    RunResult(final ScenarioConfig config, final String workload, final String topology, final boolean completed,
              final long endNs, final long events, final List<Flow> flows, final QueueSampler queues,
              final long completionNs, final Map<String, Long> counters, final List<String> incomplete) {
        this.config = config;
        this.workload = workload;
        this.topology = topology;
        this.completed = completed;
        this.endNs = endNs;
        this.events = events;
        this.flows = flows;
        this.queues = queues;
        this.completionNs = completionNs;
        this.counters = new LinkedHashMap<>(counters);
        this.incomplete = List.copyOf(incomplete);
    }

    /** @return slowdowns of completed flows */
    public Percentiles slowdowns() {
        return new Percentiles(flows.stream().filter(Flow::isDone).mapToDouble(Flow::slowdown).toArray());
    }

    /**
     * @param minBytes smallest flow size included
     * @param maxBytes flows must be smaller than this
     * @return slowdowns of completed flows in the size range
     */
    public Percentiles slowdowns(final long minBytes, final long maxBytes) {
        return new Percentiles(flows.stream().filter(f -> f.isDone() && f.bytes() >= minBytes && f.bytes() < maxBytes)
            .mapToDouble(Flow::slowdown).toArray());
    }

    /** @return FCTs of completed flows, in µs */
    public Percentiles fctsUs() {
        return new Percentiles(flows.stream().filter(Flow::isDone).mapToDouble(f -> f.fctNs() / 1000.0).toArray());
    }

    /** @return completed flows */
    public long completedFlows() {
        return flows.stream().filter(Flow::isDone).count();
    }

    /**
     * @return bytes delivered by completed flows over the span from the first start to the last
     *     completion, in Gb/s (aggregate goodput)
     */
    public double goodputGbps() {
        long bytes = 0;
        long first = Long.MAX_VALUE;
        long last = Long.MIN_VALUE;
        for (final Flow f : flows) {
            if (f.isDone()) {
                bytes += f.bytes();
                first = Math.min(first, f.startNs());
                last = Math.max(last, f.endNs());
            }
        }
        return last > first ? bytes * 8.0 / (last - first) : 0;
    }

    /** @return a counter's value, 0 when absent */
    public long counter(final String name) {
        return counters.getOrDefault(name, 0L);
    }
}
