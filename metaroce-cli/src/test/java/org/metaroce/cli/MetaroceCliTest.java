// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import picocli.CommandLine;

/**
 * Every tool run in-process through picocli with {@code --loopback} (two devices on 127.0.0.1),
 * small sizes and iteration counts: exit code, the perftest-shaped table or the JSON object and
 * plausible numbers; verification; argument errors (exit 2); an unreachable server and a server
 * running another tool (exit 1 with one clear line); a server and a client as separate commands.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class MetaroceCliTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    /** What one command printed and returned. */
    record Run(int exitCode, String out, String err) {
        @Override
        public String toString() {
            return "exit " + exitCode + "\n--- stdout\n" + out + "--- stderr\n" + err;
        }
    }

    static Run run(final String... args) {
        final StringWriter out = new StringWriter();
        final StringWriter err = new StringWriter();
        final CommandLine cl = Metaroce.commandLine();
        cl.setOut(new PrintWriter(out, true));
        cl.setErr(new PrintWriter(err, true));
        final int code = cl.execute(args);
        return new Run(code, out.toString(), err.toString());
    }

    /** @return the numbers of the row under the table header {@code header} */
    static double[] row(final Run run, final String header) {
        final List<String> lines = Arrays.asList(run.out().split("\\R"));
        final int at = lines.indexOf(header);
        assertThat(at).as(() -> "table header in\n" + run).isNotNegative();
        final String[] cells = lines.get(at + 1).trim().split("\\s+");
        final double[] values = new double[cells.length];
        for (int i = 0; i < cells.length; i++) {
            values[i] = Double.parseDouble(cells[i]);
        }
        return values;
    }

    static JsonNode json(final Run run) throws Exception {
        final String[] lines = run.out().trim().split("\\R");
        return JSON.readTree(lines[lines.length - 1]);
    }

    static int freePort() throws Exception {
        try (DatagramSocket s = new DatagramSocket(0, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    static void assertBandwidth(final Run run, final int bytes, final int iterations) {
        assertThat(run.exitCode()).as(run::toString).isZero();
        final double[] r = row(run, Report.BW_HEADER);
        assertThat(r).as(run::toString).hasSize(5);
        assertThat(r[0]).isEqualTo(bytes);
        assertThat(r[1]).isEqualTo(iterations);
        assertThat(r[3]).as("BW average").isPositive();
        assertThat(r[2]).as("BW peak").isGreaterThanOrEqualTo(r[3]);
        assertThat(r[4]).as("message rate").isPositive();
    }

    static void assertLatency(final Run run, final int bytes, final int iterations) {
        assertThat(run.exitCode()).as(run::toString).isZero();
        final double[] r = row(run, Report.LAT_HEADER);
        assertThat(r).as(run::toString).hasSize(9);
        assertThat(r[0]).isEqualTo(bytes);
        assertThat(r[1]).isEqualTo(iterations);
        final double min = r[2];
        final double max = r[3];
        final double typical = r[4];
        final double p99 = r[7];
        final double p9999 = r[8];
        assertThat(min).as(run::toString).isPositive();
        assertThat(min).isLessThanOrEqualTo(typical);
        assertThat(typical).isLessThanOrEqualTo(p99);
        assertThat(p99).isLessThanOrEqualTo(p9999);
        assertThat(p9999).isLessThanOrEqualTo(max);
        assertThat(r[5]).as("t_avg").isBetween(min, max);
    }

    @ParameterizedTest
    @ValueSource(strings = {"write_bw", "read_bw", "send_bw"})
    void bandwidthToolsRunOnLoopbackAndVerify(final String tool) {
        final Run run = run(tool, "--loopback", "-n", "200", "-w", "50", "-s", "16384", "--verify");
        assertBandwidth(run, 16384, 200);
        assertThat(run.out()).contains("Verify          : passed");
    }

    @ParameterizedTest
    @ValueSource(strings = {"write_lat", "read_lat", "send_lat", "atomic_lat"})
    void latencyToolsRunOnLoopbackAndVerify(final String tool) {
        final Run run = run(tool, "--loopback", "-n", "200", "-w", "50", "--verify");
        assertLatency(run, tool.equals("atomic_lat") ? 8 : 64, 200);
        assertThat(run.out()).contains("Verify          : passed");
    }

    @Test
    void compareAndSwapIsVerifiedToo() {
        final Run run = run("atomic_lat", "--loopback", "-n", "200", "-w", "10", "-A", "CMP_AND_SWAP", "--verify");
        assertLatency(run, 8, 200);
    }

    /** perftest's flags: -m, -F, --report_gbits and --output work; -I, -l, -a, --run_infinitely say why not. */
    @Test
    void perftestFlagsWorkOrSayWhyNot() {
        final Run bandwidth = run("write_bw", "--loopback", "-n", "50", "-w", "10", "-m", "1024", "-F", "--report_gbits",
            "--output=bandwidth");
        assertThat(bandwidth.exitCode()).as(bandwidth::toString).isZero();
        assertThat(bandwidth.out().trim()).as(bandwidth::toString).matches("\\d+\\.\\d{2}");
        assertThat(Double.parseDouble(bandwidth.out().trim())).isPositive();
        final Run latency = run("send_lat", "--loopback", "-n", "50", "-w", "10", "--output", "latency");
        assertThat(latency.exitCode()).as(latency::toString).isZero();
        assertThat(Double.parseDouble(latency.out().trim())).as(latency::toString).isPositive();
        final Run mismatch = run("send_lat", "--loopback", "--output", "bandwidth");
        assertThat(mismatch.exitCode()).isEqualTo(2);
        assertThat(mismatch.err()).contains("--output for send_lat must be latency (got bandwidth)");
        for (final String[] refused : new String[][] {{"-I", "64", "-I/--inline_size is not supported: "},
            {"-l", "8", "-l/--post_list is not supported: "}, {"-a", null, "-a/--all is not supported: "},
            {"--run_infinitely", null, "--run_infinitely is not supported: use -D"}}) {
            final Run r = refused[1] == null ? run("write_bw", "--loopback", refused[0])
                : run("write_bw", "--loopback", refused[0], refused[1]);
            assertThat(r.exitCode()).as(r::toString).isEqualTo(2);
            assertThat(r.err()).as(r::toString).contains(refused[2]);
            assertThat(r.err().lines().count()).as("one line and the --help hint: %s", r).isLessThanOrEqualTo(3);
        }
    }

    @Test
    void severalQueuePairsWithMessagesLargerThanTheMtu() {
        final Run run = run("write_bw", "--loopback", "-n", "100", "-w", "10", "-q", "3", "-s", "100000",
            "--mtu", "1024", "--paths", "2", "-t", "16", "--verify");
        assertBandwidth(run, 100000, 100);
        assertThat(run.out()).contains("Number of qps   : 3").contains("Mtu             : 1024[B]")
            .contains("Paths per QP : 2");
    }

    @Test
    void jsonOfABandwidthRun() throws Exception {
        final Run run = run("send_bw", "--loopback", "-n", "200", "-w", "20", "-s", "8192", "--json", "--verify");
        assertThat(run.exitCode()).as(run::toString).isZero();
        final JsonNode j = json(run);
        assertThat(j.get("test").asText()).isEqualTo("send_bw");
        assertThat(j.get("bytes").asInt()).isEqualTo(8192);
        assertThat(j.get("iterations").asLong()).isEqualTo(200);
        assertThat(j.get("messages").asLong()).isEqualTo(200);
        assertThat(j.get("bw_average_gbps").asDouble()).isPositive();
        assertThat(j.get("bw_peak_gbps").asDouble()).isGreaterThanOrEqualTo(j.get("bw_average_gbps").asDouble());
        assertThat(j.get("msg_rate_mpps").asDouble()).isPositive();
        assertThat(j.get("verify").asText()).isEqualTo("passed");
        assertThat(j.get("mtu").asInt()).isEqualTo(4096);
    }

    /**
     * perftest's --margin: in duration mode, the margin after the warm-up is run but not measured.
     * The reported time is the -D seconds (plus the drain of what was in flight), not the margin too.
     */
    @ParameterizedTest
    @ValueSource(strings = {"write_bw", "raw_udp_bw"})
    void durationModeDiscardsTheMargin(final String tool) throws Exception {
        final Run run = run(tool, "--loopback", "-D", "0.3", "--margin", "2", "--json");
        assertThat(run.exitCode()).as(run::toString).isZero();
        final JsonNode j = json(run);
        assertThat(j.get("messages").asLong()).isPositive();
        // raw_udp_bw reports the receiver's window: from the client's MARK to the last arrival, about -D.
        assertThat(j.get("elapsed_ns").asLong()).as("measured time: -D, not the 2 s margin as well")
            .isGreaterThanOrEqualTo(200_000_000L).isLessThan(2_000_000_000L);
        final Run notTimed = run(tool, "--loopback", "-n", "10", "--margin", "1");
        assertThat(notTimed.exitCode()).isEqualTo(2);
        assertThat(notTimed.err()).contains("--margin applies to duration mode only");
    }

    @Test
    void jsonOfALatencyRunInDurationMode() throws Exception {
        final Run run = run("send_lat", "--loopback", "-D", "0.3", "-w", "20", "--json");
        assertThat(run.exitCode()).as(run::toString).isZero();
        final JsonNode j = json(run);
        assertThat(j.get("iterations").asLong()).isPositive();
        assertThat(j.get("latency").asText()).isEqualTo("half_round_trip");
        assertThat(j.get("t_min_us").asDouble()).isPositive()
            .isLessThanOrEqualTo(j.get("p50_us").asDouble());
        assertThat(j.get("p50_us").asDouble()).isLessThanOrEqualTo(j.get("p99_us").asDouble());
        assertThat(j.get("p99_us").asDouble()).isLessThanOrEqualTo(j.get("p99_99_us").asDouble());
        assertThat(j.get("p99_99_us").asDouble()).isLessThanOrEqualTo(j.get("t_max_us").asDouble());
    }

    @Test
    void rawUdpBandwidthBaseline() {
        final Run run = run("raw_udp_bw", "--loopback", "-n", "200", "-w", "20", "-s", "16384");
        assertBandwidth(run, 16384, 200);
        assertThat(run.out()).contains("Datagrams       : 880 sent");
    }

    @Test
    void rawUdpLatencyBaseline() {
        assertLatency(run("raw_udp_lat", "--loopback", "-n", "200", "-w", "20"), 64, 200);
    }

    @ParameterizedTest
    @ValueSource(strings = {"dedicated", "shared"})
    void otherThreadingModes(final String mode) {
        assertBandwidth(run("write_bw", "--loopback", "-n", "200", "-w", "20", "-s", "16384", "--mode", mode,
            "--verify"), 16384, 200);
        assertLatency(run("send_lat", "--loopback", "-n", "200", "-w", "20", "--mode", mode, "--verify"), 64, 200);
    }

    @Test
    void invokerThreadsThatBlockWhenIdleCompleteEveryTest() {
        // --idle block: each benchmark thread waits in its device's awaitWork (POLLED: a selector on
        // the endpoint socket; with --gro the BATCHED path: the event loop).
        assertBandwidth(run("write_bw", "--loopback", "-n", "200", "-w", "20", "-s", "16384", "--idle", "block",
            "--verify"), 16384, 200);
        assertLatency(run("send_lat", "--loopback", "-n", "200", "-w", "20", "--idle", "block", "--verify"), 64, 200);
        assertLatency(run("read_lat", "--loopback", "-n", "200", "-w", "20", "--idle", "block", "--gro"), 64, 200);
    }

    @Test
    void oneThreadCanDriveBothEndsAndNioWorks() {
        assertBandwidth(run("read_bw", "--loopback", "-n", "100", "-w", "10", "-s", "16384", "--loopback-threads",
            "1", "--transport", "nio", "--verify"), 16384, 100);
        assertLatency(run("write_lat", "--loopback", "-n", "100", "-w", "10", "--loopback-threads", "1",
            "--idle", "backoff"), 64, 100);
    }

    @Test
    void badArgumentsExitWithTwoAndNameTheOption() {
        final Run both = run("write_bw", "--loopback", "-n", "10", "-D", "1");
        assertThat(both.exitCode()).isEqualTo(2);
        // One line naming the options (by their long names) and a pointer to --help, not the whole usage.
        assertThat(both.err()).contains("--iters").contains("--duration").contains("mutually exclusive")
            .contains("Try 'metaroce write_bw --help' for the options.");
        assertThat(both.err().lines().count()).isEqualTo(2);

        final Run unknown = run("write_bw", "--loopback", "--iter", "5");
        assertThat(unknown.exitCode()).isEqualTo(2);
        assertThat(unknown.err()).contains("Unknown option: '--iter'").contains("--iters");

        final Run atomic = run("write_bw", "--loopback", "-A", "CMP_AND_SWAP");
        assertThat(atomic.exitCode()).isEqualTo(2);
        assertThat(atomic.err()).contains("-A/--atomic-type applies to atomic_lat only");

        final Run stepBytes = run("all_reduce_perf", "-i", "1M");
        assertThat(stepBytes.exitCode()).isEqualTo(2);
        assertThat(stepBytes.err()).contains("-i/--stepbytes").contains("not supported").contains("-f/--stepfactor");

        final Run mtu = run("write_bw", "--loopback", "--mtu", "3000");
        assertThat(mtu.exitCode()).isEqualTo(2);
        assertThat(mtu.err()).contains("--mtu must be one of 256, 512, 1024, 2048, 4096, 8192 (got 3000)");

        final Run qp = run("send_lat", "--loopback", "-q", "2");
        assertThat(qp.exitCode()).isEqualTo(2);
        assertThat(qp.err()).contains("-q/--qp");

        final Run size = run("write_bw", "--loopback", "-s", "0");
        assertThat(size.exitCode()).isEqualTo(2);
        assertThat(size.err()).contains("-s/--size");

        final Run notANumber = run("write_bw", "--loopback", "-n", "many");
        assertThat(notANumber.exitCode()).isEqualTo(2);
        assertThat(notANumber.err()).contains("Invalid value for option '--iters': 'many'");

        final Run idle = run("write_bw", "--loopback", "--idle", "doze");
        assertThat(idle.exitCode()).isEqualTo(2);
        assertThat(idle.err()).contains("--idle");

        final Run loopbackAndServer = run("write_bw", "--loopback", "127.0.0.1");
        assertThat(loopbackAndServer.exitCode()).isEqualTo(2);
        assertThat(loopbackAndServer.err()).contains("--loopback");

        final Run unknownTool = run("write_bandwidth");
        assertThat(unknownTool.exitCode()).isEqualTo(2);

        final Run noTool = run();
        assertThat(noTool.exitCode()).isEqualTo(2);
        assertThat(noTool.err()).contains("write_bw");
    }

    @Test
    void clientOfAPortWithoutListenerGivesUpAfterTheConnectTimeout() throws Exception {
        final int port = freePort();
        final long start = System.nanoTime();
        final Run run = run("write_bw", "127.0.0.1", "-p", String.valueOf(port), "--timeout", "1");
        final long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        assertThat(run.exitCode()).as(run::toString).isEqualTo(1);
        assertThat(run.err().trim()).isEqualTo("metaroce write_bw: server 127.0.0.1:" + port
            + " unreachable after 1 s (no answer to CONNECT_REQUEST)");
        assertThat(ms).isLessThan(5_000);
    }

    @Test
    void countersArePrintedWhenTheRunFails() throws Exception {
        // Issue 14 item 5: a failed run is when the counters are needed; an unreachable server is
        // the cheapest failure to provoke.
        final int port = freePort();
        final Run text = run("send_bw", "127.0.0.1", "-p", String.valueOf(port), "--timeout", "0.5", "--counters");
        assertThat(text.exitCode()).as(text::toString).isEqualTo(1);
        assertThat(text.err()).as(text::toString).contains("client counters (run failed):").contains("endpoint: ")
            .contains("cm: CmCounters{").contains("unreachable after 0.5 s");

        final Run json = run("send_bw", "127.0.0.1", "-p", String.valueOf(port), "--timeout", "0.5",
            "--counters-json");
        assertThat(json.exitCode()).as(json::toString).isEqualTo(1);
        final String line = Arrays.stream(json.err().split("\\R")).filter(l -> l.startsWith(CounterDump.JSON_PREFIX))
            .findFirst().orElseThrow(() -> new AssertionError("no counters JSON line in\n" + json));
        final JsonNode counters = JSON.readTree(line);
        assertThat(counters.path("counters").asText()).isEqualTo("client");
        assertThat(counters.path("outcome").asText()).isEqualTo("failed");
        assertThat(counters.path("retransmits").asLong(-1)).isZero();
        // The connection manager retransmitted its CONNECT_REQUEST while nobody answered.
        assertThat(counters.path("cm").path("packets_out").asLong()).as(line).isPositive();
        assertThat(counters.path("endpoint").has("packets_in")).as(line).isTrue();
        assertThat(counters.path("driver").has("datagrams_sent")).as(line).isTrue();
    }

    @Test
    void countersOfASuccessfulRunAsJson() throws Exception {
        final Run run = run("send_bw", "--loopback", "-n", "200", "-w", "20", "-s", "4096", "--verify", "--counters",
            "--json");
        assertThat(run.exitCode()).as(run::toString).isZero();
        final List<JsonNode> lines = new ArrayList<>();
        for (final String l : run.err().split("\\R")) {
            if (l.startsWith(CounterDump.JSON_PREFIX)) {
                lines.add(JSON.readTree(l));
            }
        }
        // In loopback both ends print theirs (the server's to the same stderr).
        assertThat(lines).as(run::toString).isNotEmpty().allSatisfy(n -> assertThat(n.path("outcome").asText())
            .isEqualTo("ok"));
        assertThat(lines).extracting(n -> n.path("counters").asText()).contains("client");
        assertThat(json(run).path("verify").asText()).isEqualTo("passed");
    }

    /**
     * The run's parameters print when the connections are up, before the warm-up, as perftest's do;
     * the results follow at the end, and a long warm-up reports its progress on stderr (issue 18).
     */
    @Test
    void theHeaderPrintsBeforeTheWarmUpAndTheWarmUpReportsProgress() throws Exception {
        final StringWriter out = new StringWriter();
        final StringWriter err = new StringWriter();
        final CommandLine cl = Metaroce.commandLine();
        cl.setOut(new PrintWriter(out, true));
        cl.setErr(new PrintWriter(err, true));
        final CompletableFuture<Integer> run = CompletableFuture.supplyAsync(() -> cl.execute("write_bw", "--loopback",
            "-s", "65536", "-w", "40000", "-n", "10"));
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (!out.toString().contains("Local address") && System.nanoTime() < deadline) {
            Thread.sleep(5);
        }
        final String atHeader = out.toString();
        final String errAtHeader = err.toString();
        final long headerNs = System.nanoTime();
        assertThat(run.get(120, TimeUnit.SECONDS)).as("exit code; stderr:%n%s", err).isZero();
        final long warmUpNs = System.nanoTime() - headerNs;
        assertThat(atHeader).contains("RDMA_Write BW Test").contains("Local address");
        assertThat(atHeader).as("results printed with the header, not after the warm-up").doesNotContain("BW average");
        assertThat(errAtHeader).as("nothing of the warm-up done yet").doesNotContain("warming up");
        // A progress line comes once a second; 2.6 GB of warm-up takes 2-6 s here, but a machine three
        // times as fast may finish within the first second, which then rightly prints none.
        System.out.printf("warm-up after the header: %.1f s%n", warmUpNs / 1e9);
        if (warmUpNs > 1_500_000_000L) {
            assertThat(err.toString()).contains("write_bw: warming up, ");
        }
        assertThat(out.toString()).startsWith(atHeader).contains("BW average").contains("Verify          : off");
    }

    /**
     * A server waiting for its client blocks on its socket, even with --idle spin: perftest's spins a
     * core until the client comes (issue 18). The waiting thread's CPU time over a second shows it.
     */
    @Test
    void aServerWaitingForItsClientDoesNotSpin() throws Exception {
        final int port = freePort();
        final CompletableFuture<Run> server = CompletableFuture.supplyAsync(
            () -> run("send_lat", "--bind", "127.0.0.1", "-p", String.valueOf(port), "--idle", "spin"));
        Thread waiting = null;
        for (int i = 0; i < 100 && waiting == null; i++) {
            Thread.sleep(50);
            waiting = Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.getName().equals("metaroce-send_lat")).findFirst().orElse(null);
        }
        assertThat(waiting).as("the server's benchmark thread").isNotNull();
        Thread.sleep(500); // past start-up
        final java.lang.management.ThreadMXBean mx = java.lang.management.ManagementFactory.getThreadMXBean();
        final long cpuBefore = mx.getThreadCpuTime(waiting.getId());
        final long wallBefore = System.nanoTime();
        Thread.sleep(1000);
        final long cpu = mx.getThreadCpuTime(waiting.getId()) - cpuBefore;
        final long wall = System.nanoTime() - wallBefore;
        System.out.printf("waiting server thread: %.1f ms CPU in %.1f ms%n", cpu / 1e6, wall / 1e6);
        assertThat(cpu).as("CPU time of the waiting server thread in %d ms", wall / 1_000_000).isLessThan(wall / 10);
        final Run client = run("send_lat", "127.0.0.1", "-p", String.valueOf(port), "-n", "100", "-w", "10");
        assertThat(client.exitCode()).as(client::toString).isZero();
        final Run served = server.get(30, TimeUnit.SECONDS);
        assertThat(served.exitCode()).as(served::toString).isZero();
    }

    @Test
    void serverAndClientAsSeparateCommandsAndAWrongToolIsRejected() throws Exception {
        final int port = freePort();
        final CompletableFuture<Run> server = CompletableFuture.supplyAsync(
            () -> run("write_bw", "--bind", "127.0.0.1", "-p", String.valueOf(port), "--idle", "backoff"));
        // A client of another tool finds no listener for its Service ID.
        Run wrong = null;
        for (int attempt = 0; attempt < 50; attempt++) {
            wrong = run("send_lat", "127.0.0.1", "-p", String.valueOf(port), "--timeout", "1", "--idle", "backoff");
            if (wrong.err().contains("NO_LISTENER")) {
                break;
            }
            Thread.sleep(100);
        }
        assertThat(wrong.exitCode()).as(wrong::toString).isEqualTo(1);
        assertThat(wrong.err().trim()).isEqualTo("metaroce send_lat: no MetaRoCE listener for send_lat at 127.0.0.1:"
            + port + " (CONNECT_REJECT NO_LISTENER; is the server running 'metaroce send_lat'?)");

        final Run client = run("write_bw", "127.0.0.1", "-p", String.valueOf(port), "-n", "200", "-w", "20", "-s",
            "16384", "--verify", "--idle", "backoff");
        assertBandwidth(client, 16384, 200);
        assertThat(client.out()).contains("checked by the server");
        final Run served = server.get(30, TimeUnit.SECONDS);
        assertThat(served.exitCode()).as(served::toString).isZero();
        assertThat(served.out()).contains("Waiting for client to connect").contains("Client connected: 127.0.0.1:");
        assertBandwidth(served, 16384, 200);
    }

    @Test
    void helpListsEveryTool() {
        final Run help = run("--help");
        assertThat(help.exitCode()).isZero();
        final List<String> tools = new ArrayList<>();
        for (final TestKind k : TestKind.values()) {
            tools.add(k.command);
        }
        assertThat(help.out()).contains(tools);
        final Run toolHelp = run("write_bw", "--help");
        assertThat(toolHelp.exitCode()).isZero();
        assertThat(toolHelp.out()).contains("--tx-depth").contains("--loopback").contains("--verify");
    }
}
