// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.wire;

import java.nio.ByteOrder;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

/**
 * Common base of the header flyweights: a window onto a buffer at an offset. Flyweights are
 * reused across packets by re-wrapping, so decoding and encoding allocate nothing.
 */
public abstract class HeaderFlyweight {
    /** Network byte order [WIRE-001]. */
    protected static final ByteOrder NETWORK = ByteOrder.BIG_ENDIAN;

    protected MutableDirectBuffer buffer;
    protected int offset;

    /**
     * Points this flyweight at a header.
     *
     * @param buffer the buffer holding the packet
     * @param offset offset of this header's first byte in {@code buffer}
     * @return this flyweight
     */
    public HeaderFlyweight wrap(final MutableDirectBuffer buffer, final int offset) {
        this.buffer = buffer;
        this.offset = offset;
        return this;
    }

    /** @return the buffer this flyweight is wrapped over */
    public MutableDirectBuffer buffer() {
        return buffer;
    }

    /** @return offset of this header in the buffer */
    public int offset() {
        return offset;
    }

    static int u8(final DirectBuffer b, final int index) {
        return b.getByte(index) & 0xFF;
    }

    static int u16(final DirectBuffer b, final int index) {
        return b.getShort(index, NETWORK) & 0xFFFF;
    }

    static int u24(final DirectBuffer b, final int index) {
        return b.getInt(index, NETWORK) & 0xFF_FFFF;
    }

    static int i32(final DirectBuffer b, final int index) {
        return b.getInt(index, NETWORK);
    }

    static long i64(final DirectBuffer b, final int index) {
        return b.getLong(index, NETWORK);
    }
}
