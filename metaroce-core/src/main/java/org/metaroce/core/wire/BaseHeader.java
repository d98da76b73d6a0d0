// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.wire;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

/**
 * Flyweight over the 24-byte base header (specification 3.3). Offsets are relative to the first
 * byte of the packet. 24-bit QPN fields are written as whole 32-bit words so the reserved byte in
 * front of them is always zero [WIRE-002].
 */
public final class BaseHeader extends HeaderFlyweight {
    public static final int VERSION_OFFSET = 0;
    public static final int OPCODE_OFFSET = 1;
    public static final int FLAGS_OFFSET = 2;
    /** Fixed so that anything can demultiplex without parsing further [WIRE-010]; the QPN is the low 24 bits. */
    public static final int DEST_QPN_WORD_OFFSET = 4;
    public static final int PSN_OFFSET = 8;
    public static final int PAYLOAD_LENGTH_OFFSET = 12;
    public static final int PATH_ID_OFFSET = 14;
    public static final int HEADER_LENGTH_OFFSET = 15;
    public static final int TIMESTAMP_OFFSET = 16;
    public static final int SOURCE_QPN_WORD_OFFSET = 20;
    public static final int LENGTH = WireConstants.BASE_HEADER_LENGTH;

    @Override
    public BaseHeader wrap(final MutableDirectBuffer buffer, final int offset) {
        super.wrap(buffer, offset);
        return this;
    }

    /**
     * Writes a complete base header for {@code opcode} with version 1, the header length the
     * opcode implies and every other field zero; callers then set the fields they need.
     *
     * @param opcode the packet type
     * @return this flyweight
     */
    public BaseHeader initialize(final Opcode opcode) {
        buffer.setMemory(offset, LENGTH, (byte) 0);
        buffer.putByte(offset + VERSION_OFFSET, (byte) (WireConstants.VERSION << 4));
        buffer.putByte(offset + OPCODE_OFFSET, (byte) opcode.value());
        buffer.putByte(offset + HEADER_LENGTH_OFFSET, (byte) opcode.headerLengthWords());
        return this;
    }

    public static int version(final DirectBuffer b, final int packetOffset) {
        return u8(b, packetOffset + VERSION_OFFSET) >>> 4;
    }

    public int version() {
        return version(buffer, offset);
    }

    public BaseHeader version(final int version) {
        buffer.putByte(offset + VERSION_OFFSET, (byte) ((version & 0xF) << 4));
        return this;
    }

    public static int opcode(final DirectBuffer b, final int packetOffset) {
        return u8(b, packetOffset + OPCODE_OFFSET);
    }

    public int opcode() {
        return opcode(buffer, offset);
    }

    public BaseHeader opcode(final int opcode) {
        buffer.putByte(offset + OPCODE_OFFSET, (byte) opcode);
        return this;
    }

    public static int flags(final DirectBuffer b, final int packetOffset) {
        return u16(b, packetOffset + FLAGS_OFFSET);
    }

    public int flags() {
        return flags(buffer, offset);
    }

    public BaseHeader flags(final int flags) {
        buffer.putShort(offset + FLAGS_OFFSET, (short) flags, NETWORK);
        return this;
    }

    public static int destQpn(final DirectBuffer b, final int packetOffset) {
        return u24(b, packetOffset + DEST_QPN_WORD_OFFSET);
    }

    public int destQpn() {
        return destQpn(buffer, offset);
    }

    public BaseHeader destQpn(final int qpn) {
        buffer.putInt(offset + DEST_QPN_WORD_OFFSET, qpn & WireConstants.MAX_QPN, NETWORK);
        return this;
    }

    public static int psn(final DirectBuffer b, final int packetOffset) {
        return i32(b, packetOffset + PSN_OFFSET);
    }

    public int psn() {
        return psn(buffer, offset);
    }

    public BaseHeader psn(final int psn) {
        buffer.putInt(offset + PSN_OFFSET, psn, NETWORK);
        return this;
    }

    public static int payloadLength(final DirectBuffer b, final int packetOffset) {
        return u16(b, packetOffset + PAYLOAD_LENGTH_OFFSET);
    }

    public int payloadLength() {
        return payloadLength(buffer, offset);
    }

    public BaseHeader payloadLength(final int length) {
        buffer.putShort(offset + PAYLOAD_LENGTH_OFFSET, (short) length, NETWORK);
        return this;
    }

    public static int pathId(final DirectBuffer b, final int packetOffset) {
        return u8(b, packetOffset + PATH_ID_OFFSET);
    }

    public int pathId() {
        return pathId(buffer, offset);
    }

    public BaseHeader pathId(final int pathId) {
        buffer.putByte(offset + PATH_ID_OFFSET, (byte) pathId);
        return this;
    }

    /** Header Length field, in 4-byte words [WIRE-012]. */
    public static int headerLengthWords(final DirectBuffer b, final int packetOffset) {
        return u8(b, packetOffset + HEADER_LENGTH_OFFSET);
    }

    public int headerLengthWords() {
        return headerLengthWords(buffer, offset);
    }

    public BaseHeader headerLengthWords(final int words) {
        buffer.putByte(offset + HEADER_LENGTH_OFFSET, (byte) words);
        return this;
    }

    public static int timestamp(final DirectBuffer b, final int packetOffset) {
        return i32(b, packetOffset + TIMESTAMP_OFFSET);
    }

    public int timestamp() {
        return timestamp(buffer, offset);
    }

    public BaseHeader timestamp(final int timestamp) {
        buffer.putInt(offset + TIMESTAMP_OFFSET, timestamp, NETWORK);
        return this;
    }

    public static int sourceQpn(final DirectBuffer b, final int packetOffset) {
        return u24(b, packetOffset + SOURCE_QPN_WORD_OFFSET);
    }

    public int sourceQpn() {
        return sourceQpn(buffer, offset);
    }

    public BaseHeader sourceQpn(final int qpn) {
        buffer.putInt(offset + SOURCE_QPN_WORD_OFFSET, qpn & WireConstants.MAX_QPN, NETWORK);
        return this;
    }

    /** @return whether every flag in {@code mask} is set */
    public boolean hasFlags(final int mask) {
        return (flags() & mask) == mask;
    }
}
