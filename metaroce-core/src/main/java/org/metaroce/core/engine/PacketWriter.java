// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.engine;

import java.nio.ByteOrder;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;
import org.metaroce.core.wire.AckHeader;
import org.metaroce.core.wire.AtomicAckHeader;
import org.metaroce.core.wire.AtomicHeader;
import org.metaroce.core.wire.BaseHeader;
import org.metaroce.core.wire.ImmediateHeader;
import org.metaroce.core.wire.IntegrityCheck;
import org.metaroce.core.wire.MessageHeader;
import org.metaroce.core.wire.NackHeader;
import org.metaroce.core.wire.Opcode;
import org.metaroce.core.wire.RdmaHeader;
import org.metaroce.core.wire.WireConstants;

/**
 * The endpoint's reusable flyweights for building packets in a sink's buffer. One per endpoint
 * (single-threaded), shared by all its queue pairs.
 */
final class PacketWriter {
    final BaseHeader base = new BaseHeader();
    final MessageHeader msg = new MessageHeader();
    final RdmaHeader reth = new RdmaHeader();
    final ImmediateHeader imm = new ImmediateHeader();
    final AtomicHeader atomic = new AtomicHeader();
    final AtomicAckHeader aack = new AtomicAckHeader();
    final AckHeader ack = new AckHeader();
    final NackHeader nack = new NackHeader();
    final IntegrityCheck crc = new IntegrityCheck();

    /**
     * Writes the base header of a packet at {@code offset}.
     */
    BaseHeader header(final MutableDirectBuffer buffer, final int offset, final Opcode opcode, final int flags,
                      final int destQpn, final int psn, final int payloadLength, final int pathId, final long nowNs,
                      final int sourceQpn) {
        return base.wrap(buffer, offset).initialize(opcode).flags(flags).destQpn(destQpn).psn(psn)
            .payloadLength(payloadLength).pathId(pathId).timestamp((int) nowNs).sourceQpn(sourceQpn);
    }

    MessageHeader msg(final MutableDirectBuffer buffer, final int packetOffset, final Opcode opcode) {
        return msg.wrap(buffer, packetOffset + opcode.msgOffset());
    }

    RdmaHeader reth(final MutableDirectBuffer buffer, final int packetOffset, final Opcode opcode) {
        return reth.wrap(buffer, packetOffset + opcode.rethOffset());
    }

    ImmediateHeader imm(final MutableDirectBuffer buffer, final int packetOffset, final Opcode opcode) {
        return imm.wrap(buffer, packetOffset + opcode.immOffset());
    }

    AtomicHeader atomic(final MutableDirectBuffer buffer, final int packetOffset, final Opcode opcode) {
        return atomic.wrap(buffer, packetOffset + opcode.atomicOffset());
    }

    AtomicAckHeader aack(final MutableDirectBuffer buffer, final int packetOffset, final Opcode opcode) {
        return aack.wrap(buffer, packetOffset + opcode.aackOffset());
    }

    AckHeader ack(final MutableDirectBuffer buffer, final int packetOffset, final Opcode opcode) {
        return ack.wrap(buffer, packetOffset + opcode.ackOffset()).initialize();
    }

    /**
     * Writes an attached ACK's Triggering PSN at {@code trailerOffset} (after the payload) and
     * returns the ACK header that follows it, zeroed [WIRE-071].
     */
    AckHeader attachedAck(final MutableDirectBuffer buffer, final int trailerOffset, final int triggerPsn) {
        buffer.putInt(trailerOffset, triggerPsn, ByteOrder.BIG_ENDIAN);
        return ack.wrap(buffer, trailerOffset + WireConstants.TRIGGER_PSN_LENGTH).initialize();
    }

    NackHeader nack(final MutableDirectBuffer buffer, final int packetOffset, final Opcode opcode) {
        return nack.wrap(buffer, packetOffset + opcode.nackOffset()).initialize();
    }

    /**
     * Seals the packet with its integrity check and returns its total length.
     *
     * @param payloadLength the bytes after the headers the check covers: the payload, and an attached
     *     ACK's trailer when there is one [WIRE-040]
     */
    int seal(final MutableDirectBuffer buffer, final int packetOffset, final Opcode opcode, final int payloadLength) {
        return crc.seal(buffer, packetOffset, opcode.headerLength() + payloadLength);
    }

    /**
     * As {@link #seal}, for a packet whose payload the driver sends from {@code payload} rather
     * than from the packet buffer ({@link IntegrityCheck#sealAround}).
     *
     * @param trailerLength bytes between the payload and the integrity check (an attached ACK)
     */
    int sealAround(final MutableDirectBuffer buffer, final int packetOffset, final Opcode opcode,
                   final DirectBuffer payload, final int payloadOffset, final int payloadLength,
                   final int trailerLength) {
        return crc.sealAround(buffer, packetOffset, opcode.headerLength(), payload, payloadOffset, payloadLength,
            trailerLength);
    }
}
