// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.sim.report;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import org.metaroce.sim.measure.Percentiles;
import org.metaroce.sim.scenario.RunResult;
import org.metaroce.sim.workload.Flow;

/**
 * Writes a run's CSV files, SVG charts and markdown summary, and the side-by-side comparison of
 * several runs. Only virtual-time quantities are written (no wall-clock time, no dates), so two
 * runs with the same seed produce byte-identical files.
 */
public final class ReportWriter {
    private static final int CHART_POINTS = 600;
    private ReportWriter() {
    }

    /**
     * Writes one run into {@code dir}.
     *
     * @param r the run
     * @param dir output directory (created)
     * @throws IOException on write failure
     */
    public static void write(final RunResult r, final Path dir) throws IOException {
        Files.createDirectories(dir);
        final StringBuilder flows = new StringBuilder("id,tag,src,dst,bytes,start_ns,end_ns,fct_ns,ideal_ns,slowdown,error\n");
        for (final Flow f : r.flows) {
            flows.append(f.id()).append(',').append(f.tag()).append(',').append(f.src()).append(',').append(f.dst())
                .append(',').append(f.bytes()).append(',').append(f.startNs()).append(',').append(f.endNs()).append(',')
                .append(f.fctNs()).append(',').append(f.idealNs()).append(',')
                .append(f.isDone() ? fmt4(f.slowdown()) : "").append(',')
                .append(f.error() == null ? "" : f.error()).append('\n');
        }
        write(dir.resolve("flows.csv"), flows.toString());
        final StringBuilder q = new StringBuilder("time_ns,max_port_queue_bytes,switch_buffer_bytes,watched_port_bytes\n");
        for (int i = 0; i < r.queues.count(); i++) {
            q.append(r.queues.time(i)).append(',').append(r.queues.maxQueue(i)).append(',')
                .append(r.queues.totalBuffered(i)).append(',').append(r.queues.watchedQueue(i)).append('\n');
        }
        write(dir.resolve("queue.csv"), q.toString());
        final StringBuilder c = new StringBuilder("counter,value\n");
        for (final Map.Entry<String, Long> e : r.counters.entrySet()) {
            c.append(e.getKey()).append(',').append(e.getValue()).append('\n');
        }
        write(dir.resolve("counters.csv"), c.toString());
        write(dir.resolve("slowdown_cdf.svg"), slowdownCdf(List.of(r)).render());
        write(dir.resolve("queue.svg"), queueChart(List.of(r)).render());
        write(dir.resolve("summary.md"), summary(r));
    }

    /**
     * Writes a comparison of runs of one scenario (same seed and topology, different transports).
     *
     * @param runs the runs, the first being the baseline of the ratios
     * @param dir output directory
     * @throws IOException on write failure
     */
    public static void writeComparison(final List<RunResult> runs, final Path dir) throws IOException {
        Files.createDirectories(dir);
        write(dir.resolve("slowdown_cdf.svg"), slowdownCdf(runs).render());
        write(dir.resolve("queue.svg"), queueChart(runs).render());
        write(dir.resolve("comparison.md"), comparison(runs));
    }

    static SvgChart slowdownCdf(final List<RunResult> runs) {
        final SvgChart chart = new SvgChart("FCT slowdown CDF: " + runs.get(0).workload, "slowdown (FCT / ideal)",
            "fraction of flows").logX();
        for (final RunResult r : runs) {
            final double[] s = r.slowdowns().sortedValues();
            final double[] y = new double[s.length];
            for (int i = 0; i < s.length; i++) {
                y[i] = (i + 1.0) / s.length;
            }
            chart.series(r.config.profile.name(), s, y);
        }
        return chart;
    }

    static SvgChart queueChart(final List<RunResult> runs) {
        final boolean watched = runs.get(0).queues.count() > 0 && anyWatched(runs);
        final SvgChart chart = new SvgChart((watched ? "receiver downlink queue" : "deepest switch queue") + ": "
            + runs.get(0).workload, "time (µs)", "queue (KB)");
        for (final RunResult r : runs) {
            // At most CHART_POINTS points: each the maximum of its bucket, so peaks survive.
            final int n = r.queues.count();
            final int bucket = Math.max(1, (n + CHART_POINTS - 1) / CHART_POINTS);
            final int points = (n + bucket - 1) / bucket;
            final double[] x = new double[points];
            final double[] y = new double[points];
            for (int i = 0; i < n; i++) {
                final int b = i / bucket;
                x[b] = r.queues.time(b * bucket) / 1000.0;
                y[b] = Math.max(y[b], (watched ? r.queues.watchedQueue(i) : r.queues.maxQueue(i)) / 1000.0);
            }
            chart.series(r.config.profile.name(), x, y);
        }
        return chart;
    }

    private static boolean anyWatched(final List<RunResult> runs) {
        for (final RunResult r : runs) {
            for (int i = 0; i < r.queues.count(); i++) {
                if (r.queues.watchedQueue(i) > 0) {
                    return true;
                }
            }
        }
        return false;
    }

    /** @return the markdown summary of one run */
    public static String summary(final RunResult r) {
        final StringBuilder sb = new StringBuilder();
        sb.append("# ").append(r.workload).append(" — ").append(r.config.profile.name()).append("\n\n");
        sb.append("- scenario: ").append(r.config.scenario.cliName()).append(" (").append(r.config.scenario.description())
            .append(")\n");
        sb.append("- transport: ").append(r.config.profile).append('\n');
        sb.append("- topology: ").append(r.topology).append('\n');
        sb.append("- seed: ").append(r.config.seed).append('\n');
        sb.append("- completed: ").append(r.completed ? "yes" : "NO").append(" at ").append(us(r.endNs))
            .append(" µs virtual, ").append(r.events).append(" events\n\n");
        sb.append("| metric | value |\n|---|---|\n");
        for (final String[] row : rows(r)) {
            sb.append("| ").append(row[0]).append(" | ").append(row[1]).append(" |\n");
        }
        if (!r.incomplete.isEmpty()) {
            sb.append("\n## Flows that did not complete (first 20)\n\n");
            for (final String line : r.incomplete) {
                sb.append("- ").append(line).append('\n');
            }
        }
        sb.append("\n## Counters\n\n| counter | value |\n|---|---|\n");
        for (final Map.Entry<String, Long> e : r.counters.entrySet()) {
            sb.append("| ").append(e.getKey()).append(" | ").append(e.getValue()).append(" |\n");
        }
        sb.append("\n![slowdown CDF](slowdown_cdf.svg)\n\n![queue](queue.svg)\n");
        return sb.toString();
    }

    private static String[][] rows(final RunResult r) {
        final Percentiles s = r.slowdowns();
        final Percentiles f = r.fctsUs();
        return new String[][] {
            {"flows completed", r.completedFlows() + " / " + r.flows.size()},
            {"FCT p50 / p99 / p99.9 (µs)", fmt1(f.percentile(50)) + " / " + fmt1(f.percentile(99)) + " / "
                + fmt1(f.percentile(99.9))},
            {"slowdown p50 / p99 / p99.9", fmt2(s.percentile(50)) + " / " + fmt2(s.percentile(99)) + " / "
                + fmt2(s.percentile(99.9))},
            {"slowdown p50 / p99, flows < 100 KB", bucket(r.slowdowns(0, 100_000))},
            {"slowdown p50 / p99, flows >= 1 MB", bucket(r.slowdowns(1_000_000, Long.MAX_VALUE))},
            {"aggregate goodput (Gb/s)", fmt1(r.goodputGbps())},
            {"workload completion (µs)", r.completionNs < 0 ? "not completed" : fmt1(r.completionNs / 1000.0)},
            {"drops (tail / random / link down)", r.counter("tail_drops") + " / " + r.counter("random_losses") + " / "
                + r.counter("link_down_losses")},
            {"trims", Long.toString(r.counter("trims"))},
            {"PFC pauses", Long.toString(r.counter("pfc_pauses"))},
            {"retransmits (needed / unneeded; requester-detected spurious)", r.counter("retransmits_needed") + " / "
                + r.counter("retransmits_unneeded") + "; " + r.counter("spurious_retransmits")},
            {"max port queue (KB)", fmt1(r.counter("max_port_queue_bytes") / 1000.0)},
        };
    }

    private static String bucket(final Percentiles p) {
        return p.count() == 0 ? "no flows" : fmt2(p.percentile(50)) + " / " + fmt2(p.percentile(99)) + " (" + p.count()
            + " flows)";
    }

    /** @return the markdown comparison table of runs, with ratios against the first */
    public static String comparison(final List<RunResult> runs) {
        final RunResult base = runs.get(0);
        final StringBuilder sb = new StringBuilder();
        sb.append("# ").append(base.workload).append(": ");
        for (int i = 0; i < runs.size(); i++) {
            sb.append(i == 0 ? "" : " vs ").append(runs.get(i).config.profile.name());
        }
        sb.append("\n\n- topology: ").append(base.topology).append("\n- seed: ").append(base.config.seed).append('\n');
        for (final RunResult r : runs) {
            sb.append("- ").append(r.config.profile).append('\n');
        }
        sb.append("\n| metric |");
        for (final RunResult r : runs) {
            sb.append(' ').append(r.config.profile.name()).append(" |");
        }
        sb.append("\n|---|");
        for (int i = 0; i < runs.size(); i++) {
            sb.append("---|");
        }
        sb.append('\n');
        final String[][] first = rows(base);
        for (int row = 0; row < first.length; row++) {
            sb.append("| ").append(first[row][0]).append(" |");
            for (final RunResult r : runs) {
                sb.append(' ').append(rows(r)[row][1]).append(" |");
            }
            sb.append('\n');
        }
        if (runs.size() > 1) {
            sb.append("\nRatios ").append(runs.get(1).config.profile.name()).append(" / ").append(base.config.profile.name())
                .append(": p99 slowdown ").append(fmt2(runs.get(1).slowdowns().percentile(99) / base.slowdowns().percentile(99)))
                .append(", goodput ").append(fmt2(runs.get(1).goodputGbps() / base.goodputGbps()))
                .append(", completion time ").append(base.completionNs > 0 && runs.get(1).completionNs > 0
                    ? fmt2((double) runs.get(1).completionNs / base.completionNs) : "n/a").append("\n");
        }
        sb.append("\n![slowdown CDF](slowdown_cdf.svg)\n\n![queue](queue.svg)\n");
        return sb.toString();
    }

    private static void write(final Path file, final String text) throws IOException {
        Files.writeString(file, text, StandardCharsets.UTF_8);
    }

    private static String us(final long ns) {
        return fmt1(ns / 1000.0);
    }

    static String fmt1(final double v) {
        return String.format(Locale.ROOT, "%.1f", v);
    }

    static String fmt2(final double v) {
        return String.format(Locale.ROOT, "%.2f", v);
    }

    static String fmt4(final double v) {
        return String.format(Locale.ROOT, "%.4f", v);
    }
}
