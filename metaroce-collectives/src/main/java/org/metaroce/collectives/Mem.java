// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.collectives;

/**
 * A byte range of local memory an operation uses: its native address, the local key of a
 * region covering it (0 when it is never the source of a WRITE), and the remote key of a region
 * peers may write (0 when none: its receives use slots, COLL-033).
 * <p>
 * A flyweight: a communicator sets its few instances again for every operation ({@link #set}),
 * so that planning one allocates nothing (see {@link Plan}).
 */
final class Mem {
    private long address;
    private int lkey;
    private int rkey;

    /** A range to be {@link #set} before use. */
    Mem() {
    }

    /**
     * @param address native address of the first byte
     * @param lkey local key
     * @param rkey remote key, or 0
     * @return this
     */
    Mem set(final long address, final int lkey, final int rkey) {
        this.address = address;
        this.lkey = lkey;
        this.rkey = rkey;
        return this;
    }

    /** @return native address of the first byte */
    long address() {
        return address;
    }

    /** @return local key */
    int lkey() {
        return lkey;
    }

    /** @return remote key, or 0 */
    int rkey() {
        return rkey;
    }

    @Override
    public String toString() {
        return "Mem[address=" + address + ", lkey=" + lkey + ", rkey=" + rkey + "]";
    }
}
