// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.wire;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

/** Flyweight over the 28-byte atomic header (ATOMIC, specification 3.5.4). */
public final class AtomicHeader extends HeaderFlyweight {
    public static final int VIRTUAL_ADDRESS_OFFSET = 0;
    public static final int RKEY_OFFSET = 8;
    public static final int SWAP_ADD_OFFSET = 12;
    public static final int COMPARE_OFFSET = 20;
    public static final int LENGTH = WireConstants.ATOMIC_HEADER_LENGTH;

    @Override
    public AtomicHeader wrap(final MutableDirectBuffer buffer, final int offset) {
        super.wrap(buffer, offset);
        return this;
    }

    public static long virtualAddress(final DirectBuffer b, final int headerOffset) {
        return i64(b, headerOffset + VIRTUAL_ADDRESS_OFFSET);
    }

    public long virtualAddress() {
        return virtualAddress(buffer, offset);
    }

    public AtomicHeader virtualAddress(final long va) {
        buffer.putLong(offset + VIRTUAL_ADDRESS_OFFSET, va, NETWORK);
        return this;
    }

    public static int rkey(final DirectBuffer b, final int headerOffset) {
        return i32(b, headerOffset + RKEY_OFFSET);
    }

    public int rkey() {
        return rkey(buffer, offset);
    }

    public AtomicHeader rkey(final int rkey) {
        buffer.putInt(offset + RKEY_OFFSET, rkey, NETWORK);
        return this;
    }

    /** The addend (FETCH_ADD) or the replacement value (CMP_SWAP). */
    public static long swapOrAdd(final DirectBuffer b, final int headerOffset) {
        return i64(b, headerOffset + SWAP_ADD_OFFSET);
    }

    public long swapOrAdd() {
        return swapOrAdd(buffer, offset);
    }

    public AtomicHeader swapOrAdd(final long value) {
        buffer.putLong(offset + SWAP_ADD_OFFSET, value, NETWORK);
        return this;
    }

    /** The value compared with the target (CMP_SWAP); zero for FETCH_ADD [WIRE-037]. */
    public static long compare(final DirectBuffer b, final int headerOffset) {
        return i64(b, headerOffset + COMPARE_OFFSET);
    }

    public long compare() {
        return compare(buffer, offset);
    }

    public AtomicHeader compare(final long value) {
        buffer.putLong(offset + COMPARE_OFFSET, value, NETWORK);
        return this;
    }
}
