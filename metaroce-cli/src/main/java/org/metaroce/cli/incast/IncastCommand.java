// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.cli.incast;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;

import org.metaroce.cli.faults.FaultsCommand;
import org.metaroce.cli.faults.Trial;
import org.metaroce.cli.faults.TwoHosts;
import org.metaroce.sim.report.SvgChart;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code metaroce incast}: N senders write to one receiver through a real bottleneck (two network
 * namespaces joined by a veth pair; a policer and an ECN marker in nftables on the receiver's input
 * hook), once per congestion control, and a table of aggregate goodput against the bottleneck rate,
 * retransmitted bytes, ECN marks and Jain's fairness index, with every byte verified.
 */
@Command(name = "incast", mixinStandardHelpOptions = true, sortOptions = false, usageHelpAutoWidth = true,
    description = {"N -> 1 incast through a real bottleneck: N write_bw clients in one network namespace, N servers "
        + "in another, joined by a veth pair; on the receiver's input hook an nftables ECN marker at "
        + "--mark-fraction x R and a policer at R. Runs once per --cc and prints per run: aggregate goodput "
        + "(and as a fraction of R), each sender's share of the bottleneck over the measured window, Jain's "
        + "fairness index, retransmitted bytes per delivered byte, marks and drops. Needs root.",
        "", "Exit code: 0 when every run completed with every byte verified, 1 otherwise, 2 for bad arguments "
        + "or a machine that cannot build the rig."})
public final class IncastCommand implements Callable<Integer> {
    /** The issue's targets for DEFAULT: goodput, retransmitted bytes and fairness. */
    static final double TARGET_GOODPUT = 0.90;
    static final double TARGET_RETX = 0.01;
    static final double TARGET_JAIN = 0.95;

    @Spec
    CommandSpec spec;

    @Option(names = {"-n", "--senders"}, defaultValue = "8", paramLabel = "N",
        description = "Senders (default: ${DEFAULT-VALUE}).")
    int senders;

    @Option(names = "--rate-mbit", defaultValue = "400", paramLabel = "R",
        description = "Bottleneck rate R in Mb/s (IP bytes; default: ${DEFAULT-VALUE}).")
    long rateMbit;

    @Option(names = "--mark-fraction", defaultValue = "0.8", paramLabel = "F",
        description = "ECN marking above F x R (default: ${DEFAULT-VALUE}).")
    double markFraction;

    @Option(names = "--buffer-kb", defaultValue = "512", paramLabel = "KB",
        description = "Policer burst: the bottleneck's buffer (default: ${DEFAULT-VALUE}).")
    long bufferKb;

    @Option(names = "--mark-kb", defaultValue = "64", paramLabel = "KB",
        description = "Marker burst: the marking threshold (default: ${DEFAULT-VALUE}).")
    long markKb;

    @Option(names = {"-D", "--duration"}, defaultValue = "10", paramLabel = "SECONDS",
        description = "Measured seconds per sender (default: ${DEFAULT-VALUE}).")
    double duration;

    @Option(names = "--margin", defaultValue = "3", paramLabel = "SECONDS",
        description = "Seconds each sender runs before measuring, so that all measure together "
            + "(default: ${DEFAULT-VALUE}).")
    double margin;

    @Option(names = "--cc", defaultValue = "default,fixed,dcqcn", split = ",", paramLabel = "CC",
        description = "Congestion controls to run, one run each: default, fixed, dcqcn, credit, or tool (the tools' "
            + "own default) (default: ${DEFAULT-VALUE}).")
    List<String> ccs;

    @Option(names = "--mtu", defaultValue = "9000", paramLabel = "BYTES",
        description = "MTU of the veth pair (default: ${DEFAULT-VALUE}: jumbo frames, so the path MTU is 4096 as "
            + "on an RDMA fabric).")
    int linkMtu;

    @Option(names = "--out", paramLabel = "DIR",
        description = "Write per run a CSV of each sender's rate through the bottleneck over time, an SVG plot, "
            + "and each client's and server's standard error (progress lines with the congestion state, "
            + "counters) as incast-CC.clientI.log and .serverI.log.")
    Path out;

    @Option(names = "--tool-option", paramLabel = "OPT",
        description = "Pass an option to every write_bw (repeat; e.g. --tool-option=-s --tool-option=16384).")
    List<String> toolOptions = new ArrayList<>();

    @Override
    public Integer call() throws IOException, InterruptedException {
        final PrintWriter o = spec.commandLine().getOut();
        final PrintWriter err = spec.commandLine().getErr();
        if (senders < 1 || senders > 64 || rateMbit < 1 || !(markFraction > 0 && markFraction <= 1) || duration <= 0
            || margin < 0 || bufferKb < 1 || markKb < 1 || linkMtu < 1280 || linkMtu > 65535) {
            err.println("metaroce incast: --senders 1..64, --rate-mbit >= 1, --mark-fraction in (0, 1], --duration > 0,"
                + " --margin >= 0, --buffer-kb and --mark-kb >= 1, --mtu 1280..65535");
            return 2;
        }
        for (final String cc : ccs) {
            if (!List.of("default", "fixed", "dcqcn", "credit", "tool").contains(cc)) {
                err.println("metaroce incast: --cc takes default, fixed, dcqcn, credit or tool, got " + cc);
                return 2;
            }
        }
        final String unavailable = TwoHosts.unavailableReason();
        if (unavailable != null) {
            err.println("metaroce incast: cannot build the rig: " + unavailable);
            return 2;
        }
        final Thread hook = new Thread(() -> Trial.LIVE.forEach(Process::destroyForcibly));
        Runtime.getRuntime().addShutdownHook(hook);
        final long rateBytes = rateMbit * 1_000_000 / 8;
        final List<IncastReport> reports = new ArrayList<>();
        try (TwoHosts hosts = new TwoHosts()) {
            hosts.linkMtu(linkMtu);
            final int[] ports = new int[senders];
            for (int i = 0; i < senders; i++) {
                ports[i] = IncastRun.BASE_PORT + i;
            }
            o.printf(Locale.ROOT, "# %d -> 1 incast, bottleneck %d Mb/s (policer burst %d KB), ECN marks above %.0f Mb/s "
                + "(burst %d KB), veth MTU %d, %.0f s measured after %.0f s%n", senders, rateMbit, bufferKb,
                rateMbit * markFraction, markKb, linkMtu, duration, margin);
            o.flush();
            for (final String cc : ccs) {
                final IncastRun.Outcome outcome;
                try (Bottleneck b = new Bottleneck(hosts.serverNs, hosts.serverIf, rateBytes, bufferKb * 1024,
                    (long) (rateBytes * markFraction), markKb * 1024, ports)) {
                    outcome = IncastRun.run(hosts, b, new IncastRun.Settings(FaultsCommand.launcher(), senders,
                        cc.equals("tool") ? null : cc, duration, margin, 500, toolOptions, out));
                    reports.add(new IncastReport(cc, rateMbit, outcome, b.sample()));
                }
                o.println(reports.get(reports.size() - 1).detail());
                o.flush();
                if (out != null) {
                    write(reports.get(reports.size() - 1));
                }
            }
        } finally {
            Trial.LIVE.forEach(Process::destroyForcibly);
            Runtime.getRuntime().removeShutdownHook(hook);
        }
        o.println();
        o.println(IncastReport.HEADER);
        boolean ok = true;
        for (final IncastReport r : reports) {
            o.println(r.row());
            ok &= r.completedAndVerified();
        }
        o.flush();
        return ok ? 0 : 1;
    }

    private void write(final IncastReport r) throws IOException {
        Files.createDirectories(out);
        Files.writeString(out.resolve("incast-" + r.cc() + ".csv"), r.csv(), StandardCharsets.UTF_8);
        final double[][] series = r.series();
        if (series.length > 0) {
            final SvgChart chart = new SvgChart(senders + " -> 1 incast through " + rateMbit + " Mb/s, cc " + r.cc(),
                "time [s]", "rate through the bottleneck [Mb/s]");
            for (int i = 1; i < series.length; i++) {
                chart.series("sender " + (i - 1), series[0], series[i]);
            }
            Files.writeString(out.resolve("incast-" + r.cc() + ".svg"), chart.render(), StandardCharsets.UTF_8);
        }
    }
}
