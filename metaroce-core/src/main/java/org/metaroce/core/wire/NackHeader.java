// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.wire;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

/** Flyweight over the 8-byte negative acknowledgement header (NACK, specification 3.5.7). */
public final class NackHeader extends HeaderFlyweight {
    public static final int REASON_OFFSET = 0;
    public static final int RNR_TIMER_OFFSET = 1;
    public static final int NACK_PSN_OFFSET = 4;
    public static final int LENGTH = WireConstants.NACK_HEADER_LENGTH;

    @Override
    public NackHeader wrap(final MutableDirectBuffer buffer, final int offset) {
        super.wrap(buffer, offset);
        return this;
    }

    /** Zeroes the header including its reserved bytes. */
    public NackHeader initialize() {
        buffer.setMemory(offset, LENGTH, (byte) 0);
        return this;
    }

    /** Reason code; see {@link NackReason}. */
    public static int reason(final DirectBuffer b, final int headerOffset) {
        return u8(b, headerOffset + REASON_OFFSET);
    }

    public int reason() {
        return reason(buffer, offset);
    }

    public NackHeader reason(final int reason) {
        buffer.putByte(offset + REASON_OFFSET, (byte) reason);
        return this;
    }

    /** Minimum retry delay for RNR, in units of 10 µs; 0 = the QP's configured minimum [WIRE-063]. */
    public static int rnrTimer(final DirectBuffer b, final int headerOffset) {
        return u8(b, headerOffset + RNR_TIMER_OFFSET);
    }

    public int rnrTimer() {
        return rnrTimer(buffer, offset);
    }

    public NackHeader rnrTimer(final int units) {
        buffer.putByte(offset + RNR_TIMER_OFFSET, (byte) units);
        return this;
    }

    public static int nackPsn(final DirectBuffer b, final int headerOffset) {
        return i32(b, headerOffset + NACK_PSN_OFFSET);
    }

    public int nackPsn() {
        return nackPsn(buffer, offset);
    }

    public NackHeader nackPsn(final int psn) {
        buffer.putInt(offset + NACK_PSN_OFFSET, psn, NETWORK);
        return this;
    }
}
