// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.wire;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

/** Flyweight over the 4-byte immediate data header (IMM, specification 3.5.3). */
public final class ImmediateHeader extends HeaderFlyweight {
    public static final int IMMEDIATE_DATA_OFFSET = 0;
    public static final int LENGTH = WireConstants.IMM_HEADER_LENGTH;

    @Override
    public ImmediateHeader wrap(final MutableDirectBuffer buffer, final int offset) {
        super.wrap(buffer, offset);
        return this;
    }

    public static int immediateData(final DirectBuffer b, final int headerOffset) {
        return i32(b, headerOffset + IMMEDIATE_DATA_OFFSET);
    }

    public int immediateData() {
        return immediateData(buffer, offset);
    }

    public ImmediateHeader immediateData(final int data) {
        buffer.putInt(offset + IMMEDIATE_DATA_OFFSET, data, NETWORK);
        return this;
    }
}
