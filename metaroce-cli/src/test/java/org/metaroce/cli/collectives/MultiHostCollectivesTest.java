// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.cli.collectives;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Four hosts: four network namespaces, each with a veth pair whose other end sits on a bridge in
 * a fifth ("switch") namespace, addresses 10.202.N.1..4/24 that exist only inside the namespaces
 * this test creates and deletes. One rank per namespace runs as its own JVM ({@code metaroce
 * all_reduce_perf} / {@code all_to_all_perf}) bootstrapped from torchrun-style variables with
 * rank 0's address as MASTER_ADDR; every rank checks every element of its results and exits 0.
 * Needs root and iproute2 ({@code ip netns}); skipped with the reason otherwise.
 */
@Timeout(value = 240, unit = TimeUnit.SECONDS)
class MultiHostCollectivesTest {
    static final String SKIP = "needs root and iproute2 network namespaces (ip netns add) to create 4 hosts; "
        + "CI runs as root";
    static final long SETUP_TIMEOUT_S = 10;
    static final long RUN_TIMEOUT_S = 120;
    static final int RANKS = 4;

    private static Boolean usable;
    private static String why = SKIP;

    private final List<Process> processes = new ArrayList<>();
    private final List<Path> files = new ArrayList<>();
    private final List<String> namespaces = new ArrayList<>();
    private final String[] addresses = new String[RANKS];
    private String id;

    record Result(int exit, String out, String err) {
        @Override
        public String toString() {
            return "exit " + exit + "\n--- stdout\n" + out + "--- stderr\n" + err;
        }
    }

    static synchronized boolean usable() {
        if (usable == null) {
            boolean ok;
            try {
                final String probe = String.format(Locale.ROOT, "mrcprobe-%06x", ThreadLocalRandom.current()
                    .nextInt(1 << 24));
                ok = run("id", "-u").out().trim().equals("0") && run("ip", "netns", "add", probe).exit() == 0;
                if (ok) {
                    // The kernel must also offer bridges and veth pairs (modules may be missing).
                    final Result bridge = run("ip", "-n", probe, "link", "add", "br0", "type", "bridge");
                    final Result veth = run("ip", "-n", probe, "link", "add", "v0", "type", "veth", "peer", "name", "v1");
                    if (bridge.exit() != 0 || veth.exit() != 0) {
                        why = "the kernel cannot create a bridge or a veth pair in a network namespace ("
                            + (bridge.exit() != 0 ? bridge.err().trim() : veth.err().trim()) + ")";
                        ok = false;
                    }
                    run("ip", "netns", "del", probe);
                }
            } catch (final IOException | RuntimeException ex) {
                ok = false;
            }
            usable = ok;
        }
        return usable;
    }

    static Result run(final String... command) throws IOException {
        final Path out = Files.createTempFile("metaroce-coll-netns", ".out");
        final Path err = Files.createTempFile("metaroce-coll-netns", ".err");
        try {
            final Process p = new ProcessBuilder(command).redirectOutput(out.toFile()).redirectError(err.toFile())
                .start();
            try {
                if (!p.waitFor(SETUP_TIMEOUT_S, TimeUnit.SECONDS)) {
                    p.destroyForcibly();
                    p.waitFor(5, TimeUnit.SECONDS);
                    return new Result(-1, read(out), read(err) + "\n(timed out)");
                }
            } catch (final InterruptedException ex) {
                p.destroyForcibly();
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted", ex);
            }
            return new Result(p.exitValue(), read(out), read(err));
        } finally {
            Files.deleteIfExists(out);
            Files.deleteIfExists(err);
        }
    }

    static void must(final String... command) throws IOException {
        final Result r = run(command);
        if (r.exit() != 0) {
            throw new IllegalStateException(String.join(" ", command) + " failed: " + r);
        }
    }

    static String read(final Path p) {
        try {
            return Files.readString(p, StandardCharsets.UTF_8);
        } catch (final IOException ex) {
            return "(unreadable: " + ex + ")";
        }
    }

    private String ns(final int i) {
        return "mrc" + i + "-" + id;
    }

    private String sw() {
        return "mrcS-" + id;
    }

    @BeforeEach
    void createHosts() throws IOException {
        assumeTrue(usable(), () -> why);
        final ThreadLocalRandom r = ThreadLocalRandom.current();
        id = String.format(Locale.ROOT, "%06x", r.nextInt(1 << 24));
        final int subnet = 1 + r.nextInt(254);
        namespaces.add(sw());
        must("ip", "netns", "add", sw());
        must("ip", "-n", sw(), "link", "add", "br0", "type", "bridge");
        must("ip", "-n", sw(), "link", "set", "br0", "up");
        for (int i = 0; i < RANKS; i++) {
            final String host = ns(i);
            namespaces.add(host);
            must("ip", "netns", "add", host);
            // Created inside the host namespace, so no interface ever appears in this one.
            must("ip", "-n", host, "link", "add", "eth0", "type", "veth", "peer", "name", "port" + i, "netns", sw());
            addresses[i] = "10.202." + subnet + "." + (i + 1);
            must("ip", "-n", host, "addr", "add", addresses[i] + "/24", "dev", "eth0");
            must("ip", "-n", host, "link", "set", "lo", "up");
            must("ip", "-n", host, "link", "set", "eth0", "up");
            must("ip", "-n", sw(), "link", "set", "port" + i, "master", "br0");
            must("ip", "-n", sw(), "link", "set", "port" + i, "up");
        }
    }

    @AfterEach
    void deleteHosts() throws IOException {
        for (final Process p : processes) {
            if (p.isAlive()) {
                p.destroyForcibly();
            }
        }
        for (final Process p : processes) {
            try {
                p.waitFor(10, TimeUnit.SECONDS);
            } catch (final InterruptedException ex) {
                Thread.currentThread().interrupt();
            }
        }
        final List<String> problems = new ArrayList<>();
        for (final String ns : namespaces) {
            // Deleting a namespace deletes the veth ends in it, and with them their peers.
            if (run("ip", "netns", "list").out().contains(ns)) {
                final Result r = run("ip", "netns", "del", ns);
                if (r.exit() != 0) {
                    problems.add("ip netns del " + ns + ": " + r);
                }
            }
        }
        for (final Path f : files) {
            Files.deleteIfExists(f);
        }
        assertThat(problems).as("namespace cleanup").isEmpty();
    }

    static String classpath() {
        final String surefire = System.getProperty("surefire.test.class.path");
        return surefire != null && !surefire.isBlank() ? surefire : System.getProperty("java.class.path");
    }

    /** Starts rank {@code rank} of a tool in its namespace. */
    private Process start(final int rank, final Path out, final Path err, final String... args) throws IOException {
        final List<String> cmd = new ArrayList<>(List.of("ip", "netns", "exec", ns(rank),
            Path.of(System.getProperty("java.home"), "bin", "java").toString(),
            "--add-exports", "java.base/jdk.internal.misc=ALL-UNNAMED", "--enable-native-access=ALL-UNNAMED", "-cp", classpath(),
            "org.metaroce.cli.Metaroce"));
        cmd.addAll(List.of(args));
        final ProcessBuilder pb = new ProcessBuilder(cmd).redirectOutput(out.toFile()).redirectError(err.toFile());
        pb.environment().put("RANK", String.valueOf(rank));
        pb.environment().put("WORLD_SIZE", String.valueOf(RANKS));
        pb.environment().put("MASTER_ADDR", addresses[0]);
        pb.environment().put("MASTER_PORT", "29500");
        final Process p = pb.start();
        processes.add(p);
        return p;
    }

    private List<Result> runEverywhere(final String... args) throws Exception {
        final Process[] ps = new Process[RANKS];
        final Path[][] outErr = new Path[RANKS][2];
        for (int i = RANKS - 1; i >= 0; i--) { // rank 0 last: the others wait for the master
            outErr[i][0] = Files.createTempFile("metaroce-rank" + i, ".out");
            outErr[i][1] = Files.createTempFile("metaroce-rank" + i, ".err");
            files.add(outErr[i][0]);
            files.add(outErr[i][1]);
            ps[i] = start(i, outErr[i][0], outErr[i][1], args);
        }
        final List<Result> results = new ArrayList<>();
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(RUN_TIMEOUT_S);
        for (int i = 0; i < RANKS; i++) {
            final long left = Math.max(1, deadline - System.nanoTime());
            if (!ps[i].waitFor(left, TimeUnit.NANOSECONDS)) {
                ps[i].destroyForcibly();
                ps[i].waitFor(10, TimeUnit.SECONDS);
            }
            results.add(new Result(ps[i].isAlive() ? -1 : ps[i].exitValue(), read(outErr[i][0]), read(outErr[i][1])));
        }
        final StringBuilder all = new StringBuilder();
        for (int i = 0; i < RANKS; i++) {
            all.append("\n=== rank ").append(i).append(" in ").append(ns(i)).append(' ').append(results.get(i));
        }
        System.out.println("MultiHostCollectivesTest " + String.join(" ", args) + all);
        for (int i = 0; i < RANKS; i++) {
            assertThat(results.get(i).exit()).as("rank " + i + " exit code" + all).isZero();
        }
        assertThat(results.get(0).out()).as(all.toString()).contains("4 ranks (torchrun launch, master " + addresses[0]
            + ":29500)").contains("# Out of bounds values : 0 OK");
        for (int i = 1; i < RANKS; i++) {
            assertThat(results.get(i).out()).as(all.toString()).contains("rank " + i + ": 0 wrong");
        }
        return results;
    }

    @Test
    @DisplayName("COLL-025: four hosts all-reduce, every element checked")
    void allReduceAcrossFourHosts() throws Exception {
        final List<Result> r = runEverywhere("all_reduce_perf", "-b", "4K", "-e", "1M", "-f", "16", "-n", "2", "-w",
            "1", "--chunk", "64K", "--mtu", "1024", "-o", "all");
        assertThat(r.get(0).out().lines().filter(l -> !l.startsWith("#") && !l.isBlank()).count()).isEqualTo(12);
    }

    @Test
    @DisplayName("COLL-018: four hosts all-to-all, every element checked")
    void allToAllAcrossFourHosts() throws Exception {
        final List<Result> r = runEverywhere("all_to_all_perf", "-b", "4K", "-e", "1M", "-f", "16", "-n", "2", "-w",
            "1", "--chunk", "64K", "--mtu", "1024", "-d", "int64");
        assertThat(r.get(0).out().lines().filter(l -> !l.startsWith("#") && !l.isBlank()).count()).isEqualTo(3);
    }
}
