// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.verbs;

/**
 * One piece of local memory in a work request, as ibv_sge: {@code length} bytes at native
 * address {@code addr} inside the region named by {@code lkey}. Mutable and reused.
 */
public final class ScatterGatherEntry {
    private long addr;
    private int length;
    private int lkey;

    /**
     * @param addr native address of the first byte (a {@link MemoryRegion#address()} plus an offset)
     * @param length byte count
     * @param lkey key of the region holding the bytes
     * @return this
     */
    public ScatterGatherEntry set(final long addr, final int length, final int lkey) {
        this.addr = addr;
        this.length = length;
        this.lkey = lkey;
        return this;
    }

    /**
     * @param other entry to copy
     * @return this
     */
    public ScatterGatherEntry copyFrom(final ScatterGatherEntry other) {
        return set(other.addr, other.length, other.lkey);
    }

    /**
     * @return this, with every field zero
     */
    public ScatterGatherEntry clear() {
        return set(0, 0, 0);
    }

    /**
     * @param addr native address of the first byte
     * @return this
     */
    public ScatterGatherEntry addr(final long addr) {
        this.addr = addr;
        return this;
    }

    /**
     * @return native address of the first byte
     */
    public long addr() {
        return addr;
    }

    /**
     * @param length byte count
     * @return this
     */
    public ScatterGatherEntry length(final int length) {
        this.length = length;
        return this;
    }

    /**
     * @return byte count
     */
    public int length() {
        return length;
    }

    /**
     * @param lkey key of the region
     * @return this
     */
    public ScatterGatherEntry lkey(final int lkey) {
        this.lkey = lkey;
        return this;
    }

    /**
     * @return key of the region
     */
    public int lkey() {
        return lkey;
    }

    @Override
    public String toString() {
        return "{addr=0x" + Long.toHexString(addr) + ", length=" + length + ", lkey=0x" + Integer.toHexString(lkey) + "}";
    }
}
