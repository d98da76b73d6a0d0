// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.testwire;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.function.Predicate;

/**
 * Ordered record of every packet event on an {@link InMemoryWire}, so a test can assert on what the
 * network did ("exactly one retransmission of PSN 7 was delivered") and print it when an assertion
 * fails. Recording allocates one small record per event; turn it off with {@link #enabled(boolean)}
 * for long statistical runs, where {@link WireStats} still counts everything.
 */
public final class Trace {
    private final List<TraceEvent> events = new ArrayList<>();
    private boolean enabled = true;

    Trace() {
    }

    /** @return whether events are being recorded */
    public boolean enabled() {
        return enabled;
    }

    /** @param enabled whether to record events from now on; already recorded events are kept */
    public void enabled(final boolean enabled) {
        this.enabled = enabled;
    }

    void record(final long timeNs, final PacketSlot packet, final PacketFate fate) {
        if (enabled) {
            events.add(new TraceEvent(timeNs, packet.sentNs, packet.packetId, packet.from, packet.to,
                packet.length, packet.opcode, packet.psn, packet.entropy, fate));
        }
    }

    /** @return number of recorded events */
    public int size() {
        return events.size();
    }

    /** @return the recorded events in order; a read-only live view */
    public List<TraceEvent> events() {
        return Collections.unmodifiableList(events);
    }

    /** @return a snapshot copy of the recorded events */
    public List<TraceEvent> snapshot() {
        return List.copyOf(events);
    }

    /** @return the number of recorded events {@code predicate} accepts */
    public long count(final Predicate<TraceEvent> predicate) {
        long n = 0;
        for (final TraceEvent e : events) {
            if (predicate.test(e)) {
                n++;
            }
        }
        return n;
    }

    /** @return the number of recorded events with this fate */
    public long count(final PacketFate fate) {
        return count(e -> e.fate() == fate);
    }

    /** @return the recorded events {@code predicate} accepts, in order */
    public List<TraceEvent> select(final Predicate<TraceEvent> predicate) {
        final List<TraceEvent> selected = new ArrayList<>();
        for (final TraceEvent e : events) {
            if (predicate.test(e)) {
                selected.add(e);
            }
        }
        return selected;
    }

    /** Forgets every recorded event. */
    public void clear() {
        events.clear();
    }

    /**
     * @param maxLines most events to print; the rest are summarised in a final line
     * @return the first events, one per line
     */
    public String dump(final int maxLines) {
        return dump(e -> true, maxLines);
    }

    /**
     * @param predicate which events to print
     * @param maxLines most events to print; the rest are summarised in a final line
     * @return the first selected events, one per line
     */
    public String dump(final Predicate<TraceEvent> predicate, final int maxLines) {
        final StringBuilder sb = new StringBuilder();
        int printed = 0;
        int skipped = 0;
        for (final TraceEvent e : events) {
            if (predicate.test(e)) {
                if (printed < maxLines) {
                    sb.append(e).append('\n');
                    printed++;
                } else {
                    skipped++;
                }
            }
        }
        if (skipped > 0) {
            sb.append("... ").append(skipped).append(" more events\n");
        }
        return sb.toString();
    }

    @Override
    public String toString() {
        return "Trace{events=" + events.size() + ", enabled=" + enabled + '}';
    }
}
