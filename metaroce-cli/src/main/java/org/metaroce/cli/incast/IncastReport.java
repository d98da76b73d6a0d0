// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.cli.incast;

import java.util.List;
import java.util.Locale;

/**
 * The figures of one incast run: from the bottleneck's counters, each sender's rate through it over
 * the window in which all measured (IP bytes: headers and retransmissions included), hence the
 * aggregate and Jain's index, independent of the senders' clocks; from the senders, their own goodput
 * (payload over their own measured seconds, which start up to a few seconds apart, so the sum can
 * exceed R), retransmissions and ECN echoes; from the receivers, CE marks received.
 *
 * @param cc the {@code --cc} of the run
 * @param rateMbit the bottleneck rate R
 * @param outcome what the run returned
 * @param end the bottleneck's counters after the run (marks and drops of the whole run)
 */
record IncastReport(String cc, long rateMbit, IncastRun.Outcome outcome, Bottleneck.Sample end) {
    static final String HEADER = "| cc | ran | through the bottleneck Mb/s | of R | Jain | senders' goodput Mb/s | "
        + "retransmitted / delivered bytes | marked MB | dropped MB | CE received / echoes heard | verified | targets "
        + "(>= 90 % of R, <= 1 %, >= 0.95) |\n|---|---|---|---|---|---|---|---|---|---|---|---|";

    /** @return each sender's rate through the bottleneck over the common window, in Mb/s */
    double[] shares() {
        final List<Bottleneck.Sample> s = outcome.samples();
        if (s.isEmpty()) {
            return new double[0];
        }
        final Bottleneck.Sample a = s.get(0);
        final Bottleneck.Sample b = s.get(s.size() - 1);
        final double seconds = (b.nanoTime() - a.nanoTime()) / 1e9;
        final double[] x = new double[a.portBytes().length];
        for (int i = 0; i < x.length; i++) {
            x[i] = (b.portBytes()[i] - a.portBytes()[i]) * 8 / seconds / 1e6;
        }
        return x;
    }

    /** @return Jain's fairness index (Σx)² / (n Σx²) of {@code x}, NaN when empty or all zero */
    static double jain(final double[] x) {
        double sum = 0;
        double squares = 0;
        for (final double v : x) {
            sum += v;
            squares += v * v;
        }
        return x.length == 0 || squares == 0 ? Double.NaN : sum * sum / (x.length * squares);
    }

    double goodputMbit() {
        return outcome.senders().stream().mapToDouble(IncastRun.Sender::goodputGbps).sum() * 1000;
    }

    /** @return retransmitted packets × path MTU over delivered payload bytes (an upper bound) */
    double retransmittedPerDelivered(final int pathMtu, final double durationS) {
        final double delivered = goodputMbit() * 1e6 / 8 * durationS;
        final long retx = outcome.senders().stream().mapToLong(IncastRun.Sender::retransmits).sum();
        return delivered <= 0 ? Double.NaN : retx * (double) pathMtu / delivered;
    }

    boolean completedAndVerified() {
        return outcome.senders().stream().allMatch(s -> "passed".equals(s.verify()) && s.error().isEmpty());
    }

    String row() {
        final double goodput = goodputMbit();
        final double[] shares = shares();
        final double through = java.util.Arrays.stream(shares).sum();
        final double jain = jain(shares);
        final double retx = retransmittedPerDelivered(outcome.pathMtu(), outcome.durationS());
        final boolean met = through >= IncastCommand.TARGET_GOODPUT * rateMbit && retx <= IncastCommand.TARGET_RETX
            && jain >= IncastCommand.TARGET_JAIN;
        final String ran = outcome.senders().isEmpty() ? "-" : outcome.senders().get(0).cc().replaceAll(";.*", "");
        return String.format(Locale.ROOT, "| %s | %s | %.0f | %.2f | %.3f | %.0f | %.4f | %.1f | %.1f | %d / %d | %s | %s |",
            cc, ran, through, through / rateMbit, jain, goodput, retx, end.markedBytes() / 1e6, end.droppedBytes() / 1e6,
            outcome.senders().stream().mapToLong(IncastRun.Sender::ceMarked).sum(),
            outcome.senders().stream().mapToLong(IncastRun.Sender::ecnEchoes).sum(),
            completedAndVerified() ? "all" : "NO", met ? "met" : "not met");
    }

    /** @return one line per sender, then the row */
    String detail() {
        final StringBuilder b = new StringBuilder(512).append("## cc ").append(cc).append('\n');
        final double[] x = shares();
        for (int i = 0; i < outcome.senders().size(); i++) {
            final IncastRun.Sender s = outcome.senders().get(i);
            b.append(String.format(Locale.ROOT, "  sender %d: goodput %.1f Mb/s, through the bottleneck %s Mb/s, "
                    + "%d retransmitted, %d echoes heard, %d CE received, verify %s%s%n", i, s.goodputGbps() * 1000,
                i < x.length ? String.format(Locale.ROOT, "%.1f", x[i]) : "?", s.retransmits(), s.ecnEchoes(),
                s.ceMarked(), s.verify(), s.error().isEmpty() ? "" : ", error: " + s.error()));
        }
        if (!outcome.senders().isEmpty()) {
            b.append("  congestion control: ").append(outcome.senders().get(0).cc()).append('\n');
        }
        return b.append(HEADER).append('\n').append(row()).toString();
    }

    /** @return time (s, from the first sample) and each sender's rate (Mb/s) per sample interval */
    double[][] series() {
        final List<Bottleneck.Sample> s = outcome.samples();
        if (s.size() < 2) {
            return new double[0][];
        }
        final int n = s.get(0).portBytes().length;
        final double[][] out = new double[n + 1][s.size() - 1];
        for (int k = 1; k < s.size(); k++) {
            final Bottleneck.Sample a = s.get(k - 1);
            final Bottleneck.Sample b = s.get(k);
            final double dt = (b.nanoTime() - a.nanoTime()) / 1e9;
            out[0][k - 1] = (b.nanoTime() - s.get(0).nanoTime()) / 1e9;
            for (int i = 0; i < n; i++) {
                out[i + 1][k - 1] = (b.portBytes()[i] - a.portBytes()[i]) * 8 / dt / 1e6;
            }
        }
        return out;
    }

    String csv() {
        final double[][] series = series();
        final StringBuilder b = new StringBuilder("t_s");
        for (int i = 1; i < series.length; i++) {
            b.append(",sender").append(i - 1).append("_mbit");
        }
        b.append('\n');
        for (int k = 0; series.length > 0 && k < series[0].length; k++) {
            b.append(String.format(Locale.ROOT, "%.3f", series[0][k]));
            for (int i = 1; i < series.length; i++) {
                b.append(String.format(Locale.ROOT, ",%.2f", series[i][k]));
            }
            b.append('\n');
        }
        return b.toString();
    }
}
