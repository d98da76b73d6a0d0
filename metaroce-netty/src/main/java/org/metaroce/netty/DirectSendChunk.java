// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty;

import java.nio.ByteBuffer;
import java.util.function.Consumer;

import org.agrona.BufferUtil;

/**
 * A {@link SendChunk} of plain direct memory, for transports that send synchronously (the kernel
 * has copied a datagram when the send returns, so nothing outlives it): its {@link DirectSendChunks}
 * pool reuses it as soon as it is released.
 */
final class DirectSendChunk implements SendChunk {
    /** Takes the chunk back once released (its pool's recycle): not the pool itself. */
    private final Consumer<DirectSendChunk> pool;
    private final ByteBuffer memory;
    private final long address;
    private boolean live;
    private final PayloadReferences references = new PayloadReferences();

    DirectSendChunk(final Consumer<DirectSendChunk> pool, final int capacity) {
        this.pool = pool;
        this.memory = BufferUtil.allocateDirectAligned(capacity, 64);
        this.address = BufferUtil.address(memory);
    }

    /** Hands the chunk out (again). */
    void open() {
        live = true;
        memory.clear();
        references.clear();
    }

    @Override
    public PayloadReferences references() {
        return references;
    }

    @Override
    public ByteBuffer buffer() {
        return memory;
    }

    @Override
    public int bufferOffset() {
        return 0;
    }

    @Override
    public long address() {
        return address;
    }

    @Override
    public int capacity() {
        return memory.capacity();
    }

    @Override
    public void release() {
        if (!live) {
            throw new IllegalStateException("chunk released twice");
        }
        live = false;
        pool.accept(this);
    }
}
