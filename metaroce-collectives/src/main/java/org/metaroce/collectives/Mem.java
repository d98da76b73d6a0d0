// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.collectives;

/**
 * A byte range of local memory an operation uses: its native address, the local key of a
 * region covering it (0 when it is never the source of a WRITE), and the remote key of a region
 * peers may write (0 when none: its receives use slots, COLL-033).
 *
 * @param address native address of the first byte
 * @param lkey local key
 * @param rkey remote key, or 0
 */
record Mem(long address, int lkey, int rkey) {
    Mem(final long address, final int lkey) {
        this(address, lkey, 0);
    }

    /** @return the memory {@code offset} bytes further, same keys */
    Mem plus(final long offset) {
        return new Mem(address + offset, lkey, rkey);
    }
}
