// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.wire;

import static org.metaroce.core.wire.WireConstants.AACK_HEADER_LENGTH;
import static org.metaroce.core.wire.WireConstants.ACK_HEADER_LENGTH;
import static org.metaroce.core.wire.WireConstants.ATOMIC_HEADER_LENGTH;
import static org.metaroce.core.wire.WireConstants.BASE_HEADER_LENGTH;
import static org.metaroce.core.wire.WireConstants.CM_HEADER_LENGTH;
import static org.metaroce.core.wire.WireConstants.IMM_HEADER_LENGTH;
import static org.metaroce.core.wire.WireConstants.MAX_DATA_PAYLOAD;
import static org.metaroce.core.wire.WireConstants.MAX_PRIVATE_DATA;
import static org.metaroce.core.wire.WireConstants.MSG_HEADER_LENGTH;
import static org.metaroce.core.wire.WireConstants.NACK_HEADER_LENGTH;
import static org.metaroce.core.wire.WireConstants.RETH_HEADER_LENGTH;

/**
 * Packet opcodes (specification table 3.4) and the header layout each one implies. The layout is
 * a pure function of the opcode [WIRE-004], so it is computed once here and every codec reads
 * extension offsets from this table instead of re-deriving them.
 */
public enum Opcode {
    SEND(0x01, Ext.MSG, MAX_DATA_PAYLOAD, true),
    SEND_WITH_IMM(0x02, Ext.MSG | Ext.IMM, MAX_DATA_PAYLOAD, true),
    WRITE(0x03, Ext.MSG | Ext.RETH, MAX_DATA_PAYLOAD, true),
    WRITE_WITH_IMM(0x04, Ext.MSG | Ext.RETH | Ext.IMM, MAX_DATA_PAYLOAD, true),
    READ_REQUEST(0x05, Ext.MSG | Ext.RETH, 0, false),
    READ_RESPONSE(0x06, Ext.MSG, MAX_DATA_PAYLOAD, true),
    FETCH_ADD(0x07, Ext.MSG | Ext.ATOMIC, 0, false),
    CMP_SWAP(0x08, Ext.MSG | Ext.ATOMIC, 0, false),
    ATOMIC_RESPONSE(0x09, Ext.MSG | Ext.AACK, 0, false),
    ACK(0x10, Ext.ACK, 0, false),
    NACK(0x11, Ext.ACK | Ext.NACK, 0, false),
    CNP(0x12, 0, 0, false),
    KEEPALIVE(0x13, 0, 0, false),
    CONNECT_REQUEST(0x20, Ext.CM, MAX_PRIVATE_DATA, false),
    CONNECT_CHALLENGE(0x21, Ext.CM, 0, false),
    CONNECT_REPLY(0x22, Ext.CM, MAX_PRIVATE_DATA, false),
    CONNECT_REJECT(0x23, Ext.CM, MAX_PRIVATE_DATA, false),
    READY_TO_USE(0x24, Ext.CM, 0, false),
    DISCONNECT_REQUEST(0x25, Ext.CM, 0, false),
    DISCONNECT_REPLY(0x26, Ext.CM, 0, false);

    /** Extension header presence bits; the order of the constants is the order on the wire. */
    static final class Ext {
        static final int MSG = 1;
        static final int RETH = 2;
        static final int IMM = 4;
        static final int ATOMIC = 8;
        static final int AACK = 16;
        static final int ACK = 32;
        static final int NACK = 64;
        static final int CM = 128;

        private Ext() {
        }
    }

    /** Offset value meaning "this opcode has no such extension header". */
    public static final int ABSENT = -1;

    private static final Opcode[] BY_VALUE = new Opcode[256];

    static {
        for (final Opcode op : values()) {
            BY_VALUE[op.value] = op;
        }
    }

    private final int value;
    private final int headerLength;
    private final int maxPayload;
    private final boolean trimmable;
    private final int msgOffset;
    private final int rethOffset;
    private final int immOffset;
    private final int atomicOffset;
    private final int aackOffset;
    private final int ackOffset;
    private final int nackOffset;
    private final int cmOffset;

    Opcode(final int value, final int extensions, final int maxPayload, final boolean trimmable) {
        this.value = value;
        this.maxPayload = maxPayload;
        this.trimmable = trimmable;
        int offset = BASE_HEADER_LENGTH;
        msgOffset = (extensions & Ext.MSG) != 0 ? offset : ABSENT;
        offset += (extensions & Ext.MSG) != 0 ? MSG_HEADER_LENGTH : 0;
        rethOffset = (extensions & Ext.RETH) != 0 ? offset : ABSENT;
        offset += (extensions & Ext.RETH) != 0 ? RETH_HEADER_LENGTH : 0;
        immOffset = (extensions & Ext.IMM) != 0 ? offset : ABSENT;
        offset += (extensions & Ext.IMM) != 0 ? IMM_HEADER_LENGTH : 0;
        atomicOffset = (extensions & Ext.ATOMIC) != 0 ? offset : ABSENT;
        offset += (extensions & Ext.ATOMIC) != 0 ? ATOMIC_HEADER_LENGTH : 0;
        aackOffset = (extensions & Ext.AACK) != 0 ? offset : ABSENT;
        offset += (extensions & Ext.AACK) != 0 ? AACK_HEADER_LENGTH : 0;
        ackOffset = (extensions & Ext.ACK) != 0 ? offset : ABSENT;
        offset += (extensions & Ext.ACK) != 0 ? ACK_HEADER_LENGTH : 0;
        nackOffset = (extensions & Ext.NACK) != 0 ? offset : ABSENT;
        offset += (extensions & Ext.NACK) != 0 ? NACK_HEADER_LENGTH : 0;
        cmOffset = (extensions & Ext.CM) != 0 ? offset : ABSENT;
        offset += (extensions & Ext.CM) != 0 ? CM_HEADER_LENGTH : 0;
        headerLength = offset;
    }

    /**
     * Looks up an opcode by its wire value without allocating.
     *
     * @param value the opcode byte (0..255; other values return null)
     * @return the opcode, or null when the value is not defined [WIRE-020]
     */
    public static Opcode of(final int value) {
        return (value & ~0xFF) == 0 ? BY_VALUE[value] : null;
    }

    /** @return the wire value of this opcode */
    public int value() {
        return value;
    }

    /** @return base header plus extension headers, in bytes */
    public int headerLength() {
        return headerLength;
    }

    /** @return header length in 4-byte words, the value of the Header Length field [WIRE-012] */
    public int headerLengthWords() {
        return headerLength >>> 2;
    }

    /** @return the largest payload the opcode may carry; 0 when it carries none [WIRE-021] */
    public int maxPayload() {
        return maxPayload;
    }

    /** @return whether a switch may trim this opcode [WIRE-042] */
    public boolean isTrimmable() {
        return trimmable;
    }

    /** @return whether this is a request that consumes a PSN of the requester (SEND..CMP_SWAP) */
    public boolean isRequest() {
        return value >= SEND.value && value <= CMP_SWAP.value && this != READ_RESPONSE;
    }

    /** @return whether this is a connection-manager opcode */
    public boolean isConnectionManagement() {
        return cmOffset != ABSENT;
    }

    /** @return offset of the MSG header from the packet start, or {@link #ABSENT} */
    public int msgOffset() {
        return msgOffset;
    }

    /** @return offset of the RETH header from the packet start, or {@link #ABSENT} */
    public int rethOffset() {
        return rethOffset;
    }

    /** @return offset of the IMM header from the packet start, or {@link #ABSENT} */
    public int immOffset() {
        return immOffset;
    }

    /** @return offset of the ATOMIC header from the packet start, or {@link #ABSENT} */
    public int atomicOffset() {
        return atomicOffset;
    }

    /** @return offset of the AACK header from the packet start, or {@link #ABSENT} */
    public int aackOffset() {
        return aackOffset;
    }

    /** @return offset of the ACK header from the packet start, or {@link #ABSENT} */
    public int ackOffset() {
        return ackOffset;
    }

    /** @return offset of the NACK header from the packet start, or {@link #ABSENT} */
    public int nackOffset() {
        return nackOffset;
    }

    /** @return offset of the CM header from the packet start, or {@link #ABSENT} */
    public int cmOffset() {
        return cmOffset;
    }
}
