// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.cli.stat;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

import org.agrona.concurrent.status.CountersReader;
import org.metaroce.netty.CounterFile;
import org.metaroce.netty.CounterType;

/**
 * The counters of one device's file at one instant: what {@code metaroce stat} prints, and the
 * earlier sample it computes rates against.
 */
final class CounterSample {
    /** One allocated counter. */
    record Counter(int id, CounterType type, int typeId, int key, String label, long value) {
    }

    final String file;
    final long pid;
    final String description;
    final long heartbeatMs;
    final long takenNs;
    final List<Counter> counters;
    private final Counter[] byId;

    private CounterSample(final String file, final long pid, final String description, final long heartbeatMs,
                          final long takenNs, final List<Counter> counters) {
        this.file = file;
        this.pid = pid;
        this.description = description;
        this.heartbeatMs = heartbeatMs;
        this.takenNs = takenNs;
        this.counters = counters;
        int max = -1;
        for (final Counter c : counters) {
            max = Math.max(max, c.id());
        }
        byId = new Counter[max + 1];
        for (final Counter c : counters) {
            byId[c.id()] = c;
        }
    }

    /**
     * Reads every allocated counter of a mapped file.
     *
     * @param file the mapped file
     * @return the sample
     */
    static CounterSample take(final CounterFile file) {
        final CountersReader reader = file.reader();
        final List<Counter> list = new ArrayList<>();
        final long now = System.nanoTime();
        reader.forEach((id, typeId, keyBuffer, label) -> list.add(new Counter(id, CounterType.ofTypeId(typeId),
            typeId, keyBuffer.getInt(0), label, reader.getCounterValue(id))));
        return new CounterSample(file.path().toString(), file.pid(), file.description(), file.heartbeatMs(), now,
            Collections.unmodifiableList(list));
    }

    /**
     * @param previous an earlier sample of the same file, or null
     * @param counter a counter of this sample
     * @return its rate per second since {@code previous}, or NaN when there is none (first sample,
     *     a gauge, or the id now names another counter)
     */
    double ratePerSecond(final CounterSample previous, final Counter counter) {
        if (previous == null || counter.type() == null || !counter.type().isMonotonic()) {
            return Double.NaN;
        }
        final Counter p = counter.id() < previous.byId.length ? previous.byId[counter.id()] : null;
        if (p == null || !p.label().equals(counter.label())) {
            return Double.NaN;
        }
        final double seconds = (takenNs - previous.takenNs) / 1e9;
        return seconds <= 0 ? Double.NaN : (counter.value() - p.value()) / seconds;
    }
}
