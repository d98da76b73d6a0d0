// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.bench.compare;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import javax.xml.parsers.DocumentBuilderFactory;

import org.junit.jupiter.api.Test;
import org.metaroce.bench.loopback.Contender;
import org.metaroce.bench.loopback.Idle;

/** The comparison's bookkeeping, without running a benchmark: schedule, statistics, report, chart, arguments. */
class CompareTest {
    @Test
    void everyRoundRunsEveryFigureOnceInAnotherOrder() {
        final List<Cell> first = Compare.plan(Compare.Options.parse(new String[0]));
        // 5 stream contenders (6 with the native UDP ceiling, JDK 22+) and Aeron at 3 MTUs, at 2
        // sizes; 4 ping-pongs; the engine.
        final int ceiling = Contender.UDP_CEILING.unavailabilityReason() == null ? 2 : 0;
        assertThat(first).hasSize(21 + ceiling).doesNotHaveDuplicates();
        final List<List<Cell>> rounds = new ArrayList<>();
        for (int r = 0; r < 3; r++) {
            final List<Cell> order = Compare.order(first, r, 3);
            assertThat(order).containsExactlyInAnyOrderElementsOf(first);
            rounds.add(order);
        }
        final HashSet<Cell> openers = new HashSet<>();
        for (final List<Cell> order : rounds) {
            openers.add(order.get(0));
        }
        assertThat(openers).as("each round starts with another figure").hasSize(3);
        assertThat(rounds.get(0)).isNotEqualTo(rounds.get(1));
    }

    @Test
    void quickPlanHoldsTheTargetFigures() {
        final List<Cell> quick = Compare.plan(Compare.Options.parse(new String[] {"--quick"}));
        assertThat(quick).contains(Report.bw(Contender.METAROCE_WRITE, 65536), Report.aeron(4096, 4096),
            Report.aeron(4096, 8192),
            Report.aeron(4096, 65504), Report.bw(Contender.TCP, 65536), Report.pp(Contender.METAROCE_SEND), Report.pp(Contender.AERON),
            Report.engine());
        assertThat(Compare.plan(Compare.Options.parse(new String[] {"--only", "pingpong/.*"})))
            .allMatch(c -> c.kind() == Cell.Kind.PING_PONG).hasSize(4);
    }

    @Test
    void statsTakeMedianMinAndMax() {
        assertThat(Stats.of(List.of(3.0, 1.0, 2.0))).isEqualTo(new Stats(2.0, 1.0, 3.0, 3));
        assertThat(Stats.of(List.of(4.0, 1.0, 2.0, 3.0))).isEqualTo(new Stats(2.5, 1.0, 4.0, 4));
    }

    @Test
    void reportMarksTargetsAndRatiosAndDrawsWellFormedSvg() throws Exception {
        final Map<Cell, List<Figure>> figures = new LinkedHashMap<>();
        put(figures, Report.bw(Contender.METAROCE_WRITE, 65536), 20, 18, 22);
        put(figures, Report.aeron(4096, 4096), 8, 7, 9);
        put(figures, Report.aeron(4096, 8192), 9, 8, 10);
        put(figures, Report.aeron(4096, 65504), 30, 29, 31);
        put(figures, Report.bw(Contender.TCP, 65536), 33, 30, 40);
        put(figures, Report.bw(Contender.RAW_UDP, 65536), 25, 24, 26);
        put(figures, Report.pp(Contender.METAROCE_SEND), 20, 19, 21);
        put(figures, Report.pp(Contender.AERON), 10, 9, 400);
        put(figures, Report.engine(), 3.1, 3.0, 3.2);
        final Report report = new Report(figures, new Report.Settings("compare.sh --quick", 3, 1, 2, List.of(4096, 8192, 65504), false,
            Idle.BACKOFF, Idle.SPIN, "quiet", "0.1 / 0.1 / 0.1", "0.2 / 0.1 / 0.1", "2026-11-30 12:00 UTC", 120, 42,
            "benchmarks/compare.svg"), List.of(4096, 65536));
        final String md = report.markdown();
        // The target takes Aeron's best at the targets' 4 KiB MTU (8 Gb/s at 4096, not 9 at 8192);
        // Aeron's best at any MTU (65504) is a row of its own.
        assertThat(md).contains("| RDMA WRITE 64 KiB ≥ 2 × Aeron 4 KiB, both at the targets' 4 KiB MTU | WRITE 20.0 Gb/s "
                + "vs Aeron 8.00 Gb/s (MTU 4096) | 2.50 | **pass** |")
            .contains("| (beyond the targets) RDMA WRITE 64 KiB vs Aeron 4 KiB at Aeron's best MTU, 2 × wanted | WRITE "
                + "20.0 Gb/s vs Aeron 30.0 Gb/s (MTU 65504) | 0.67 | **miss** |")
            .contains("| Aeron UDP (MTU 65504) | **30.0** (29.0–31.0) | – | 0.00 | not measured | – | – |")
            .contains("| RDMA WRITE 64 KiB vs one TCP stream (goal: match it) | WRITE 20.0 Gb/s vs TCP 33.0 Gb/s | 0.61 | **miss** |")
            .contains("| SEND 64 B ping-pong p50 ≤ Aeron's p50 | MetaRoCE 20.0 µs vs Aeron 10.0 µs | 2.00 | **miss** |")
            .contains("3.10 M packets/s")
            .contains("| TCP (1 NIO stream) | not measured | – | – | **33.0** (30.0–40.0) | 1.65 |")
            .contains("bandwidth `backoff`, ping-pong `spin`")
            .contains("](benchmarks/compare.svg)");
        final String svg = report.chart();
        DocumentBuilderFactory.newInstance().newDocumentBuilder()
            .parse(new ByteArrayInputStream(svg.getBytes(StandardCharsets.UTF_8)));
        assertThat(svg).contains("MetaRoCE WRITE").contains("(max 400)");
    }

    private static void put(final Map<Cell, List<Figure>> figures, final Cell cell, final double... values) {
        final List<Figure> list = new ArrayList<>();
        for (final double v : values) {
            list.add(new Figure(v, Double.NaN, 0.0));
        }
        figures.put(cell, list);
    }

    @Test
    void badArgumentsExitWith2AndNameTheProblem() {
        final ByteArrayOutputStream err = new ByteArrayOutputStream();
        final PrintStream errStream = new PrintStream(err, true, StandardCharsets.UTF_8);
        final PrintStream out = new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8);
        assertThat(Compare.run(new String[] {"--rounds", "0"}, out, errStream)).isEqualTo(2);
        assertThat(Compare.run(new String[] {"--idle", "nap"}, out, errStream)).isEqualTo(2);
        assertThat(Compare.run(new String[] {"--only", "nothing-matches"}, out, errStream)).isEqualTo(2);
        assertThat(Compare.run(new String[] {"--frobnicate"}, out, errStream)).isEqualTo(2);
        assertThat(Compare.run(new String[] {"--aeron-mtus", "8192,70000"}, out, errStream)).isEqualTo(2);
        assertThat(err.toString(StandardCharsets.UTF_8)).contains("--rounds needs a positive integer, got 0")
            .contains("idle must be spin, backoff or auto, got 'nap'").contains("matches no figure")
            .contains("unknown option '--frobnicate'").contains("4096..65504 bytes, got 70000");
    }
}
