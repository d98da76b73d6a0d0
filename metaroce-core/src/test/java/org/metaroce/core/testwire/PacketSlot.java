// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.testwire;

import org.agrona.concurrent.UnsafeBuffer;

/**
 * One packet copy in flight on an {@link InMemoryWire}: the bytes copied out of the sender's sink
 * plus where and when they go. Slots are pooled by {@link SlotPool} and reused once delivered or
 * dropped, so a long run makes no garbage per packet.
 */
final class PacketSlot {
    final UnsafeBuffer buffer;
    final int sizeClass;

    int length;
    long timeNs;
    /** When the datagram reached the receiving host, reported to it; -1: when it is delivered. */
    long hostArrivalNs = -1;
    long sequence;
    long sentNs;
    long packetId;
    int from;
    int to;
    int ecn;
    int opcode;
    int psn;
    int entropy;

    PacketSlot(final int sizeClass) {
        this.sizeClass = sizeClass;
        this.buffer = new UnsafeBuffer(new byte[1 << sizeClass]);
    }

    /** Copies this slot's metadata and bytes into {@code copy}, for a duplicate. */
    void copyTo(final PacketSlot copy) {
        copy.buffer.putBytes(0, buffer, 0, length);
        copy.length = length;
        copy.sentNs = sentNs;
        copy.packetId = packetId;
        copy.from = from;
        copy.to = to;
        copy.ecn = ecn;
        copy.opcode = opcode;
        copy.psn = psn;
        copy.entropy = entropy;
        copy.hostArrivalNs = hostArrivalNs;
    }

    /** Delivery order: by time, then by the order the wire scheduled the copies. */
    static int compare(final PacketSlot a, final PacketSlot b) {
        final int byTime = Long.compare(a.timeNs, b.timeNs);
        return byTime != 0 ? byTime : Long.compare(a.sequence, b.sequence);
    }
}
