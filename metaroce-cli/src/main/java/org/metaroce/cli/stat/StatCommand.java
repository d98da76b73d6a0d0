// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.cli.stat;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;

import org.metaroce.netty.CounterDirectory;
import org.metaroce.netty.CounterFile;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code metaroce stat}: attaches to a running MetaRoCE process through its counters files (see
 * {@link CounterDirectory}) and prints every device's counters, refreshing with rates, as AeronStat
 * does for an Aeron driver. It only reads shared memory: the process being watched does nothing
 * for it.
 */
@Command(name = "stat", mixinStandardHelpOptions = true,
    description = {"Live counters of a running MetaRoCE process, with rates per second (like AeronStat).",
        "Each device publishes its engine, wire, driver, connection-manager and per-QP counters to "
            + "<dir>/metaroce-<pid>/device-<port>.counters; this reads them without disturbing the process."},
    footer = {"", "Examples:", "  metaroce stat                 the only running MetaRoCE process, every second",
        "  metaroce stat 4242 --filter 'RETRANS|qp '", "  metaroce stat --json          one JSON document, for scripts",
        "  metaroce stat --list          processes with counters files (stale ones marked)"})
public final class StatCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Parameters(index = "0", arity = "0..1", paramLabel = "PID",
        description = "process to attach to (default: the only one running)")
    Long pid;

    @Option(names = "--dir", paramLabel = "DIR",
        description = "base directory of counters files (default: -Dmetaroce.dir, else /dev/shm, else java.io.tmpdir)")
    Path base;

    @Option(names = "--interval", defaultValue = "1", paramLabel = "SECONDS",
        description = "seconds between refreshes (default ${DEFAULT-VALUE})")
    double intervalSeconds;

    @Option(names = "--count", defaultValue = "0", paramLabel = "N",
        description = "refreshes before exiting; 0 (the default) until the process exits")
    int count;

    @Option(names = "--json", description = "print one JSON document of the current values and exit")
    boolean json;

    @Option(names = "--filter", paramLabel = "REGEX", description = "only counters whose label matches")
    Pattern filter;

    @Option(names = "--all", description = "also counters that are 0")
    boolean all;

    @Option(names = "--no-clear", description = "append refreshes instead of redrawing the terminal")
    boolean noClear;

    @Option(names = "--list", description = "list processes that have counters files, and exit")
    boolean list;

    @Override
    public Integer call() throws Exception {
        final PrintWriter out = spec.commandLine().getOut();
        final PrintWriter err = spec.commandLine().getErr();
        if (intervalSeconds <= 0 || count < 0) {
            throw new picocli.CommandLine.ParameterException(spec.commandLine(),
                "--interval must be > 0 and --count >= 0");
        }
        final Path dir = base != null ? base : CounterDirectory.base();
        if (list) {
            return list(dir, out);
        }
        final long target;
        if (pid != null) {
            target = pid;
        } else {
            final List<Long> live = liveProcesses(dir);
            if (live.size() != 1) {
                err.println("stat: " + (live.isEmpty() ? "no running MetaRoCE process has counters under " + dir
                    : "several MetaRoCE processes run (" + live + "): name one"));
                err.flush();
                return 1;
            }
            target = live.get(0);
        }
        final Path processDir = CounterDirectory.forProcess(dir, target);
        final Map<Path, CounterFile> files = new LinkedHashMap<>();
        try {
            refresh(processDir, files);
            if (files.isEmpty()) {
                err.println("stat: pid " + target + " has no counters files under " + processDir);
                err.flush();
                return 1;
            }
            if (!files.values().iterator().next().isWriterAlive()) {
                err.println("stat: pid " + target + " is not running; " + processDir + " is stale (a device "
                    + "opening removes it)");
                err.flush();
                return 1;
            }
            final StatView view = new StatView(filter, all);
            if (json) {
                out.println(view.json(target, samples(files), System.currentTimeMillis()));
                out.flush();
                return 0;
            }
            return watch(target, processDir, files, view, out);
        } finally {
            files.values().forEach(CounterFile::close);
        }
    }

    private int watch(final long target, final Path processDir, final Map<Path, CounterFile> files,
                      final StatView view, final PrintWriter out) throws InterruptedException {
        final boolean clear = !noClear && System.console() != null;
        final Map<String, CounterSample> previous = new HashMap<>();
        final long intervalNs = (long) (intervalSeconds * 1e9);
        for (int n = 0; count == 0 || n < count; n++) {
            if (n > 0) {
                TimeUnit.NANOSECONDS.sleep(intervalNs);
                refresh(processDir, files);
            }
            if (files.isEmpty() || !files.values().iterator().next().isWriterAlive()) {
                out.println("metaroce stat: pid " + target + " closed its devices or exited");
                out.flush();
                return 0;
            }
            final List<CounterSample> samples = samples(files);
            final String table = view.text(target, samples, previous, System.currentTimeMillis());
            // ANSI home and clear screen, as AeronStat redraws.
            out.print(clear ? "\u001b[H\u001b[2J" + table : table + "\n");
            out.flush();
            previous.clear();
            for (final CounterSample s : samples) {
                previous.put(s.file, s);
            }
        }
        return 0;
    }

    /** Maps files that appeared (devices opened) and drops those that went (devices closed). */
    static void refresh(final Path processDir, final Map<Path, CounterFile> files) {
        final List<Path> present = CounterDirectory.files(processDir);
        files.entrySet().removeIf(e -> {
            if (!present.contains(e.getKey())) {
                e.getValue().close();
                return true;
            }
            return false;
        });
        for (final Path p : present) {
            if (!files.containsKey(p)) {
                try {
                    files.put(p, CounterFile.map(p));
                } catch (final IOException | IllegalStateException ex) {
                    // Deleted between the listing and the mapping, or not ready yet: the next refresh sees.
                }
            }
        }
    }

    private static List<CounterSample> samples(final Map<Path, CounterFile> files) {
        final List<CounterSample> samples = new ArrayList<>(files.size());
        for (final CounterFile f : files.values()) {
            samples.add(CounterSample.take(f));
        }
        return samples;
    }

    static List<Long> liveProcesses(final Path dir) {
        final List<Long> live = new ArrayList<>();
        for (final long p : CounterDirectory.processes(dir)) {
            if (writerAlive(CounterDirectory.forProcess(dir, p))) {
                live.add(p);
            }
        }
        return live;
    }

    private static boolean writerAlive(final Path processDir) {
        for (final Path f : CounterDirectory.files(processDir)) {
            try (CounterFile file = CounterFile.map(f)) {
                return file.isWriterAlive();
            } catch (final IOException | IllegalStateException ex) {
                // Try the next file.
            }
        }
        return false;
    }

    private static int list(final Path dir, final PrintWriter out) {
        out.println("counters files under " + dir + ":");
        for (final long p : CounterDirectory.processes(dir)) {
            final Path processDir = CounterDirectory.forProcess(dir, p);
            out.println("  pid " + p + (writerAlive(processDir) ? "" : " (stale: not running)"));
            for (final Path f : CounterDirectory.files(processDir)) {
                String what;
                try (CounterFile file = CounterFile.map(f)) {
                    what = file.description();
                } catch (final IOException | IllegalStateException ex) {
                    what = "unreadable: " + ex.getMessage();
                }
                out.println("    " + f.getFileName() + "  " + what);
            }
        }
        out.flush();
        return 0;
    }
}
