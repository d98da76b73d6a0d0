// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.wire;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;

/**
 * Builds MetaRoCE packets field by field from fuzzer input, for the structure-aware fuzz targets
 * that must get past {@link PacketValidator} into the engine and the connection manager. A raw
 * byte-level fuzzer almost never produces a packet whose CRC-32C matches, so the engine behind the
 * validator stays unreached; here every field is chosen from the input (biased towards values the
 * live connection expects, see {@link Hints}) and the integrity check is resealed at the end.
 *
 * <p>Only occasionally does the builder break the framing on purpose (no reseal, a wrong Header
 * Length): the validator has its own target ({@code PacketDecoderFuzzTest}); here such packets
 * only check that the drop is counted and changes nothing.
 */
public final class FuzzPackets {
    /** Largest packet the builder writes: the longest header, the largest payload it picks, the trailer. */
    public static final int MAX_PACKET = WireConstants.MAX_HEADER_LENGTH + 2048 + WireConstants.INTEGRITY_CHECK_LENGTH;
    /**
     * The largest packet {@link #build} writes: {@link #MAX_PACKET} and an attached ACK's trailer
     * (v1.0.15). Apart, so that what MAX_PACKET sizes in committed inputs (a sink's room) stays.
     */
    public static final int MAX_FORGED = MAX_PACKET + WireConstants.ATTACHED_ACK_LENGTH;

    private static final Opcode[] OPCODES = Opcode.values();

    private final BaseHeader base = new BaseHeader();
    private final MessageHeader msg = new MessageHeader();
    private final RdmaHeader reth = new RdmaHeader();
    private final ImmediateHeader imm = new ImmediateHeader();
    private final AtomicHeader atomic = new AtomicHeader();
    private final AtomicAckHeader aack = new AtomicAckHeader();
    private final AckHeader ack = new AckHeader();
    private final NackHeader nack = new NackHeader();
    private final ConnectHeader cm = new ConnectHeader();
    private final IntegrityCheck crc = new IntegrityCheck();

    /**
     * What the receiving side of a live connection would accept, so that fuzzed fields land near
     * valid values often enough to reach deep states (in-window PSNs, real rkeys, real addresses).
     */
    public static final class Hints {
        /** QPN of the receiving queue pair (or 0 for the connection manager). */
        public int destQpn;
        /** QPN the receiver expects as source (its peer's QPN). */
        public int sourceQpn;
        /** The receiving responder's expected PSN: requests near it are in window. */
        public int requestPsn;
        /** The receiving requester's next PSN: ACKs and responses just below it refer to sent PSNs. */
        public int responsePsn;
        /** Messages the sender has posted so far: MSNs and RSNs near it are plausible. */
        public int messages;
        /** The receiver's path MTU. */
        public int mtu = 1024;
        /**
         * Whether the receiver negotiated SENDER_COUNT: its ACKs and NACKs then carry any Sender
         * Count (0 to 255) [CC-038]; without it the byte stays zero and is not drawn from the input.
         */
        public boolean senderCount;
        /**
         * Whether the receiver negotiated ATTACHED_ACK (v1.0.15): a forged packet then sometimes
         * carries the flag and, unless trimmed, a trailer with an ACK drawn from the input
         * [WIRE-071], [REL-070]; on any opcode, so that BAD_ATTACHED_ACK is reached too [WIRE-072].
         * Without it nothing more is drawn, so inputs that do not negotiate it keep their meaning.
         */
        public boolean attachedAck;
        /** Start addresses of the receiver's registered regions. */
        public long[] addresses = new long[0];
        /** Lengths of those regions. */
        public int[] lengths = new int[0];
        /** Rkeys of those regions. */
        public int[] rkeys = new int[0];
        /** Service IDs a listener serves (connection manager). */
        public long serviceId;
        /** Transaction ID of a handshake in progress (connection manager). */
        public long transactionId;
        /** A cookie seen on the wire (connection manager); null when none was seen. */
        public DirectBuffer cookie;
        /** Initial PSN of a handshake in progress (connection manager). */
        public int initialPsn;
    }

    /**
     * Writes one packet at offset 0 of {@code out}.
     *
     * @param d the fuzzer's input
     * @param out at least {@link #MAX_FORGED} bytes
     * @param h hints from the live connection
     * @param cmOnly whether to pick only connection-manager opcodes
     * @return the datagram length
     */
    public int build(final FuzzedDataProvider d, final MutableDirectBuffer out, final Hints h, final boolean cmOnly) {
        final Opcode opcode = cmOnly
            ? OPCODES[Opcode.CONNECT_REQUEST.ordinal() + d.consumeInt(0, OPCODES.length - 1 - Opcode.CONNECT_REQUEST.ordinal())]
            : OPCODES[d.consumeInt(0, OPCODES.length - 1)];
        // One byte gives every combination of the five defined flags (bits 15..11).
        int flags = (d.consumeByte() & 0xF8) << 8;
        if ((flags & Flags.TRIMMED) != 0 && (!opcode.isTrimmable() || d.consumeInt(0, 3) != 0)) {
            flags &= ~Flags.TRIMMED;
        }
        final boolean trimmed = (flags & Flags.TRIMMED) != 0;
        if (h.attachedAck && d.consumeInt(0, 3) == 0) {
            flags |= Flags.ATTACHED_ACK;
        }
        final boolean attached = (flags & Flags.ATTACHED_ACK) != 0 && !trimmed;
        final int maxPayload = Math.min(opcode.maxPayload(), 2048);
        final int payloadLength = trimmed || maxPayload == 0 ? 0 : pickPayloadLength(d, h.mtu, maxPayload);
        final int destQpn = d.consumeInt(0, 7) != 0 ? h.destQpn : d.consumeInt(0, WireConstants.MAX_QPN);
        final int sourceQpn = d.consumeInt(0, 7) != 0 ? h.sourceQpn : d.consumeInt(0, WireConstants.MAX_QPN);
        final int psnBase = opcode.isRequest() || opcode == Opcode.KEEPALIVE ? h.requestPsn : h.responsePsn;
        final int psn = opcode.isConnectionManagement() ? (d.consumeBoolean() ? 0 : d.consumeInt())
            : nearPsn(d, psnBase);
        base.wrap(out, 0).initialize(opcode).flags(flags).destQpn(destQpn).psn(psn).payloadLength(payloadLength)
            .pathId(d.consumeInt(0, 7)).timestamp(d.consumeInt()).sourceQpn(sourceQpn);

        long messageLength = payloadLength;
        long messageOffset = 0;
        if (opcode.msgOffset() != Opcode.ABSENT) {
            final int mode = d.consumeInt(0, 3);
            switch (mode) {
                case 0 -> { // a whole message in one packet
                    messageOffset = 0;
                    messageLength = payloadLength;
                }
                case 1 -> { // a middle or first packet of a longer message, at an MTU boundary
                    messageOffset = (long) h.mtu * d.consumeInt(0, 4);
                    messageLength = messageOffset + payloadLength + (long) h.mtu * d.consumeInt(0, 3);
                }
                case 2 -> { // the last packet of a longer message
                    messageOffset = (long) h.mtu * d.consumeInt(1, 4);
                    messageLength = messageOffset + payloadLength;
                }
                default -> { // anything at all
                    messageOffset = d.consumeLong() & 0xFFFF_FFFFL;
                    messageLength = d.consumeLong() & 0xFFFF_FFFFL;
                }
            }
            if (opcode == Opcode.READ_REQUEST || opcode == Opcode.FETCH_ADD || opcode == Opcode.CMP_SWAP) {
                if (mode != 3) {
                    messageOffset = 0;
                    messageLength = opcode == Opcode.READ_REQUEST ? d.consumeInt(0, 3 * h.mtu) : 8;
                }
            }
            msg.wrap(out, opcode.msgOffset()).msn(near(d, h.messages)).messageOffset(messageOffset)
                .messageLength(messageLength).rsn(near(d, h.messages));
        }
        if (opcode.rethOffset() != Opcode.ABSENT) {
            final int region = pickRegion(d, h);
            final long dma = opcode == Opcode.READ_REQUEST ? messageLength - messageOffset : messageLength;
            reth.wrap(out, opcode.rethOffset()).virtualAddress(pickAddress(d, h, region, false))
                .rkey(pickRkey(d, h, region)).dmaLength(d.consumeInt(0, 15) != 0 ? dma : d.consumeLong() & 0xFFFF_FFFFL);
        }
        if (opcode.immOffset() != Opcode.ABSENT) {
            imm.wrap(out, opcode.immOffset()).immediateData(d.consumeInt());
        }
        if (opcode.atomicOffset() != Opcode.ABSENT) {
            final int region = pickRegion(d, h);
            atomic.wrap(out, opcode.atomicOffset()).virtualAddress(pickAddress(d, h, region, true))
                .rkey(pickRkey(d, h, region)).swapOrAdd(d.consumeLong()).compare(d.consumeLong());
        }
        if (opcode.aackOffset() != Opcode.ABSENT) {
            aack.wrap(out, opcode.aackOffset()).originalData(d.consumeLong());
        }
        if (opcode.ackOffset() != Opcode.ABSENT) {
            ackFields(d, h, out, opcode.ackOffset());
        }
        if (opcode.nackOffset() != Opcode.ABSENT) {
            nack.wrap(out, opcode.nackOffset()).initialize().reason(d.consumeInt(0, 8)).rnrTimer(d.consumeInt(0, 31))
                .nackPsn(nearPsn(d, h.responsePsn));
        }
        if (opcode.cmOffset() != Opcode.ABSENT) {
            cm.wrap(out, opcode.cmOffset()).initialize()
                .serviceId(d.consumeInt(0, 3) != 0 ? h.serviceId : d.consumeLong())
                .transactionId(d.consumeInt(0, 3) != 0 ? h.transactionId : d.consumeLong())
                .initialPsn(d.consumeBoolean() ? h.initialPsn : d.consumeInt())
                .pathMtu(d.consumeBoolean() ? 256 << d.consumeInt(0, 5) : d.consumeInt(0, 0xFFFF))
                .capabilities(d.consumeInt(0, 0xFFFF)).initiatorDepth(d.consumeInt(0, 0xFF))
                .responderResources(d.consumeInt(0, 0xFF)).pathCount(d.consumeInt(0, 0xFF))
                .reason(d.consumeInt(0, 0xFF));
            if (h.cookie != null && d.consumeInt(0, 3) != 0) {
                cm.putCookie(h.cookie, 0);
                if (d.consumeInt(0, 7) == 0) { // a near miss: one bit of the cookie flipped
                    final int at = opcode.cmOffset() + ConnectHeader.COOKIE_OFFSET + d.consumeInt(0, 19);
                    out.putByte(at, (byte) (out.getByte(at) ^ (1 << d.consumeInt(0, 7))));
                }
            } else if (d.consumeBoolean()) {
                out.putBytes(opcode.cmOffset() + ConnectHeader.COOKIE_OFFSET, d.consumeBytes(WireConstants.COOKIE_LENGTH));
            }
        }
        final int headerLength = opcode.headerLength();
        if (payloadLength > 0) {
            final byte[] payload = d.consumeBytes(payloadLength);
            out.putBytes(headerLength, payload);
            out.setMemory(headerLength + payload.length, payloadLength - payload.length, (byte) 0);
        }
        if (trimmed) {
            return headerLength;
        }
        int covered = headerLength + payloadLength;
        if (attached) {
            // The trailer: Triggering PSN, then an ACK header [WIRE-071].
            out.putInt(covered, nearPsn(d, h.responsePsn), java.nio.ByteOrder.BIG_ENDIAN);
            ackFields(d, h, out, covered + WireConstants.TRIGGER_PSN_LENGTH);
            covered += WireConstants.ATTACHED_ACK_LENGTH;
        }
        // Rarely break the framing on purpose: the drop must be counted and change nothing.
        switch (d.consumeInt(0, 63)) {
            case 0 -> {
                out.putInt(covered, d.consumeInt());
                return covered + WireConstants.INTEGRITY_CHECK_LENGTH;
            }
            case 1 -> {
                out.putByte(BaseHeader.HEADER_LENGTH_OFFSET, (byte) d.consumeInt(0, 0xFF));
                return crc.seal(out, 0, covered);
            }
            case 2 -> {
                return Math.max(0, crc.seal(out, 0, covered) - d.consumeInt(1, 8));
            }
            default -> {
                return crc.seal(out, 0, covered);
            }
        }
    }

    /**
     * Changes one field of an existing sealed packet and reseals it: mutations of real traffic
     * keep every other field consistent, which reaches states field-by-field building rarely does.
     *
     * @param d the fuzzer's input
     * @param packet a valid, non-trimmed packet at offset 0
     * @param length its datagram length
     * @return the (unchanged) datagram length
     */
    public int mutate(final FuzzedDataProvider d, final MutableDirectBuffer packet, final int length) {
        final Opcode opcode = Opcode.of(BaseHeader.opcode(packet, 0));
        if (opcode == null || length < opcode.headerLength() + WireConstants.INTEGRITY_CHECK_LENGTH) {
            return length;
        }
        final int covered = length - WireConstants.INTEGRITY_CHECK_LENGTH;
        final int edits = d.consumeInt(1, 3);
        for (int i = 0; i < edits; i++) {
            switch (d.consumeInt(0, 5)) {
                case 0 -> packet.putInt(BaseHeader.TIMESTAMP_OFFSET, d.consumeInt(), java.nio.ByteOrder.BIG_ENDIAN);
                case 1 -> packet.putInt(BaseHeader.PSN_OFFSET, BaseHeader.psn(packet, 0) + d.consumeInt(-8, 8),
                    java.nio.ByteOrder.BIG_ENDIAN);
                case 2 -> packet.putShort(BaseHeader.FLAGS_OFFSET,
                    (short) (BaseHeader.flags(packet, 0) ^ ((d.consumeByte() & 0xF0) << 8)), java.nio.ByteOrder.BIG_ENDIAN);
                case 3 -> { // one byte of the headers (not version, opcode, length fields)
                    final int at = d.consumeInt(BaseHeader.PSN_OFFSET, opcode.headerLength() - 1);
                    if (at != BaseHeader.PAYLOAD_LENGTH_OFFSET && at != BaseHeader.PAYLOAD_LENGTH_OFFSET + 1
                        && at != BaseHeader.HEADER_LENGTH_OFFSET) {
                        packet.putByte(at, d.consumeByte());
                    }
                }
                case 4 -> { // a small change to one 32-bit word of the extension headers
                    if (opcode.headerLength() > BaseHeader.LENGTH) {
                        final int at = BaseHeader.LENGTH + 4 * d.consumeInt(0, (opcode.headerLength() - BaseHeader.LENGTH) / 4 - 1);
                        packet.putInt(at, packet.getInt(at, java.nio.ByteOrder.BIG_ENDIAN) + d.consumeInt(-16, 16),
                            java.nio.ByteOrder.BIG_ENDIAN);
                    }
                }
                default -> { // payload byte
                    if (covered > opcode.headerLength()) {
                        final int at = d.consumeInt(opcode.headerLength(), covered - 1);
                        packet.putByte(at, d.consumeByte());
                    }
                }
            }
        }
        crc.seal(packet, 0, covered);
        return length;
    }

    /** An ACK header at {@code at} with fields near what the receiver would accept. */
    private void ackFields(final FuzzedDataProvider d, final Hints h, final MutableDirectBuffer out, final int at) {
        ack.wrap(out, at).initialize().cumulativePsn(nearPsn(d, h.responsePsn))
            .sackBitmap(d.consumeBoolean() ? 0 : d.consumeLong()).echoedTimestamp(d.consumeInt())
            .ackDelay(d.consumeInt(0, 1_000_000)).ceCount(d.consumeInt(0, 3))
            .credit(d.consumeBoolean() ? WireConstants.CREDIT_UNLIMITED : d.consumeInt(0, 2048))
            .echoedPathId(d.consumeInt(0, 7)).ackFlags(d.consumeInt(0, 0xFF));
        if (h.senderCount) {
            ack.senderCount(d.consumeInt(0, 0xFF));
        }
    }

    private static int pickPayloadLength(final FuzzedDataProvider d, final int mtu, final int maxPayload) {
        return switch (d.consumeInt(0, 3)) {
            case 0 -> 0;
            case 1 -> Math.min(maxPayload, 8 * d.consumeInt(1, 8));
            case 2 -> Math.min(maxPayload, mtu); // a full packet
            default -> d.consumeInt(0, Math.min(maxPayload, mtu + 64));
        };
    }

    private static int nearPsn(final FuzzedDataProvider d, final int base) {
        return switch (d.consumeInt(0, 7)) {
            case 0 -> d.consumeInt();
            case 1 -> base + d.consumeInt(-2000, 2000);
            case 2 -> base + (1 << 30) + d.consumeInt(-2, 2); // the edge of [REL-002]'s range
            default -> base + d.consumeInt(-8, 8);
        };
    }

    private static int near(final FuzzedDataProvider d, final int base) {
        return d.consumeInt(0, 7) != 0 ? base + d.consumeInt(-3, 3) : d.consumeInt();
    }

    private static int pickRegion(final FuzzedDataProvider d, final Hints h) {
        return h.rkeys.length == 0 ? -1 : d.consumeInt(0, h.rkeys.length);
    }

    private static int pickRkey(final FuzzedDataProvider d, final Hints h, final int region) {
        return region >= 0 && region < h.rkeys.length && d.consumeInt(0, 7) != 0 ? h.rkeys[region] : d.consumeInt();
    }

    private static long pickAddress(final FuzzedDataProvider d, final Hints h, final int region, final boolean aligned) {
        if (region < 0 || region >= h.addresses.length) {
            return d.consumeLong();
        }
        final long start = h.addresses[region];
        final int length = h.lengths[region];
        return switch (d.consumeInt(0, 7)) {
            case 0 -> start + d.consumeInt(-64, -1); // just before the region: a guard byte
            case 1 -> start + length - d.consumeInt(0, 64); // straddling the end
            case 2 -> d.consumeLong();
            default -> {
                final long offset = d.consumeInt(0, length - 1);
                yield start + (aligned && d.consumeInt(0, 7) != 0 ? offset & ~7L : offset);
            }
        };
    }

    /** @return whether the packet at offset 0 is a connection-manager packet with at least a base header */
    public static boolean isConnectionManagement(final DirectBuffer packet, final int length) {
        if (length < BaseHeader.LENGTH) {
            return false;
        }
        final Opcode opcode = Opcode.of(BaseHeader.opcode(packet, 0));
        return opcode != null && opcode.isConnectionManagement();
    }
}
