// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.collectives;

import java.util.Arrays;
import java.util.List;

/**
 * One operation's transfers, in the order both ends of every link agree on ({@link Plans} fills
 * it, {@link Engine#run} runs it). A communicator keeps one and refills it for every operation:
 * the {@link Transfer} objects of the last operation are set again, not allocated, so an operation
 * in steady state allocates nothing (allocating 624-1,536 B per all-reduce, a sweep of
 * all_reduce_perf collected two or three times, each pause of 6-13 ms stopping every rank of the
 * process). A transfer is appended when it is made, so the plan's order is the order of the calls
 * that make its transfers.
 * <p>
 * It also lends the algorithms arrays of transfers indexed by block or rank (the last writer of
 * each block, the send of each segment), cleared, for the building of one plan.
 */
final class Plan {
    private Transfer[] transfers = new Transfer[16];
    private int size;
    private final Transfer[][] marks = {new Transfer[8], new Transfer[8]};

    /**
     * Empties the plan for the next operation; its transfers are kept to be set again.
     *
     * @return this
     */
    Plan clear() {
        size = 0;
        return this;
    }

    /** @return the number of transfers */
    int size() {
        return size;
    }

    /** @return transfer {@code i}, in plan order */
    Transfer get(final int i) {
        if (i >= size) {
            throw new IndexOutOfBoundsException("transfer " + i + " of a plan of " + size);
        }
        return transfers[i];
    }

    /** @return a copy of the transfers, in plan order (tests and diagnostics; allocates) */
    List<Transfer> toList() {
        return List.of(Arrays.copyOf(transfers, size));
    }

    /** Appends RDMA WRITEs of {@code bytes} bytes from {@code address} to {@code peer}'s slots or regions. */
    Transfer send(final int peer, final long address, final int lkey, final long bytes, final int chunkBytes) {
        return next().set(Transfer.Kind.SEND, peer, address, lkey, 0, bytes, chunkBytes);
    }

    /** Appends a receive of {@code bytes} bytes from {@code peer}, copied to {@code destination}. */
    Transfer copy(final int peer, final long destination, final long bytes, final int chunkBytes) {
        return next().set(Transfer.Kind.RECV_COPY, peer, destination, 0, 0, bytes, chunkBytes);
    }

    /** Appends a receive of {@code bytes} bytes from {@code peer} whose chunks are dropped (COLL-030). */
    Transfer discard(final int peer, final long bytes, final int chunkBytes) {
        return next().set(Transfer.Kind.RECV_DISCARD, peer, 0, 0, 0, bytes, chunkBytes);
    }

    /** Appends a receive from {@code peer} reduced into {@code destination}: {@code destination = operand op chunk}. */
    Transfer reduce(final int peer, final long destination, final long operand, final long bytes,
                    final int chunkBytes, final DataType type, final ReduceOp op) {
        final Transfer t = next().set(Transfer.Kind.RECV_REDUCE, peer, destination, 0, operand, bytes, chunkBytes);
        t.type = type;
        t.reduceOp = op;
        return t;
    }

    /**
     * @param which 0 or 1: the algorithms that need two such arrays at once ask for both
     * @param length entries needed
     * @return an array of at least {@code length} entries, the first {@code length} null, valid
     *     until the next call with the same {@code which}
     */
    Transfer[] marks(final int which, final int length) {
        Transfer[] m = marks[which];
        if (m.length < length) {
            m = new Transfer[Math.max(length, 2 * m.length)];
            marks[which] = m;
        } else {
            Arrays.fill(m, 0, length, null);
        }
        return m;
    }

    private Transfer next() {
        if (size == transfers.length) {
            transfers = Arrays.copyOf(transfers, 2 * size);
        }
        Transfer t = transfers[size];
        if (t == null) {
            t = new Transfer();
            transfers[size] = t;
        }
        size++;
        return t;
    }
}
