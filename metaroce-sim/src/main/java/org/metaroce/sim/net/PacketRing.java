// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.sim.net;

/** A growable FIFO of packets without per-operation allocation. */
final class PacketRing {
    private Packet[] items = new Packet[64];
    private int head;
    private int size;

    int size() {
        return size;
    }

    boolean isEmpty() {
        return size == 0;
    }

    void add(final Packet p) {
        if (size == items.length) {
            final Packet[] n = new Packet[items.length * 2];
            for (int i = 0; i < size; i++) {
                n[i] = items[(head + i) & (items.length - 1)];
            }
            items = n;
            head = 0;
        }
        items[(head + size) & (items.length - 1)] = p;
        size++;
    }

    Packet poll() {
        final Packet p = items[head];
        items[head] = null;
        head = (head + 1) & (items.length - 1);
        size--;
        return p;
    }
}
