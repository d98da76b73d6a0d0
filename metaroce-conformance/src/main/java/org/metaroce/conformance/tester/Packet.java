// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.conformance.tester;

import java.net.InetSocketAddress;
import java.util.Arrays;
import java.util.HexFormat;

import org.agrona.concurrent.UnsafeBuffer;
import org.metaroce.core.wire.AckHeader;
import org.metaroce.core.wire.AtomicAckHeader;
import org.metaroce.core.wire.AtomicHeader;
import org.metaroce.core.wire.BaseHeader;
import org.metaroce.core.wire.ConnectHeader;
import org.metaroce.core.wire.Flags;
import org.metaroce.core.wire.ImmediateHeader;
import org.metaroce.core.wire.IntegrityCheck;
import org.metaroce.core.wire.MessageHeader;
import org.metaroce.core.wire.NackHeader;
import org.metaroce.core.wire.Opcode;
import org.metaroce.core.wire.RdmaHeader;
import org.metaroce.core.wire.WireConstants;

/**
 * One datagram the lower tester received from the IUT, read with the core wire codecs' static
 * accessors (specification section 3). Accessors of headers the opcode lacks throw, so a case
 * that reads a field of the wrong packet fails loudly instead of reading garbage.
 */
public final class Packet {
    private final byte[] bytes;
    private final UnsafeBuffer buffer;
    private final InetSocketAddress source;
    private final long receivedNs;
    private final Opcode opcode;

    /**
     * @param bytes the UDP payload (kept, not copied)
     * @param source the datagram's source address
     * @param receivedNs {@link System#nanoTime()} at reception
     */
    public Packet(final byte[] bytes, final InetSocketAddress source, final long receivedNs) {
        this.bytes = bytes;
        this.buffer = new UnsafeBuffer(bytes);
        this.source = source;
        this.receivedNs = receivedNs;
        this.opcode = bytes.length >= WireConstants.BASE_HEADER_LENGTH ? Opcode.of(BaseHeader.opcode(buffer, 0))
            : null;
    }

    /** @return the raw datagram (not a copy) */
    public byte[] bytes() {
        return bytes;
    }

    /** @return the sender's address */
    public InetSocketAddress source() {
        return source;
    }

    /** @return reception time, {@link System#nanoTime()} */
    public long receivedNs() {
        return receivedNs;
    }

    /** @return the opcode, or null when unknown or too short */
    public Opcode opcode() {
        return opcode;
    }

    /** @return whether it is long enough to hold the header its opcode implies */
    public boolean wellFormed() {
        return opcode != null && bytes.length >= opcode.headerLength();
    }

    public int version() {
        return BaseHeader.version(buffer, 0);
    }

    /** @return the low nibble of byte 0, reserved [WIRE-002] */
    public int reservedNibble() {
        return bytes[0] & 0x0F;
    }

    public int flags() {
        return BaseHeader.flags(buffer, 0);
    }

    public boolean has(final int flag) {
        return (flags() & flag) == flag;
    }

    public int destQpn() {
        return BaseHeader.destQpn(buffer, 0);
    }

    public int sourceQpn() {
        return BaseHeader.sourceQpn(buffer, 0);
    }

    public int psn() {
        return BaseHeader.psn(buffer, 0);
    }

    public int payloadLength() {
        return BaseHeader.payloadLength(buffer, 0);
    }

    public int pathId() {
        return BaseHeader.pathId(buffer, 0);
    }

    public int headerLengthWords() {
        return BaseHeader.headerLengthWords(buffer, 0);
    }

    public int timestamp() {
        return BaseHeader.timestamp(buffer, 0);
    }

    /** @return bytes 4 and 20 of the base header, reserved [WIRE-002] */
    public int reservedBytes() {
        return (bytes[4] & 0xFF) | (bytes[20] & 0xFF);
    }

    /** @return whether the Integrity Check verifies [WIRE-040] (false for trimmed or short packets) */
    public boolean integrityValid() {
        if (bytes.length < WireConstants.BASE_HEADER_LENGTH + WireConstants.INTEGRITY_CHECK_LENGTH) {
            return false;
        }
        return IntegrityCheck.software(buffer, 0, bytes.length - 4)
            == buffer.getInt(bytes.length - 4, java.nio.ByteOrder.BIG_ENDIAN);
    }

    /** @return whether the datagram length equals header + payload (+ 36 with ATTACHED_ACK) + 4 [WIRE-005] */
    public boolean lengthConsistent() {
        return opcode != null && bytes.length == headerLengthWords() * 4 + payloadLength() + trailerLength() + 4;
    }

    /** @return the attached ACK trailer's length: 36 with ATTACHED_ACK unless trimmed, else 0 [WIRE-071] */
    private int trailerLength() {
        return hasAttachedAck() ? WireConstants.ATTACHED_ACK_LENGTH : 0;
    }

    /** @return whether the packet carries an attached ACK's trailer (v1.0.15) [WIRE-071] */
    public boolean hasAttachedAck() {
        return has(Flags.ATTACHED_ACK) && !has(Flags.TRIMMED)
            && bytes.length >= headerLengthWords() * 4 + payloadLength() + WireConstants.ATTACHED_ACK_LENGTH + 4;
    }

    /** @return where the attached ACK's trailer starts */
    private int trailer() {
        if (!hasAttachedAck()) {
            throw new IllegalStateException("no attached ACK: " + this);
        }
        return headerLengthWords() * 4 + payloadLength();
    }

    /** @return the attached ACK's Triggering PSN [WIRE-071] */
    public int attachedTriggerPsn() {
        return buffer.getInt(trailer(), java.nio.ByteOrder.BIG_ENDIAN);
    }

    /** @return the attached ACK's Cumulative PSN [WIRE-071] */
    public int attachedCumulativePsn() {
        return AckHeader.cumulativePsn(buffer, trailer() + WireConstants.TRIGGER_PSN_LENGTH);
    }

    private int at(final int extOffset, final String header) {
        if (extOffset == Opcode.ABSENT) {
            throw new IllegalStateException(opcode + " has no " + header + " header");
        }
        return extOffset;
    }

    public int msn() {
        return MessageHeader.msn(buffer, at(opcode.msgOffset(), "MSG"));
    }

    public long messageOffset() {
        return MessageHeader.messageOffset(buffer, at(opcode.msgOffset(), "MSG"));
    }

    public long messageLength() {
        return MessageHeader.messageLength(buffer, at(opcode.msgOffset(), "MSG"));
    }

    public int rsn() {
        return MessageHeader.rsn(buffer, at(opcode.msgOffset(), "MSG"));
    }

    public long virtualAddress() {
        return opcode.rethOffset() != Opcode.ABSENT ? RdmaHeader.virtualAddress(buffer, opcode.rethOffset())
            : AtomicHeader.virtualAddress(buffer, at(opcode.atomicOffset(), "RETH/ATOMIC"));
    }

    public int rkey() {
        return opcode.rethOffset() != Opcode.ABSENT ? RdmaHeader.rkey(buffer, opcode.rethOffset())
            : AtomicHeader.rkey(buffer, at(opcode.atomicOffset(), "RETH/ATOMIC"));
    }

    public long dmaLength() {
        return RdmaHeader.dmaLength(buffer, at(opcode.rethOffset(), "RETH"));
    }

    public int immediate() {
        return ImmediateHeader.immediateData(buffer, at(opcode.immOffset(), "IMM"));
    }

    public long swapOrAdd() {
        return AtomicHeader.swapOrAdd(buffer, at(opcode.atomicOffset(), "ATOMIC"));
    }

    public long compare() {
        return AtomicHeader.compare(buffer, at(opcode.atomicOffset(), "ATOMIC"));
    }

    public long originalData() {
        return AtomicAckHeader.originalData(buffer, at(opcode.aackOffset(), "AACK"));
    }

    public int cumulativePsn() {
        return AckHeader.cumulativePsn(buffer, at(opcode.ackOffset(), "ACK"));
    }

    public long sackBitmap() {
        return AckHeader.sackBitmap(buffer, at(opcode.ackOffset(), "ACK"));
    }

    public int echoedTimestamp() {
        return AckHeader.echoedTimestamp(buffer, at(opcode.ackOffset(), "ACK"));
    }

    public int echoedPathId() {
        return AckHeader.echoedPathId(buffer, at(opcode.ackOffset(), "ACK"));
    }

    public int ackFlags() {
        return AckHeader.ackFlags(buffer, at(opcode.ackOffset(), "ACK"));
    }

    public int credit() {
        return AckHeader.credit(buffer, at(opcode.ackOffset(), "ACK"));
    }

    /** @return the ACK's Sender Count byte: the responder's count of requesters with SENDER_COUNT, else 0 [CC-038] */
    public int senderCount() {
        return AckHeader.senderCount(buffer, at(opcode.ackOffset(), "ACK"));
    }

    /** @return ACK Delay in ns [WIRE-061] */
    public long ackDelay() {
        return AckHeader.ackDelay(buffer, at(opcode.ackOffset(), "ACK"));
    }

    public int ceCount() {
        return AckHeader.ceCount(buffer, at(opcode.ackOffset(), "ACK"));
    }

    public int nackReason() {
        return NackHeader.reason(buffer, at(opcode.nackOffset(), "NACK"));
    }

    public int rnrTimer() {
        return NackHeader.rnrTimer(buffer, at(opcode.nackOffset(), "NACK"));
    }

    public int nackPsn() {
        return NackHeader.nackPsn(buffer, at(opcode.nackOffset(), "NACK"));
    }

    public long serviceId() {
        return ConnectHeader.serviceId(buffer, at(opcode.cmOffset(), "CM"));
    }

    public long transactionId() {
        return ConnectHeader.transactionId(buffer, at(opcode.cmOffset(), "CM"));
    }

    public int initialPsn() {
        return ConnectHeader.initialPsn(buffer, at(opcode.cmOffset(), "CM"));
    }

    public int pathMtu() {
        return ConnectHeader.pathMtu(buffer, at(opcode.cmOffset(), "CM"));
    }

    public int capabilities() {
        return ConnectHeader.capabilities(buffer, at(opcode.cmOffset(), "CM"));
    }

    public int initiatorDepth() {
        return ConnectHeader.initiatorDepth(buffer, at(opcode.cmOffset(), "CM"));
    }

    public int responderResources() {
        return ConnectHeader.responderResources(buffer, at(opcode.cmOffset(), "CM"));
    }

    public int pathCount() {
        return ConnectHeader.pathCount(buffer, at(opcode.cmOffset(), "CM"));
    }

    public int cmReason() {
        return ConnectHeader.reason(buffer, at(opcode.cmOffset(), "CM"));
    }

    /** @return the 20-byte cookie */
    public byte[] cookie() {
        final int off = at(opcode.cmOffset(), "CM") + ConnectHeader.COOKIE_OFFSET;
        return Arrays.copyOfRange(bytes, off, off + WireConstants.COOKIE_LENGTH);
    }

    /** @return the payload bytes (empty when none) */
    public byte[] payload() {
        final int start = headerLengthWords() * 4;
        final int end = Math.min(bytes.length, start + payloadLength());
        return start >= end ? new byte[0] : Arrays.copyOfRange(bytes, start, end);
    }

    @Override
    public String toString() {
        if (opcode == null) {
            return "datagram[" + bytes.length + " B, opcode " + (bytes.length > 1 ? bytes[1] & 0xFF : -1) + "]";
        }
        final StringBuilder sb = new StringBuilder(96).append(opcode).append(" psn=").append(Integer.toUnsignedString(
            psn())).append(" dqpn=").append(destQpn()).append(" sqpn=").append(sourceQpn()).append(" flags=")
            .append(Flags.toString(flags())).append(" len=").append(payloadLength());
        if (!wellFormed()) {
            return sb.append(" (short: ").append(bytes.length).append(" B)").toString();
        }
        if (opcode.msgOffset() != Opcode.ABSENT) {
            sb.append(" msn=").append(msn()).append(" off=").append(messageOffset()).append(" mlen=")
                .append(messageLength()).append(" rsn=").append(rsn());
        }
        if (opcode.ackOffset() != Opcode.ABSENT) {
            sb.append(" cum=").append(Integer.toUnsignedString(cumulativePsn())).append(" sack=0x")
                .append(Long.toHexString(sackBitmap())).append(" aflags=").append(ackFlags());
        }
        if (opcode.nackOffset() != Opcode.ABSENT) {
            sb.append(" reason=").append(nackReason()).append(" nackPsn=").append(Integer.toUnsignedString(nackPsn()));
        }
        if (opcode.cmOffset() != Opcode.ABSENT) {
            sb.append(" tid=").append(Long.toHexString(transactionId())).append(" cmReason=").append(cmReason());
        }
        return sb.toString();
    }

    /** @return the datagram as hex, for reports */
    public String hex() {
        return HexFormat.of().formatHex(bytes);
    }
}
