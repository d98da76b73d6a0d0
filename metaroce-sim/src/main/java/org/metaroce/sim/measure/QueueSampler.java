// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.sim.measure;

import java.util.List;

import org.metaroce.sim.EventHandler;
import org.metaroce.sim.Simulator;
import org.metaroce.sim.net.Port;
import org.metaroce.sim.net.Switch;

/**
 * Samples switch queues at a fixed virtual-time interval: the deepest egress queue anywhere, the
 * total bytes buffered in all switches, and the queue of one watched port (for example the
 * incast receiver's downlink).
 */
public final class QueueSampler implements EventHandler {
    private final Simulator simulator;
    private final List<Port> ports;
    private final List<Switch> switches;
    private final Port watched;
    private final long intervalNs;
    private long[] times = new long[1024];
    private long[] maxQueue = new long[1024];
    private long[] totalBuffered = new long[1024];
    private long[] watchedQueue = new long[1024];
    private int count;
    private boolean stopped;

    /**
     * @param simulator the kernel
     * @param ports egress ports to scan
     * @param switches switches whose buffer use is summed
     * @param watched one port of interest, or null
     * @param intervalNs sampling interval
     */
    public QueueSampler(final Simulator simulator, final List<Port> ports, final List<Switch> switches,
                        final Port watched, final long intervalNs) {
        if (intervalNs <= 0) {
            throw new IllegalArgumentException("sampling interval must be > 0 ns");
        }
        this.simulator = simulator;
        this.ports = ports;
        this.switches = switches;
        this.watched = watched;
        this.intervalNs = intervalNs;
    }

    /** Takes the first sample now and keeps sampling until {@link #stop()}. */
    public void start() {
        simulator.schedule(simulator.nowNs(), this, null, 0);
    }

    /** Ends sampling (the pending sample event is ignored). */
    public void stop() {
        stopped = true;
    }

    @Override
    public void onEvent(final long nowNs, final Object subject, final int arg) {
        if (stopped) {
            return;
        }
        if (count == times.length) {
            times = java.util.Arrays.copyOf(times, count * 2);
            maxQueue = java.util.Arrays.copyOf(maxQueue, count * 2);
            totalBuffered = java.util.Arrays.copyOf(totalBuffered, count * 2);
            watchedQueue = java.util.Arrays.copyOf(watchedQueue, count * 2);
        }
        long max = 0;
        for (int i = 0, n = ports.size(); i < n; i++) {
            max = Math.max(max, ports.get(i).queuedBytes());
        }
        long total = 0;
        for (int i = 0, n = switches.size(); i < n; i++) {
            total += switches.get(i).usedBytes();
        }
        times[count] = nowNs;
        maxQueue[count] = max;
        totalBuffered[count] = total;
        watchedQueue[count] = watched == null ? 0 : watched.queuedBytes();
        count++;
        simulator.schedule(nowNs + intervalNs, this, null, 0);
    }

    public int count() {
        return count;
    }

    public long time(final int i) {
        return times[i];
    }

    public long maxQueue(final int i) {
        return maxQueue[i];
    }

    public long totalBuffered(final int i) {
        return totalBuffered[i];
    }

    public long watchedQueue(final int i) {
        return watchedQueue[i];
    }
}
