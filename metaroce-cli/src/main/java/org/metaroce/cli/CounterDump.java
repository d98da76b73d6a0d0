// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.cli;

import java.io.PrintWriter;
import java.util.Locale;

import org.metaroce.core.connection.CmCounter;
import org.metaroce.core.engine.EndpointCounter;
import org.metaroce.core.engine.EndpointCounters;
import org.metaroce.core.wire.DropReason;
import org.metaroce.core.wire.WireCounters;
import org.metaroce.netty.DriverCounter;

/**
 * What {@code --counters} prints for one end: the driver's, endpoint's, wire's and connection
 * manager's counters, as a text block, or with {@code --json} as one JSON line that scripts (the
 * fault campaign) read without parsing {@code toString()} output.
 */
final class CounterDump {
    /** Starts the JSON line, so a reader can find it among the progress lines on stderr. */
    static final String JSON_PREFIX = "{\"counters\":";

    private CounterDump() {
    }

    /**
     * Prints the counters of {@code side}.
     *
     * @param side the end
     * @param json one JSON line instead of the text block
     * @param outcome "ok" or "failed": the counters matter most when the run failed
     * @param out where to (stderr)
     */
    static void print(final Side side, final boolean json, final String outcome, final PrintWriter out) {
        out.println(json ? json(side, outcome) : text(side, outcome));
        out.flush();
    }

    static String text(final Side side, final String outcome) {
        return side.name + " counters" + ("ok".equals(outcome) ? "" : " (run " + outcome + ")") + ":\n  driver: "
            + side.device.counters() + "\n  endpoint: " + side.device.endpoint().counters() + "\n  wire: "
            + side.device.endpoint().wireCounters() + "\n  cm: " + side.cm.counters();
    }

    static String json(final Side side, final String outcome) {
        final StringBuilder b = new StringBuilder(1024).append(JSON_PREFIX);
        b.append('"').append(side.name).append("\",\"outcome\":\"").append(outcome).append('"');
        final EndpointCounters ec = side.device.endpoint().counters();
        // The sum of every retransmission reason: the figure loss efficiency is judged by.
        b.append(",\"retransmits\":").append(ec.retransmits());
        b.append(",\"endpoint\":{");
        for (final EndpointCounter c : EndpointCounter.values()) {
            entry(b, c.name(), ec.get(c));
        }
        close(b).append(",\"driver\":{");
        for (final DriverCounter c : DriverCounter.values()) {
            entry(b, c.name(), side.device.counters().get(c));
        }
        final WireCounters wire = side.device.endpoint().wireCounters();
        close(b).append(",\"wire\":{");
        entry(b, "ACCEPTED", wire.accepted());
        entry(b, "ACCEPTED_TRIMMED", wire.acceptedTrimmed());
        for (final DropReason r : DropReason.values()) {
            entry(b, "DROPPED_" + r.name(), wire.dropped(r));
        }
        close(b).append(",\"cm\":{");
        for (final CmCounter c : CmCounter.values()) {
            entry(b, c.name(), side.cm.counters().get(c));
        }
        return close(b).append('}').toString();
    }

    private static void entry(final StringBuilder b, final String name, final long value) {
        b.append('"').append(name.toLowerCase(Locale.ROOT)).append("\":").append(value).append(',');
    }

    /** Ends an object whose entries each left a trailing comma. */
    private static StringBuilder close(final StringBuilder b) {
        if (b.charAt(b.length() - 1) == ',') {
            b.setLength(b.length() - 1);
        }
        return b.append('}');
    }
}
