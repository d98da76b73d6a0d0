// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty;

import java.util.Arrays;

/**
 * The byte ranges of one {@link SendChunk} whose content is elsewhere: for each, where it lies in
 * the chunk, its length and the native address of the bytes (a work request's payload in
 * registered memory, which the engine handed the sink by reference). A gathering transport sends
 * a datagram as the chunk's bytes with each such range taken from its address instead; the chunk's
 * own bytes there are never written. Ranges are added in chunk order (packets are committed at
 * increasing offsets) and never overlap. Allocates nothing once its arrays have grown to the most
 * ranges a chunk held. Owning thread only.
 */
public final class PayloadReferences {
    private int[] at = new int[64];
    private int[] length = new int[64];
    private long[] address = new long[64];
    private int count;

    /** @return ranges recorded */
    public int size() {
        return count;
    }

    /**
     * @param i range index, 0..size()-1
     * @return its offset in the chunk
     */
    public int at(final int i) {
        return at[i];
    }

    /**
     * @param i range index
     * @return its bytes
     */
    public int length(final int i) {
        return length[i];
    }

    /**
     * @param i range index
     * @return the native address its bytes are sent from
     */
    public long address(final int i) {
        return address[i];
    }

    /**
     * @param offset an offset in the chunk
     * @return the index of the first range that starts at or after {@code offset} ({@link #size()} if none)
     */
    public int firstFrom(final int offset) {
        // Offsets are distinct and ascending: a miss's insertion point is the first one after.
        final int i = Arrays.binarySearch(at, 0, count, offset);
        return i >= 0 ? i : -i - 1;
    }

    /**
     * @param from first byte of a range of the chunk
     * @param to the byte after it
     * @return how many recorded ranges start in {@code [from, to)}
     */
    public int countIn(final int from, final int to) {
        return firstFrom(to) - firstFrom(from);
    }

    /**
     * Records a range after every range recorded so far.
     *
     * @throws IllegalArgumentException if it starts before the end of the last one
     */
    void add(final int offset, final int bytes, final long source) {
        if (count > 0 && offset < at[count - 1] + length[count - 1]) {
            throw new IllegalArgumentException("a payload reference at " + offset + " overlaps or precedes the one at "
                + at[count - 1] + " (" + length[count - 1] + " bytes)");
        }
        if (count == at.length) {
            at = Arrays.copyOf(at, count * 2);
            length = Arrays.copyOf(length, count * 2);
            address = Arrays.copyOf(address, count * 2);
        }
        at[count] = offset;
        length[count] = bytes;
        address[count] = source;
        count++;
    }

    /**
     * Copies the bytes of every range that starts in {@code [from, to)} into their place in the
     * chunk and forgets those ranges: the chunk then holds those datagrams whole, and their sending
     * no longer reads the memory the ranges pointed to.
     *
     * @param chunkAddress native address of the chunk's first byte
     * @return the ranges copied
     */
    int copyIn(final int from, final int to, final long chunkAddress) {
        final int first = firstFrom(from);
        final int end = firstFrom(to);
        for (int k = first; k < end; k++) {
            org.agrona.UnsafeApi.copyMemory(address[k], chunkAddress + at[k], length[k]);
        }
        final int removed = end - first;
        if (removed > 0) {
            System.arraycopy(at, end, at, first, count - end);
            System.arraycopy(length, end, length, first, count - end);
            System.arraycopy(address, end, address, first, count - end);
            count -= removed;
        }
        return removed;
    }

    /** Forgets every range (the chunk is handed out again). */
    void clear() {
        count = 0;
    }
}
