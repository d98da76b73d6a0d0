// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.wire;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

/**
 * Flyweight over the 16-byte RDMA extended header (RETH, specification 3.5.2): remote virtual
 * address of the message's first byte, R_Key and DMA length.
 */
public final class RdmaHeader extends HeaderFlyweight {
    public static final int VIRTUAL_ADDRESS_OFFSET = 0;
    public static final int RKEY_OFFSET = 8;
    public static final int DMA_LENGTH_OFFSET = 12;
    public static final int LENGTH = WireConstants.RETH_HEADER_LENGTH;

    @Override
    public RdmaHeader wrap(final MutableDirectBuffer buffer, final int offset) {
        super.wrap(buffer, offset);
        return this;
    }

    public static long virtualAddress(final DirectBuffer b, final int headerOffset) {
        return i64(b, headerOffset + VIRTUAL_ADDRESS_OFFSET);
    }

    public long virtualAddress() {
        return virtualAddress(buffer, offset);
    }

    public RdmaHeader virtualAddress(final long va) {
        buffer.putLong(offset + VIRTUAL_ADDRESS_OFFSET, va, NETWORK);
        return this;
    }

    public static int rkey(final DirectBuffer b, final int headerOffset) {
        return i32(b, headerOffset + RKEY_OFFSET);
    }

    public int rkey() {
        return rkey(buffer, offset);
    }

    public RdmaHeader rkey(final int rkey) {
        buffer.putInt(offset + RKEY_OFFSET, rkey, NETWORK);
        return this;
    }

    /** Unsigned DMA length [WIRE-035]. */
    public static long dmaLength(final DirectBuffer b, final int headerOffset) {
        return i32(b, headerOffset + DMA_LENGTH_OFFSET) & 0xFFFF_FFFFL;
    }

    public long dmaLength() {
        return dmaLength(buffer, offset);
    }

    public RdmaHeader dmaLength(final long length) {
        buffer.putInt(offset + DMA_LENGTH_OFFSET, (int) length, NETWORK);
        return this;
    }
}
