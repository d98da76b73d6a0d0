// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.bench.compare;

import java.io.File;
import java.util.Collection;
import java.util.Map;

import org.metaroce.bench.BenchmarkBase;
import org.metaroce.bench.engine.EngineThroughputBenchmark;
import org.metaroce.bench.loopback.LoopbackBandwidthBenchmark;
import org.metaroce.bench.loopback.LoopbackPingPongBenchmark;
import org.openjdk.jmh.profile.GCProfiler;
import org.openjdk.jmh.results.Result;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.RunnerException;
import org.openjdk.jmh.runner.options.ChainedOptionsBuilder;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;

/**
 * Runs one cell as one JMH fork of the suite that measures it (the same benchmarks a user runs
 * with the benchmark jar), with the GC profiler, and extracts the figure. JMH's own log of the run
 * goes to a file so that the comparison's output stays one line per run.
 */
final class CellRunner {
    private final int warmupIterations;
    private final int measurementIterations;
    private final boolean noBoundsChecks;
    private final String idle;
    private final File logDir;

    CellRunner(final int warmupIterations, final int measurementIterations,
               final boolean noBoundsChecks, final String idle, final File logDir) {
        this.idle = idle;
        this.warmupIterations = warmupIterations;
        this.measurementIterations = measurementIterations;
        this.noBoundsChecks = noBoundsChecks;
        this.logDir = logDir;
    }

    /**
     * @param cell what to measure
     * @param round which repetition (names the log file)
     * @return the figure
     * @throws IllegalStateException if the run failed (its log says why)
     */
    Figure run(final Cell cell, final int round) {
        final File log = new File(logDir, cell.id().replace('/', '_') + "_r" + round + ".log");
        final ChainedOptionsBuilder options = new OptionsBuilder().forks(1).warmupIterations(warmupIterations)
            .warmupTime(TimeValue.seconds(1)).measurementIterations(measurementIterations)
            .measurementTime(TimeValue.seconds(1)).addProfiler(GCProfiler.class).shouldFailOnError(true)
            .output(log.getPath())
            // Not the comparison's own JVM flags (JMH's default): only BenchmarkBase's @Fork flags.
            .jvmArgs(new String[0]);
        if (noBoundsChecks) {
            options.jvmArgsAppend(BenchmarkBase.NO_BOUNDS_CHECKS);
        }
        switch (cell.kind()) {
            case BANDWIDTH -> {
                options.include(LoopbackBandwidthBenchmark.class.getName() + ".transfer")
                    .param("contender", cell.contender().id()).param("size", Integer.toString(cell.size()))
                    .param("idle", idle);
                if (cell.aeronMtu() > 0) {
                    options.param("aeronMtu", Integer.toString(cell.aeronMtu()));
                }
            }
            case PING_PONG -> options.include(LoopbackPingPongBenchmark.class.getName() + ".roundTrip")
                .param("contender", cell.contender().id()).param("size", Integer.toString(cell.size()))
                .param("idle", idle);
            case ENGINE -> options.include(EngineThroughputBenchmark.class.getName() + ".write64k");
        }
        final Collection<RunResult> results;
        try {
            results = new Runner(options.build()).run();
        } catch (final RunnerException | RuntimeException ex) {
            throw new IllegalStateException(firstException(log) + " (log: " + log + ")", ex);
        }
        if (results.size() != 1) {
            throw new IllegalStateException(cell + " produced " + results.size() + " results (see " + log + ")");
        }
        final RunResult rr = results.iterator().next();
        final Result<?> primary = rr.getPrimaryResult();
        // JMH declares its secondary results with the raw type.
        @SuppressWarnings("rawtypes")
        final Map<String, Result> secondary = rr.getSecondaryResults();
        final double alloc = score(secondary, "gc.alloc.rate.norm", cell, log);
        return switch (cell.kind()) {
            case BANDWIDTH -> new Figure(score(secondary, "deliveredBytes", cell, log) * 8 / 1e9, Double.NaN, alloc);
            case PING_PONG -> new Figure(primary.getStatistics().getPercentile(50.0),
                primary.getStatistics().getPercentile(99.0), alloc);
            case ENGINE -> new Figure(score(secondary, "packets", cell, log) / 1e6, Double.NaN, alloc);
        };
    }

    /** @return the first exception line of a failed run's log: what went wrong, in one line */
    private static String firstException(final File log) {
        try {
            for (final String line : java.nio.file.Files.readAllLines(log.toPath())) {
                if (line.contains("Exception: ") || line.contains("Error: ")) {
                    final String trimmed = line.trim();
                    return trimmed.length() > 400 ? trimmed.substring(0, 400) + "…" : trimmed;
                }
            }
        } catch (final java.io.IOException ex) {
            return "the run failed and its log is unreadable: " + ex;
        }
        return "the run failed without an exception in its log";
    }

    @SuppressWarnings("rawtypes")
    private static double score(final Map<String, Result> secondary, final String name, final Cell cell,
                                final File log) {
        final Result r = secondary.get(name);
        if (r == null) {
            throw new IllegalStateException(cell + " reported no '" + name + "' (see " + log + "); it has "
                + secondary.keySet());
        }
        return r.getScore();
    }
}
