// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.cli.faults;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

/**
 * One run of a tool under one fault: the server in the server's namespace and the client in the
 * client's, as separate processes with {@code --verify --json --counters}; the fault applied as
 * {@link Fault} says; then what happened, read from exit codes, the client's JSON report, both
 * ends' counter lines and the nftables counters.
 */
public final class Trial {
    /** What the server prints once it listens. */
    private static final Pattern WAITING = Pattern.compile("Waiting for client to connect");
    /** A progress line of the client: printed once per measured second, so the run is under way. */
    private static final Pattern PROGRESS = Pattern.compile("(?m)^\\w+: \\d+\\.\\d s, ");
    private static final ObjectMapper JSON = new ObjectMapper();
    /** What Netty's leak detector logs for every buffer collected without release. */
    private static final Pattern LEAK = Pattern.compile("LEAK: ");
    /** A soak's live heap may grow this much from early to late in the run (the issue's 10%)... */
    static final double SOAK_HEAP_GROWTH = 0.10;
    /** ...plus this much, in KiB: one more pooled chunk or class loaded is not a leak. */
    static final long SOAK_HEAP_SLACK_KB = 1024;
    /** How long into a soak's measurement the first heap figure is taken (pools and JIT settled). */
    static final double SOAK_WARM_S = 5;
    /**
     * Bytes a campaign's capture keeps of each packet: every header (IP, UDP, MetaRoCE with its
     * extensions), not the payload, so a run's capture stays small and cheap to write.
     */
    static final int CAPTURE_SNAPLEN = 128;
    /** Processes of trials under way, so a shutdown hook (Ctrl-C) can end them. */
    public static final Set<Process> LIVE = ConcurrentHashMap.newKeySet();

    /**
     * How trials run.
     *
     * @param launcher the command that starts the {@code metaroce} CLI (java, options, main class or jar)
     * @param durationS the client's {@code -D}: measured seconds (the fault comes after the first)
     * @param warmup the client's {@code -w}
     * @param extra more options for both ends (e.g. {@code --no-gso}, {@code -s 16384})
     * @param hangS how long past the expected end a run may take before it counts as hung
     */
    public record Settings(List<String> launcher, double durationS, int warmup, List<String> extra, long hangS) {
    }

    /**
     * What happened.
     *
     * @param tool write_bw, read_bw or send_bw
     * @param fault the fault
     * @param passed completed with both ends exiting 0 and the data verified (KILL: the client
     *     ended in an error)
     * @param clientExit the client's exit code (-1: hung, destroyed)
     * @param serverExit the server's exit code (-1: hung or killed)
     * @param verify the client's verify outcome ("passed", "FAILED", or "-" without a report)
     * @param dropped datagrams the kernels dropped (both hosts): nftables' drops plus
     *     {@code bufferDropped}
     * @param bufferDropped of those, datagrams dropped because a receive socket's buffer was full
     * @param retransmits packets both ends retransmitted (every reason), -1 when no end printed counters
     * @param timerRetransmits of those, the blind ones a timer sent (retransmission timeout, tail
     *     probe) rather than the ones the ACK stream showed lost
     * @param millis from the client's start to its exit
     * @param errorAfterMs KILL: from the kill to the client's exit, else -1
     * @param error the first error line of the client (else of the server), or ""
     * @param soak SOAK: the live heap of both ends early and late in the run and the leak reports,
     *     e.g. "live heap server 10.2 -> 10.3 MB, client 8.1 -> 8.1 MB, 0 leak reports"; else ""
     */
    public record Result(String tool, Fault fault, boolean passed, int clientExit, int serverExit, String verify,
                         long dropped, long bufferDropped, long retransmits, long timerRetransmits, long millis,
                         long errorAfterMs,
                         String error, String soak) {
        /** @return retransmitted / dropped, NaN when nothing was dropped */
        public double ratio() {
            return dropped == 0 ? Double.NaN : (double) retransmits / dropped;
        }

        @Override
        public String toString() {
            return String.format(Locale.ROOT, "%s %s: %s (client exit %d, server exit %d, verify %s, dropped %d "
                + "(%d by full socket buffers), retransmitted %d (%d on timers), %d ms%s)%s", tool, fault.label(),
                passed ? "pass" : "FAIL", clientExit, serverExit, verify, dropped, bufferDropped, retransmits,
                timerRetransmits, millis,
                errorAfterMs >= 0 ? ", error " + errorAfterMs + " ms after the kill" : "",
                error.isEmpty() ? "" : ": " + error) + (soak.isEmpty() ? "" : "; " + soak);
        }
    }

    private Trial() {
    }

    /**
     * Runs {@code tool} between the two hosts under {@code fault}.
     *
     * @param hosts the two namespaces
     * @param settings how
     * @param tool write_bw, read_bw or send_bw
     * @param fault what goes wrong
     * @return what happened; the processes are gone and the drop rules removed when it returns
     * @throws IOException when the hosts or nftables fail (not when the run does)
     * @throws InterruptedException when interrupted
     */
    public static Result run(final TwoHosts hosts, final Settings settings, final String tool, final Fault fault)
        throws IOException, InterruptedException {
        return run(hosts, settings, tool, fault, null);
    }

    /**
     * Runs {@code tool} between the two hosts under {@code fault}, the client recording its packets
     * (headers only: {@link #CAPTURE_SNAPLEN} bytes of each) into {@code capture}, which is kept
     * only when the run fails: a campaign of hundreds of runs leaves the captures worth reading.
     *
     * @param hosts the two namespaces
     * @param settings how
     * @param tool write_bw, read_bw or send_bw
     * @param fault what goes wrong
     * @param capture the client's pcap file, kept when the run fails and deleted when it passes; null: no capture
     * @return what happened; the processes are gone and the drop rules removed when it returns
     * @throws IOException when the hosts or nftables fail (not when the run does)
     * @throws InterruptedException when interrupted
     */
    public static Result run(final TwoHosts hosts, final Settings settings, final String tool, final Fault fault,
                             final Path capture) throws IOException, InterruptedException {
        return run(hosts, settings, tool, fault, capture, false);
    }

    /**
     * As {@link #run(TwoHosts, Settings, String, Fault, Path)}, keeping the capture of a run that
     * passes too when {@code keepPassed}: what a run without a failure did (its timer probes, say)
     * is read from it.
     */
    public static Result run(final TwoHosts hosts, final Settings settings, final String tool, final Fault fault,
                             final Path capture, final boolean keepPassed) throws IOException, InterruptedException {
        final Result result = runCapturing(hosts, settings, tool, fault, capture);
        if (capture != null && result.passed() && !keepPassed) {
            Files.deleteIfExists(capture);
        }
        return result;
    }

    private static Result runCapturing(final TwoHosts hosts, final Settings settings, final String tool,
                                       final Fault fault, final Path capture) throws IOException, InterruptedException {
        final InputFilter atServer = new InputFilter(hosts.serverNs, hosts.serverIf);
        final InputFilter atClient = new InputFilter(hosts.clientNs, hosts.clientIf);
        final List<Path> files = new ArrayList<>();
        final long bufferErrorsBefore = hosts.receiveBufferErrors();
        NamespacedProcess server = null;
        NamespacedProcess client = null;
        try {
            final boolean soak = fault.kind() == Fault.Kind.SOAK;
            if (fault.kind() == Fault.Kind.LOSS || soak) {
                if (fault.direction() != Fault.Direction.SERVER_TO_CLIENT) {
                    atServer.loss(fault.permille());
                }
                if (fault.direction() != Fault.Direction.CLIENT_TO_SERVER) {
                    atClient.loss(fault.permille());
                }
            }
            final List<String> common = new ArrayList<>(List.of("--verify", "--counters-json"));
            common.addAll(settings.extra());
            // The server prints its table (not --json): "Waiting for client to connect" says it listens.
            final List<String> serverArgs = new ArrayList<>(List.of(tool));
            serverArgs.addAll(common);
            final List<String> launcher = soak ? paranoid(settings.launcher()) : settings.launcher();
            server = new NamespacedProcess("server", hosts.serverNs, launcher, serverArgs, files);
            if (!server.awaitStdout(WAITING, TimeUnit.SECONDS.toNanos(settings.hangS()))) {
                throw new IOException("the server did not start listening within " + settings.hangS() + " s: "
                    + server.stdout() + server.stderr());
            }
            // A connect timeout well above the tools' 3 s: on a loaded machine a JVM starting up can
            // be slower than that, and this judges the fault, not the start-up.
            final double durationS = soak ? fault.seconds() : settings.durationS();
            final List<String> clientArgs = new ArrayList<>(List.of(tool, hosts.serverAddress, "-D",
                Double.toString(durationS), "--margin", "0", "-w", Integer.toString(settings.warmup()),
                "--json", "--timeout", "30"));
            if (soak) {
                clientArgs.addAll(List.of("-q", Integer.toString(fault.qps())));
            }
            clientArgs.addAll(common);
            if (capture != null) {
                clientArgs.addAll(List.of("--pcap", capture.toString(), "--pcap-snaplen",
                    Integer.toString(CAPTURE_SNAPLEN)));
            }
            final long start = System.nanoTime();
            client = new NamespacedProcess("client", hosts.clientNs, launcher, clientArgs, files);
            final long bound = TimeUnit.SECONDS.toNanos(settings.hangS() + (long) Math.ceil(durationS
                + (soak ? 0 : fault.seconds())));
            final long[] heapKb = {-1, -1, -1, -1}; // server early, client early, server late, client late
            final HeapProbe heap = new HeapProbe(Path.of(settings.launcher().get(0)).getParent().getParent());
            if (soak && heap.available() && client.awaitStderr(PROGRESS, bound)) {
                final long measuring = System.nanoTime();
                sleep(SOAK_WARM_S);
                heapKb[0] = heap.liveKb(server.process.pid());
                heapKb[1] = heap.liveKb(client.process.pid());
                sleep(Math.max(0, durationS - SOAK_WARM_S - (System.nanoTime() - measuring) / 1e9));
                heapKb[2] = heap.liveKb(server.process.pid());
                heapKb[3] = heap.liveKb(client.process.pid());
            }
            long killedAt = 0;
            if (fault.midRun() && client.awaitStderr(PROGRESS, bound)) {
                switch (fault.kind()) {
                    case STALL -> {
                        final NamespacedProcess stopped = fault.end() == Fault.End.SERVER ? server : client;
                        stopped.signal("STOP");
                        sleep(fault.seconds());
                        stopped.signal("CONT");
                    }
                    case BLACKHOLE -> {
                        atServer.blackhole();
                        atClient.blackhole();
                        sleep(fault.seconds());
                        atServer.clear();
                        atClient.clear();
                    }
                    case KILL -> {
                        // Timed from before the signal: sending it runs kill(1), which on a loaded
                        // host takes a few hundred milliseconds, and timing from its return made a
                        // client that waited its whole budget look early.
                        killedAt = System.nanoTime();
                        server.signal("KILL");
                    }
                    default -> throw new IllegalStateException(fault.toString());
                }
            }
            final int clientExit = client.await(bound - (System.nanoTime() - start));
            final long end = System.nanoTime();
            final int serverExit = server.await(TimeUnit.SECONDS.toNanos(settings.hangS()));
            atServer.clear();
            atClient.clear();
            final long bufferDropped = hosts.receiveBufferErrors() - bufferErrorsBefore;
            final long dropped = atServer.dropped() + atClient.dropped() + bufferDropped;
            final long retransmits = retransmits(server.stderr(), client.stderr());
            final long timerRetransmits = Math.max(0, endpointCounter("retransmits_timeout", server.stderr(),
                client.stderr())) + Math.max(0, endpointCounter("retransmits_tail_probe", server.stderr(),
                client.stderr()));
            final String verify = verify(client.stdout());
            String error = errorLine(client.stderr());
            if (error.isEmpty()) {
                error = errorLine(server.stderr());
            }
            if (clientExit == -1) {
                error = "client hung (destroyed)" + (error.isEmpty() ? "" : "; " + error);
            } else if (serverExit == -1 && fault.kind() != Fault.Kind.KILL) {
                error = "server hung (destroyed)" + (error.isEmpty() ? "" : "; " + error);
            }
            boolean passed = fault.kind() == Fault.Kind.KILL
                ? killedAt != 0 && clientExit > 0 && !error.isEmpty()
                : clientExit == 0 && serverExit == 0 && "passed".equals(verify);
            String soakNote = "";
            if (soak) {
                final long leaks = LEAK.matcher(server.stderr()).results().count()
                    + LEAK.matcher(client.stderr()).results().count();
                passed &= leaks == 0 && heapFlat(heapKb[0], heapKb[2]) && heapFlat(heapKb[1], heapKb[3]);
                soakNote = "live heap server " + mb(heapKb[0]) + " -> " + mb(heapKb[2]) + " MB, client "
                    + mb(heapKb[1]) + " -> " + mb(heapKb[3]) + " MB, " + leaks + " leak reports";
            }
            if (capture != null && !passed) {
                keepOutput(capture, "client", client);
                keepOutput(capture, "server", server);
            }
            return new Result(tool, fault, passed, clientExit, serverExit, verify, dropped, bufferDropped, retransmits,
                timerRetransmits,
                TimeUnit.NANOSECONDS.toMillis(end - start),
                killedAt != 0 ? TimeUnit.NANOSECONDS.toMillis(end - killedAt) : -1, error, soakNote);
        } finally {
            for (final NamespacedProcess c : new NamespacedProcess[] {client, server}) {
                if (c != null) {
                    c.destroy();
                }
            }
            for (final Path f : files) {
                Files.deleteIfExists(f);
            }
            atServer.remove();
            atClient.remove();
        }
    }

    /**
     * Keeps the standard output and error of one end of a failed run beside its capture, as
     * CAPTURE.client.log or CAPTURE.server.log: progress lines with the congestion state, counters,
     * the queue pair's last trace events and, for a hung end, its thread dump.
     */
    static Path keepOutput(final Path capture, final String end, final NamespacedProcess process) throws IOException {
        final String name = capture.getFileName().toString().replaceFirst("\\.pcap$", "") + "." + end + ".log";
        final Path log = capture.resolveSibling(name);
        Files.writeString(log, "--- stdout\n" + process.stdout() + "--- stderr\n" + process.stderr());
        return log;
    }

    /** @return {@code launcher} with Netty's leak detector at PARANOID: every buffer is tracked */
    static List<String> paranoid(final List<String> launcher) {
        final List<String> l = new ArrayList<>(launcher);
        l.add(1, "-Dio.netty.leakDetection.level=PARANOID");
        return l;
    }

    /**
     * @return whether a live heap of {@code lateKb} after {@code earlyKb} is flat: at most
     *     {@link #SOAK_HEAP_GROWTH} more plus {@link #SOAK_HEAP_SLACK_KB}; false without both figures
     */
    static boolean heapFlat(final long earlyKb, final long lateKb) {
        return earlyKb > 0 && lateKb > 0 && lateKb <= earlyKb * (1 + SOAK_HEAP_GROWTH) + SOAK_HEAP_SLACK_KB;
    }

    private static String mb(final long kb) {
        return kb < 0 ? "?" : String.format(Locale.ROOT, "%.1f", kb / 1024.0);
    }

    private static void sleep(final double seconds) throws InterruptedException {
        Thread.sleep((long) (seconds * 1000));
    }

    /** @return the sum of both ends' "retransmits" counter lines, -1 when neither printed one */
    static long retransmits(final String... stderrs) {
        return sumCounterLines(n -> n.path("retransmits").asLong(), stderrs);
    }

    /** @return the sum of both ends' endpoint counter {@code name}, -1 when neither printed counters */
    static long endpointCounter(final String name, final String... stderrs) {
        return sumCounterLines(n -> n.path("endpoint").path(name).asLong(), stderrs);
    }

    /** @return {@code figure} summed over the counter lines of {@code stderrs}, -1 when there is none */
    private static long sumCounterLines(final java.util.function.ToLongFunction<JsonNode> figure,
                                        final String... stderrs) {
        long sum = -1;
        for (final String err : stderrs) {
            for (final String line : err.split("\\R")) {
                if (line.startsWith("{\"counters\":")) {
                    try {
                        sum = Math.max(sum, 0) + figure.applyAsLong(JSON.readTree(line));
                    } catch (final IOException ex) {
                        // A line cut short by a kill: no figure from it.
                    }
                }
            }
        }
        return sum;
    }

    /** @return the "verify" of the client's JSON report, "-" without one */
    static String verify(final String stdout) {
        for (final String line : stdout.split("\\R")) {
            if (line.startsWith("{")) {
                try {
                    return JSON.readTree(line).path("verify").asText("-");
                } catch (final IOException ex) {
                    return "-";
                }
            }
        }
        return "-";
    }

    /** @return the tool's error line ("metaroce TOOL: ...") without the prefix, or "" */
    public static String errorLine(final String stderr) {
        for (final String line : stderr.split("\\R")) {
            if (line.startsWith("metaroce ")) {
                final int colon = line.indexOf(": ");
                return colon > 0 ? line.substring(colon + 2).trim() : line.trim();
            }
        }
        return "";
    }
}
