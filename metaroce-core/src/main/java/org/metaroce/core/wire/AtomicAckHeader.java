// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.wire;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

/** Flyweight over the 8-byte atomic acknowledgement header (AACK, specification 3.5.5). */
public final class AtomicAckHeader extends HeaderFlyweight {
    public static final int ORIGINAL_DATA_OFFSET = 0;
    public static final int LENGTH = WireConstants.AACK_HEADER_LENGTH;

    @Override
    public AtomicAckHeader wrap(final MutableDirectBuffer buffer, final int offset) {
        super.wrap(buffer, offset);
        return this;
    }

    public static long originalData(final DirectBuffer b, final int headerOffset) {
        return i64(b, headerOffset + ORIGINAL_DATA_OFFSET);
    }

    public long originalData() {
        return originalData(buffer, offset);
    }

    public AtomicAckHeader originalData(final long value) {
        buffer.putLong(offset + ORIGINAL_DATA_OFFSET, value, NETWORK);
        return this;
    }
}
