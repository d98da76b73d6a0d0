// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.bench.compare;

import java.io.File;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;

import org.metaroce.bench.loopback.Contender;
import org.metaroce.bench.loopback.Idle;

/**
 * The comparison command: measures MetaRoCE and its peers (Aeron, raw UDP through the same
 * driver, one TCP stream) on this machine in one run and writes {@code docs/benchmarks.md} with an
 * SVG chart. Each figure is repeated ({@code --rounds}, at least 3 by default); every round runs
 * every figure once, in an order rotated and reversed from round to round so that drift of the
 * machine's load does not favour one contender.
 *
 * <p>It lives in the benchmark module, not in the {@code metaroce} command, so that Aeron never
 * enters the tools' jar. Run it with {@code metaroce-bench/compare.sh [--quick]}.
 *
 * <p>Exit codes: 0 every run succeeded, 1 some run failed (the report says which), 2 bad arguments.
 */
public final class Compare {
    private static final List<Integer> SIZES = List.of(4096, 65536);

    private Compare() {
    }

    /** Parsed command line. */
    static final class Options {
        boolean quick;
        int rounds = 3;
        Integer warmup;
        Integer iterations;
        Path out = Path.of("docs/benchmarks.md");
        Path chart = Path.of("docs/benchmarks/compare.svg");
        Path logDir = Path.of("metaroce-bench/target/compare-logs");
        String loadNote = "not stated (pass --load-note).";
        boolean noBoundsChecks;
        List<Integer> aeronMtus = List.of(4096, 8192, 65504);
        String only;
        String idle = "auto";
        long seed = 42;

        static Options parse(final String[] args) {
            final Options o = new Options();
            for (int i = 0; i < args.length; i++) {
                final String a = args[i];
                switch (a) {
                    case "--quick" -> o.quick = true;
                    case "--no-bounds-checks" -> o.noBoundsChecks = true;
                    case "--rounds" -> o.rounds = positive(a, value(args, ++i, a));
                    case "--warmup" -> o.warmup = positive(a, value(args, ++i, a));
                    case "--iterations" -> o.iterations = positive(a, value(args, ++i, a));
                    case "--aeron-mtus" -> o.aeronMtus = mtus(a, value(args, ++i, a));
                    case "--seed" -> o.seed = Long.parseLong(value(args, ++i, a));
                    case "--out" -> o.out = Path.of(value(args, ++i, a));
                    case "--chart" -> o.chart = Path.of(value(args, ++i, a));
                    case "--logs" -> o.logDir = Path.of(value(args, ++i, a));
                    case "--load-note" -> o.loadNote = value(args, ++i, a);
                    case "--only" -> o.only = value(args, ++i, a);
                    case "--idle" -> {
                        o.idle = value(args, ++i, a);
                        try {
                            Idle.resolve(o.idle, true);
                        } catch (final IllegalArgumentException ex) {
                            throw new UsageException("--" + ex.getMessage());
                        }
                    }
                    case "-h", "--help" -> throw new UsageException(null);
                    default -> throw new UsageException("unknown option '" + a + "'");
                }
            }
            return o;
        }

        private static String value(final String[] args, final int i, final String option) {
            if (i >= args.length) {
                throw new UsageException(option + " needs a value");
            }
            return args[i];
        }

        private static List<Integer> mtus(final String option, final String text) {
            final List<Integer> list = new ArrayList<>();
            for (final String part : text.split(",")) {
                final int mtu = positive(option, part.trim());
                if (mtu < 4096 || mtu > 65504) {
                    throw new UsageException(option + " takes Aeron MTUs of 4096..65504 bytes, got " + mtu);
                }
                list.add(mtu);
            }
            return List.copyOf(list);
        }

        private static int positive(final String option, final String text) {
            final int v;
            try {
                v = Integer.parseInt(text);
            } catch (final NumberFormatException ex) {
                throw new UsageException(option + " needs a positive integer, got '" + text + "'");
            }
            if (v < 1) {
                throw new UsageException(option + " needs a positive integer, got " + v);
            }
            return v;
        }
    }

    /** Bad arguments: the message names the problem (null: help was asked for). */
    static final class UsageException extends RuntimeException {
        private static final long serialVersionUID = 1L;

        UsageException(final String message) {
            super(message);
        }
    }

    static final String USAGE = String.join("\n",
        "Usage: metaroce-bench/compare.sh [options]",
        "  --quick              the target figures only, 1 s warm-up + 2 s measurement per run (~3 min)",
        "                       (default: every figure, 2 s + 3 s per run, ~8 min on 2 cores)",
        "  --rounds N           repetitions of every figure (default 3)",
        "  --warmup N           warm-up iterations of 1 s per run",
        "  --iterations N       measured iterations of 1 s per run",
        "  --only REGEX         only figures whose id matches (e.g. 'bw/.*/65536', 'pingpong/.*')",
        "  --load-note TEXT     what else ran on the machine (goes into the report)",
        "  --no-bounds-checks   run with -Dagrona.disable.bounds.checks=true",
        "  --idle auto|spin|backoff  how every contender's two threads wait (default auto: as the",
        "                       metaroce tools, spin unless a bandwidth run would leave no core free)",
        "  --aeron-mtus LIST    Aeron MTUs measured for bandwidth (default 4096,8192,65504: the",
        "                       targets' MTU, Aeron's recommended and its largest; the targets take",
        "                       Aeron's best up to 4096 and show its best at any MTU beside)",
        "  --out FILE           the report (default docs/benchmarks.md)",
        "  --chart FILE         the SVG chart (default docs/benchmarks/compare.svg)",
        "  --logs DIR           JMH logs of every run (default metaroce-bench/target/compare-logs)",
        "  --seed N             seed of the first round's order (default 42)");

    /** @return the figures of this run, in their first round's order */
    static List<Cell> plan(final Options o) {
        final List<Cell> cells = new ArrayList<>();
        if (o.quick) {
            cells.add(Report.bw(Contender.METAROCE_WRITE, 65536));
            for (final int mtu : o.aeronMtus) {
                cells.add(Report.aeron(4096, mtu));
            }
            cells.add(Report.aeron(65536, o.aeronMtus.get(0)));
            cells.add(Report.bw(Contender.RAW_UDP, 65536));
            cells.add(Report.bw(Contender.TCP, 65536));
            cells.add(Report.bw(Contender.UDP_CEILING, 65536));
        } else {
            for (final int size : SIZES) {
                for (final Contender c : Contender.values()) {
                    if (c == Contender.AERON) {
                        for (final int mtu : o.aeronMtus) {
                            cells.add(Report.aeron(size, mtu));
                        }
                    } else if (c.stream) {
                        cells.add(Report.bw(c, size));
                    }
                }
            }
        }
        for (final Contender c : Contender.values()) {
            if (c.pingPong) {
                cells.add(Report.pp(c));
            }
        }
        cells.add(Report.engine());
        // The native UDP ceiling needs JDK 22+ on Linux: without it the run goes on without it.
        final String ceilingMissing = Contender.UDP_CEILING.unavailabilityReason();
        cells.removeIf(c -> c.contender() != null && c.contender().unavailabilityReason() != null);
        if (o.only != null) {
            cells.removeIf(c -> !c.id().matches(o.only));
            if (cells.isEmpty()) {
                throw new UsageException("--only '" + o.only + "' matches no figure" + (ceilingMissing == null ? ""
                    : " (" + Contender.UDP_CEILING.label + " is left out: " + ceilingMissing + ")"));
            }
        }
        Collections.shuffle(cells, new Random(o.seed));
        return cells;
    }

    /** @return the order of round {@code round}: rotated by a share of the list, reversed every other round */
    static List<Cell> order(final List<Cell> first, final int round, final int rounds) {
        final List<Cell> cells = new ArrayList<>(first);
        Collections.rotate(cells, -(round * Math.max(1, cells.size() / rounds)));
        if (round % 2 == 1) {
            Collections.reverse(cells);
        }
        return cells;
    }

    public static void main(final String[] args) {
        System.exit(run(args, System.out, System.err));
    }

    static int run(final String[] args, final PrintStream out, final PrintStream err) {
        final Options o;
        final List<Cell> cells;
        try {
            o = Options.parse(args);
            cells = plan(o);
        } catch (final UsageException ex) {
            if (ex.getMessage() == null) {
                out.println(USAGE);
                return 0;
            }
            err.println("compare: " + ex.getMessage());
            err.println(USAGE);
            return 2;
        }
        final int warmup = o.warmup != null ? o.warmup : o.quick ? 1 : 2;
        final int iterations = o.iterations != null ? o.iterations : o.quick ? 2 : 3;
        final File logDir = o.logDir.toFile();
        if (!logDir.isDirectory() && !logDir.mkdirs()) {
            err.println("compare: cannot create " + logDir);
            return 1;
        }
        final CellRunner runner = new CellRunner(warmup, iterations, o.noBoundsChecks, o.idle, logDir);
        final String started = ZonedDateTime.now(ZoneOffset.UTC).format(DateTimeFormatter.ofPattern(
            "yyyy-MM-dd HH:mm 'UTC'", Locale.ROOT));
        final String startLoad = Machine.loadText();
        final long t0 = System.nanoTime();
        final String ceilingMissing = Contender.UDP_CEILING.unavailabilityReason();
        if (ceilingMissing != null) {
            out.println("compare: " + Contender.UDP_CEILING.label + " not measured: " + ceilingMissing);
        }
        out.printf(Locale.ROOT, "compare: %d figures x %d rounds, %d s warm-up + %d s measurement each; load %s%n",
            cells.size(), o.rounds, warmup, iterations, startLoad);
        final Map<Cell, List<Figure>> figures = new LinkedHashMap<>();
        final List<String> failures = new ArrayList<>();
        for (int round = 0; round < o.rounds; round++) {
            for (final Cell cell : order(cells, round, o.rounds)) {
                try {
                    final Figure f = runner.run(cell, round);
                    figures.computeIfAbsent(cell, c -> new ArrayList<>()).add(f);
                    out.printf(Locale.ROOT, "  round %d  %-28s %10s %s   %s B/op   (load %s)%n", round + 1, cell.id(),
                        Report.number(f.value()), unit(cell), Report.number(f.allocBytesPerOp()), Machine.loadText());
                } catch (final RuntimeException ex) {
                    failures.add("round " + (round + 1) + " " + cell.id() + ": " + ex.getMessage());
                    err.println("  round " + (round + 1) + "  " + cell.id() + " FAILED: " + ex.getMessage());
                }
            }
        }
        final long elapsed = (System.nanoTime() - t0) / 1_000_000_000L;
        final Path chartRelative = o.out.toAbsolutePath().getParent().relativize(o.chart.toAbsolutePath());
        final Report.Settings settings = new Report.Settings("metaroce-bench/compare.sh " + String.join(" ", args),
            o.rounds, warmup, iterations, o.aeronMtus, o.noBoundsChecks, Idle.resolve(o.idle, true),
            Idle.resolve(o.idle, false), o.loadNote, startLoad, Machine.loadText(),
            started, elapsed, o.seed, chartRelative.toString().replace(File.separatorChar, '/'));
        final Report report = new Report(figures, settings, SIZES);
        try {
            String md = report.markdown();
            if (!failures.isEmpty()) {
                md += "\n## Failed runs\n\n" + String.join("\n", failures.stream().map(f -> "- " + f).toList()) + "\n";
            }
            write(o.out, md);
            write(o.chart, report.chart());
        } catch (final IOException ex) {
            err.println("compare: cannot write the report: " + ex);
            return 1;
        }
        out.println("compare: wrote " + o.out + " and " + o.chart + " in " + elapsed + " s");
        return failures.isEmpty() ? 0 : 1;
    }

    private static String unit(final Cell cell) {
        return switch (cell.kind()) {
            case BANDWIDTH -> "Gb/s";
            case PING_PONG -> "us p50 RTT";
            case ENGINE -> "M pkt/s";
        };
    }

    private static void write(final Path file, final String text) throws IOException {
        final Path parent = file.toAbsolutePath().getParent();
        if (parent != null) {
            Files.createDirectories(parent);
        }
        Files.writeString(file, text, StandardCharsets.UTF_8);
    }
}
