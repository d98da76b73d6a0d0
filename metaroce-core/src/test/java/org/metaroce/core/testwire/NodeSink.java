// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.testwire;

import java.nio.ByteBuffer;

import org.agrona.BitUtil;
import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.metaroce.core.engine.TransmitSink;

/**
 * The {@link TransmitSink} one node of an {@link InMemoryWire} polls into: a preallocated off-heap
 * batch buffer, like a driver's send ring, reset before every poll. A commit hands the packet
 * straight to the wire, which copies it out, so the region is free again at the next poll. It
 * enforces the claim/commit contract loudly, since catching engine misuse is the point of a test
 * wire.
 */
final class NodeSink implements TransmitSink {
    private static final int ALIGNMENT = 8;

    private final InMemoryWire wire;
    private final int node;
    private final UnsafeBuffer buffer;
    private int position;
    private int claimOffset = NO_ROOM;
    private int claimLength;
    private int commits;

    NodeSink(final InMemoryWire wire, final int node, final int capacity) {
        this.wire = wire;
        this.node = node;
        this.buffer = new UnsafeBuffer(ByteBuffer.allocateDirect(capacity));
    }

    /** Empties the batch buffer before a poll. */
    void reset() {
        position = 0;
        claimOffset = NO_ROOM;
        commits = 0;
    }

    /** @return packets committed since the last {@link #reset()} */
    int commits() {
        return commits;
    }

    @Override
    public MutableDirectBuffer buffer() {
        return buffer;
    }

    @Override
    public int claim(final int maxLength) {
        if (maxLength < 0) {
            throw new IllegalArgumentException("node " + node + " claimed a negative length: " + maxLength);
        }
        final int offset = BitUtil.align(position, ALIGNMENT);
        if (offset + (long) maxLength > buffer.capacity()) {
            return NO_ROOM;
        }
        position = offset + maxLength;
        claimOffset = offset;
        claimLength = maxLength;
        return offset;
    }

    @Override
    public void commit(final int offset, final int length, final int peerId, final int entropy) {
        if (claimOffset == NO_ROOM || offset != claimOffset) {
            throw new IllegalStateException("node " + node + " committed offset " + offset
                + " without a matching claim (pending claim at " + claimOffset + ")");
        }
        if (length < 0 || length > claimLength) {
            throw new IllegalArgumentException("node " + node + " committed " + length
                + " bytes of a " + claimLength + "-byte claim");
        }
        position = offset + length;
        claimOffset = NO_ROOM;
        commits++;
        wire.transmit(node, buffer, offset, length, peerId, entropy);
    }
}
