// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.engine;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * The copies of one send queue's INLINE payloads [OPS-041]: a ring of bytes that a post appends
 * to and the completion of the oldest request frees from, in post order (the send queue completes,
 * flushes and discards only in that order). Payloads are addressed by a logical position that
 * only grows; byte {@code p} lives at {@code p % capacity}, and a payload may wrap around the end.
 *
 * <p>Why this shape (issue 20, COLL-038): a copy per send queue entry of the QP's inline limit
 * cost every QP depth x limit up front (96 KiB at 24 entries and 4 KiB, 390 MiB for 64 INVOKER
 * ranks in one process) whether it ever posted inline or not. Here the storage is allocated on
 * the first post that needs it and grows by doubling to the most the QP ever had in flight at
 * once, never beyond depth x limit, which always suffices: a post therefore never fails for lack
 * of inline room, as with a verbs provider. Once it has reached that high-water mark a QP's
 * posts allocate nothing. Heap, not direct memory: the copy into a packet costs the same, the
 * storage goes with its QP without a cleaner or an explicit free, and the garbage collector and
 * heap dumps account for it. A slab shared per endpoint would bound the total, but would add an
 * out-of-memory failure to posts that verbs applications do not expect.
 *
 * <p>Owning thread only, like the rest of the engine.
 */
final class InlineArena {
    /** Smallest storage allocated: a few small payloads before the first doubling. */
    static final int MIN_CAPACITY = 256;

    private final int maxCapacity;
    private final UnsafeBuffer storage = new UnsafeBuffer(0, 0);
    private int capacity;
    /** Logical position of the oldest byte in use, and of the next byte a post takes. */
    private long head;
    private long tail;

    /**
     * @param depth send queue entries
     * @param maxInline the QP's inline limit in bytes
     */
    InlineArena(final int depth, final int maxInline) {
        this.maxCapacity = (int) Math.min(Integer.MAX_VALUE - 8, (long) depth * Math.max(0, maxInline));
    }

    /** @return bytes of storage allocated now (0 until the first inline post with a payload) */
    int capacity() {
        return capacity;
    }

    /** @return bytes held for requests posted and not yet completed */
    int used() {
        return (int) (tail - head);
    }

    /**
     * Takes room for a payload of {@code length} bytes, growing the storage if it is short.
     *
     * @return the logical position of the payload's first byte
     */
    long reserve(final int length) {
        final long needed = tail - head + length;
        if (needed > capacity) {
            grow(needed);
        }
        final long at = tail;
        tail += length;
        return at;
    }

    /** Copies {@code length} bytes from {@code src} into the payload at {@code at + offset}. */
    void put(final long at, final int offset, final DirectBuffer src, final int srcOffset, final int length) {
        if (length == 0) {
            return; // a zero-length payload may have no storage at all
        }
        final int p = (int) ((at + offset) % capacity);
        final int first = Math.min(length, capacity - p);
        storage.putBytes(p, src, srcOffset, first);
        if (first < length) {
            storage.putBytes(0, src, srcOffset + first, length - first);
        }
    }

    /** Copies {@code length} bytes of the payload at {@code at}, from its byte {@code offset}, into {@code dst}. */
    void get(final long at, final long offset, final MutableDirectBuffer dst, final int dstOffset, final int length) {
        if (length == 0) {
            return;
        }
        final int p = (int) ((at + offset) % capacity);
        final int first = Math.min(length, capacity - p);
        dst.putBytes(dstOffset, storage, p, first);
        if (first < length) {
            dst.putBytes(dstOffset + first, storage, 0, length - first);
        }
    }

    /**
     * Frees the oldest payload in use, which started at {@code at} and has {@code length} bytes:
     * its request completed, was flushed or discarded.
     */
    void release(final long at, final int length) {
        if (at != head || length > tail - head) {
            throw new IllegalStateException("inline payloads are freed in post order: " + at + "+" + length
                + " freed, " + head + ".." + tail + " in use");
        }
        head = at + length;
    }

    /** Frees every payload (the send queue discarded its requests). */
    void clear() {
        head = tail;
    }

    /**
     * Moves to storage of at least {@code needed} bytes (doubling, at most depth x limit). Each byte
     * in use keeps its logical position: fewer than the new capacity are in use, so they map to
     * distinct places modulo it, and the positions the requests hold stay valid.
     */
    private void grow(final long needed) {
        if (needed > maxCapacity) {
            throw new IllegalStateException("inline payloads of " + needed + " bytes in flight exceed the send queue's "
                + "depth x inline limit (" + maxCapacity + " bytes): the send queue admitted more than it holds");
        }
        long next = Math.max(MIN_CAPACITY, capacity);
        while (next < needed) {
            next <<= 1;
        }
        final int size = (int) Math.min(next, maxCapacity);
        final UnsafeBuffer bigger = new UnsafeBuffer(new byte[size]);
        for (long p = head; p < tail; ) {
            final int from = (int) (p % capacity);
            final int to = (int) (p % size);
            final int n = (int) Math.min(tail - p, Math.min(capacity - from, size - to));
            bigger.putBytes(to, storage, from, n);
            p += n;
        }
        storage.wrap(bigger.byteArray());
        capacity = size;
    }
}
