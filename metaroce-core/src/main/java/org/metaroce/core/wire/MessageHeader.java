// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.wire;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

/**
 * Flyweight over the 16-byte message header (MSG, specification 3.5.1), which makes every data
 * packet self-describing so it can be placed on arrival, in any order. Offsets are relative to the
 * first byte of the MSG header.
 */
public final class MessageHeader extends HeaderFlyweight {
    public static final int MSN_OFFSET = 0;
    public static final int MESSAGE_OFFSET_OFFSET = 4;
    public static final int MESSAGE_LENGTH_OFFSET = 8;
    public static final int RSN_OFFSET = 12;
    public static final int LENGTH = WireConstants.MSG_HEADER_LENGTH;

    @Override
    public MessageHeader wrap(final MutableDirectBuffer buffer, final int offset) {
        super.wrap(buffer, offset);
        return this;
    }

    public static int msn(final DirectBuffer b, final int headerOffset) {
        return i32(b, headerOffset + MSN_OFFSET);
    }

    public int msn() {
        return msn(buffer, offset);
    }

    public MessageHeader msn(final int msn) {
        buffer.putInt(offset + MSN_OFFSET, msn, NETWORK);
        return this;
    }

    /** Unsigned byte offset of the packet's payload within the message [WIRE-031]. */
    public static long messageOffset(final DirectBuffer b, final int headerOffset) {
        return i32(b, headerOffset + MESSAGE_OFFSET_OFFSET) & 0xFFFF_FFFFL;
    }

    public long messageOffset() {
        return messageOffset(buffer, offset);
    }

    public MessageHeader messageOffset(final long messageOffset) {
        buffer.putInt(offset + MESSAGE_OFFSET_OFFSET, (int) messageOffset, NETWORK);
        return this;
    }

    /** Unsigned total message length [WIRE-031]. */
    public static long messageLength(final DirectBuffer b, final int headerOffset) {
        return i32(b, headerOffset + MESSAGE_LENGTH_OFFSET) & 0xFFFF_FFFFL;
    }

    public long messageLength() {
        return messageLength(buffer, offset);
    }

    public MessageHeader messageLength(final long messageLength) {
        buffer.putInt(offset + MESSAGE_LENGTH_OFFSET, (int) messageLength, NETWORK);
        return this;
    }

    public static int rsn(final DirectBuffer b, final int headerOffset) {
        return i32(b, headerOffset + RSN_OFFSET);
    }

    public int rsn() {
        return rsn(buffer, offset);
    }

    public MessageHeader rsn(final int rsn) {
        buffer.putInt(offset + RSN_OFFSET, rsn, NETWORK);
        return this;
    }
}
