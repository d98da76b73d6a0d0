// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty;

import java.nio.ByteBuffer;
import java.util.function.Consumer;

import io.netty.buffer.ByteBuf;
import org.agrona.BufferUtil;

/**
 * A {@link SendChunk} that is a pooled Netty buffer: Netty's pipeline sends retained slices of it,
 * so releasing the chunk returns its memory to the pool only when the last slice was written. The
 * wrapper itself is reused by {@link NettyUdpTransport} once released (no object per chunk).
 * Owning thread only.
 */
final class ByteBufSendChunk implements SendChunk {
    /** Takes the wrapper back once released (the transport's spare list): not the transport itself. */
    private final Consumer<ByteBufSendChunk> recycler;
    private ByteBuf buf;
    private ByteBuffer nio;
    private int base;

    ByteBufSendChunk(final Consumer<ByteBufSendChunk> recycler) {
        this.recycler = recycler;
    }

    /** Takes {@code fresh} (a direct buffer of the transport's allocator) as this chunk's memory. */
    void attach(final ByteBuf fresh) {
        buf = fresh;
        // The pool's own cached NIO view (no new object): it spans the pool's memory region, so the
        // chunk starts at its position.
        nio = fresh.internalNioBuffer(0, fresh.capacity());
        base = nio.position();
    }

    /** @return the Netty buffer, for retained slices and its cached NIO view */
    ByteBuf byteBuf() {
        return buf;
    }

    @Override
    public ByteBuffer buffer() {
        return nio;
    }

    @Override
    public int bufferOffset() {
        return base;
    }

    @Override
    public long address() {
        return BufferUtil.address(nio) + base;
    }

    @Override
    public int capacity() {
        return buf.capacity();
    }

    @Override
    public void release() {
        if (buf == null) {
            throw new IllegalStateException("chunk released twice");
        }
        buf.release();
        buf = null;
        nio = null;
        recycler.accept(this);
    }
}
