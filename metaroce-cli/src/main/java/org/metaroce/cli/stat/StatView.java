// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.cli.stat;

import java.time.Instant;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Pattern;

import org.metaroce.core.verbs.QpState;
import org.metaroce.netty.CounterType;
import org.metaroce.netty.QpCounter;

/** Renders samples of a process's counters files: a text table with rates, or one JSON document. */
final class StatView {
    private static final QpState[] STATES = QpState.values();
    private static final String STATE_SUFFIX = " " + QpCounter.STATE.name();

    private final Pattern filter;
    private final boolean showZeros;

    /**
     * @param filter only counters whose label it finds something in, or null for all
     * @param showZeros whether counters at 0 are shown (most are, on a healthy run)
     */
    StatView(final Pattern filter, final boolean showZeros) {
        this.filter = filter;
        this.showZeros = showZeros;
    }

    private boolean shown(final CounterSample.Counter c) {
        return (showZeros || c.value() != 0) && (filter == null || filter.matcher(c.label()).find());
    }

    /**
     * @param pid the process
     * @param samples its devices' samples, in file order
     * @param previous the earlier sample of each file (by file name), for rates
     * @param nowMs wall-clock time of the samples
     * @return the table
     */
    String text(final long pid, final List<CounterSample> samples, final Map<String, CounterSample> previous,
                final long nowMs) {
        final StringBuilder b = new StringBuilder(8192);
        b.append("metaroce stat: pid ").append(pid).append(", ").append(samples.size())
            .append(samples.size() == 1 ? " device, " : " devices, ").append(Instant.ofEpochMilli(nowMs))
            .append(showZeros ? "" : " (zeros hidden)").append('\n');
        for (final CounterSample s : samples) {
            final CounterSample before = previous.get(s.file);
            b.append("== ").append(s.description).append("  (published ").append(Math.max(0, nowMs - s.heartbeatMs))
                .append(" ms ago)\n");
            row(b, "COUNTER", "VALUE", "RATE/s");
            for (final CounterSample.Counter c : s.counters) {
                if (!shown(c)) {
                    continue;
                }
                final double rate = s.ratePerSecond(before, c);
                row(b, c.label(), format(c), Double.isNaN(rate) ? "" : grouped(Math.round(rate)));
            }
        }
        return b.toString();
    }

    /** One line: label left-aligned in 44 columns, value in 18 and rate in 16 right-aligned (no String.format: a refresh stays cheap). */
    private static void row(final StringBuilder b, final String label, final String value, final String rate) {
        b.append("  ").append(label);
        pad(b, 44 - label.length() + 1 + 18 - value.length());
        b.append(value);
        pad(b, 1 + 16 - rate.length());
        b.append(rate).append('\n');
    }

    private static void pad(final StringBuilder b, final int n) {
        for (int i = 0; i < n; i++) {
            b.append(' ');
        }
    }

    private static String format(final CounterSample.Counter c) {
        if (c.type() == CounterType.QP_GAUGE && c.label().endsWith(STATE_SUFFIX)
            && c.value() >= 0 && c.value() < STATES.length) {
            return STATES[(int) c.value()].name();
        }
        return grouped(c.value());
    }

    /** @return the value with thousands separated by commas */
    static String grouped(final long value) {
        final String text = Long.toString(value);
        final String digits = value < 0 ? text.substring(1) : text;
        final StringBuilder b = new StringBuilder(digits.length() + digits.length() / 3 + 1);
        if (value < 0) {
            b.append('-');
        }
        for (int i = 0; i < digits.length(); i++) {
            if (i > 0 && (digits.length() - i) % 3 == 0) {
                b.append(',');
            }
            b.append(digits.charAt(i));
        }
        return b.toString();
    }

    /**
     * @param pid the process
     * @param samples its devices' samples
     * @param nowMs wall-clock time of the samples
     * @return one JSON document: {"pid", "timeMs", "devices": [{"file", "description",
     *     "heartbeatMs", "counters": [{"id", "type", "key", "label", "value"}]}]}
     */
    String json(final long pid, final List<CounterSample> samples, final long nowMs) {
        final StringBuilder b = new StringBuilder(16384);
        b.append("{\"pid\":").append(pid).append(",\"timeMs\":").append(nowMs).append(",\"devices\":[");
        for (int i = 0; i < samples.size(); i++) {
            final CounterSample s = samples.get(i);
            b.append(i == 0 ? "" : ",").append("{\"file\":");
            string(b, s.file).append(",\"description\":");
            string(b, s.description).append(",\"heartbeatMs\":").append(s.heartbeatMs).append(",\"counters\":[");
            boolean first = true;
            for (final CounterSample.Counter c : s.counters) {
                if (!shown(c)) {
                    continue;
                }
                b.append(first ? "" : ",").append("{\"id\":").append(c.id()).append(",\"type\":");
                string(b, c.type() == null ? Integer.toString(c.typeId()) : c.type().name()).append(",\"key\":")
                    .append(c.key()).append(",\"label\":");
                string(b, c.label()).append(",\"value\":").append(c.value()).append('}');
                first = false;
            }
            b.append("]}");
        }
        return b.append("]}").toString();
    }

    private static StringBuilder string(final StringBuilder b, final String s) {
        b.append('"');
        for (int i = 0; i < s.length(); i++) {
            final char ch = s.charAt(i);
            if (ch == '"' || ch == '\\') {
                b.append('\\').append(ch);
            } else if (ch < 0x20) {
                b.append(String.format(Locale.ROOT, "\\u%04x", (int) ch));
            } else {
                b.append(ch);
            }
        }
        return b.append('"');
    }
}
