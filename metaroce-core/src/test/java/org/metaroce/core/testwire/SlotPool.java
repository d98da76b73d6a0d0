// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.testwire;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;

/**
 * Reuses {@link PacketSlot}s by power-of-two size class, so that the wire allocates only while the
 * number of packets in flight grows and a small ACK does not pin a jumbo-sized array.
 */
final class SlotPool {
    private static final int MIN_CLASS = 6;
    private static final int MAX_CLASS = 30;

    private final List<ArrayDeque<PacketSlot>> free = new ArrayList<>(MAX_CLASS + 1);

    SlotPool() {
        for (int i = 0; i <= MAX_CLASS; i++) {
            free.add(new ArrayDeque<>());
        }
    }

    /** @return a slot whose buffer holds at least {@code length} bytes */
    PacketSlot acquire(final int length) {
        final int sizeClass = Math.max(MIN_CLASS, 32 - Integer.numberOfLeadingZeros(Math.max(length, 1) - 1));
        if (sizeClass > MAX_CLASS) {
            throw new IllegalArgumentException("packet too large: " + length);
        }
        final PacketSlot slot = free.get(sizeClass).pollFirst();
        return slot != null ? slot : new PacketSlot(sizeClass);
    }

    void release(final PacketSlot slot) {
        free.get(slot.sizeClass).addFirst(slot);
    }
}
