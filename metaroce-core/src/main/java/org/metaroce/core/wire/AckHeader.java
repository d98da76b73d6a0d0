// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.wire;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

/**
 * Flyweight over the 32-byte acknowledgement header (ACK, specification 3.5.6): cumulative PSN,
 * 64-packet selective-ack bitmap, timestamp echo for delay measurement and congestion feedback.
 */
public final class AckHeader extends HeaderFlyweight {
    public static final int CUMULATIVE_PSN_OFFSET = 0;
    public static final int SACK_BITMAP_OFFSET = 4;
    public static final int ECHOED_TIMESTAMP_OFFSET = 12;
    public static final int ACK_DELAY_OFFSET = 16;
    public static final int CE_COUNT_OFFSET = 20;
    public static final int CREDIT_OFFSET = 24;
    public static final int ECHOED_PATH_ID_OFFSET = 28;
    public static final int ACK_FLAGS_OFFSET = 29;
    /** Sender Count, with SENDER_COUNT negotiated [CC-038]; reserved (zero) otherwise. */
    public static final int SENDER_COUNT_OFFSET = 30;
    public static final int LENGTH = WireConstants.ACK_HEADER_LENGTH;

    /** ACK flag: the triggering packet was CE-marked. */
    public static final int FLAG_ECN_ECHO = 0x01;
    /** ACK flag: the triggering packet was a duplicate. */
    public static final int FLAG_DUPLICATE = 0x02;

    @Override
    public AckHeader wrap(final MutableDirectBuffer buffer, final int offset) {
        super.wrap(buffer, offset);
        return this;
    }

    /** Zeroes the header, including the reserved bytes, and sets Credit to "unlimited". */
    public AckHeader initialize() {
        buffer.setMemory(offset, LENGTH, (byte) 0);
        return credit(WireConstants.CREDIT_UNLIMITED);
    }

    public static int cumulativePsn(final DirectBuffer b, final int headerOffset) {
        return i32(b, headerOffset + CUMULATIVE_PSN_OFFSET);
    }

    public int cumulativePsn() {
        return cumulativePsn(buffer, offset);
    }

    public AckHeader cumulativePsn(final int psn) {
        buffer.putInt(offset + CUMULATIVE_PSN_OFFSET, psn, NETWORK);
        return this;
    }

    /** Bit i set means PSN {@code cumulativePsn + 1 + i} was received [WIRE-060]. */
    public static long sackBitmap(final DirectBuffer b, final int headerOffset) {
        return i64(b, headerOffset + SACK_BITMAP_OFFSET);
    }

    public long sackBitmap() {
        return sackBitmap(buffer, offset);
    }

    public AckHeader sackBitmap(final long bitmap) {
        buffer.putLong(offset + SACK_BITMAP_OFFSET, bitmap, NETWORK);
        return this;
    }

    public static int echoedTimestamp(final DirectBuffer b, final int headerOffset) {
        return i32(b, headerOffset + ECHOED_TIMESTAMP_OFFSET);
    }

    public int echoedTimestamp() {
        return echoedTimestamp(buffer, offset);
    }

    public AckHeader echoedTimestamp(final int timestamp) {
        buffer.putInt(offset + ECHOED_TIMESTAMP_OFFSET, timestamp, NETWORK);
        return this;
    }

    /** Nanoseconds the responder held the triggering packet, unsigned [WIRE-061]. */
    public static long ackDelay(final DirectBuffer b, final int headerOffset) {
        return i32(b, headerOffset + ACK_DELAY_OFFSET) & 0xFFFF_FFFFL;
    }

    public long ackDelay() {
        return ackDelay(buffer, offset);
    }

    public AckHeader ackDelay(final long delayNs) {
        buffer.putInt(offset + ACK_DELAY_OFFSET, (int) delayNs, NETWORK);
        return this;
    }

    public static int ceCount(final DirectBuffer b, final int headerOffset) {
        return i32(b, headerOffset + CE_COUNT_OFFSET);
    }

    public int ceCount() {
        return ceCount(buffer, offset);
    }

    public AckHeader ceCount(final int count) {
        buffer.putInt(offset + CE_COUNT_OFFSET, count, NETWORK);
        return this;
    }

    /** Packets beyond the cumulative PSN the requester may have outstanding; -1 (0xFFFFFFFF) = unlimited. */
    public static int credit(final DirectBuffer b, final int headerOffset) {
        return i32(b, headerOffset + CREDIT_OFFSET);
    }

    public int credit() {
        return credit(buffer, offset);
    }

    public AckHeader credit(final int credit) {
        buffer.putInt(offset + CREDIT_OFFSET, credit, NETWORK);
        return this;
    }

    public static int echoedPathId(final DirectBuffer b, final int headerOffset) {
        return u8(b, headerOffset + ECHOED_PATH_ID_OFFSET);
    }

    public int echoedPathId() {
        return echoedPathId(buffer, offset);
    }

    public AckHeader echoedPathId(final int pathId) {
        buffer.putByte(offset + ECHOED_PATH_ID_OFFSET, (byte) pathId);
        return this;
    }

    public static int ackFlags(final DirectBuffer b, final int headerOffset) {
        return u8(b, headerOffset + ACK_FLAGS_OFFSET);
    }

    public int ackFlags() {
        return ackFlags(buffer, offset);
    }

    public AckHeader ackFlags(final int flags) {
        buffer.putByte(offset + ACK_FLAGS_OFFSET, (byte) flags);
        return this;
    }

    /** @return the Sender Count byte, 0 = no information [CC-038] */
    public static int senderCount(final DirectBuffer b, final int headerOffset) {
        return u8(b, headerOffset + SENDER_COUNT_OFFSET);
    }

    public int senderCount() {
        return senderCount(buffer, offset);
    }

    public AckHeader senderCount(final int count) {
        buffer.putByte(offset + SENDER_COUNT_OFFSET, (byte) count);
        return this;
    }
}
