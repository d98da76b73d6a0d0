// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.cli.collectives;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * One rank per JVM on this host, launched torchrun style (RANK, WORLD_SIZE, MASTER_ADDR=127.0.0.1,
 * MASTER_PORT): the multi-process path without root. Three processes run {@code metaroce
 * reduce_scatter_perf} with every result checked; a fourth configuration names a rank that never
 * starts, and the others must fail naming it instead of hanging.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class MultiProcessCollectivesTest {
    private final List<Process> processes = new ArrayList<>();
    private final List<Path> files = new ArrayList<>();

    @AfterEach
    void cleanUp() throws Exception {
        for (final Process p : processes) {
            if (p.isAlive()) {
                p.destroyForcibly();
                p.waitFor(10, TimeUnit.SECONDS);
            }
        }
        for (final Path f : files) {
            Files.deleteIfExists(f);
        }
    }

    private Process start(final int rank, final int worldSize, final int port, final Path out, final String... args)
        throws Exception {
        final List<String> cmd = new ArrayList<>(List.of(
            Path.of(System.getProperty("java.home"), "bin", "java").toString(),
            "--add-exports", "java.base/jdk.internal.misc=ALL-UNNAMED", "--enable-native-access=ALL-UNNAMED", "-cp", MultiHostCollectivesTest.classpath(),
            "org.metaroce.cli.Metaroce"));
        cmd.addAll(List.of(args));
        final ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(out.toFile());
        if (rank < 0) {
            return startProcess(pb); // explicit launch: the arguments say it all
        }
        pb.environment().put("RANK", String.valueOf(rank));
        pb.environment().put("WORLD_SIZE", String.valueOf(worldSize));
        pb.environment().put("MASTER_ADDR", "127.0.0.1");
        pb.environment().put("MASTER_PORT", String.valueOf(port));
        return startProcess(pb);
    }

    private Process startProcess(final ProcessBuilder pb) throws Exception {
        pb.environment().keySet().removeIf(k -> k.startsWith("SLURM_") || k.startsWith("OMPI_"));
        final Process p = pb.start();
        processes.add(p);
        return p;
    }

    private Path temp(final String name) throws Exception {
        final Path p = Files.createTempFile(name, ".out");
        files.add(p);
        return p;
    }

    static int freePort() throws Exception {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    @Test
    @DisplayName("COLL-021, COLL-022, COLL-025: three processes (two torchrun style, one explicit) meet and reduce-scatter")
    void threeProcesses() throws Exception {
        final int port = freePort();
        final Path[] outs = new Path[3];
        final Process[] ps = new Process[3];
        for (int r = 0; r < 3; r++) {
            outs[r] = temp("rank" + r);
            final List<String> args = new ArrayList<>(List.of("reduce_scatter_perf", "-b", "3K", "-e", "300K", "-f",
                "10", "-n", "2", "-w", "1", "-o", "all", "--chunk", "32K"));
            if (r == 2) {
                // Rank 2 is launched with explicit arguments and no launcher variables [COLL-022].
                args.addAll(List.of("--rank", "2", "--world-size", "3", "--master", "127.0.0.1:" + port));
            }
            ps[r] = start(r == 2 ? -1 : r, 3, port, outs[r], args.toArray(new String[0]));
        }
        final StringBuilder all = new StringBuilder();
        for (int r = 0; r < 3; r++) {
            assertThat(ps[r].waitFor(120, TimeUnit.SECONDS)).as("rank " + r + " finished").isTrue();
            all.append("\n=== rank ").append(r).append(" exit ").append(ps[r].exitValue()).append('\n')
                .append(Files.readString(outs[r]));
        }
        System.out.println("MultiProcessCollectivesTest" + all);
        for (int r = 0; r < 3; r++) {
            assertThat(ps[r].exitValue()).as(all.toString()).isZero();
        }
        final String rank0 = Files.readString(outs[0]);
        assertThat(rank0).contains("3 ranks (torchrun launch, master 127.0.0.1:" + port + ")")
            .contains("# Out of bounds values : 0 OK");
        assertThat(rank0.lines().filter(l -> !l.startsWith("#") && !l.isBlank()).count()).isEqualTo(12);
        assertThat(Files.readString(outs[1])).contains("rank 1: 0 wrong");
    }

    @Test
    @DisplayName("COLL-025: a rank that never starts is named, nobody hangs")
    void missingRankIsNamed() throws Exception {
        final int port = freePort();
        final Path out0 = temp("rank0");
        final Path out1 = temp("rank1");
        final Process p0 = start(0, 3, port, out0, "all_reduce_perf", "-b", "1K", "-e", "1K", "--timeout", "3");
        final Process p1 = start(1, 3, port, out1, "all_reduce_perf", "-b", "1K", "-e", "1K", "--timeout", "3");
        assertThat(p0.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(p1.waitFor(60, TimeUnit.SECONDS)).isTrue();
        final String o0 = Files.readString(out0);
        final String o1 = Files.readString(out1);
        assertThat(p0.exitValue()).as(o0).isEqualTo(1);
        assertThat(p1.exitValue()).as(o1).isEqualTo(1);
        assertThat(o0).contains("rank(s) [2] never showed up");
        assertThat(o1).contains("rank(s) [2] never showed up");
    }
}
