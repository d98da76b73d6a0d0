// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty;

import java.util.ArrayDeque;

/**
 * Chunks of direct memory for a transport that sends synchronously: released chunks are kept and
 * handed out again, so a device in steady state allocates no memory for sending. Chunks smaller
 * than asked for are dropped (the sink asks for one size, bar the rare packet larger than a chunk).
 * Owning thread only.
 */
final class DirectSendChunks {
    /** Spare chunks kept at most: a device uses one per socket, plus a few in rotation. */
    private static final int MAX_SPARE = 64;

    private final ArrayDeque<DirectSendChunk> spare = new ArrayDeque<>();
    /** How a released chunk comes back here; one object for all chunks. */
    private final java.util.function.Consumer<DirectSendChunk> recycler = this::recycle;

    /**
     * @param capacity bytes
     * @return a chunk of at least {@code capacity} bytes
     */
    SendChunk allocate(final int capacity) {
        DirectSendChunk chunk = null;
        while (!spare.isEmpty() && chunk == null) {
            final DirectSendChunk candidate = spare.pop();
            if (candidate.capacity() >= capacity) {
                chunk = candidate;
            }
        }
        if (chunk == null) {
            chunk = new DirectSendChunk(recycler, capacity);
        }
        chunk.open();
        return chunk;
    }

    void recycle(final DirectSendChunk chunk) {
        if (spare.size() < MAX_SPARE) {
            spare.push(chunk);
        }
    }

    /** @return chunks waiting to be reused */
    int spareCount() {
        return spare.size();
    }
}
