// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty;

import java.nio.file.Path;

/**
 * How a {@link MetaRoceDevice} shows what it does to the outside: its counters file (on by
 * default, so {@code metaroce stat <pid>} attaches to any running process) and its optional packet
 * capture. Mutable until the device is built, like {@link DeviceConfig}.
 */
public final class ObservabilityConfig {
    /** Publication interval of the counters file by default: 10 ms. */
    public static final long DEFAULT_COUNTERS_INTERVAL_NS = 10_000_000L;
    /**
     * Counters a file holds by default: the device's (about 130) and 17 for each of about 950 QPs
     * (the file is sparse: only the pages counters use take memory).
     */
    public static final int DEFAULT_COUNTERS_CAPACITY = 16384;

    private boolean counters = true;
    private Path countersBase;
    private long countersIntervalNs = DEFAULT_COUNTERS_INTERVAL_NS;
    private int countersCapacity = DEFAULT_COUNTERS_CAPACITY;
    private PcapWriter capture;
    private boolean captureReceived = true;

    /** @return whether the device writes a counters file */
    public boolean counters() {
        return counters;
    }

    /**
     * @param enabled whether the device writes a counters file (true by default)
     * @return this
     */
    public ObservabilityConfig counters(final boolean enabled) {
        this.counters = enabled;
        return this;
    }

    /** @return the base directory of counters files, or null for {@link CounterDirectory#base()} */
    public Path countersBase() {
        return countersBase;
    }

    /**
     * @param base base directory under which the process's {@code metaroce-<pid>} directory goes;
     *     null (the default) for {@link CounterDirectory#base()}
     * @return this
     */
    public ObservabilityConfig countersBase(final Path base) {
        this.countersBase = base;
        return this;
    }

    /** @return shortest time between two publications of the counters, ns */
    public long countersIntervalNs() {
        return countersIntervalNs;
    }

    /**
     * @param ns shortest time between two publications of the counters (10 ms by default): values
     *     in the file are at most this old
     * @return this
     */
    public ObservabilityConfig countersIntervalNs(final long ns) {
        if (ns <= 0) {
            throw new IllegalArgumentException("countersIntervalNs must be > 0, got " + ns);
        }
        this.countersIntervalNs = ns;
        return this;
    }

    /** @return how many counters the file holds */
    public int countersCapacity() {
        return countersCapacity;
    }

    /**
     * @param capacity counters the file holds ({@value #DEFAULT_COUNTERS_CAPACITY} by default); QPs
     *     beyond it are counted in "stat QPS_LEFT_OUT" instead
     * @return this
     */
    public ObservabilityConfig countersCapacity(final int capacity) {
        if (capacity < 256) {
            throw new IllegalArgumentException("countersCapacity must be >= 256 (the device's own counters), got "
                + capacity);
        }
        this.countersCapacity = capacity;
        return this;
    }

    /** @return where the device records its packets, or null (no capture: the default) */
    public PcapWriter capture() {
        return capture;
    }

    /** @return whether received packets are recorded too (else only those the device sends) */
    public boolean captureReceived() {
        return captureReceived;
    }

    /**
     * Records every MetaRoCE packet the device sends, and with {@code received} every one it
     * receives, into {@code writer}: one record per packet as on the wire (GSO batches appear as
     * their segments). The caller owns the writer and closes it after the device. Devices sharing
     * a writer (both ends in one process) record only what they send, so that each packet appears
     * once.
     *
     * @param writer the capture file, or null for none
     * @param received whether to record received packets too
     * @return this
     */
    public ObservabilityConfig capture(final PcapWriter writer, final boolean received) {
        this.capture = writer;
        this.captureReceived = received;
        return this;
    }
}
