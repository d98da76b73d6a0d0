// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.collectives;

/**
 * One message of an operation's {@link Plan} between this rank and one peer, cut into chunks of at most
 * the communicator's chunk size. Both ends build their plans from the same arguments, so they
 * agree on every transfer's length and hence on its chunking; chunk {@code j} of two transfers of
 * equal length covers the same bytes, which is what {@link #dependsOn} and {@link #guard} rely on.
 * The plan sets its transfers again for every operation ({@link #set}), so nothing may hold one
 * past the operation that planned it.
 */
final class Transfer {
    enum Kind {
        /** RDMA WRITE chunks from local memory into the peer's slots. */
        SEND,
        /** Copy each arriving chunk to {@link #address}. */
        RECV_COPY,
        /** {@code address[j] = operand[j] op chunk}. */
        RECV_REDUCE,
        /** Grant the slot back without reading it (the wire baseline, COLL-030). */
        RECV_DISCARD
    }

    Kind kind;
    int peer;
    /** SEND: source address; RECV_*: destination address. */
    long address;
    /** SEND: local key of the source. */
    int lkey;
    /** RECV_REDUCE: the local operand's address (may equal {@link #address}). */
    long operand;
    long bytes;
    int chunks;
    int chunkBytes;
    /** RECV_REDUCE: element type and operator. */
    DataType type;
    ReduceOp reduceOp;
    /**
     * Chunk j may go (SEND: forwarding) or be processed (RECV: its operand or destination was
     * produced by an earlier receive) once chunk j of this receive is processed, or null.
     */
    Transfer dependsOn;
    /** RECV_*: chunk j may be written once chunk j of this send has completed (its source is overwritten), or null. */
    Transfer guard;

    /**
     * Placed (COLL-033): the chunks go straight into the receiver's destination, into regions of it
     * the receiver grants, instead of through its slots. SEND: write each chunk at the address of
     * a granted region; RECV_COPY: grant {@link #address} (registered with {@link #rkey}) region by
     * region, and find each chunk there on arrival, with nothing to copy. Both ends mark the
     * transfer alike: the plan places every copy receive longer than the latency threshold.
     */
    boolean placed;
    /** RECV_COPY placed: remote key of a region covering {@link #regionAddress}. */
    int rkey;
    /**
     * RECV_COPY placed: where the granted regions are: {@link #address}, or staging memory when the
     * destination is the source of a WRITE to the same peer (all-to-all in place): granting the
     * destination would wait for that WRITE, which waits for the peer's grant of the same kind.
     * Staged chunks are copied to {@link #address} once {@link #guard} allows.
     */
    long regionAddress;
    /** RECV_COPY placed: chunks whose region has been granted to the sender. */
    int regionGranted;

    /**
     * SEND on an INVOKER device, every chunk at most the device's inline limit (COLL-038): each
     * chunk is posted INLINE (its bytes copied at post, so its source is free at once) and mostly
     * unsignaled, and the operation does not wait for its completion. Set when the operation starts.
     */
    boolean inline;

    /** SEND: chunks posted; RECV: chunks processed. */
    int progressed;
    /** The link sequence number of chunk 0, assigned when the operation starts. */
    long firstSeq = -1;

    /** Made by a {@link Plan}, which sets it for each operation ({@link #set}). */
    Transfer() {
    }

    /**
     * Sets every field for a new transfer of the operation being planned: the given ones, and the
     * rest (links, placement, progress) as a new transfer has them.
     *
     * @return this
     */
    Transfer set(final Kind kind, final int peer, final long address, final int lkey, final long operand,
                 final long bytes, final int chunkBytes) {
        this.kind = kind;
        this.peer = peer;
        this.address = address;
        this.lkey = lkey;
        this.operand = operand;
        this.bytes = bytes;
        this.chunkBytes = chunkBytes;
        this.chunks = (int) ((bytes + chunkBytes - 1) / chunkBytes);
        type = null;
        reduceOp = null;
        dependsOn = null;
        guard = null;
        placed = false;
        rkey = 0;
        regionAddress = 0;
        regionGranted = 0;
        inline = false;
        progressed = 0;
        firstSeq = -1;
        return this;
    }

    /**
     * Marks a send placed (COLL-033) when it is longer than {@code threshold} bytes; the matching
     * receive is placed by the same rule.
     *
     * @param threshold the latency threshold (Long.MAX_VALUE: never)
     * @return this
     */
    Transfer placedAbove(final long threshold) {
        if (kind != Kind.SEND) {
            throw new IllegalStateException("only sends are placed this way: " + this);
        }
        this.placed = bytes > threshold;
        return this;
    }

    /**
     * Marks a copy receive placed (COLL-033) when it is longer than {@code threshold} bytes.
     *
     * @param threshold the latency threshold (Long.MAX_VALUE: never)
     * @param destinationRkey remote key of a region covering the destination (used when placed)
     * @return this
     */
    Transfer placedAbove(final long threshold, final int destinationRkey) {
        if (kind != Kind.RECV_COPY) {
            throw new IllegalStateException("only copy receives are placed: " + this);
        }
        if (bytes > threshold) {
            if (destinationRkey == 0) {
                throw new IllegalStateException("a placed receive needs a destination registered for remote writes: "
                    + this);
            }
            this.placed = true;
            this.rkey = destinationRkey;
            this.regionAddress = address;
        }
        return this;
    }

    /**
     * Grants regions of {@code staging} (registered with {@code stagingRkey}) instead of the
     * destination, when placed; chunks are copied to the destination on consumption.
     *
     * @return this
     */
    Transfer stagedAt(final long staging, final int stagingRkey) {
        if (placed) {
            if (stagingRkey == 0) {
                throw new IllegalStateException("staging memory must be registered for remote writes: " + this);
            }
            this.regionAddress = staging;
            this.rkey = stagingRkey;
        }
        return this;
    }

    /** @return whether placed chunks land in staging memory and are copied to the destination */
    boolean staged() {
        return placed && regionAddress != address;
    }

    Transfer after(final Transfer dependency) {
        this.dependsOn = dependency;
        return this;
    }

    Transfer guardedBy(final Transfer send) {
        this.guard = send;
        return this;
    }

    /** @return byte offset of chunk {@code j} */
    long chunkOffset(final int j) {
        return (long) j * chunkBytes;
    }

    /** @return byte length of chunk {@code j} */
    int chunkLength(final int j) {
        return (int) Math.min(chunkBytes, bytes - (long) j * chunkBytes);
    }

    boolean isSend() {
        return kind == Kind.SEND;
    }

    @Override
    public String toString() {
        return kind + (placed ? " placed" : "") + "(peer " + peer + ", " + bytes + " B, " + progressed + "/" + chunks
            + " chunks)";
    }
}
