// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.cli.incast;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.metaroce.cli.faults.NamespacedProcess;
import org.metaroce.cli.faults.Trial;
import org.metaroce.cli.faults.TwoHosts;

/**
 * One incast: N {@code write_bw} servers in the receiving namespace (one port each) and N clients in
 * the sending one, all writing at once through the {@link Bottleneck}; while every client measures,
 * the bottleneck's per-port counters are sampled once per interval, which gives each sender's share
 * of the bottleneck over time independently of the senders' clocks. Then each client's JSON report
 * (goodput, verification, the congestion control that ran) and both ends' counter lines
 * (retransmissions, CE marks received, ECN echoes heard).
 */
final class IncastRun {
    private static final Pattern WAITING = Pattern.compile("Waiting for client to connect");
    private static final Pattern PROGRESS = Pattern.compile("(?m)^\\w+: \\d+\\.\\d s, ");
    private static final ObjectMapper JSON = new ObjectMapper();
    /** First server port; sender i writes to {@code BASE_PORT + i}. */
    static final int BASE_PORT = 4900;

    /**
     * How to run.
     *
     * @param launcher the command that starts the {@code metaroce} CLI
     * @param senders N
     * @param cc the {@code --cc} of both ends, or null for the tools' default
     * @param durationS each client's measured seconds
     * @param marginS each client's discarded seconds before measuring (all start together within it)
     * @param sampleMs interval of the bottleneck samples
     * @param extra more options for both ends (e.g. {@code -s 16384})
     */
    record Settings(List<String> launcher, int senders, String cc, double durationS, double marginS, long sampleMs,
                    List<String> extra, Path logs) {
    }

    /**
     * What one sender did.
     *
     * @param goodputGbps the client's average over its measured seconds (payload bytes)
     * @param verify "passed", "FAILED" or "-"
     * @param retransmits packets its requester resent (every reason)
     * @param ecnEchoes ACKs that told it of marks
     * @param ceMarked packets its server received CE-marked
     * @param cc the congestion control that ran, as the client reported it
     * @param error the first error line, or ""
     */
    record Sender(double goodputGbps, String verify, long retransmits, long ecnEchoes, long ceMarked, String cc,
                  String error) {
    }

    /**
     * The outcome.
     *
     * @param senders per sender
     * @param samples the bottleneck's counters while all measured (at least two, or empty when the
     *     clients never all measured)
     * @param pathMtu the negotiated path MTU (payload bytes per packet)
     * @param durationS each sender's measured seconds
     */
    record Outcome(List<Sender> senders, List<Bottleneck.Sample> samples, int pathMtu, double durationS) {
    }

    private IncastRun() {
    }

    static Outcome run(final TwoHosts hosts, final Bottleneck bottleneck, final Settings s)
        throws IOException, InterruptedException {
        final List<Path> files = new ArrayList<>();
        final List<NamespacedProcess> servers = new ArrayList<>();
        final List<NamespacedProcess> clients = new ArrayList<>();
        try {
            final List<String> common = new ArrayList<>(List.of("--counters-json", "--verify"));
            if (s.cc() != null) {
                common.addAll(List.of("--cc", s.cc()));
            }
            common.addAll(s.extra());
            for (int i = 0; i < s.senders(); i++) {
                final List<String> args = new ArrayList<>(List.of("write_bw", "-p", Integer.toString(BASE_PORT + i)));
                args.addAll(common);
                servers.add(new NamespacedProcess("server" + i, hosts.serverNs, s.launcher(), args, files));
            }
            final long startBound = TimeUnit.SECONDS.toNanos(60);
            for (final NamespacedProcess server : servers) {
                if (!server.awaitStdout(WAITING, startBound)) {
                    throw new IOException("a server did not start listening within 60 s: " + server.stdout()
                        + server.stderr());
                }
            }
            for (int i = 0; i < s.senders(); i++) {
                final List<String> args = new ArrayList<>(List.of("write_bw", hosts.serverAddress, "-p",
                    Integer.toString(BASE_PORT + i), "-D", Double.toString(s.durationS()), "--margin",
                    Double.toString(s.marginS()), "--json", "--progress", "--timeout", "30",
                    // No warm-up iterations: at a share of the bottleneck they take seconds, and a sender
                    // slower to start would measure after the others; the time-based margin warms up.
                    "-w", "0"));
                args.addAll(common);
                clients.add(new NamespacedProcess("client" + i, hosts.clientNs, s.launcher(), args, files));
            }
            // Sample from the first client's first progress line until every client has exited; the
            // figures use the samples taken while all of them measured (each client's progress line
            // seen, process alive), which start up to a few seconds apart.
            final List<Bottleneck.Sample> samples = new ArrayList<>();
            final long deadline = System.nanoTime() + startBound
                + TimeUnit.SECONDS.toNanos((long) Math.ceil(s.durationS() + s.marginS()) + 60);
            boolean seenAll = false;
            boolean over = false;
            while (!over && clients.stream().anyMatch(c -> c.process.isAlive()) && System.nanoTime() - deadline < 0) {
                final Bottleneck.Sample sample = bottleneck.sample();
                boolean all = true;
                for (final NamespacedProcess c : clients) {
                    all &= c.process.isAlive() && PROGRESS.matcher(c.stderr()).find();
                }
                if (all) {
                    samples.add(sample);
                    seenAll = true;
                } else if (seenAll) {
                    // One has finished: the common window is over (its last sample is the end).
                    samples.add(sample);
                    over = true;
                }
                Thread.sleep(s.sampleMs());
            }
            final long bound = TimeUnit.SECONDS.toNanos((long) Math.ceil(s.durationS() + s.marginS()) + 120);
            final List<Sender> senders = new ArrayList<>();
            int pathMtu = 0;
            for (int i = 0; i < s.senders(); i++) {
                final NamespacedProcess client = clients.get(i);
                final NamespacedProcess server = servers.get(i);
                final int clientExit = client.await(bound);
                final int serverExit = server.await(TimeUnit.SECONDS.toNanos(30));
                final JsonNode report = report(client.stdout());
                pathMtu = Math.max(pathMtu, report.path("mtu").asInt(0));
                String error = Trial.errorLine(client.stderr());
                if (error.isEmpty()) {
                    error = Trial.errorLine(server.stderr());
                }
                if (error.isEmpty() && (clientExit != 0 || serverExit != 0)) {
                    error = "client exit " + clientExit + ", server exit " + serverExit;
                }
                senders.add(new Sender(report.path("bw_average_gbps").asDouble(0), report.path("verify").asText("-"),
                    counter(client.stderr(), "retransmits", null), counter(client.stderr(), "endpoint", "ecn_echoes_in"),
                    counter(server.stderr(), "endpoint", "ce_marked_in"), report.path("cc").asText(""), error));
            }
            return new Outcome(senders, samples.size() >= 2 ? samples : List.of(), pathMtu, s.durationS());
        } finally {
            for (final NamespacedProcess p : clients) {
                p.destroy();
            }
            for (final NamespacedProcess p : servers) {
                p.destroy();
            }
            if (s.logs() != null) {
                keepLogs(s.logs(), s.cc() == null ? "tool" : s.cc(), clients, servers);
            }
            for (final Path f : files) {
                Files.deleteIfExists(f);
            }
        }
    }

    /**
     * Keeps each end's standard error (progress lines with the congestion state, counters, errors)
     * beside the run's CSV: the table says how a run ended, these say why.
     */
    private static void keepLogs(final Path dir, final String cc, final List<NamespacedProcess> clients,
                                 final List<NamespacedProcess> servers) throws IOException {
        Files.createDirectories(dir);
        for (int i = 0; i < clients.size(); i++) {
            Files.writeString(dir.resolve("incast-" + cc + ".client" + i + ".log"), clients.get(i).stderr(),
                StandardCharsets.UTF_8);
        }
        for (int i = 0; i < servers.size(); i++) {
            Files.writeString(dir.resolve("incast-" + cc + ".server" + i + ".log"), servers.get(i).stderr(),
                StandardCharsets.UTF_8);
        }
    }

    private static JsonNode report(final String stdout) {
        for (final String line : stdout.split("\\R")) {
            if (line.startsWith("{")) {
                try {
                    return JSON.readTree(line);
                } catch (final IOException ex) {
                    break;
                }
            }
        }
        return JSON.createObjectNode();
    }

    /** @return a figure of the tool's {@code {"counters":...}} line: {@code field}, or {@code group.field}; 0 without */
    static long counter(final String stderr, final String group, final String field) {
        for (final String line : stderr.split("\\R")) {
            if (line.startsWith("{\"counters\":")) {
                try {
                    final JsonNode n = JSON.readTree(line);
                    return field == null ? n.path(group).asLong() : n.path(group).path(field).asLong();
                } catch (final IOException ex) {
                    return 0;
                }
            }
        }
        return 0;
    }
}
