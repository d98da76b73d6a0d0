// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.cli.stat;

import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;

import org.metaroce.core.engine.EventTrace;
import org.metaroce.netty.CounterDirectory;
import org.metaroce.netty.CounterFile;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code metaroce trace}: prints the event trace of a running process's devices (state changes,
 * retransmissions and their cause, RTO expiries, tail probes, RNR waits, dead peers, failed work
 * requests), read from their counters files like {@code metaroce stat}, once or following.
 */
@Command(name = "trace", mixinStandardHelpOptions = true,
    description = {"What the queue pairs of a running MetaRoCE process did: the last events of each device's trace, "
        + "or new ones as they happen with --follow.",
        "Times are relative to the newest event shown (or, following, to the first)."},
    footer = {"", "Examples:", "  metaroce trace                the only running MetaRoCE process",
        "  metaroce trace 4242 --qp 0x2a8694 --follow"})
public final class TraceCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Parameters(index = "0", arity = "0..1", paramLabel = "PID",
        description = "process to attach to (default: the only one running)")
    Long pid;

    @Option(names = "--dir", paramLabel = "DIR", description = "base directory of counters files (as metaroce stat)")
    Path base;

    @Option(names = "--qp", paramLabel = "QPN", description = "only this queue pair (decimal, or hex with 0x)")
    String qp;

    @Option(names = "--last", defaultValue = "100", paramLabel = "N",
        description = "events per device printed at first (default ${DEFAULT-VALUE})")
    int last;

    @Option(names = "--follow", description = "keep printing new events until the process exits")
    boolean follow;

    @Option(names = "--interval", defaultValue = "0.2", paramLabel = "SECONDS",
        description = "with --follow: seconds between reads (default ${DEFAULT-VALUE})")
    double intervalSeconds;

    @Override
    public Integer call() throws Exception {
        final PrintWriter out = spec.commandLine().getOut();
        final PrintWriter err = spec.commandLine().getErr();
        final Path dir = base != null ? base : CounterDirectory.base();
        final Integer qpn = qp == null ? null : Integer.decode(qp);
        final long target;
        if (pid != null) {
            target = pid;
        } else {
            final List<Long> live = StatCommand.liveProcesses(dir);
            if (live.size() != 1) {
                err.println("trace: " + (live.isEmpty() ? "no running MetaRoCE process has counters under " + dir
                    : "several MetaRoCE processes run (" + live + "): name one"));
                err.flush();
                return 1;
            }
            target = live.get(0);
        }
        final Map<Path, CounterFile> files = new LinkedHashMap<>();
        final Map<Path, Long> positions = new LinkedHashMap<>();
        try {
            StatCommand.refresh(CounterDirectory.forProcess(dir, target), files);
            if (files.isEmpty() || !files.values().iterator().next().isWriterAlive()) {
                err.println("trace: pid " + target + " is not running or has no counters files under " + dir);
                err.flush();
                return 1;
            }
            long reference = Long.MIN_VALUE;
            for (final Map.Entry<Path, CounterFile> e : files.entrySet()) {
                final long[] newest = {Long.MIN_VALUE};
                final List<byte[]> records = new ArrayList<>();
                final long end = e.getValue().readTrace(0, (n, buffer, offset) -> {
                    if (qpn == null || buffer.getInt(offset + 8) == qpn) {
                        final byte[] copy = new byte[EventTrace.RECORD_BYTES];
                        buffer.getBytes(offset, copy);
                        records.add(copy);
                        newest[0] = Math.max(newest[0], buffer.getLong(offset));
                    }
                });
                positions.put(e.getKey(), end);
                out.println("== " + e.getValue().description() + " (" + end + " events so far)");
                // Once: relative to this device's newest event; following: to the first device's, for all.
                if (follow && reference == Long.MIN_VALUE) {
                    reference = newest[0];
                }
                final long ref = follow ? reference : newest[0];
                for (int i = Math.max(0, records.size() - last); i < records.size(); i++) {
                    out.println("  " + EventTrace.describe(new org.agrona.concurrent.UnsafeBuffer(records.get(i)), 0, ref));
                }
            }
            out.flush();
            if (!follow) {
                return 0;
            }
            final long ref = reference == Long.MIN_VALUE ? System.nanoTime() : reference;
            while (true) {
                TimeUnit.NANOSECONDS.sleep((long) (intervalSeconds * 1e9));
                StatCommand.refresh(CounterDirectory.forProcess(dir, target), files);
                if (files.isEmpty() || !files.values().iterator().next().isWriterAlive()) {
                    out.println("metaroce trace: pid " + target + " closed its devices or exited");
                    out.flush();
                    return 0;
                }
                for (final Map.Entry<Path, CounterFile> e : files.entrySet()) {
                    final String device = e.getValue().description();
                    final long from = positions.getOrDefault(e.getKey(), 0L);
                    final long[] missed = {0};
                    final long end = e.getValue().readTrace(from, (n, buffer, offset) -> {
                        if (missed[0] == 0 && n > from) {
                            missed[0] = n - from;
                        }
                        if (qpn == null || buffer.getInt(offset + 8) == qpn) {
                            out.println(shortName(device) + " " + EventTrace.describe(buffer, offset, ref));
                        }
                    });
                    if (missed[0] > 0) {
                        out.println(shortName(device) + " (" + missed[0] + " events overwritten before they were read)");
                    }
                    positions.put(e.getKey(), end);
                }
                out.flush();
            }
        } finally {
            files.values().forEach(CounterFile::close);
        }
    }

    /** @return "127.0.0.1:4791" out of "device /127.0.0.1:4791 entropy ports ..." */
    private static String shortName(final String description) {
        final String[] words = description.split(" ");
        return words.length > 1 ? words[1].replaceFirst("^/", "") : description;
    }
}
