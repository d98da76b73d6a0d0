// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.connection;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

import org.metaroce.core.verbs.MemoryRegion;
import org.metaroce.core.wire.WireConstants;

/**
 * What a peer needs to reach a memory region with RDMA WRITE, READ or atomics — its virtual
 * address, rkey and length — and the codec that carries it in connection-manager private data,
 * the way rdma_cm applications send their buffer's address and rkey in
 * {@code rdma_conn_param.private_data}.
 *
 * <p>Layout ({@link #BYTES} = 24 bytes, little-endian, at any offset of the private data):
 *
 * <pre>
 * offset  size  field
 *      0     4  magic   0x4952524D (the bytes "MRRI")
 *      4     4  rkey
 *      8     8  address (the region's native address plus an offset, as SendRequest.remoteAddr takes it)
 *     16     8  length  in bytes, 0..2^63-1
 * </pre>
 *
 * The magic lets a receiver tell a region description from other private data (a rejection's
 * reason, an application hello) instead of writing to a garbage address. Private data is at most
 * {@link WireConstants#MAX_PRIVATE_DATA} (256) bytes [CM-021], so up to ten descriptions fit in
 * one CONNECT_REQUEST or CONNECT_REPLY. The rkey travels in clear text [SEC-012].
 *
 * @param address the first byte's virtual address
 * @param rkey the region's remote key
 * @param length the number of bytes the peer may use from {@code address}
 */
public record RegionInfo(long address, int rkey, long length) {
    /** Bytes one encoded description takes. */
    public static final int BYTES = 24;
    /** The first four bytes of an encoded description: "MRRI" read as a little-endian int. */
    public static final int MAGIC = 0x4952_524D;

    private static final int MAGIC_OFFSET = 0;
    private static final int RKEY_OFFSET = 4;
    private static final int ADDRESS_OFFSET = 8;
    private static final int LENGTH_OFFSET = 16;

    /**
     * @throws IllegalArgumentException if {@code length} is negative
     */
    public RegionInfo {
        if (length < 0) {
            throw new IllegalArgumentException("region length must not be negative, got " + length);
        }
    }

    /**
     * @param mr a registered region
     * @return a description of the whole region
     */
    public static RegionInfo of(final MemoryRegion mr) {
        return new RegionInfo(mr.address(), mr.rkey(), mr.length());
    }

    /**
     * @return a new 24-byte private-data array holding this description
     */
    public byte[] encode() {
        final byte[] data = new byte[BYTES];
        encode(data, 0);
        return data;
    }

    /**
     * Writes this description into {@code privateData} at {@code offset}, e.g. after an
     * application's own header.
     *
     * @param privateData the private data being built
     * @param offset where the description starts
     * @return the offset just past it
     * @throws IllegalArgumentException if the description does not fit in {@code privateData} or
     *     would end past the 256-byte private-data limit [CM-021]
     */
    public int encode(final byte[] privateData, final int offset) {
        encode(ByteBuffer.wrap(privateData), offset);
        return offset + BYTES;
    }

    /**
     * Writes this description into {@code buffer} at absolute index {@code index}, little-endian
     * whatever the buffer's byte order; the buffer's position, limit and order are left unchanged.
     *
     * @param buffer the private data being built
     * @param index where the description starts
     * @throws IllegalArgumentException as {@link #encode(byte[], int)}
     */
    public void encode(final ByteBuffer buffer, final int index) {
        checkRoom("encode into", buffer.limit(), index);
        if (index + BYTES > WireConstants.MAX_PRIVATE_DATA) {
            throw new IllegalArgumentException("a region info at offset " + index + " would end at byte " + (index + BYTES)
                + ", past the " + WireConstants.MAX_PRIVATE_DATA + "-byte private-data limit [CM-021]");
        }
        final ByteBuffer b = buffer.duplicate().order(ByteOrder.LITTLE_ENDIAN);
        b.putInt(index + MAGIC_OFFSET, MAGIC);
        b.putInt(index + RKEY_OFFSET, rkey);
        b.putLong(index + ADDRESS_OFFSET, address);
        b.putLong(index + LENGTH_OFFSET, length);
    }

    /**
     * @param privateData private data received (e.g. {@code Connection.peerPrivateData()})
     * @return the description at its start
     * @throws IllegalArgumentException as {@link #decode(ByteBuffer, int)}
     */
    public static RegionInfo decode(final byte[] privateData) {
        return decode(privateData, 0);
    }

    /**
     * @param privateData private data received
     * @param offset where the description starts
     * @return the description
     * @throws IllegalArgumentException as {@link #decode(ByteBuffer, int)}
     */
    public static RegionInfo decode(final byte[] privateData, final int offset) {
        return decode(ByteBuffer.wrap(privateData), offset);
    }

    /**
     * Reads a description at absolute index {@code index} of {@code buffer} (up to its limit),
     * little-endian whatever the buffer's byte order; the buffer is left unchanged.
     *
     * @param buffer private data received
     * @param index where the description starts
     * @return the description
     * @throws IllegalArgumentException if fewer than {@link #BYTES} bytes lie between
     *     {@code index} and the limit or {@code index} is negative (the message gives both
     *     lengths), if the first four bytes are not {@link #MAGIC} (other private data), or if the
     *     length field is negative (above 2^63-1 as unsigned)
     */
    public static RegionInfo decode(final ByteBuffer buffer, final int index) {
        checkRoom("decode from", buffer.limit(), index);
        final ByteBuffer b = buffer.duplicate().order(ByteOrder.LITTLE_ENDIAN);
        final int magic = b.getInt(index + MAGIC_OFFSET);
        if (magic != MAGIC) {
            throw new IllegalArgumentException("not a region info at offset " + index + ": magic 0x"
                + Integer.toHexString(magic) + ", expected 0x" + Integer.toHexString(MAGIC));
        }
        final long length = b.getLong(index + LENGTH_OFFSET);
        if (length < 0) {
            throw new IllegalArgumentException("malformed region info at offset " + index + ": length 0x"
                + Long.toHexString(length) + " exceeds 2^63-1");
        }
        return new RegionInfo(b.getLong(index + ADDRESS_OFFSET), b.getInt(index + RKEY_OFFSET), length);
    }

    private static void checkRoom(final String what, final int available, final int index) {
        if (index < 0) {
            throw new IllegalArgumentException("cannot " + what + " private data at negative offset " + index);
        }
        if (available - index < BYTES) {
            throw new IllegalArgumentException("cannot " + what + " private data of " + available
                + " bytes at offset " + index + ": a region info needs " + BYTES + " bytes, "
                + Math.max(0, available - index) + " remain");
        }
    }

    @Override
    public String toString() {
        return "RegionInfo{address=0x" + Long.toHexString(address) + ", rkey=0x" + Integer.toHexString(rkey)
            + ", length=" + length + '}';
    }
}
