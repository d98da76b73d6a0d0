// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.engine;

import org.metaroce.core.reliability.Psn;

/**
 * A fixed-capacity queue kept in PSN order (serial arithmetic), for the requests a responder
 * holds until every earlier PSN has arrived: READs and atomics execute in PSN order whatever order
 * they arrived in [OPS-029].
 *
 * <p>The queue orders slots, not records: {@link #insert} returns a slot number and the owner
 * keeps each entry's fields in its own arrays indexed by that slot, so an entry's fields never
 * move and a queue with different fields needs no code of its own. Inserting shifts two ints per
 * later entry; capacities are small (a few times MAX_DEST_RD_ATOMIC). Allocates nothing after
 * construction.
 */
final class PsnOrderedQueue {
    /** PSNs by position, oldest first. */
    private final int[] psns;
    /** Slots by position. */
    private final int[] slots;
    /** Stack of free slots. */
    private final int[] free;
    private int freeCount;
    private int size;

    /** @param capacity entries held at most; slots are 0..capacity-1 */
    PsnOrderedQueue(final int capacity) {
        psns = new int[capacity];
        slots = new int[capacity];
        free = new int[capacity];
        clear();
    }

    /** @return entries held */
    int size() {
        return size;
    }

    /** @return whether no entry is held */
    boolean isEmpty() {
        return size == 0;
    }

    /** @return whether {@link #insert} would have no slot */
    boolean isFull() {
        return size == psns.length;
    }

    /**
     * Places an entry after every held entry whose PSN is not after its own (so equal PSNs keep
     * their arrival order).
     *
     * @param psn the entry's PSN
     * @return the slot to keep its fields in
     * @throws IllegalStateException if full
     */
    int insert(final int psn) {
        if (size == psns.length) {
            throw new IllegalStateException("queue full: " + size);
        }
        final int slot = free[--freeCount];
        int j = size;
        while (j > 0 && Psn.before(psn, psns[j - 1])) {
            psns[j] = psns[j - 1];
            slots[j] = slots[j - 1];
            j--;
        }
        psns[j] = psn;
        slots[j] = slot;
        size++;
        return slot;
    }

    /** @return the PSN of the entry at a position, 0 the oldest */
    int psnAt(final int position) {
        return psns[position];
    }

    /** @return the slot of the entry at a position, 0 the oldest */
    int slotAt(final int position) {
        return slots[position];
    }

    /** @return whether an entry with this PSN is held */
    boolean contains(final int psn) {
        for (int i = 0; i < size; i++) {
            if (psns[i] == psn) {
                return true;
            }
        }
        return false;
    }

    /** Removes the entry with the earliest PSN and frees its slot; only if not empty. */
    void removeHead() {
        free[freeCount++] = slots[0];
        size--;
        System.arraycopy(psns, 1, psns, 0, size);
        System.arraycopy(slots, 1, slots, 0, size);
    }

    /** Removes every entry. */
    void clear() {
        size = 0;
        freeCount = free.length;
        for (int i = 0; i < free.length; i++) {
            free[i] = free.length - 1 - i; // slot 0 is taken first
        }
    }
}
