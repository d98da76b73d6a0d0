// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.conformance.tester;

import java.nio.ByteOrder;
import java.util.Arrays;

import org.agrona.concurrent.UnsafeBuffer;
import org.metaroce.core.wire.AckHeader;
import org.metaroce.core.wire.AtomicAckHeader;
import org.metaroce.core.wire.AtomicHeader;
import org.metaroce.core.wire.BaseHeader;
import org.metaroce.core.wire.ConnectHeader;
import org.metaroce.core.wire.ImmediateHeader;
import org.metaroce.core.wire.IntegrityCheck;
import org.metaroce.core.wire.MessageHeader;
import org.metaroce.core.wire.NackHeader;
import org.metaroce.core.wire.Opcode;
import org.metaroce.core.wire.RdmaHeader;
import org.metaroce.core.wire.WireConstants;

/**
 * Builds one packet with the core wire flyweights, correct by default (version 1, the opcode's
 * Header Length, Payload Length of the payload, a valid Integrity Check) and wrong on request:
 * each override breaks exactly one thing, so a case can send exactly the malformed packet it
 * wants. Fields of headers the opcode lacks are ignored.
 */
public final class PacketBuilder {
    private final Opcode opcode;
    private int rawOpcode = -1;
    private int version = WireConstants.VERSION;
    private int reservedNibble;
    private int reservedByte4;
    private int reservedByte20;
    private int flags;
    private int destQpn;
    private int srcQpn;
    private int psn;
    private int pathId;
    private int timestamp;
    private int headerLengthOverride = -1;
    private int payloadLengthOverride = -1;
    private byte[] payload = new byte[0];
    private int msn;
    private long messageOffset;
    private long messageLength = -1;
    private int rsn;
    private long va;
    private int rkey;
    private long dmaLength = -1;
    private int imm;
    private long swapAdd;
    private long compare;
    private long original;
    private int cumPsn;
    private long sack;
    private int echoedTs;
    private long ackDelay;
    private int ceCount;
    private int credit = WireConstants.CREDIT_UNLIMITED;
    private int echoedPath;
    private int ackFlags;
    private int nackReason;
    private int rnrTimer;
    private int nackPsn;
    private long serviceId;
    private long transactionId;
    private int initialPsn;
    private int pathMtu;
    private int capabilities;
    private int initiatorDepth;
    private int responderResources;
    private int pathCount;
    private int cmReason;
    private byte[] cookie = new byte[WireConstants.COOKIE_LENGTH];
    private boolean corruptIntegrity;
    private boolean trimmed;
    private int extraBytes;
    private int truncateTo = -1;
    /** The attached ACK's trailer (Triggering PSN and ACK header), or null [WIRE-071]. */
    private byte[] attached;

    private PacketBuilder(final Opcode opcode) {
        this.opcode = opcode;
    }

    /** @return a builder for {@code opcode} */
    public static PacketBuilder of(final Opcode opcode) {
        return new PacketBuilder(opcode);
    }

    /** Writes {@code value} in the opcode byte while keeping the layout of {@link #of}'s opcode. */
    public PacketBuilder rawOpcode(final int value) {
        rawOpcode = value;
        return this;
    }

    public PacketBuilder version(final int v) {
        version = v;
        return this;
    }

    /** Sets reserved bits of the base header (byte 0 low nibble, bytes 4 and 20) [WIRE-002]. */
    public PacketBuilder reserved(final int nibble, final int byte4, final int byte20) {
        reservedNibble = nibble;
        reservedByte4 = byte4;
        reservedByte20 = byte20;
        return this;
    }

    public PacketBuilder flags(final int f) {
        flags = f;
        return this;
    }

    public PacketBuilder destQpn(final int q) {
        destQpn = q;
        return this;
    }

    public PacketBuilder srcQpn(final int q) {
        srcQpn = q;
        return this;
    }

    public PacketBuilder psn(final int p) {
        psn = p;
        return this;
    }

    public PacketBuilder pathId(final int p) {
        pathId = p;
        return this;
    }

    public PacketBuilder timestamp(final int t) {
        timestamp = t;
        return this;
    }

    public PacketBuilder headerLengthWords(final int words) {
        headerLengthOverride = words;
        return this;
    }

    public PacketBuilder payloadLengthField(final int length) {
        payloadLengthOverride = length;
        return this;
    }

    public PacketBuilder payload(final byte[] p) {
        payload = p.clone();
        return this;
    }

    public PacketBuilder msn(final int m) {
        msn = m;
        return this;
    }

    public PacketBuilder messageOffset(final long o) {
        messageOffset = o;
        return this;
    }

    /** Message Length; by default the payload length. */
    public PacketBuilder messageLength(final long l) {
        messageLength = l;
        return this;
    }

    public PacketBuilder rsn(final int r) {
        rsn = r;
        return this;
    }

    public PacketBuilder va(final long a) {
        va = a;
        return this;
    }

    public PacketBuilder rkey(final int k) {
        rkey = k;
        return this;
    }

    /** DMA Length; by default the Message Length. */
    public PacketBuilder dmaLength(final long l) {
        dmaLength = l;
        return this;
    }

    public PacketBuilder imm(final int i) {
        imm = i;
        return this;
    }

    public PacketBuilder swapAdd(final long v) {
        swapAdd = v;
        return this;
    }

    public PacketBuilder compare(final long v) {
        compare = v;
        return this;
    }

    public PacketBuilder original(final long v) {
        original = v;
        return this;
    }

    public PacketBuilder cumulativePsn(final int p) {
        cumPsn = p;
        return this;
    }

    public PacketBuilder sack(final long bitmap) {
        sack = bitmap;
        return this;
    }

    public PacketBuilder echoedTimestamp(final int t) {
        echoedTs = t;
        return this;
    }

    public PacketBuilder ackDelay(final long ns) {
        ackDelay = ns;
        return this;
    }

    public PacketBuilder ceCount(final int c) {
        ceCount = c;
        return this;
    }

    public PacketBuilder credit(final int c) {
        credit = c;
        return this;
    }

    public PacketBuilder echoedPathId(final int p) {
        echoedPath = p;
        return this;
    }

    public PacketBuilder ackFlags(final int f) {
        ackFlags = f;
        return this;
    }

    public PacketBuilder nack(final int reason, final int nackPsnValue) {
        nackReason = reason;
        nackPsn = nackPsnValue;
        return this;
    }

    public PacketBuilder rnrTimer(final int units) {
        rnrTimer = units;
        return this;
    }

    public PacketBuilder serviceId(final long s) {
        serviceId = s;
        return this;
    }

    public PacketBuilder transactionId(final long t) {
        transactionId = t;
        return this;
    }

    public PacketBuilder initialPsn(final int p) {
        initialPsn = p;
        return this;
    }

    /** Sets the negotiation fields of a CM header. */
    public PacketBuilder proposal(final int mtu, final int caps, final int depth, final int resources, final int paths) {
        pathMtu = mtu;
        capabilities = caps;
        initiatorDepth = depth;
        responderResources = resources;
        pathCount = paths;
        return this;
    }

    public PacketBuilder cmReason(final int r) {
        cmReason = r;
        return this;
    }

    public PacketBuilder cookie(final byte[] c) {
        cookie = Arrays.copyOf(c, WireConstants.COOKIE_LENGTH);
        return this;
    }

    /** Flips one bit of the Integrity Check [WIRE-041]. */
    public PacketBuilder corruptIntegrity() {
        corruptIntegrity = true;
        return this;
    }

    /** Builds the packet as a switch trims it: TRIMMED set, no payload, no Integrity Check [WIRE-042]. */
    public PacketBuilder trimmed() {
        trimmed = true;
        return this;
    }

    /**
     * Attaches an ACK (v1.0.15): sets ATTACHED_ACK and puts {@code ackPacket}'s Base Header PSN and
     * ACK header between the payload and the Integrity Check [WIRE-071].
     *
     * @param ackPacket a built ACK packet, such as {@link TesterQp#ack}'s
     */
    public PacketBuilder attachedAck(final byte[] ackPacket) {
        final UnsafeBuffer ack = new UnsafeBuffer(ackPacket);
        attached = new byte[WireConstants.ATTACHED_ACK_LENGTH];
        final UnsafeBuffer t = new UnsafeBuffer(attached);
        t.putInt(0, BaseHeader.psn(ack, 0), ByteOrder.BIG_ENDIAN);
        t.putBytes(WireConstants.TRIGGER_PSN_LENGTH, ack, Opcode.ACK.ackOffset(), WireConstants.ACK_HEADER_LENGTH);
        return this;
    }

    /** Appends garbage after the Integrity Check (a length mismatch) [WIRE-005]. */
    public PacketBuilder extraBytes(final int n) {
        extraBytes = n;
        return this;
    }

    /** Cuts the finished datagram to {@code n} bytes. */
    public PacketBuilder truncateTo(final int n) {
        truncateTo = n;
        return this;
    }

    /** @return the datagram */
    public byte[] build() {
        final int header = opcode.headerLength();
        final int payloadLen = trimmed ? 0 : payload.length;
        final int trailer = attached != null && !trimmed ? attached.length : 0;
        final int total = header + payloadLen + trailer + (trimmed ? 0 : WireConstants.INTEGRITY_CHECK_LENGTH);
        final byte[] out = new byte[total + extraBytes];
        final UnsafeBuffer b = new UnsafeBuffer(out);
        final BaseHeader bh = new BaseHeader().wrap(b, 0);
        bh.initialize(opcode);
        bh.version(version);
        out[0] |= (byte) (reservedNibble & 0x0F);
        bh.flags(flags | (trimmed ? org.metaroce.core.wire.Flags.TRIMMED : 0)
                | (attached != null ? org.metaroce.core.wire.Flags.ATTACHED_ACK : 0)).destQpn(destQpn).psn(psn)
            .payloadLength(payloadLengthOverride >= 0 ? payloadLengthOverride : payloadLen).pathId(pathId)
            .timestamp(timestamp).sourceQpn(srcQpn);
        out[4] = (byte) reservedByte4;
        out[20] = (byte) reservedByte20;
        if (headerLengthOverride >= 0) {
            bh.headerLengthWords(headerLengthOverride);
        }
        if (rawOpcode >= 0) {
            bh.opcode(rawOpcode);
        }
        final long mlen = messageLength >= 0 ? messageLength : payload.length;
        if (opcode.msgOffset() != Opcode.ABSENT) {
            new MessageHeader().wrap(b, opcode.msgOffset()).msn(msn).messageOffset(messageOffset)
                .messageLength(mlen).rsn(rsn);
        }
        if (opcode.rethOffset() != Opcode.ABSENT) {
            new RdmaHeader().wrap(b, opcode.rethOffset()).virtualAddress(va).rkey(rkey)
                .dmaLength(dmaLength >= 0 ? dmaLength : mlen);
        }
        if (opcode.immOffset() != Opcode.ABSENT) {
            new ImmediateHeader().wrap(b, opcode.immOffset()).immediateData(imm);
        }
        if (opcode.atomicOffset() != Opcode.ABSENT) {
            new AtomicHeader().wrap(b, opcode.atomicOffset()).virtualAddress(va).rkey(rkey).swapOrAdd(swapAdd)
                .compare(compare);
        }
        if (opcode.aackOffset() != Opcode.ABSENT) {
            new AtomicAckHeader().wrap(b, opcode.aackOffset()).originalData(original);
        }
        if (opcode.ackOffset() != Opcode.ABSENT) {
            new AckHeader().wrap(b, opcode.ackOffset()).initialize().cumulativePsn(cumPsn).sackBitmap(sack)
                .echoedTimestamp(echoedTs).ackDelay(ackDelay).ceCount(ceCount).credit(credit)
                .echoedPathId(echoedPath).ackFlags(ackFlags);
        }
        if (opcode.nackOffset() != Opcode.ABSENT) {
            new NackHeader().wrap(b, opcode.nackOffset()).initialize().reason(nackReason).rnrTimer(rnrTimer)
                .nackPsn(nackPsn);
        }
        if (opcode.cmOffset() != Opcode.ABSENT) {
            new ConnectHeader().wrap(b, opcode.cmOffset()).initialize().serviceId(serviceId)
                .transactionId(transactionId).initialPsn(initialPsn).pathMtu(pathMtu).capabilities(capabilities)
                .initiatorDepth(initiatorDepth).responderResources(responderResources).pathCount(pathCount)
                .reason(cmReason).putCookie(new UnsafeBuffer(cookie), 0);
        }
        if (!trimmed) {
            b.putBytes(header, payload);
            if (trailer > 0) {
                b.putBytes(header + payloadLen, attached);
            }
            final int crc = IntegrityCheck.software(b, 0, header + payloadLen + trailer);
            b.putInt(header + payloadLen + trailer, corruptIntegrity ? crc ^ 0x0100 : crc, ByteOrder.BIG_ENDIAN);
        }
        return truncateTo >= 0 ? Arrays.copyOf(out, truncateTo) : out;
    }

    /**
     * Recomputes the Integrity Check of a finished datagram in place (for mutators that edit
     * fields of packets in flight).
     *
     * @param datagram a whole packet with a trailer
     */
    public static void reseal(final byte[] datagram) {
        if (datagram.length < WireConstants.BASE_HEADER_LENGTH + WireConstants.INTEGRITY_CHECK_LENGTH) {
            return;
        }
        final UnsafeBuffer b = new UnsafeBuffer(datagram);
        b.putInt(datagram.length - 4, IntegrityCheck.software(b, 0, datagram.length - 4), ByteOrder.BIG_ENDIAN);
    }
}
