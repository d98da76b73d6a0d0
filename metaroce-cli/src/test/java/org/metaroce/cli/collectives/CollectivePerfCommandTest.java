// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.cli.collectives;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.metaroce.cli.Metaroce;
import picocli.CommandLine;

/**
 * The nccl-tests-style tools with {@code --ranks 3} in this process: the sweep's rows (size,
 * count, type, redop, time, algbw, busbw, #wrong, out of place and in place), every result
 * checked (#wrong 0), and argument errors.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class CollectivePerfCommandTest {
    record Run(int exitCode, String out, String err) {
        @Override
        public String toString() {
            return "exit " + exitCode + "\n--- stdout\n" + out + "--- stderr\n" + err;
        }
    }

    static Run run(final String... given) {
        // A short JIT warm-up (the default is at least 5 s): the rows' values are not under test here.
        final List<String> list = new ArrayList<>(List.of(given));
        if (list.contains("--ranks") && !list.contains("--jit-warmup")) {
            list.add("--jit-warmup");
            list.add("0.2");
        }
        final String[] args = list.toArray(new String[0]);
        final StringWriter out = new StringWriter();
        final StringWriter err = new StringWriter();
        final CommandLine cl = Metaroce.commandLine();
        cl.setOut(new PrintWriter(out, true));
        cl.setErr(new PrintWriter(err, true));
        final int code = cl.execute(args);
        return new Run(code, out.toString(), err.toString());
    }

    /** @return the table's rows, split into cells */
    static List<String[]> rows(final Run run) {
        final List<String[]> rows = new ArrayList<>();
        for (final String line : run.out().split("\\R")) {
            if (!line.startsWith("#") && !line.isBlank()) {
                rows.add(line.trim().split("\\s+"));
            }
        }
        return rows;
    }

    @ParameterizedTest
    @ValueSource(strings = {"all_reduce_perf", "all_gather_perf", "reduce_scatter_perf", "broadcast_perf",
        "all_to_all_perf"})
    void sweepIsCheckedAndPrinted(final String tool) {
        final Run r = run(tool, "--ranks", "3", "-b", "24", "-e", "96K", "-f", "8", "-n", "2", "-w", "1",
            "--chunk", "8K");
        assertThat(r.exitCode()).as(r::toString).isZero();
        assertThat(r.out()).contains("3 ranks in this process").contains("# Out of bounds values : 0 OK")
            .contains("#wrong");
        final List<String[]> rows = rows(r);
        assertThat(rows).as(r::toString).hasSize(5); // 24, 192, 1536, 12288, 98304
        final long[] sizes = {24, 192, 1536, 12288, 98304};
        for (int i = 0; i < rows.size(); i++) {
            final String[] cells = rows.get(i);
            assertThat(cells).as(r::toString).hasSize(13);
            assertThat(Long.parseLong(cells[0])).isEqualTo(sizes[i]);
            assertThat(Long.parseLong(cells[1])).isEqualTo(sizes[i] / 4);
            assertThat(cells[2]).isEqualTo("float");
            assertThat(cells[3]).isEqualTo(tool.equals("all_reduce_perf") || tool.equals("reduce_scatter_perf")
                ? "sum" : "none");
            // nccl-tests' root column: the root of a rooted collective (--root, default 0), else -1.
            assertThat(cells[4]).isEqualTo(tool.equals("broadcast_perf") ? "0" : "-1");
            assertThat(Double.parseDouble(cells[5])).isPositive();
            assertThat(cells[8]).isEqualTo("0");
            assertThat(cells[12]).isEqualTo("0");
        }
    }

    @Test
    void pinRanksPinsTheRankThreadsOrSaysWhyItCannot() {
        final Run r = run("all_reduce_perf", "--ranks", "4", "--pin-ranks", "-b", "8", "-e", "8", "-n", "2", "-w", "0");
        if (org.metaroce.netty.CpuAffinity.isAvailable()) {
            final int[] cpus = org.metaroce.netty.CpuAffinity.allowedCpus();
            assertThat(r.exitCode()).as(r::toString).isZero();
            assertThat(r.out()).contains("# rank threads pinned to CPUs [" + cpus[0] + ", " + cpus[1 % cpus.length]);
            assertThat(rows(r)).allSatisfy(c -> assertThat(c[8] + c[12]).isEqualTo("00"));
            // The header counts the process's processors, not the one a pinned rank thread may use.
            assertThat(r.out()).contains(", " + Runtime.getRuntime().availableProcessors() + " cores");
        } else {
            assertThat(r.exitCode()).as(r::toString).isEqualTo(2);
            assertThat(r.err()).contains("--pin-ranks needs thread affinity, which this JVM lacks: "
                + org.metaroce.netty.CpuAffinity.unavailabilityReason().orElseThrow());
        }
        // A launched rank is bound by its launcher, not by the tool.
        final Run launched = run("all_reduce_perf", "--pin-ranks", "--rank", "0", "--world-size", "1", "-b", "8",
            "-e", "8");
        assertThat(launched.exitCode()).as(launched::toString).isEqualTo(2);
        assertThat(launched.err()).contains("a launched rank is bound by its launcher");
    }

    @Test
    void everyTypeAndReduction() {
        final Run r = run("all_reduce_perf", "--ranks", "2", "-b", "1K", "-e", "1K", "-d", "all", "-o", "all",
            "-n", "1", "-w", "0");
        assertThat(r.exitCode()).as(r::toString).isZero();
        final List<String[]> rows = rows(r);
        assertThat(rows).hasSize(24);
        assertThat(rows).extracting(c -> c[2] + "/" + c[3]).contains("float/sum", "double/prod", "int32/min",
            "int64/max", "bfloat16/sum", "bfloat16/prod", "half/min", "half/sum");
        assertThat(rows).allSatisfy(c -> assertThat(c[8] + c[12]).isEqualTo("00"));
    }

    @ParameterizedTest
    @ValueSource(strings = {"all_reduce_perf", "all_gather_perf", "reduce_scatter_perf", "broadcast_perf",
        "all_to_all_perf"})
    @DisplayName("COLL-031: every tool with -d bf16 and -d half, every reduction, checked")
    void sixteenBitFloats(final String tool) {
        for (final String type : new String[] {"bf16", "half"}) {
            final Run r = run(tool, "--ranks", "3", "-b", "6K", "-e", "6K", "-d", type, "-o", "all", "-n", "1", "-w",
                "0", "--chunk", "2K");
            assertThat(r.exitCode()).as(r::toString).isZero();
            final List<String[]> rows = rows(r);
            assertThat(rows).as(r::toString).hasSize(tool.equals("all_reduce_perf") || tool.equals("reduce_scatter_perf")
                ? 4 : 1);
            assertThat(rows).allSatisfy(c -> {
                assertThat(c[2]).isEqualTo(type.equals("bf16") ? "bfloat16" : "half");
                assertThat(Long.parseLong(c[1])).isEqualTo(3072);
                assertThat(c[8] + c[12]).isEqualTo("00");
            });
        }
    }

    @Test
    @DisplayName("COLL-029, COLL-030: INVOKER ranks, and the wire baseline before and after the sweep")
    void invokerRanksAndBaseline() {
        final Run r = run("all_reduce_perf", "--ranks", "3", "-b", "1K", "-e", "64K", "-f", "64", "-n", "2", "-w", "1",
            "--chunk", "8K", "--driver", "invoker", "--baseline", "--cpu", "--median");
        assertThat(r.exitCode()).as(r::toString).isZero();
        assertThat(rows(r)).as(r::toString).hasSize(2).allSatisfy(c -> assertThat(c[8] + c[12]).isEqualTo("00"));
        // COLL-037: by default Rabenseifner's all-reduce runs above the latency threshold up to 1 GiB (v1.0.18).
        assertThat(r.out()).contains("#  all-reduce one-shot up to 4096 B, recursive doubling up to 65536 B, "
                + "Rabenseifner up to 1073741824 B (from above 32768 B on 4 ranks or more), then the ring")
            .containsPattern("# JIT warm-up: [0-9]+ rounds of the sweep's rows up to 65536 B in [0-9.]+ s")
            .containsPattern("# ring baseline before .*: 65536 B .* busbw [0-9.]+ GB/s")
            .containsPattern("# ring baseline after .*: 65536 B .* busbw [0-9.]+ GB/s")
            .containsPattern("# busbw / ring baseline busbw .* out-of-place [0-9.]+, in-place [0-9.]+")
            .containsPattern("# cpu: n/a \\(timed for less than 200 ms: raise -n\\)")
            .containsPattern("# median iteration: out-of-place [0-9.]+ us, in-place [0-9.]+ us");
        final Run blocking = run("all_reduce_perf", "--ranks", "3", "-b", "8", "-e", "64K", "-f", "8192", "-n", "3",
            "-w", "1", "--chunk", "8K", "--driver", "invoker", "--wait", "block");
        assertThat(blocking.exitCode()).as(blocking::toString).isZero();
        assertThat(rows(blocking)).as(blocking::toString).hasSize(2).allSatisfy(c -> assertThat(c[8] + c[12]).isEqualTo("00"));
        assertThat(blocking.out()).contains("ranks block in their devices (INVOKER)");
        // COLL-036, COLL-013, COLL-037: the thresholds choose the algorithm per size; 1 KiB by recursive
        // doubling, 8 KiB by Rabenseifner, 64 KiB by the ring, each checked element by element.
        final Run thresholds = run("all_reduce_perf", "--ranks", "5", "-b", "1K", "-e", "64K", "-f", "8", "-n", "2",
            "-w", "1", "--chunk", "8K", "--one-shot", "0", "--small", "2K", "--rabenseifner", "16K");
        assertThat(thresholds.exitCode()).as(thresholds::toString).isZero();
        assertThat(rows(thresholds)).as(thresholds::toString).hasSize(3)
            .allSatisfy(c -> assertThat(c[8] + c[12]).isEqualTo("00"));
        assertThat(thresholds.out()).contains("#  all-reduce one-shot up to 0 B, recursive doubling up to 2048 B, "
            + "Rabenseifner up to 16384 B (from above 2048 B on 4 ranks or more), then the ring; broadcast and reduce "
            + "trees up to 2048 B, then chains");
        assertThat(run("all_reduce_perf", "--ranks", "2", "--rabenseifner", "-1").err())
            .contains("rabenseifnerAllReduceBytes must be >= 0");
        assertThat(run("all_reduce_perf", "--ranks", "2", "--rabenseifner-above", "-1").err())
            .contains("rabenseifnerAllReduceAboveBytes must be >= 0");
        assertThat(run("all_reduce_perf", "--ranks", "2", "--small", "-1").err()).contains("smallAllReduceBytes must be >= 0");
        assertThat(run("all_reduce_perf", "--ranks", "2", "--wait", "doze").err())
            .contains("--wait must be auto, spin, backoff, park or block");
        assertThat(run("all_gather_perf", "--ranks", "2", "--baseline").err()).contains("--baseline is for all_reduce_perf");
        assertThat(run("all_reduce_perf", "--ranks", "2", "--driver", "none").err())
            .contains("--driver must be auto, shared, dedicated or invoker");
    }

    @Test
    void argumentErrors() {
        assertThat(run("all_reduce_perf", "--ranks", "2", "-d", "float8").err()).contains("unknown data type 'float8'");
        assertThat(run("all_reduce_perf", "--ranks", "2", "-o", "avg").err()).contains("unknown reduction 'avg'");
        assertThat(run("all_reduce_perf", "--ranks", "2", "-b", "1M", "-e", "1K").exitCode()).isEqualTo(2);
        assertThat(run("broadcast_perf", "--ranks", "2", "-r", "2").err()).contains("--root must be below --ranks");
        assertThat(run("all_reduce_perf", "--rank", "0", "--world-size", "2").err())
            .contains("needs all of --rank, --world-size and --master");
        assertThat(run("all_reduce_perf", "--rank", "2", "--world-size", "2", "--master", "127.0.0.1").err())
            .contains("rank 2 is outside 0..1");
        assertThat(run("all_reduce_perf", "--ranks", "2", "--rank", "0").err()).contains("does not combine");
    }
}
