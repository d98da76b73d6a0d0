// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.cli;

import java.io.PrintWriter;
import java.util.Locale;

import org.HdrHistogram.Histogram;

/** Results of one run and their perftest-shaped tables and JSON object. */
final class Report {
    static final String LINE = "---------------------------------------------------------------------------------------";
    static final String BW_HEADER =
        " #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]";
    static final String LAT_HEADER = " #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]"
        + "    t_stdev[usec]   99% percentile[usec]   99.99% percentile[usec]";

    final TestKind kind;
    final BenchConfig config;
    String role = "client";
    String local = "";
    String remote = "";
    int negotiatedMtu;
    int negotiatedPaths;
    String transport = "";
    boolean gso;
    /** The data queue pairs' congestion control as run, e.g. "DEFAULT (ECN)", with any fall-back reason. */
    String cc = "";

    // bandwidth
    long iterations;
    long messages;
    long elapsedNs;
    double peakBps;
    // raw baseline
    long sentDatagrams;
    long receivedDatagrams;
    // latency
    Histogram histogram;
    boolean halfRoundTrip;
    long lostEchoes;
    // verification
    String verify = "off";
    String verifyDetail = "";
    long verifiedBytes;

    /** Message size, queue pairs and depth of the run (a server takes them from the client). */
    int bytes;
    int qps;
    int txDepth;

    Report(final TestKind kind, final BenchConfig config) {
        this.kind = kind;
        this.config = config;
        this.bytes = config.size();
        this.qps = config.qps();
        this.txDepth = kind.bandwidth ? config.txDepth() : 1;
    }

    double averageGbps() {
        return elapsedNs <= 0 ? 0 : messages * (double) bytes * 8 / elapsedNs;
    }

    double peakGbps() {
        return Math.max(peakBps / 1e9, averageGbps());
    }

    double messageRateMpps() {
        return elapsedNs <= 0 ? 0 : messages * 1e3 / elapsedNs;
    }

    private double us(final double ns) {
        return (halfRoundTrip ? ns / 2 : ns) / 1000.0;
    }

    double tMin() {
        return us(histogram.getMinValue());
    }

    double tMax() {
        return us(histogram.getMaxValue());
    }

    double tTypical() {
        return us(histogram.getValueAtPercentile(50));
    }

    double tAvg() {
        return us(histogram.getMean());
    }

    double tStdev() {
        return us(histogram.getStdDeviation());
    }

    double p99() {
        return us(histogram.getValueAtPercentile(99));
    }

    double p9999() {
        return us(histogram.getValueAtPercentile(99.99));
    }

    void printTable(final PrintWriter out) {
        printHeader(out);
        printResults(out);
    }

    /**
     * The parameters of the run, as perftest prints them before it starts: known once the
     * connections are up, so a client prints them before its warm-up.
     */
    void printHeader(final PrintWriter out) {
        out.println(LINE);
        out.printf(Locale.ROOT, "                    %s%n", kind.title);
        out.printf(Locale.ROOT, " MetaRoCE over UDP   Transport: %s   Mode: %s   Idle: %s   GSO: %s%n", transport,
            config.mode().name().toUpperCase(Locale.ROOT), config.idle(), gso ? "on" : "off");
        out.printf(Locale.ROOT, " Number of qps   : %-10d Paths per QP : %d%n", qps, negotiatedPaths);
        out.printf(Locale.ROOT, " Mtu             : %-10s TX depth     : %d%n", negotiatedMtu + "[B]",
            txDepth);
        if (!cc.isEmpty()) {
            out.printf(Locale.ROOT, " Congestion ctl  : %s%n", cc);
        }
        if (config.timed()) {
            out.printf(Locale.ROOT, " Duration        : %.1f s measured after %d warm-up iterations and a %.1f s margin%n",
                config.durationNs() / 1e9, config.warmup(), config.marginNs() / 1e9);
        }
        out.printf(Locale.ROOT, " Local address   : %s   Remote address: %s%n", local, remote);
        if (!kind.bandwidth && halfRoundTrip) {
            out.println(" Latency         : half of the round trip (ping-pong), as perftest reports it");
        }
        out.println(LINE);
        out.flush();
    }

    /** What the run measured: the verification, the raw tools' datagram counts and the result table. */
    void printResults(final PrintWriter out) {
        out.printf(Locale.ROOT, " Verify          : %s%n", verify + (verifyDetail.isEmpty() ? "" : " (" + verifyDetail + ")"));
        if (kind.raw) {
            out.printf(Locale.ROOT, " Datagrams       : %d sent, %d received (%.2f%% lost)%n", sentDatagrams,
                receivedDatagrams, sentDatagrams == 0 ? 0.0
                    : 100.0 * Math.max(0, sentDatagrams - receivedDatagrams) / sentDatagrams);
        }
        if (kind.bandwidth) {
            out.println(BW_HEADER);
            out.printf(Locale.ROOT, " %-10d %-14d %-18.2f %-20.2f %-13.6f%n", bytes, iterations, peakGbps(),
                averageGbps(), messageRateMpps());
        } else {
            out.println(LAT_HEADER);
            out.printf(Locale.ROOT, " %-6d %-14d %-14.2f %-12.2f %-16.2f %-14.2f %-15.2f %-22.2f %-10.2f%n",
                bytes, iterations, tMin(), tMax(), tTypical(), tAvg(), tStdev(), p99(), p9999());
        }
        out.println(LINE);
        out.flush();
    }

    /**
     * Prints one figure alone, as perftest's {@code --output}: bandwidth (average Gb/s),
     * message_rate (Mpps) or latency (typical usec).
     */
    void printOnly(final String figure, final PrintWriter out) {
        switch (figure) {
            case "bandwidth" -> out.printf(Locale.ROOT, "%.2f%n", averageGbps());
            case "message_rate" -> out.printf(Locale.ROOT, "%.6f%n", messageRateMpps());
            case "latency" -> out.printf(Locale.ROOT, "%.2f%n", tTypical());
            default -> throw new IllegalArgumentException("no figure " + figure);
        }
        out.flush();
    }

    void printJson(final PrintWriter out) {
        final StringBuilder b = new StringBuilder(512).append('{');
        field(b, "test", kind.command);
        field(b, "role", role);
        field(b, "transport", transport);
        field(b, "mode", config.mode().name());
        field(b, "idle", config.idle().name());
        field(b, "gso", gso);
        field(b, "local", local);
        field(b, "remote", remote);
        field(b, "bytes", bytes);
        field(b, "iterations", iterations);
        field(b, "qps", qps);
        field(b, "mtu", negotiatedMtu);
        field(b, "paths", negotiatedPaths);
        field(b, "tx_depth", txDepth);
        if (!cc.isEmpty()) {
            field(b, "cc", cc);
        }
        if (kind.bandwidth) {
            field(b, "messages", messages);
            field(b, "elapsed_ns", elapsedNs);
            field(b, "bw_peak_gbps", peakGbps());
            field(b, "bw_average_gbps", averageGbps());
            field(b, "msg_rate_mpps", messageRateMpps());
        } else {
            field(b, "latency", halfRoundTrip ? "half_round_trip" : "round_trip");
            field(b, "t_min_us", tMin());
            field(b, "t_max_us", tMax());
            field(b, "t_typical_us", tTypical());
            field(b, "t_avg_us", tAvg());
            field(b, "t_stdev_us", tStdev());
            field(b, "p50_us", tTypical());
            field(b, "p99_us", p99());
            field(b, "p99_99_us", p9999());
            if (kind.raw) {
                field(b, "lost_echoes", lostEchoes);
            }
        }
        if (kind.raw) {
            field(b, "datagrams_sent", sentDatagrams);
            field(b, "datagrams_received", receivedDatagrams);
        }
        field(b, "verify", verify);
        if (!verifyDetail.isEmpty()) {
            field(b, "verify_detail", verifyDetail);
        }
        b.setLength(b.length() - 1);
        out.println(b.append('}'));
        out.flush();
    }

    private static void field(final StringBuilder b, final String name, final Object value) {
        b.append('"').append(name).append("\":");
        if (value instanceof String s) {
            b.append('"');
            for (int i = 0; i < s.length(); i++) {
                final char c = s.charAt(i);
                if (c == '"' || c == '\\') {
                    b.append('\\').append(c);
                } else if (c < 0x20) {
                    b.append(String.format(Locale.ROOT, "\\u%04x", (int) c));
                } else {
                    b.append(c);
                }
            }
            b.append('"');
        } else if (value instanceof Double d) {
            b.append(Double.isFinite(d) ? String.format(Locale.ROOT, "%.6f", d) : "null");
        } else {
            b.append(value);
        }
        b.append(',');
    }
}
