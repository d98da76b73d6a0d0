// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.bench.compare;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.ToDoubleFunction;

import org.metaroce.bench.loopback.Contender;
import org.metaroce.bench.loopback.Idle;

/**
 * Writes {@code docs/benchmarks.md} from the figures of one comparison run: the machine and its
 * load, how it was measured, the targets as ratios with pass/miss marks, tables of
 * absolute figures (median and min–max of the repetitions) with ratios to MetaRoCE, and the chart.
 */
final class Report {
    /** The run's settings, for the "how" section. */
    record Settings(String command, int rounds, int warmupIterations, int measurementIterations,
                    List<Integer> aeronMtus, boolean noBoundsChecks, Idle bandwidthIdle, Idle pingPongIdle, String loadNote, String startLoad, String endLoad, String started,
                    long elapsedSeconds, long seed, String chartPath) {
    }

    private final Map<Cell, List<Figure>> figures;
    private final Settings settings;
    private final List<Integer> sizes;

    Report(final Map<Cell, List<Figure>> figures, final Settings settings, final List<Integer> sizes) {
        this.figures = new LinkedHashMap<>(figures);
        this.settings = settings;
        this.sizes = sizes;
    }

    /** @return {@code v} with 3 significant digits (at least 2 decimals below 10) */
    static String number(final double v) {
        if (Double.isNaN(v)) {
            return "–";
        }
        final double a = Math.abs(v);
        if (a >= 100) {
            return String.format(Locale.ROOT, "%.0f", v);
        }
        if (a >= 10) {
            return String.format(Locale.ROOT, "%.1f", v);
        }
        return String.format(Locale.ROOT, "%.2f", v);
    }

    private Stats stats(final Cell cell, final ToDoubleFunction<Figure> f) {
        final List<Figure> list = figures.get(cell);
        if (list == null || list.isEmpty()) {
            return null;
        }
        final List<Double> values = new ArrayList<>();
        for (final Figure fig : list) {
            values.add(f.applyAsDouble(fig));
        }
        return Stats.of(values);
    }

    private Stats value(final Cell cell) {
        return stats(cell, Figure::value);
    }

    private String cellText(final Stats s) {
        if (s == null) {
            return "not measured";
        }
        return "**" + number(s.median()) + "** (" + number(s.min()) + "–" + number(s.max()) + ")"
            + (s.count() < settings.rounds() ? " n=" + s.count() + " of " + settings.rounds() : "");
    }

    private static String ratio(final Stats x, final Stats reference) {
        return x == null || reference == null || reference.median() == 0 ? "–"
            : String.format(Locale.ROOT, "%.2f", x.median() / reference.median());
    }

    static Cell bw(final Contender c, final int size) {
        return new Cell(Cell.Kind.BANDWIDTH, c, size);
    }

    static Cell aeron(final int size, final int mtu) {
        return new Cell(Cell.Kind.BANDWIDTH, Contender.AERON, size, mtu);
    }

    /** @return the bandwidth figures of one size, one per contender and Aeron MTU, in table order */
    private List<Cell> bandwidthRows(final int size) {
        final List<Cell> rows = new ArrayList<>();
        for (final Contender c : Contender.values()) {
            if (c == Contender.AERON) {
                for (final int mtu : settings.aeronMtus()) {
                    rows.add(aeron(size, mtu));
                }
            } else if (c.stream) {
                rows.add(bw(c, size));
            }
        }
        return rows;
    }

    /**
     * @return Aeron's best median at {@code size} over the MTUs measured up to {@code maxMtu}
     *     ("best-tuned"), or null
     */
    private Cell bestAeron(final int size, final int maxMtu) {
        Cell best = null;
        for (final int mtu : settings.aeronMtus()) {
            if (mtu > maxMtu) {
                continue;
            }
            final Stats s = value(aeron(size, mtu));
            if (s != null && (best == null || s.median() > value(best).median())) {
                best = aeron(size, mtu);
            }
        }
        return best;
    }

    static Cell pp(final Contender c) {
        return new Cell(Cell.Kind.PING_PONG, c, 64);
    }

    static Cell engine() {
        return new Cell(Cell.Kind.ENGINE, null, 65536);
    }

    /** @return the chart's SVG */
    String chart() {
        final List<SvgChart.Panel> panels = new ArrayList<>();
        for (final int size : sizes) {
            final List<SvgChart.Bar> bars = new ArrayList<>();
            for (final Cell cell : bandwidthRows(size)) {
                final Stats s = value(cell);
                if (s != null) {
                    bars.add(new SvgChart.Bar(cell.label(), s, cell.contender().name().startsWith("METAROCE")));
                }
            }
            if (!bars.isEmpty()) {
                panels.add(new SvgChart.Panel("Bandwidth, " + sizeText(size) + " messages", "Gb/s, higher is better",
                    bars));
            }
        }
        final List<SvgChart.Bar> lat = new ArrayList<>();
        for (final Contender c : Contender.values()) {
            final Stats s = value(pp(c));
            if (s != null) {
                lat.add(new SvgChart.Bar(c.label, s, c.name().startsWith("METAROCE")));
            }
        }
        if (!lat.isEmpty()) {
            panels.add(new SvgChart.Panel("Ping-pong 64 B, round trip p50", "µs, lower is better", lat));
        }
        return SvgChart.render("MetaRoCE vs Aeron, raw UDP and TCP on loopback (" + settings.started() + ")", panels);
    }

    static String sizeText(final int size) {
        return size % 1024 == 0 ? (size / 1024) + " KiB" : size + " B";
    }

    /** @return the Markdown document */
    String markdown() {
        final StringBuilder md = new StringBuilder(16384);
        md.append("# Benchmarks: MetaRoCE against Aeron, raw UDP and TCP\n\n");
        md.append("Written by `").append(settings.command()).append("` on ").append(settings.started())
            .append(" (").append(settings.elapsedSeconds() / 60).append(" min ").append(settings.elapsedSeconds() % 60)
            .append(" s). Re-run it and commit the result whenever performance work lands; ")
            .append("[the benchmark suites](benchmarks/) explain each benchmark.\n\n");
        md.append("> **Load:** ").append(settings.loadNote()).append(" Load average (1/5/15 min) at the start: ")
            .append(settings.startLoad()).append("; at the end: ").append(settings.endLoad())
            .append(". On a busy machine the absolute figures are noise; ratios from one run, with contenders ")
            .append("alternated, are what to read.\n\n");

        md.append("## Machine\n\n");
        for (final String line : Machine.describe()) {
            md.append("- ").append(line).append('\n');
        }
        md.append("\n## How it was measured\n\n");
        md.append("- Every figure is one JMH fork (a fresh JVM) of `LoopbackBandwidthBenchmark`, ")
            .append("`LoopbackPingPongBenchmark` or `EngineThroughputBenchmark` with the shared settings of ")
            .append("`BenchmarkBase` (Netty leak detection off, 1 GiB fixed heap")
            .append(settings.noBoundsChecks() ? ", Agrona bounds checks off" : ", Agrona bounds checks on")
            .append("), ").append(settings.warmupIterations()).append(" × 1 s warm-up, ")
            .append(settings.measurementIterations()).append(" × 1 s measurement, `-prof gc`.\n");
        md.append("- ").append(settings.rounds()).append(" rounds; each round runs every figure once, in an order ")
            .append("that rotates and reverses from round to round (seed ").append(settings.seed())
            .append("), so that drift of the machine's load spreads over all contenders. Tables show the median ")
            .append("and, in parentheses, the minimum–maximum of the rounds.\n");
        md.append("- Same thread budget for every contender: two threads, the benchmark thread ")
            .append("driving the sender (or pinger) and one peer thread driving the receiver (or echo), both ")
            .append("waiting the same way: bandwidth `").append(idle(settings.bandwidthIdle()))
            .append("`, ping-pong `").append(idle(settings.pingPongIdle()))
            .append("` (the `metaroce` tools' default on this machine: spin while the busy threads fit the cores, ")
            .append("but bandwidth runs spin only when a core stays free for the kernel's loopback processing; ")
            .append("backoff = spin, yield, then park 1–100 µs). ")
            .append("MetaRoCE: two INVOKER-mode `MetaRoceDevice`s on 127.0.0.1, one per thread, configured as ")
            .append("`metaroce write_bw --loopback` (4 paths, path MTU 4096, GSO with bursts of one GSO write: 15 packets, GRO on the native transport, 1 ms RTO floor), ")
            .append("128 work requests outstanding (READ: 16 in flight, the initiator depth). ")
            .append("Aeron 1.51.0: two embedded media drivers in INVOKER mode, one per thread (the sender's ")
            .append("thread invokes its driver and client conductor and offers; the receiver's thread invokes ")
            .append("its driver and polls), MTU ").append(String.join(" and ", settings.aeronMtus().stream()
                .map(String::valueOf).toList())).append(" (the targets take Aeron's best at an MTU up to 4096, the targets' MTU; its best at any MTU is shown beside), 2 MiB socket buffers, 2 MiB ")
            .append("receiver window, 16 MiB terms. Raw UDP: payload-only datagrams of up to 4096 B through the ")
            .append("same MetaRoCE device (sockets, epoll, sendmmsg/GSO, chunks), no protocol; loss is not ")
            .append("recovered. TCP: one NIO stream, TCP_NODELAY, default buffers, non-blocking. ")
            .append("UDP ceiling (native, JDK 22+): plain 4 KiB datagrams through the java.lang.foreign sockets ")
            .append("(org.metaroce.netty.linux), shaped as ../shared/perf/udpblast.c: sendmmsg of 32 messages × 15 ")
            .append("GSO segments on a connected socket, recvmmsg of 32 × 4 KiB, GRO off, the receiver sleeping in ")
            .append("epoll_wait when idle, 8 MiB socket buffers asked for; loss is not recovered.\n");
        md.append("- Bandwidth is bytes delivered (acknowledged or read for MetaRoCE, counted by the receiver for ")
            .append("the others) per second. Ping-pong is the full round trip (perftest prints half of it). ")
            .append("Allocation is bytes per message (round trip, 64 KiB WRITE) from JMH's GC profiler.\n\n");

        targets(md);
        md.append("Where MetaRoCE loses and why (profiles): [benchmarks/loopback.md]")
            .append("(benchmarks/loopback.md#what-limits-metaroce).\n\n");
        bandwidth(md);
        pingPong(md);
        engineSection(md);
        md.append("\n![MetaRoCE against Aeron, raw UDP and TCP](").append(settings.chartPath()).append(")\n");
        return md.toString();
    }

    private static String idle(final Idle idle) {
        return idle.name().toLowerCase(Locale.ROOT);
    }

    /** The MTU the targets of issue 8 are stated at. */
    static final int TARGET_MTU = 4096;

    private void targets(final StringBuilder md) {
        md.append("## Targets (issue 8)\n\n");
        md.append("| target | measured | ratio | mark |\n|---|---|---|---|\n");
        final Stats write64 = value(bw(Contender.METAROCE_WRITE, 65536));
        // The targets hold at a 4 KiB MTU: Aeron's best at an MTU up to that is the target's
        // reference; its best at any MTU (jumbo datagrams, which loopback allows) is shown beside it.
        final Cell bestAeron4 = bestAeron(4096, TARGET_MTU);
        final Stats aeron4 = bestAeron4 == null ? null : value(bestAeron4);
        final Cell bestAeronAny = bestAeron(4096, Integer.MAX_VALUE);
        final Stats aeronAny = bestAeronAny == null ? null : value(bestAeronAny);
        final Stats tcp64 = value(bw(Contender.TCP, 65536));
        final Stats raw64 = value(bw(Contender.RAW_UDP, 65536));
        final Stats sendPp = value(pp(Contender.METAROCE_SEND));
        final Stats aeronPp = value(pp(Contender.AERON));
        final Stats eng = value(engine());
        final Stats engAlloc = stats(engine(), Figure::allocBytesPerOp);
        row(md, "RDMA WRITE 64 KiB ≥ 2 × Aeron 4 KiB, both at the targets' 4 KiB MTU", "WRITE " + gbps(write64)
            + " vs Aeron " + gbps(aeron4) + (bestAeron4 == null ? "" : " (MTU " + bestAeron4.aeronMtu() + ")"),
            write64, aeron4, r -> r >= 2.0);
        if (bestAeronAny != null && bestAeronAny.aeronMtu() > TARGET_MTU) {
            row(md, "(beyond the targets) RDMA WRITE 64 KiB vs Aeron 4 KiB at Aeron's best MTU, 2 × wanted",
                "WRITE " + gbps(write64) + " vs Aeron " + gbps(aeronAny) + " (MTU " + bestAeronAny.aeronMtu() + ")",
                write64, aeronAny, r -> r >= 2.0);
        }
        row(md, "RDMA WRITE 64 KiB vs one TCP stream (goal: match it)", "WRITE " + gbps(write64) + " vs TCP "
            + gbps(tcp64), write64, tcp64, r -> r >= 1.0);
        row(md, "SEND 64 B ping-pong p50 ≤ Aeron's p50", "MetaRoCE " + us(sendPp) + " vs Aeron " + us(aeronPp),
            sendPp, aeronPp, r -> r <= 1.0);
        if (eng != null) {
            final boolean pps = eng.median() >= 3.0;
            final boolean zero = engAlloc != null && engAlloc.median() < 1.0;
            md.append("| engine in memory ≥ 3 M packets/s on one core, 0 B/op | ").append(number(eng.median()))
                .append(" M packets/s, ").append(engAlloc == null ? "–" : number(engAlloc.median()))
                .append(" B/op | ").append(String.format(Locale.ROOT, "%.2f", eng.median() / 3.0)).append(" | ")
                .append(pps && zero ? "**pass**" : "**miss**").append(" |\n");
        } else {
            md.append("| engine in memory ≥ 3 M packets/s on one core, 0 B/op | not measured | – | – |\n");
        }
        row(md, "(docs/perftest.md) WRITE 64 KiB ≥ 0.7 × raw UDP 64 KiB", "WRITE " + gbps(write64) + " vs raw UDP "
            + gbps(raw64), write64, raw64, r -> r >= 0.7);
        // Issue 15: against the physical limit of the UDP path (4 KiB datagrams, GSO, native sockets).
        final Stats ceiling64 = value(bw(Contender.UDP_CEILING, 65536));
        row(md, "(issue 15) RDMA WRITE 64 KiB ≥ 0.8 × the UDP ceiling", "WRITE " + gbps(write64) + " vs ceiling "
            + gbps(ceiling64), write64, ceiling64, r -> r >= 0.8);
        row(md, "(issue 15) raw UDP through the device ≥ 0.9 × the UDP ceiling", "raw UDP " + gbps(raw64)
            + " vs ceiling " + gbps(ceiling64), raw64, ceiling64, r -> r >= 0.9);
        md.append('\n');
    }

    private interface Check {
        boolean pass(double ratio);
    }

    private static void row(final StringBuilder md, final String target, final String measured, final Stats x,
                            final Stats reference, final Check check) {
        md.append("| ").append(target).append(" | ");
        if (x == null || reference == null) {
            md.append("not measured | – | – |\n");
            return;
        }
        final double r = x.median() / reference.median();
        md.append(measured).append(" | ").append(String.format(Locale.ROOT, "%.2f", r)).append(" | ")
            .append(check.pass(r) ? "**pass**" : "**miss**").append(" |\n");
    }

    private static String gbps(final Stats s) {
        return s == null ? "–" : number(s.median()) + " Gb/s";
    }

    private static String us(final Stats s) {
        return s == null ? "–" : number(s.median()) + " µs";
    }

    private void bandwidth(final StringBuilder md) {
        md.append("## Bandwidth (Gb/s delivered; ratio = contender ÷ MetaRoCE WRITE of the same size)\n\n");
        md.append("| contender |");
        for (final int size : sizes) {
            md.append(' ').append(sizeText(size)).append(" | ratio | B/msg |");
        }
        md.append("\n|---|");
        for (int i = 0; i < sizes.size(); i++) {
            md.append("---|---|---|");
        }
        md.append('\n');
        for (final Cell row : bandwidthRows(sizes.get(0))) {
            boolean any = false;
            final StringBuilder line = new StringBuilder("| ").append(row.label()).append(" |");
            for (final int size : sizes) {
                final Cell cell = new Cell(row.kind(), row.contender(), size, row.aeronMtu());
                final Stats s = value(cell);
                final Stats alloc = stats(cell, Figure::allocBytesPerOp);
                any |= s != null;
                line.append(' ').append(cellText(s)).append(" | ")
                    .append(ratio(s, value(bw(Contender.METAROCE_WRITE, size)))).append(" | ")
                    .append(alloc == null ? "–" : number(alloc.median())).append(" |");
            }
            if (any) {
                md.append(line).append('\n');
            }
        }
        md.append('\n');
    }

    private void pingPong(final StringBuilder md) {
        md.append("## Ping-pong, 64 B (round trip µs; ratio = contender ÷ MetaRoCE SEND)\n\n");
        md.append("| contender | p50 | ratio | p99 | B/round trip |\n|---|---|---|---|---|\n");
        final Stats reference = value(pp(Contender.METAROCE_SEND));
        for (final Contender c : Contender.values()) {
            if (!c.pingPong) {
                continue;
            }
            final Stats s = value(pp(c));
            if (s == null) {
                continue;
            }
            final Stats p99 = stats(pp(c), Figure::p99);
            final Stats alloc = stats(pp(c), Figure::allocBytesPerOp);
            md.append("| ").append(c.label).append(" | ").append(cellText(s)).append(" | ").append(ratio(s, reference))
                .append(" | ").append(p99 == null ? "–" : number(p99.median())).append(" | ")
                .append(alloc == null ? "–" : number(alloc.median())).append(" |\n");
        }
        md.append('\n');
    }

    private void engineSection(final StringBuilder md) {
        final Stats eng = value(engine());
        if (eng == null) {
            return;
        }
        final Stats alloc = stats(engine(), Figure::allocBytesPerOp);
        md.append("## Engine in memory (one thread, two endpoints, no sockets, 64 KiB WRITEs)\n\n");
        md.append("| packets/s (data + ACK) | B per 64 KiB WRITE |\n|---|---|\n");
        md.append("| ").append(cellText(eng)).append(" M | ").append(alloc == null ? "–" : number(alloc.median()))
            .append(" |\n");
    }
}
