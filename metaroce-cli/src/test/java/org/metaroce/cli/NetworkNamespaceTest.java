// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.metaroce.cli.faults.TwoHosts;

/**
 * Two hosts: two network namespaces joined by a veth pair (10.201.N.1/24 and 10.201.N.2/24, which
 * exist only inside the namespaces this test creates and deletes), and the {@code metaroce} CLI
 * run as two child JVMs, the server in one namespace and the client in the other; both must exit
 * 0 with every byte verified. Needs root and iproute2 ({@code ip netns}); skipped otherwise. The
 * lossy variant also needs tc's netem qdisc and is skipped when the kernel lacks it.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
public class NetworkNamespaceTest {
    public static final String SKIP = "needs root and iproute2 network namespaces; CI runs as root";
    static final long SETUP_TIMEOUT_S = 10;
    static final long RUN_TIMEOUT_S = 60;
    static final String MAIN = "org.metaroce.cli.Metaroce";

    private static Boolean usable;

    private final List<Process> processes = new ArrayList<>();
    private final List<Path> files = new ArrayList<>();
    private String nsA;
    private String nsB;
    private String vethA;
    private String vethB;
    private String addressA;
    private String addressB;

    /** What a command printed and returned. */
    record Result(int exit, String out, String err) {
        @Override
        public String toString() {
            return "exit " + exit + "\n--- stdout\n" + out + "--- stderr\n" + err;
        }
    }

    public static synchronized boolean usable() {
        if (usable == null) {
            boolean ok;
            try {
                // Root, and a namespace can really be created (not so in an unprivileged container).
                final String probe = String.format(Locale.ROOT, "mrprobe-%06x",
                    ThreadLocalRandom.current().nextInt(1 << 24));
                ok = run(SETUP_TIMEOUT_S, "id", "-u").out().trim().equals("0")
                    && run(SETUP_TIMEOUT_S, "ip", "netns", "add", probe).exit() == 0;
                if (ok) {
                    ok = run(SETUP_TIMEOUT_S, "ip", "netns", "del", probe).exit() == 0;
                }
            } catch (final IOException | RuntimeException ex) {
                ok = false;
            }
            usable = ok;
        }
        return usable;
    }

    /** Runs a short command to completion (bounded), capturing its output ({@link TwoHosts#run(long, String...)}). */
    static Result run(final long timeoutS, final String... command) throws IOException {
        final TwoHosts.Output o = TwoHosts.run(timeoutS, command);
        return new Result(o.exit(), o.out(), o.err());
    }

    /** Runs a setup command that must succeed. */
    static void must(final String... command) throws IOException {
        final Result r = run(SETUP_TIMEOUT_S, command);
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

    @BeforeEach
    void createNamespaces() throws IOException {
        assumeTrue(usable(), SKIP);
        final ThreadLocalRandom r = ThreadLocalRandom.current();
        final String id = String.format(Locale.ROOT, "%06x", r.nextInt(1 << 24));
        final int subnet = 1 + r.nextInt(254);
        nsA = "mrA-" + id;
        nsB = "mrB-" + id;
        vethA = "mvA" + id;
        vethB = "mvB" + id;
        addressA = "10.201." + subnet + ".1";
        addressB = "10.201." + subnet + ".2";
        must("ip", "netns", "add", nsA);
        must("ip", "netns", "add", nsB);
        must("ip", "link", "add", vethA, "type", "veth", "peer", "name", vethB);
        must("ip", "link", "set", vethA, "netns", nsA);
        must("ip", "link", "set", vethB, "netns", nsB);
        must("ip", "-n", nsA, "addr", "add", addressA + "/24", "dev", vethA);
        must("ip", "-n", nsB, "addr", "add", addressB + "/24", "dev", vethB);
        for (final String[] nsDev : new String[][] {{nsA, vethA}, {nsB, vethB}}) {
            must("ip", "-n", nsDev[0], "link", "set", "lo", "up");
            must("ip", "-n", nsDev[0], "link", "set", nsDev[1], "up");
        }
    }

    @AfterEach
    void deleteNamespaces() throws IOException {
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
        // Deleting a namespace deletes the veth end in it, and with it the pair.
        final List<String> problems = new ArrayList<>();
        for (final String ns : new String[] {nsA, nsB}) {
            if (ns != null && run(SETUP_TIMEOUT_S, "ip", "netns", "list").out().contains(ns)) {
                final Result r = run(SETUP_TIMEOUT_S, "ip", "netns", "del", ns);
                if (r.exit() != 0) {
                    problems.add("ip netns del " + ns + ": " + r);
                }
            }
        }
        // If setup failed before the move into the namespaces, the pair is still in this one.
        if (vethA != null && run(SETUP_TIMEOUT_S, "ip", "link", "show", vethA).exit() == 0) {
            run(SETUP_TIMEOUT_S, "ip", "link", "del", vethA);
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

    /** A CLI process in a namespace, its output going to files. */
    final class Cli {
        final Process process;
        final Path out;
        final Path err;
        final String what;

        Cli(final String what, final String ns, final String... args) throws IOException {
            this.what = what;
            out = Files.createTempFile("metaroce-" + what, ".out");
            err = Files.createTempFile("metaroce-" + what, ".err");
            files.add(out);
            files.add(err);
            final List<String> cmd = new ArrayList<>(List.of("ip", "netns", "exec", ns,
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--add-exports", "java.base/jdk.internal.misc=ALL-UNNAMED", "--enable-native-access=ALL-UNNAMED", "-cp", classpath(), MAIN));
            cmd.addAll(Arrays.asList(args));
            process = new ProcessBuilder(cmd).redirectOutput(out.toFile()).redirectError(err.toFile()).start();
            processes.add(process);
        }

        String stdout() {
            return read(out);
        }

        /** Waits until stdout contains {@code text} (the process still running), bounded. */
        void awaitOutput(final String text, final long timeoutS) throws InterruptedException {
            final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(timeoutS);
            while (!stdout().contains(text)) {
                if (!process.isAlive()) {
                    throw new AssertionError(what + " exited before printing '" + text + "': " + result());
                }
                if (System.nanoTime() - deadline > 0) {
                    throw new AssertionError(what + " did not print '" + text + "' within " + timeoutS + " s: "
                        + snapshot());
                }
                Thread.sleep(50);
            }
        }

        /** Waits for the exit, bounded; on timeout destroys the process and fails with its output. */
        Result await(final long timeoutS) throws InterruptedException {
            if (!process.waitFor(timeoutS, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                process.waitFor(10, TimeUnit.SECONDS);
                throw new AssertionError(what + " did not finish within " + timeoutS + " s (destroyed): " + snapshot());
            }
            return result();
        }

        private Result result() {
            return new Result(process.exitValue(), stdout(), read(err));
        }

        private String snapshot() {
            return "\n--- stdout\n" + stdout() + "--- stderr\n" + read(err);
        }
    }

    /** @return the numbers of the row under the bandwidth table's header */
    static double[] bandwidthRow(final Result run) {
        final List<String> lines = Arrays.asList(run.out().split("\\R"));
        final int at = lines.indexOf(Report.BW_HEADER);
        assertThat(at).as(() -> "bandwidth table in\n" + run).isNotNegative();
        final String[] cells = lines.get(at + 1).trim().split("\\s+");
        final double[] values = new double[cells.length];
        for (int i = 0; i < cells.length; i++) {
            values[i] = Double.parseDouble(cells[i]);
        }
        return values;
    }

    /**
     * Runs {@code tool} as a server in A's namespace and as a client of it in B's, with the same
     * extra arguments, and checks both ran {@code iterations} iterations with verification.
     *
     * @return the client's result
     */
    private Result serverAndClient(final String tool, final int bytes, final int iterations, final String... extra)
        throws Exception {
        final List<String> serverArgs = new ArrayList<>(List.of(tool, "-n", String.valueOf(iterations), "--verify"));
        serverArgs.addAll(Arrays.asList(extra));
        final Cli server = new Cli("server", nsA, serverArgs.toArray(new String[0]));
        server.awaitOutput("Waiting for client to connect", RUN_TIMEOUT_S);
        final List<String> clientArgs = new ArrayList<>(List.of(tool, addressA, "-n", String.valueOf(iterations),
            "--verify"));
        clientArgs.addAll(Arrays.asList(extra));
        final long start = System.nanoTime();
        final Cli client = new Cli("client", nsB, clientArgs.toArray(new String[0]));
        final Result c = client.await(RUN_TIMEOUT_S);
        final Result s = server.await(RUN_TIMEOUT_S);
        System.out.printf("NetworkNamespaceTest %s %s: client in %d ms%n%s%n", tool, String.join(" ", extra),
            TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start), c.out());
        final String both = "\n=== client " + c + "\n=== server " + s;
        assertThat(c.exit()).as("client exit code" + both).isZero();
        assertThat(s.exit()).as("server exit code" + both).isZero();
        final double[] row = bandwidthRow(c);
        assertThat(row).as(both).hasSize(5);
        assertThat(row[0]).as("#bytes" + both).isEqualTo(bytes);
        assertThat(row[1]).as("#iterations" + both).isEqualTo(iterations);
        assertThat(row[3]).as("BW average" + both).isPositive();
        assertThat(c.out()).as(both).contains("Verify          : passed").contains("Remote address: " + addressA + ":4796");
        assertThat(s.out()).as(both).contains("Client connected: " + addressB + ":").doesNotContain("FAILED");
        if (tool.startsWith("write")) {
            // The WRITE's destination is the server's memory: the server checks it.
            assertThat(s.out()).as(both).contains("Verify          : passed");
        }
        assertThat(bandwidthRow(s)[1]).as("server #iterations" + both).isEqualTo(iterations);
        return c;
    }

    @Test
    void writeBandwidthBetweenTwoNamespaces() throws Exception {
        // The defaults: 64 KiB messages, path MTU 4096 over a 1500-byte link (IP fragments), 4 paths.
        serverAndClient("write_bw", 65536, 2000);
    }

    @Test
    void severalQueuePairsWithinTheLinkMtuInDedicatedMode() throws Exception {
        final Result c = serverAndClient("write_bw", 100_000, 300, "-q", "4", "--mtu", "1024", "--paths", "8",
            "-s", "100000", "--mode", "dedicated", "--idle", "backoff");
        assertThat(c.out()).contains("Number of qps   : 4").contains("Mtu             : 1024[B]");
        // Packets fit the link: segmentation offload, when used, must not fail.
        assertThat(c.err()).as(c::toString).doesNotContain("GSO write failed");
    }

    @Test
    void readBandwidthBetweenTwoNamespaces() throws Exception {
        serverAndClient("read_bw", 16384, 1000, "-s", "16384", "--mtu", "1024");
    }

    @Test
    void lossyLinkStillVerifies() throws Exception {
        final Result tc = run(SETUP_TIMEOUT_S, "ip", "netns", "exec", nsB, "tc", "qdisc", "add", "dev", vethB, "root",
            "netem", "loss", "1%", "delay", "100us");
        if (tc.exit() != 0) {
            Assumptions.abort("tc netem is not available here (tc qdisc add ... netem: exit " + tc.exit() + ", "
                + tc.err().trim() + "); the lossy variant needs the sch_netem kernel module");
        }
        serverAndClient("write_bw", 65536, 2000, "--mtu", "1024");
    }
}
