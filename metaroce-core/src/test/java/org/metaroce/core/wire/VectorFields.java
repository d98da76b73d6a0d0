// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.wire;

import java.nio.ByteOrder;
import java.util.HashMap;
import java.util.Map;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

/**
 * Maps the vector field names of specification 3.8 onto the flyweights, so tests can read and
 * write any field by name. Values travel as unsigned longs, as the vectors write them.
 */
final class VectorFields {
    interface Reader {
        long read(DirectBuffer b, int headerOffset);
    }

    interface Writer {
        void write(MutableDirectBuffer b, int headerOffset, long value);
    }

    record Field(String header, Reader reader, Writer writer) {
    }

    static final Map<String, Field> FIELDS = new HashMap<>();

    static {
        bh("bh.version", (b, o) -> BaseHeader.version(b, o), (b, o, v) -> b.putByte(o, (byte) ((v & 0xF) << 4)));
        bh("bh.opcode", (b, o) -> BaseHeader.opcode(b, o), (b, o, v) -> b.putByte(o + 1, (byte) v));
        bh("bh.flags", (b, o) -> BaseHeader.flags(b, o), (b, o, v) -> new BaseHeader().wrap(b, o).flags((int) v));
        bh("bh.dqpn", (b, o) -> BaseHeader.destQpn(b, o), (b, o, v) -> new BaseHeader().wrap(b, o).destQpn((int) v));
        bh("bh.psn", (b, o) -> u32(BaseHeader.psn(b, o)), (b, o, v) -> new BaseHeader().wrap(b, o).psn((int) v));
        bh("bh.payload_length", (b, o) -> BaseHeader.payloadLength(b, o),
            (b, o, v) -> new BaseHeader().wrap(b, o).payloadLength((int) v));
        bh("bh.path_id", (b, o) -> BaseHeader.pathId(b, o), (b, o, v) -> new BaseHeader().wrap(b, o).pathId((int) v));
        bh("bh.header_length", (b, o) -> BaseHeader.headerLengthWords(b, o),
            (b, o, v) -> new BaseHeader().wrap(b, o).headerLengthWords((int) v));
        bh("bh.timestamp", (b, o) -> u32(BaseHeader.timestamp(b, o)),
            (b, o, v) -> new BaseHeader().wrap(b, o).timestamp((int) v));
        bh("bh.sqpn", (b, o) -> BaseHeader.sourceQpn(b, o), (b, o, v) -> new BaseHeader().wrap(b, o).sourceQpn((int) v));

        put("msg.msn", "msg", (b, o) -> u32(MessageHeader.msn(b, o)), (b, o, v) -> new MessageHeader().wrap(b, o).msn((int) v));
        put("msg.offset", "msg", MessageHeader::messageOffset, (b, o, v) -> new MessageHeader().wrap(b, o).messageOffset(v));
        put("msg.length", "msg", MessageHeader::messageLength, (b, o, v) -> new MessageHeader().wrap(b, o).messageLength(v));
        put("msg.rsn", "msg", (b, o) -> u32(MessageHeader.rsn(b, o)), (b, o, v) -> new MessageHeader().wrap(b, o).rsn((int) v));

        put("reth.va", "reth", RdmaHeader::virtualAddress, (b, o, v) -> new RdmaHeader().wrap(b, o).virtualAddress(v));
        put("reth.rkey", "reth", (b, o) -> u32(RdmaHeader.rkey(b, o)), (b, o, v) -> new RdmaHeader().wrap(b, o).rkey((int) v));
        put("reth.dma_length", "reth", RdmaHeader::dmaLength, (b, o, v) -> new RdmaHeader().wrap(b, o).dmaLength(v));

        put("imm.data", "imm", (b, o) -> u32(ImmediateHeader.immediateData(b, o)),
            (b, o, v) -> new ImmediateHeader().wrap(b, o).immediateData((int) v));

        put("atomic.va", "atomic", AtomicHeader::virtualAddress, (b, o, v) -> new AtomicHeader().wrap(b, o).virtualAddress(v));
        put("atomic.rkey", "atomic", (b, o) -> u32(AtomicHeader.rkey(b, o)), (b, o, v) -> new AtomicHeader().wrap(b, o).rkey((int) v));
        put("atomic.swap_add", "atomic", AtomicHeader::swapOrAdd, (b, o, v) -> new AtomicHeader().wrap(b, o).swapOrAdd(v));
        put("atomic.compare", "atomic", AtomicHeader::compare, (b, o, v) -> new AtomicHeader().wrap(b, o).compare(v));

        put("aack.original", "aack", AtomicAckHeader::originalData, (b, o, v) -> new AtomicAckHeader().wrap(b, o).originalData(v));

        put("ack.cumulative_psn", "ack", (b, o) -> u32(AckHeader.cumulativePsn(b, o)),
            (b, o, v) -> new AckHeader().wrap(b, o).cumulativePsn((int) v));
        put("ack.sack_bitmap", "ack", AckHeader::sackBitmap, (b, o, v) -> new AckHeader().wrap(b, o).sackBitmap(v));
        put("ack.echoed_timestamp", "ack", (b, o) -> u32(AckHeader.echoedTimestamp(b, o)),
            (b, o, v) -> new AckHeader().wrap(b, o).echoedTimestamp((int) v));
        put("ack.ack_delay", "ack", AckHeader::ackDelay, (b, o, v) -> new AckHeader().wrap(b, o).ackDelay(v));
        put("ack.ce_count", "ack", (b, o) -> u32(AckHeader.ceCount(b, o)), (b, o, v) -> new AckHeader().wrap(b, o).ceCount((int) v));
        put("ack.credit", "ack", (b, o) -> u32(AckHeader.credit(b, o)), (b, o, v) -> new AckHeader().wrap(b, o).credit((int) v));
        put("ack.echoed_path_id", "ack", AckHeader::echoedPathId, (b, o, v) -> new AckHeader().wrap(b, o).echoedPathId((int) v));
        put("ack.flags", "ack", AckHeader::ackFlags, (b, o, v) -> new AckHeader().wrap(b, o).ackFlags((int) v));
        put("ack.sender_count", "ack", AckHeader::senderCount, (b, o, v) -> new AckHeader().wrap(b, o).senderCount((int) v));

        // The attached ACK's trailer (v1.0.15): the Triggering PSN, then an ACK header [WIRE-071].
        put("attached.trigger_psn", "trailer", (b, o) -> u32(b.getInt(o, ByteOrder.BIG_ENDIAN)),
            (b, o, v) -> b.putInt(o, (int) v, ByteOrder.BIG_ENDIAN));
        for (final Map.Entry<String, Field> ack : new HashMap<>(FIELDS).entrySet()) {
            if (ack.getKey().startsWith("ack.")) {
                put("attached." + ack.getKey().substring(4), "attached", ack.getValue().reader(),
                    ack.getValue().writer());
            }
        }

        put("nack.reason", "nack", NackHeader::reason, (b, o, v) -> new NackHeader().wrap(b, o).reason((int) v));
        put("nack.rnr_timer", "nack", NackHeader::rnrTimer, (b, o, v) -> new NackHeader().wrap(b, o).rnrTimer((int) v));
        put("nack.psn", "nack", (b, o) -> u32(NackHeader.nackPsn(b, o)), (b, o, v) -> new NackHeader().wrap(b, o).nackPsn((int) v));

        put("cm.service_id", "cm", ConnectHeader::serviceId, (b, o, v) -> new ConnectHeader().wrap(b, o).serviceId(v));
        put("cm.transaction_id", "cm", ConnectHeader::transactionId, (b, o, v) -> new ConnectHeader().wrap(b, o).transactionId(v));
        put("cm.initial_psn", "cm", (b, o) -> u32(ConnectHeader.initialPsn(b, o)),
            (b, o, v) -> new ConnectHeader().wrap(b, o).initialPsn((int) v));
        put("cm.path_mtu", "cm", ConnectHeader::pathMtu, (b, o, v) -> new ConnectHeader().wrap(b, o).pathMtu((int) v));
        put("cm.capabilities", "cm", ConnectHeader::capabilities, (b, o, v) -> new ConnectHeader().wrap(b, o).capabilities((int) v));
        put("cm.initiator_depth", "cm", ConnectHeader::initiatorDepth,
            (b, o, v) -> new ConnectHeader().wrap(b, o).initiatorDepth((int) v));
        put("cm.responder_resources", "cm", ConnectHeader::responderResources,
            (b, o, v) -> new ConnectHeader().wrap(b, o).responderResources((int) v));
        put("cm.path_count", "cm", ConnectHeader::pathCount, (b, o, v) -> new ConnectHeader().wrap(b, o).pathCount((int) v));
        put("cm.reason", "cm", ConnectHeader::reason, (b, o, v) -> new ConnectHeader().wrap(b, o).reason((int) v));
    }

    private VectorFields() {
    }

    private static long u32(final int v) {
        return v & 0xFFFF_FFFFL;
    }

    private static void bh(final String name, final Reader r, final Writer w) {
        FIELDS.put(name, new Field("bh", r, w));
    }

    private static void put(final String name, final String header, final Reader r, final Writer w) {
        FIELDS.put(name, new Field(header, r, w));
    }

    /**
     * @param opcode the packet's opcode
     * @param header header prefix of a field name
     * @return offset of that header from the packet start, or {@link Opcode#ABSENT}
     */
    static int headerOffset(final Opcode opcode, final String header) {
        return headerOffset(opcode, header, 0);
    }

    /**
     * @param payloadLength the packet's Payload Length: the attached ACK's trailer follows the payload
     * @return as {@link #headerOffset(Opcode, String)}, also for the trailer's fields
     */
    static int headerOffset(final Opcode opcode, final String header, final int payloadLength) {
        return switch (header) {
            case "trailer" -> opcode.headerLength() + payloadLength;
            case "attached" -> opcode.headerLength() + payloadLength + WireConstants.TRIGGER_PSN_LENGTH;
            case "bh" -> 0;
            case "msg" -> opcode.msgOffset();
            case "reth" -> opcode.rethOffset();
            case "imm" -> opcode.immOffset();
            case "atomic" -> opcode.atomicOffset();
            case "aack" -> opcode.aackOffset();
            case "ack" -> opcode.ackOffset();
            case "nack" -> opcode.nackOffset();
            case "cm" -> opcode.cmOffset();
            default -> throw new IllegalArgumentException("unknown header " + header);
        };
    }
}
