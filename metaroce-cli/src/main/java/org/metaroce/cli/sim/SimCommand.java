// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.cli.sim;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;

import org.metaroce.core.congestion.CongestionControlAlgorithm;
import org.metaroce.sim.transport.TransportProfile;
import org.metaroce.sim.net.LoadBalancing;
import org.metaroce.sim.report.ReportWriter;
import org.metaroce.sim.scenario.RunResult;
import org.metaroce.sim.scenario.Scenario;
import org.metaroce.sim.scenario.ScenarioConfig;
import org.metaroce.sim.scenario.ScenarioRunner;

import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code metaroce sim <scenario>}: runs a fabric simulation with the real protocol engine and
 * writes CSV, SVG and a markdown summary. Exit codes: 0 the workload completed, 1 it did not
 * (time limit or failed flows), 2 bad arguments.
 */
@Command(name = "sim", mixinStandardHelpOptions = true,
    description = {"Simulate a leaf-spine or fat-tree fabric running the real MetaRoCE engine on every host.", "",
        "Scenarios: incast, permutation, alltoall, allreduce, websearch, loss.",
        "--transport both runs rocev2 then metaroce on the same seed and topology and writes a comparison."},
    footer = {"", "Example: metaroce sim incast --hosts 33 --transport both --out sim-out",
        "See docs/simulation.md for the model and the results."})
public final class SimCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Parameters(index = "0", paramLabel = "SCENARIO", description = "incast, permutation, alltoall, allreduce, websearch or loss")
    String scenario;

    @Option(names = "--transport", defaultValue = "metaroce", description = "metaroce, rocev2 or both (default ${DEFAULT-VALUE})")
    String transport;

    @Option(names = "--hosts", defaultValue = "32", description = "number of hosts (default ${DEFAULT-VALUE})")
    int hosts;

    @Option(names = "--hosts-per-leaf", defaultValue = "8", description = "hosts per leaf switch (default ${DEFAULT-VALUE})")
    int hostsPerLeaf;

    @Option(names = "--topology", defaultValue = "leafspine", description = "leafspine, fattree or switch (default ${DEFAULT-VALUE})")
    String topology;

    @Option(names = "--oversubscription", defaultValue = "-1",
        description = "leaf downlink:uplink capacity ratio (default 2 for allreduce, else 1)")
    double oversubscription;

    @Option(names = "--seed", defaultValue = "1", description = "seed of every random choice (default ${DEFAULT-VALUE})")
    long seed;

    @Option(names = "--out", defaultValue = "sim-out", description = "output directory (default ${DEFAULT-VALUE})")
    Path out;

    @Option(names = "--bytes", defaultValue = "-1", description = "flow size: per sender, per pair, or all-reduce buffer")
    long bytes;

    @Option(names = "--load", defaultValue = "0.5", description = "websearch target load (default ${DEFAULT-VALUE})")
    double load;

    @Option(names = "--duration-us", defaultValue = "1000", description = "websearch arrival window (default ${DEFAULT-VALUE} µs)")
    long durationUs;

    @Option(names = "--time-limit-us", defaultValue = "100000", description = "virtual-time limit (default ${DEFAULT-VALUE} µs)")
    long timeLimitUs;

    @Option(names = "--rate-gbps", defaultValue = "100", description = "host and fabric link rate in Gb/s: any that divides 8000 exactly, so that a byte's "
        + "serialization is a whole number of picoseconds (10, 25, 40, 50, 100, 200, 400, ...; default ${DEFAULT-VALUE})")
    long rateGbps;

    @Option(names = "--loss", defaultValue = "0.01", description = "loss scenario: loss probability of the lossy link (default ${DEFAULT-VALUE})")
    double loss;

    @Option(names = "--buffer-kb", defaultValue = "512", description = "switch buffer per port in KB (default ${DEFAULT-VALUE})")
    long bufferKb;

    @Option(names = "--trim", description = "switches trim instead of dropping (metaroce profile)")
    boolean trim;

    @Option(names = "--switch-spray", description = "switches spray packets instead of ECMP hashing (metaroce profile)")
    boolean switchSpray;

    @Option(names = "--cc", description = "metaroce profile's congestion control: delay (8.5, the default), credit "
        + "(RECEIVER_CREDIT, 8.6, negotiated), delay+credit (8.5 under the receiver's credit share) or fixed:N "
        + "(fixed window of N packets)")
    String cc;

    @Override
    public Integer call() throws IOException {
        final PrintWriter outw = spec.commandLine().getOut();
        final ScenarioConfig base = new ScenarioConfig();
        try {
            base.scenario = Scenario.parse(scenario);
            base.topology = switch (topology) {
                case "leafspine" -> ScenarioConfig.Topology.LEAF_SPINE;
                case "fattree" -> ScenarioConfig.Topology.FAT_TREE;
                case "switch" -> ScenarioConfig.Topology.SINGLE_SWITCH;
                default -> throw new IllegalArgumentException("unknown topology '" + topology + "': leafspine, fattree or switch");
            };
            if (rateGbps <= 0 || 8_000_000_000_000L % (rateGbps * 1_000_000_000L) != 0) {
                throw new IllegalArgumentException("--rate-gbps must divide 8000 exactly (10, 25, 40, 50, 100, 200, 400, ...), got "
                    + rateGbps);
            }
            if (hosts < 2) {
                throw new IllegalArgumentException("--hosts must be at least 2, got " + hosts);
            }
            if (!List.of("metaroce", "rocev2", "both").contains(transport)) {
                throw new IllegalArgumentException("unknown transport '" + transport + "': metaroce, rocev2 or both");
            }
            base.hosts = hosts;
            base.hostsPerLeaf = hostsPerLeaf;
            base.oversubscription = oversubscription;
            base.seed = seed;
            base.bytes = bytes;
            base.load = load;
            base.durationNs = durationUs * 1000;
            base.timeLimitNs = timeLimitUs * 1000;
            base.hostRateBps = rateGbps * 1_000_000_000L;
            base.fabricRateBps = base.hostRateBps;
            base.lossRate = loss;
            base.bufferBytesPerPort = bufferKb * 1000;
            base.fabric(); // validates
            if (cc != null && !cc.equals("delay") && !cc.equals("credit") && !cc.equals("delay+credit")
                && !cc.matches("fixed:[1-9][0-9]*")) {
                throw new IllegalArgumentException("--cc must be delay, credit, delay+credit or fixed:N, got '" + cc + "'");
            }
        } catch (final IllegalArgumentException e) {
            throw new ParameterException(spec.commandLine(), e.getMessage());
        }
        final List<String> names = transport.equals("both") ? List.of("rocev2", "metaroce") : List.of(transport);
        final List<RunResult> results = new ArrayList<>();
        boolean allCompleted = true;
        for (final String name : names) {
            final ScenarioConfig c = base.copy();
            TransportProfile p = TransportProfile.named(name);
            if (name.equals("metaroce")) {
                p = p.withTrimming(trim).withLoadBalancing(switchSpray ? LoadBalancing.SPRAY : LoadBalancing.ECMP);
                if (cc != null && cc.startsWith("fixed:")) {
                    final int window = Integer.parseInt(cc.substring(6));
                    p = p.withCongestionControl("FIXED, window " + window, CongestionControlAlgorithm.FIXED, window);
                } else if ("credit".equals(cc)) {
                    p = p.withCongestionControl("RECEIVER_CREDIT (8.6)", CongestionControlAlgorithm.RECEIVER_CREDIT, 0);
                } else if ("delay+credit".equals(cc)) {
                    p = p.withCongestionControl("DEFAULT (delay-based, 8.5) under receiver credit (8.6)",
                        CongestionControlAlgorithm.DEFAULT, 0).withReceiverCredit(true);
                }
                final String variant = (trim ? "+trim" : "") + (switchSpray ? "+switchspray" : "")
                    + (cc != null && !cc.equals("delay") ? "+" + cc.replace(":", "") : "");
                p = p.withName("metaroce" + variant);
            }
            c.profile = p;
            final long t0 = System.nanoTime();
            final RunResult r = ScenarioRunner.run(c);
            final double wallS = (System.nanoTime() - t0) / 1e9;
            final Path dir = names.size() == 1 ? out : out.resolve(name);
            ReportWriter.write(r, dir);
            results.add(r);
            allCompleted &= r.completed;
            outw.printf(Locale.ROOT, "%s %s: %s, %d/%d flows, p99 slowdown %.2f, goodput %.1f Gb/s, completion %s µs%n",
                base.scenario.cliName(), name, r.completed ? "completed" : "NOT completed", r.completedFlows(), r.flows.size(),
                r.slowdowns().percentile(99), r.goodputGbps(),
                r.completionNs < 0 ? "-" : String.format(Locale.ROOT, "%.1f", r.completionNs / 1000.0));
            outw.printf(Locale.ROOT, "  %.1f µs virtual, %d events in %.2f s wall: %.0f events/s; output in %s%n",
                r.endNs / 1000.0, r.events, wallS, r.events / wallS, dir);
            outw.flush();
        }
        if (results.size() > 1) {
            ReportWriter.writeComparison(results, out);
            outw.println("comparison: " + out.resolve("comparison.md"));
        }
        return allCompleted ? 0 : 1;
    }
}
