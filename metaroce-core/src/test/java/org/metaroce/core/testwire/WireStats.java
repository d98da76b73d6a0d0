// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.testwire;

/**
 * Packet counters of one {@link InMemoryWire}, kept even when the {@link Trace} is off, so
 * statistical tests can compare observed fault rates with the configured ones. Every packet sent
 * is either dropped (by exactly one cause) or delivered at least once; a duplicated packet is
 * delivered twice, so {@code sent + duplicated == delivered + dropped + inFlight} always holds.
 */
public final class WireStats {
    long sent;
    long delivered;
    long droppedLoss;
    long droppedFilter;
    long droppedBlackhole;
    long duplicated;
    long corrupted;
    long reordered;
    long ceMarked;
    long droppedQueue;
    long trimmed;
    long maxQueueBytes;

    WireStats() {
    }

    /** @return packets committed by endpoints */
    public long sent() {
        return sent;
    }

    /** @return copies handed to a destination's {@code onDatagram} (duplicates count twice) */
    public long delivered() {
        return delivered;
    }

    /** @return packets dropped by random or burst loss */
    public long droppedLoss() {
        return droppedLoss;
    }

    /** @return packets dropped by the {@link PacketFilter} */
    public long droppedFilter() {
        return droppedFilter;
    }

    /** @return packets dropped inside blackhole windows */
    public long droppedBlackhole() {
        return droppedBlackhole;
    }

    /** @return packets dropped for any cause */
    public long dropped() {
        return droppedLoss + droppedFilter + droppedBlackhole + droppedQueue;
    }

    /** @return packets tail-dropped by a full {@link Bottleneck} queue */
    public long droppedQueue() {
        return droppedQueue;
    }

    /** @return data packets a trimming bottleneck cut to their headers */
    public long trimmed() {
        return trimmed;
    }

    /** @return the largest backlog any bottleneck queue held, in bytes */
    public long maxQueueBytes() {
        return maxQueueBytes;
    }

    /** @return packets for which a second copy was scheduled */
    public long duplicated() {
        return duplicated;
    }

    /** @return copies that had a bit flipped */
    public long corrupted() {
        return corrupted;
    }

    /** @return packets held back by the reordering fault */
    public long reordered() {
        return reordered;
    }

    /** @return packets delivered with ECN CE */
    public long ceMarked() {
        return ceMarked;
    }

    @Override
    public String toString() {
        return "WireStats{sent=" + sent + ", delivered=" + delivered + ", droppedLoss=" + droppedLoss
            + ", droppedFilter=" + droppedFilter + ", droppedBlackhole=" + droppedBlackhole
            + ", duplicated=" + duplicated + ", corrupted=" + corrupted + ", reordered=" + reordered
            + ", ceMarked=" + ceMarked + ", droppedQueue=" + droppedQueue + ", trimmed=" + trimmed + ", maxQueueBytes=" + maxQueueBytes + '}';
    }
}
