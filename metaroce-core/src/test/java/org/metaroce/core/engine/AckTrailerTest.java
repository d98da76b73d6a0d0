// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteOrder;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.metaroce.core.AllocationMeter;
import org.metaroce.core.reliability.ReceiveWindow;
import org.metaroce.core.verbs.WrOpcode;
import org.metaroce.core.wire.AckHeader;
import org.metaroce.core.wire.BaseHeader;
import org.metaroce.core.wire.ConnectHeader;
import org.metaroce.core.wire.Flags;
import org.metaroce.core.wire.IntegrityCheck;
import org.metaroce.core.wire.Opcode;
import org.metaroce.core.wire.PacketValidator;
import org.metaroce.core.wire.WireConstants;

/**
 * The ACK that rides on a request packet, on its own with the {@link RequestEncoder}: the trailer's
 * place and contents [WIRE-071], the flag, the Integrity Check over it, the size rule [WIRE-073],
 * and that only a due coalesced ACK on a QP with ATTACHED_ACK is attached, once [REL-071].
 */
class AckTrailerTest {
    private static final int MTU = 1024;
    private static final int AT = 40;
    private static final int EXPECTED = 500;

    private final EndpointConfig config = new EndpointConfig();
    private final AckScheduler acks = new AckScheduler(config);
    private final ReceiveWindow window = new ReceiveWindow(256, EXPECTED);
    private final EndpointCounters counters = new EndpointCounters();
    private final AckWriter ackWriter = new AckWriter(window, new ResponseCapture(), (now, size) -> 77, now -> 0,
        counters);
    private final AckTrailer trailer = new AckTrailer(acks, ackWriter);
    private final RequestEncoder encoder = new RequestEncoder(new PacketWriter(), trailer, EndpointConfig.ACK_DEFER_DELAY_NS);
    private final UnsafeBuffer buffer = new UnsafeBuffer(new byte[16_384]);
    /** The packets' sink: it refuses payloads by reference, so they are copied into {@link #buffer}. */
    private final ReferencingSink copying = new ReferencingSink(buffer, AT, false);

    private static SendWqe wqe(final WrOpcode opcode, final long length) {
        final SendWqe w = new SendWqe(1, new InlineArena(1, 8192));
        w.opcode = opcode;
        w.length = length;
        w.remoteAddr = 0x1_0000_0000L;
        w.rkey = 0x1234;
        w.psnCount = w.isAtomic() ? 1 : (int) Math.max(1, (length + MTU - 1) / MTU);
        w.isInline = true;
        w.inlineAt = w.arena.reserve((int) Math.min(length, 8192));
        return w;
    }

    /** The peer's SEND with PSN EXPECTED arrived at 1,000 ns with LAST: its ACK is due at once [REL-008]. */
    private void peerSendArrived() {
        window.markReceived(EXPECTED);
        acks.accepted(1_000, EXPECTED, Flags.LAST, 0xABCD, 3, 1_000, false, 0, false, false, false);
    }

    private int encode(final SendWqe w, final int index, final long nowNs) {
        final int maxLength = encoder.layout(w, index, 1, MTU);
        final int length = encoder.write(copying, AT, 9, false, false, false, 1, nowNs, 0x11, 0x22);
        assertThat(length).as("the room claimed is the room used").isEqualTo(maxLength);
        return length;
    }

    /**
     * A payload the driver sends by reference (TransmitSink.reference): the trailer still follows
     * the payload's place in the buffer, and the Integrity Check covers header, payload (read where
     * it lies) and trailer as if they lay together [WIRE-040, WIRE-071].
     */
    @Test
    void aReferencedPayloadKeepsTheTrailerAfterItsPlaceAndTheCheckCoversAll() {
        final java.nio.ByteBuffer memory = org.agrona.BufferUtil.allocateDirectAligned(700, 64);
        for (int i = 0; i < 700; i++) {
            memory.put(i, (byte) (i * 7 + 3));
        }
        final org.metaroce.core.verbs.MemoryRegion mr = new org.metaroce.core.verbs.ProtectionDomain(1,
            new org.metaroce.core.verbs.MemoryKeySpace(new org.metaroce.core.SeededRandomSource(5)))
            .registerMemory(memory, org.metaroce.core.verbs.AccessFlags.ALL);
        final SendWqe w = new SendWqe(1, new InlineArena(1, 64));
        w.opcode = WrOpcode.SEND;
        w.length = 700;
        w.psnCount = 1;
        w.sgeAddr[0] = mr.address();
        w.sgeLength[0] = 700;
        w.sgeRegion[0] = mr;
        w.numSge = 1;
        peerSendArrived();
        trailer.arm(5_000, ConnectHeader.CAP_ATTACHED_ACK);
        final UnsafeBuffer direct = new UnsafeBuffer(org.agrona.BufferUtil.allocateDirectAligned(4096, 64));
        final ReferencingSink sink = new ReferencingSink(direct, AT, true);
        final int maxLength = encoder.layout(w, 0, 1, MTU);
        final int length = encoder.write(sink, AT, 9, false, false, false, 1, 5_000, 0x11, 0x22);
        assertThat(length).isEqualTo(maxLength)
            .isEqualTo(Opcode.SEND.headerLength() + 700 + WireConstants.ATTACHED_ACK_LENGTH + 4);
        assertThat(sink.references).containsExactly(new long[] {AT + Opcode.SEND.headerLength(), mr.address(), 700});
        // The packet as the driver sends it: the buffer's bytes with the region's in the payload's place.
        final UnsafeBuffer wire = new UnsafeBuffer(sink.sent(length));
        assertThat(BaseHeader.flags(wire, 0) & Flags.ATTACHED_ACK).isEqualTo(Flags.ATTACHED_ACK);
        assertThat(wire.getInt(Opcode.SEND.headerLength() + 700, ByteOrder.BIG_ENDIAN)).as("Triggering PSN")
            .isEqualTo(EXPECTED);
        assertThat(AckHeader.cumulativePsn(wire, Opcode.SEND.headerLength() + 704)).isEqualTo(EXPECTED + 1);
        assertThat(PacketValidator.firstViolation(new IntegrityCheck(), wire, 0, length)).isNull();
    }

    @Test
    void aDueAckRidesOnTheRequestBetweenPayloadAndIntegrityCheckWithTheResponderState() {
        peerSendArrived();
        trailer.arm(5_000, ConnectHeader.CAP_ATTACHED_ACK);

        final int length = encode(wqe(WrOpcode.SEND, 64), 0, 5_000);

        assertThat(length).as("HL*4 + PL + 36 + 4 [WIRE-005]")
            .isEqualTo(Opcode.SEND.headerLength() + 64 + WireConstants.ATTACHED_ACK_LENGTH + 4);
        final int flags = BaseHeader.flags(buffer, AT);
        assertThat(flags & Flags.ATTACHED_ACK).isEqualTo(Flags.ATTACHED_ACK);
        assertThat(BaseHeader.payloadLength(buffer, AT)).as("Payload Length leaves the trailer out").isEqualTo(64);
        assertThat(BaseHeader.psn(buffer, AT)).as("the request's own PSN").isEqualTo(9);
        final int trailerAt = AT + Opcode.SEND.headerLength() + 64;
        assertThat(buffer.getInt(trailerAt, ByteOrder.BIG_ENDIAN)).as("Triggering PSN").isEqualTo(EXPECTED);
        final int ack = trailerAt + 4;
        assertThat(AckHeader.cumulativePsn(buffer, ack)).isEqualTo(EXPECTED + 1);
        assertThat(AckHeader.echoedTimestamp(buffer, ack)).isEqualTo(0xABCD);
        assertThat(AckHeader.echoedPathId(buffer, ack)).isEqualTo(3);
        assertThat(AckHeader.ackDelay(buffer, ack)).as("to the carrying packet's transmission [REL-012]")
            .isEqualTo(4_000);
        assertThat(AckHeader.credit(buffer, ack)).isEqualTo(77);
        assertThat(PacketValidator.firstViolation(new IntegrityCheck(), buffer, AT, length))
            .as("the Integrity Check covers the trailer [WIRE-040]").isNull();
        assertThat(acks.ackDue(5_000)).as("the ACK is sent: no bare one follows").isFalse();
        assertThat(counters.get(EndpointCounter.ACKS_ATTACHED_OUT)).isEqualTo(1);
        assertThat(counters.get(EndpointCounter.ACKS_OUT)).isZero();

        final int next = encode(wqe(WrOpcode.SEND, 64), 0, 5_001);
        assertThat(BaseHeader.flags(buffer, AT) & Flags.ATTACHED_ACK).as("one ACK, one packet").isZero();
        assertThat(next).isEqualTo(Opcode.SEND.headerLength() + 64 + 4);
    }

    @Test
    void readRequestsAndAtomicsCarryItToo() {
        for (final WrOpcode op : new WrOpcode[] {WrOpcode.RDMA_READ, WrOpcode.ATOMIC_FETCH_ADD,
            WrOpcode.ATOMIC_CMP_SWAP, WrOpcode.RDMA_WRITE_WITH_IMM, WrOpcode.SEND_WITH_IMM}) {
            acks.ackSent();
            window.reset(EXPECTED);
            peerSendArrived();
            trailer.arm(2_000, ConnectHeader.CAP_ATTACHED_ACK);
            final int length = encode(wqe(op, op == WrOpcode.RDMA_READ ? 4096 : 8), 0, 2_000);
            assertThat(BaseHeader.flags(buffer, AT) & Flags.ATTACHED_ACK).as(op.name()).isEqualTo(Flags.ATTACHED_ACK);
            assertThat(PacketValidator.firstViolation(new IntegrityCheck(), buffer, AT, length)).as(op.name()).isNull();
            final Opcode opcode = Opcode.of(BaseHeader.opcode(buffer, AT));
            final int trailerAt = AT + opcode.headerLength() + BaseHeader.payloadLength(buffer, AT);
            assertThat(buffer.getInt(trailerAt, ByteOrder.BIG_ENDIAN)).as(op.name()).isEqualTo(EXPECTED);
        }
        assertThat(counters.get(EndpointCounter.ACKS_ATTACHED_OUT)).isEqualTo(5);
    }

    @Test
    void aPacketThatWouldOutgrowAFullWriteWithImmCarriesNone() {
        // SEND: 40 + PL + 36 <= 60 + 1024 holds up to PL = 1008 [WIRE-073].
        peerSendArrived();
        trailer.arm(2_000, ConnectHeader.CAP_ATTACHED_ACK);
        encode(wqe(WrOpcode.SEND, 1009), 0, 2_000);
        assertThat(BaseHeader.flags(buffer, AT) & Flags.ATTACHED_ACK).as("1009 bytes of SEND payload").isZero();
        encode(wqe(WrOpcode.RDMA_WRITE, 4096), 1, 2_000);
        assertThat(BaseHeader.flags(buffer, AT) & Flags.ATTACHED_ACK).as("a full WRITE packet").isZero();
        assertThat(acks.ackDue(2_000)).as("still due, for a later packet or a bare ACK").isTrue();

        final int length = encode(wqe(WrOpcode.SEND, 1008), 0, 2_000);
        assertThat(BaseHeader.flags(buffer, AT) & Flags.ATTACHED_ACK).as("1008 bytes of SEND payload")
            .isEqualTo(Flags.ATTACHED_ACK);
        assertThat(length - 4).isEqualTo(WireConstants.LARGEST_DATA_HEADER_LENGTH + MTU);
    }

    @Test
    void onlyADueAckOnAQpWithTheCapabilityIsArmed() {
        peerSendArrived();
        trailer.arm(2_000, ConnectHeader.CAP_SENDER_COUNT | ConnectHeader.CAP_ECN);
        encode(wqe(WrOpcode.SEND, 8), 0, 2_000);
        assertThat(BaseHeader.flags(buffer, AT) & Flags.ATTACHED_ACK).as("not negotiated").isZero();

        trailer.arm(2_000, ConnectHeader.CAP_ATTACHED_ACK);
        trailer.disarm();
        encode(wqe(WrOpcode.SEND, 8), 0, 2_000);
        assertThat(BaseHeader.flags(buffer, AT) & Flags.ATTACHED_ACK).as("after the poll's requests").isZero();

        acks.ackSent();
        window.markReceived(EXPECTED + 1);
        // A middle packet without ACK_REQ: its ACK waits for coalescing [REL-009], and is not due yet.
        acks.accepted(2_000, EXPECTED + 1, 0, 1, 0, 2_000, false, 0, false, false, false);
        trailer.arm(2_000, ConnectHeader.CAP_ATTACHED_ACK);
        encode(wqe(WrOpcode.SEND, 8), 0, 2_000);
        assertThat(BaseHeader.flags(buffer, AT) & Flags.ATTACHED_ACK).as("not due").isZero();
        assertThat(counters.get(EndpointCounter.ACKS_ATTACHED_OUT)).isZero();
    }

    @Test
    void attachingAnAckAllocatesNothing() {
        // The data path allocates nothing: arming, laying out and writing a packet with its trailer.
        final SendWqe w = wqe(WrOpcode.SEND, 64);
        final AllocationMeter.Measurement m = AllocationMeter.fewestBytes(20_000, i -> {
            acks.accepted(1_000, EXPECTED, Flags.LAST, 0xABCD, 3, 1_000, false, 0, false, false, false);
            trailer.arm(2_000, ConnectHeader.CAP_ATTACHED_ACK);
            encoder.layout(w, 0, 1, MTU);
            encoder.write(copying, AT, 9, false, false, false, 1, 2_000, 0x11, 0x22);
        });
        System.out.println("attaching an ACK to a SEND: " + m);
        assertThat(BaseHeader.flags(buffer, AT) & Flags.ATTACHED_ACK).isEqualTo(Flags.ATTACHED_ACK);
        assertThat(m.fewest()).isZero();
    }

    @Test
    void aRetransmissionCarriesIt() {
        peerSendArrived();
        trailer.arm(3_000, ConnectHeader.CAP_ATTACHED_ACK);
        final SendWqe w = wqe(WrOpcode.SEND, 8);
        final int maxLength = encoder.layout(w, 0, 1, MTU);
        final int length = encoder.write(copying, AT, 9, true, false, false, 1, 3_000, 0x11, 0x22);
        assertThat(length).isEqualTo(maxLength);
        assertThat(BaseHeader.flags(buffer, AT) & (Flags.ATTACHED_ACK | Flags.RETRANSMIT))
            .isEqualTo(Flags.ATTACHED_ACK | Flags.RETRANSMIT);
    }
}
