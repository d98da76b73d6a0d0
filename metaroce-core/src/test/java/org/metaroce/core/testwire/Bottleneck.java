// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.testwire;

/**
 * A switch egress port in front of one node of an {@link InMemoryWire}: every packet to that node,
 * from whatever sender, waits in one FIFO queue drained at the port's rate. The queue tail-drops
 * when full and CE-marks a packet that finds more than the marking threshold queued (the step
 * marking DCQCN and DCTCP assume). Optionally it trims instead (NDP, UET): a data packet that
 * does not fit loses its payload and goes on as a header with TRIMMED set [WIRE-042], ahead of
 * the buffer limit as switches forward trimmed headers at high priority. This is what makes incast, queueing delay and ECN real in
 * core tests; the fabric simulator models whole topologies.
 */
final class Bottleneck {
    private final long rateBitsPerSecond;
    private final long bufferBytes;
    private final long markThresholdBytes;
    private final boolean trim;
    private long freeAtNs = Long.MIN_VALUE;

    Bottleneck(final long rateBitsPerSecond, final long bufferBytes, final long markThresholdBytes,
               final boolean trim) {
        if (rateBitsPerSecond <= 0 || bufferBytes <= 0 || markThresholdBytes < 0) {
            throw new IllegalArgumentException("rate and buffer must be > 0 and the threshold >= 0");
        }
        this.rateBitsPerSecond = rateBitsPerSecond;
        this.bufferBytes = bufferBytes;
        this.markThresholdBytes = markThresholdBytes;
        this.trim = trim;
    }

    /** @return whether a packet that does not fit is trimmed to its headers instead of dropped */
    boolean trims() {
        return trim;
    }

    /** @return bytes queued ahead of a packet reaching the port at {@code atNs} */
    long backlogBytes(final long atNs) {
        if (freeAtNs <= atNs) {
            return 0;
        }
        return (freeAtNs - atNs) * rateBitsPerSecond / 8_000_000_000L;
    }

    boolean overflows(final long backlog, final int length) {
        return backlog + length > bufferBytes;
    }

    boolean marks(final long backlog) {
        return backlog > markThresholdBytes;
    }

    /** Queues a packet reaching the port at {@code atNs}; @return when its last bit leaves */
    long enqueue(final long atNs, final int length) {
        final long transmitNs = Math.max(1, ((long) length * 8 * 1_000_000_000L + rateBitsPerSecond - 1)
            / rateBitsPerSecond);
        freeAtNs = Math.max(atNs, freeAtNs) + transmitNs;
        return freeAtNs;
    }
}
