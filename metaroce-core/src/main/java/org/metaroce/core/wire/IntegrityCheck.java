// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.wire;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.zip.CRC32C;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

/**
 * The end-to-end CRC-32C integrity check [WIRE-040]. Uses the JDK's intrinsic {@link CRC32C} for
 * buffers backed by an array or a {@link ByteBuffer}, and a table-driven software CRC for buffers
 * wrapped over a raw native address. One instance per owning thread: it reuses internal state.
 */
public final class IntegrityCheck {
    private static final int[] TABLE = new int[256];

    static {
        for (int n = 0; n < 256; n++) {
            int c = n;
            for (int k = 0; k < 8; k++) {
                c = (c & 1) != 0 ? (c >>> 1) ^ 0x82F6_3B78 : c >>> 1;
            }
            TABLE[n] = c;
        }
    }

    private final CRC32C crc = new CRC32C();

    /**
     * Computes CRC-32C over {@code length} bytes starting at {@code offset}.
     *
     * @param buffer source bytes
     * @param offset first byte
     * @param length number of bytes
     * @return the CRC as an unsigned value in an int
     */
    public int compute(final DirectBuffer buffer, final int offset, final int length) {
        if (intrinsic(buffer)) {
            crc.reset();
            update(buffer, offset, length);
            return (int) crc.getValue();
        }
        return software(buffer, offset, length);
    }

    /**
     * Table-driven CRC-32C that works on any {@link DirectBuffer}; slower than the JDK intrinsic
     * but independent of how the buffer is backed.
     *
     * @param buffer source bytes
     * @param offset first byte
     * @param length number of bytes
     * @return the CRC as an unsigned value in an int
     */
    public static int software(final DirectBuffer buffer, final int offset, final int length) {
        int c = 0xFFFF_FFFF;
        for (int i = 0; i < length; i++) {
            c = TABLE[(c ^ buffer.getByte(offset + i)) & 0xFF] ^ (c >>> 8);
        }
        return ~c;
    }

    /**
     * Writes the integrity check after {@code coveredLength} bytes of packet.
     *
     * @param buffer packet buffer
     * @param packetOffset first byte of the packet
     * @param coveredLength header plus payload length
     * @return total packet length including the trailer
     */
    public int seal(final MutableDirectBuffer buffer, final int packetOffset, final int coveredLength) {
        final int value = compute(buffer, packetOffset, coveredLength);
        buffer.putInt(packetOffset + coveredLength, value, ByteOrder.BIG_ENDIAN);
        return coveredLength + WireConstants.INTEGRITY_CHECK_LENGTH;
    }

    /**
     * @param buffer a buffer
     * @return whether {@link #sealAround} can take a piece of the packet from it: it is backed by
     *     an array or a {@link ByteBuffer} (the JDK's intrinsic CRC), not only a raw address
     */
    public static boolean intrinsic(final DirectBuffer buffer) {
        return buffer.byteArray() != null || buffer.byteBuffer() != null;
    }

    /**
     * Writes the integrity check of a packet whose payload is not in {@code buffer} but in
     * {@code payload} (a driver sends it from there, without a copy): the CRC covers the
     * {@code headerLength} bytes at {@code packetOffset}, then the payload, then the
     * {@code trailerLength} bytes that follow the payload's place in {@code buffer} (the attached
     * ACK, WIRE-071), exactly as if the payload lay in between. Both buffers must be
     * {@link #intrinsic}.
     *
     * @param buffer packet buffer: its header, a gap of {@code payloadLength} bytes, its trailer
     * @param packetOffset first byte of the packet
     * @param headerLength header bytes
     * @param payload where the payload is
     * @param payloadOffset first payload byte in {@code payload}
     * @param payloadLength payload bytes
     * @param trailerLength bytes after the payload and before the integrity check
     * @return total packet length including the integrity check
     */
    public int sealAround(final MutableDirectBuffer buffer, final int packetOffset, final int headerLength,
                          final DirectBuffer payload, final int payloadOffset, final int payloadLength,
                          final int trailerLength) {
        crc.reset();
        update(buffer, packetOffset, headerLength);
        update(payload, payloadOffset, payloadLength);
        update(buffer, packetOffset + headerLength + payloadLength, trailerLength);
        final int covered = headerLength + payloadLength + trailerLength;
        buffer.putInt(packetOffset + covered, (int) crc.getValue(), ByteOrder.BIG_ENDIAN);
        return covered + WireConstants.INTEGRITY_CHECK_LENGTH;
    }

    /** Adds {@code length} bytes of an {@link #intrinsic} buffer to the running CRC. */
    private void update(final DirectBuffer buffer, final int offset, final int length) {
        final byte[] array = buffer.byteArray();
        if (array != null) {
            crc.update(array, buffer.wrapAdjustment() + offset, length);
            return;
        }
        final ByteBuffer bb = buffer.byteBuffer();
        if (bb == null) {
            throw new IllegalArgumentException("a piece of a packet sealed in pieces must be backed by an array or a "
                + "ByteBuffer, not only a raw address (check IntegrityCheck.intrinsic first)");
        }
        final int start = buffer.wrapAdjustment() + offset;
        final int savedPosition = bb.position();
        final int savedLimit = bb.limit();
        try {
            bb.limit(start + length).position(start);
            crc.update(bb);
        } finally {
            bb.limit(savedLimit).position(savedPosition);
        }
    }

    /**
     * Checks the trailer of a packet.
     *
     * @param buffer packet buffer
     * @param packetOffset first byte of the packet
     * @param packetLength total length including the 4-byte trailer (at least 4)
     * @return whether the stored CRC matches the bytes before it
     */
    public boolean verify(final DirectBuffer buffer, final int packetOffset, final int packetLength) {
        final int covered = packetLength - WireConstants.INTEGRITY_CHECK_LENGTH;
        return compute(buffer, packetOffset, covered)
            == buffer.getInt(packetOffset + covered, ByteOrder.BIG_ENDIAN);
    }
}
