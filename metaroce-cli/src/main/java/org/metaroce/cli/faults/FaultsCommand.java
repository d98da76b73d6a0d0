// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.cli.faults;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;

import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code metaroce faults}: the real-fault campaign. Two network namespaces joined by a veth pair,
 * the bandwidth tools run as a server and a client process with {@code --verify}, and faults put
 * on the receiving host's input hook with nftables (loss, blackholes) or on the processes
 * (SIGSTOP stalls, SIGKILL). Prints one row per tool and fault: passes, dropped datagrams,
 * retransmitted packets and their ratio, durations and the errors of failed runs.
 */
@Command(name = "faults", mixinStandardHelpOptions = true, sortOptions = false, usageHelpAutoWidth = true,
    description = {"Fault campaign (needs root, iproute2 and nftables): write_bw, read_bw and send_bw between two "
        + "network namespaces under loss in each direction, stalls (SIGSTOP) of either end, blackholes and the "
        + "death of the server. Exit code 0 when every run passed, 1 otherwise; 0 with a message when skipped "
        + "(not root).", "See docs/reliability.md for the targets."})
public final class FaultsCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Option(names = "--tools", split = ",", defaultValue = "write_bw,read_bw,send_bw", paramLabel = "TOOL",
        description = "Tools (default: ${DEFAULT-VALUE}).")
    List<String> tools;

    @Option(names = "--sections", split = ",", defaultValue = "loss,stall,blackhole,kill", paramLabel = "SECTION",
        description = "Which faults: loss, stall, blackhole, kill, soak (default: ${DEFAULT-VALUE}; the soak, "
            + "minutes long, only when named).")
    List<String> sections;

    @Option(names = "--soak-qps", defaultValue = "64", paramLabel = "N",
        description = "Soak: queue pairs (default: ${DEFAULT-VALUE}).")
    int soakQps;

    @Option(names = "--soak-seconds", defaultValue = "60", paramLabel = "SECONDS",
        description = "Soak: measured seconds, at least 15 (default: ${DEFAULT-VALUE}). Both ends run with Netty's "
            + "leak detector at PARANOID; their live heap (jcmd GC.class_histogram) is taken 5 s into the "
            + "measurement and 5 s before its end and may grow at most 10%% + 1 MiB.")
    double soakSeconds;

    @Option(names = "--soak-loss", defaultValue = "1", paramLabel = "PERCENT",
        description = "Soak: loss both ways (default: ${DEFAULT-VALUE}).")
    double soakLoss;

    @Option(names = "--loss", split = ",", defaultValue = "0,0.1,1,5,20", paramLabel = "PERCENT",
        description = "Loss rates, each in directions c->s, s->c and both (default: ${DEFAULT-VALUE}).")
    List<Double> loss;

    @Option(names = "--stalls", split = ",", defaultValue = "0.2,1,3,10", paramLabel = "SECONDS",
        description = "Stall lengths, each of the server and of the client (default: ${DEFAULT-VALUE}).")
    List<Double> stalls;

    @Option(names = "--blackholes", split = ",", defaultValue = "1,2,10", paramLabel = "SECONDS",
        description = "Blackhole lengths, both directions (default: ${DEFAULT-VALUE}).")
    List<Double> blackholes;

    @Option(names = {"-r", "--reps"}, defaultValue = "10", paramLabel = "N",
        description = "Runs per row (default: ${DEFAULT-VALUE}, the issue's target).")
    int reps;

    @Option(names = {"-D", "--duration"}, defaultValue = "3", paramLabel = "SECONDS",
        description = "The client's measured seconds per run; mid-run faults start after the first "
            + "(default: ${DEFAULT-VALUE}).")
    double duration;

    @Option(names = {"-w", "--warmup"}, defaultValue = "100", paramLabel = "N",
        description = "The client's warm-up iterations (default: ${DEFAULT-VALUE}).")
    int warmup;

    @Option(names = "--tool-option", paramLabel = "OPTION",
        description = "An option passed to both ends of every run, e.g. --tool-option=--no-gso (repeatable).")
    List<String> toolOptions = new ArrayList<>();

    @Option(names = "--pcap-dir", paramLabel = "DIR",
        description = "Capture each run's packets at the client (headers only, 128 bytes of each) into DIR, keeping "
            + "the capture of a run that fails: DIR/TOOL-FAULT-RUN.pcap, named in the run's line, with "
            + "each end's output beside it (DIR/TOOL-FAULT-RUN.client.log, .server.log; a hung end's "
            + "includes its thread dump).")
    Path pcapDir;

    @Option(names = "--keep-captures",
        description = "With --pcap-dir: keep the capture of every run, not only of those that fail.")
    boolean keepCaptures;

    @Option(names = "--hang", defaultValue = "60", paramLabel = "SECONDS",
        description = "A run taking this much longer than its duration plus its fault is hung and destroyed "
            + "(default: ${DEFAULT-VALUE}).")
    long hang;

    @Override
    public Integer call() throws IOException, InterruptedException {
        final PrintWriter out = spec.commandLine().getOut();
        final PrintWriter err = spec.commandLine().getErr();
        if (reps < 1 || !(duration >= 2)) {
            throw new picocli.CommandLine.ParameterException(spec.commandLine(),
                "--reps must be >= 1 and --duration >= 2 (a mid-run fault starts after the first second)");
        }
        // Arguments first: a mistake shows also where the campaign would be skipped.
        if (keepCaptures && pcapDir == null) {
            throw new picocli.CommandLine.ParameterException(spec.commandLine(),
                "--keep-captures keeps what --pcap-dir records: give --pcap-dir DIR too");
        }
        final List<Fault> faults = faults();
        final String unavailable = TwoHosts.unavailableReason();
        if (unavailable != null) {
            err.println("metaroce faults: skipped: " + unavailable);
            err.flush();
            return 0;
        }
        if (pcapDir != null) {
            java.nio.file.Files.createDirectories(pcapDir);
        }
        final Trial.Settings settings = new Trial.Settings(launcher(), duration, warmup, List.copyOf(toolOptions),
            hang);
        final TwoHosts hosts = new TwoHosts();
        // Ctrl-C: end the tools and delete the namespaces (their nftables tables go with them).
        final Thread cleanup = new Thread(() -> {
            System.err.println("metaroce faults: stopping: ending the tools, deleting " + hosts.serverNs + " and "
                + hosts.clientNs);
            Trial.LIVE.forEach(Process::destroyForcibly);
            hosts.close();
        }, "metaroce-faults-cleanup");
        Runtime.getRuntime().addShutdownHook(cleanup);
        final Map<String, List<Trial.Result>> rows = new LinkedHashMap<>();
        try {
            err.printf(Locale.ROOT, "metaroce faults: %d tools x %d faults x %d runs, -D %s, server %s (%s), "
                + "client %s (%s)%n", tools.size(), faults.size(), reps, Fault.number(duration), hosts.serverAddress,
                hosts.serverNs, hosts.clientAddress, hosts.clientNs);
            for (final String tool : tools) {
                for (final Fault fault : faults) {
                    final List<Trial.Result> results = new ArrayList<>();
                    for (int rep = 0; rep < reps; rep++) {
                        final Path capture = pcapDir == null ? null : pcapDir.resolve(captureName(tool, fault, rep));
                        final Trial.Result r = Trial.run(hosts, settings, tool, fault, capture, keepCaptures);
                        results.add(r);
                        err.println("  " + (rep + 1) + "/" + reps + " " + r
                            + (capture != null && java.nio.file.Files.exists(capture) ? "; capture " + capture : ""));
                        err.flush();
                    }
                    rows.put(tool + "\t" + fault.label(), results);
                }
            }
        } finally {
            hosts.close();
            try {
                Runtime.getRuntime().removeShutdownHook(cleanup);
            } catch (final IllegalStateException ex) {
                // Already shutting down: the hook runs anyway.
            }
        }
        new CampaignTable(rows.values()).print(out);
        return rows.values().stream().allMatch(l -> l.stream().allMatch(Trial.Result::passed)) ? 0 : 1;
    }

    private List<Fault> faults() {
        final List<Fault> faults = new ArrayList<>();
        for (final String section : sections) {
            switch (section.trim().toLowerCase(Locale.ROOT)) {
                case "loss" -> {
                    for (final double p : loss) {
                        if (p == 0) {
                            faults.add(Fault.none());
                            continue;
                        }
                        for (final Fault.Direction d : Fault.Direction.values()) {
                            faults.add(Fault.loss(d, p));
                        }
                    }
                }
                case "stall" -> {
                    for (final Fault.End end : Fault.End.values()) {
                        for (final double s : stalls) {
                            faults.add(Fault.stall(end, s));
                        }
                    }
                }
                case "blackhole" -> blackholes.forEach(s -> faults.add(Fault.blackhole(s)));
                case "kill" -> faults.add(Fault.killServer());
                case "soak" -> {
                    if (soakQps < 1 || !(soakSeconds >= 15)) {
                        throw new picocli.CommandLine.ParameterException(spec.commandLine(),
                            "--soak-qps must be >= 1 and --soak-seconds >= 15 (the heap is measured 5 s into the "
                                + "run and 5 s before its end)");
                    }
                    faults.add(Fault.soak(soakLoss, soakSeconds, soakQps));
                }
                default -> throw new picocli.CommandLine.ParameterException(spec.commandLine(),
                    "--sections: unknown section " + section + " (loss, stall, blackhole, kill, soak)");
            }
        }
        return faults;
    }

    /** @return the file name of a run's capture: tool, fault and run number, in characters any shell takes */
    static String captureName(final String tool, final Fault fault, final int rep) {
        return (tool + "-" + fault.label() + "-" + (rep + 1)).replaceAll("[^A-Za-z0-9._]+", "-") + ".pcap";
    }

    /** @return this JVM's java and class path, starting the CLI's main class */
    public static List<String> launcher() {
        return List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "--add-exports",
            "java.base/jdk.internal.misc=ALL-UNNAMED", "--enable-native-access=ALL-UNNAMED", "-cp",
            System.getProperty("java.class.path"), "org.metaroce.cli.Metaroce");
    }
}
