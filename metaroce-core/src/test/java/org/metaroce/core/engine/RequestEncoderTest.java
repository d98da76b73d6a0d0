// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.engine;

import static org.assertj.core.api.Assertions.assertThat;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.metaroce.core.reliability.ReceiveWindow;
import org.metaroce.core.verbs.SendFlags;
import org.metaroce.core.verbs.WrOpcode;
import org.metaroce.core.wire.AtomicHeader;
import org.metaroce.core.wire.BaseHeader;
import org.metaroce.core.wire.Flags;
import org.metaroce.core.wire.ImmediateHeader;
import org.metaroce.core.wire.MessageHeader;
import org.metaroce.core.wire.Opcode;
import org.metaroce.core.wire.RdmaHeader;
import org.metaroce.core.wire.WireConstants;

/**
 * Request packets on their own, written into a plain buffer and read back with the wire codecs:
 * segmentation [OPS-002], READ_REQUEST ranges [OPS-020], atomics, LAST [WIRE-015], RETRANSMIT
 * [WIRE-016] and a retransmission equal to its original but for flags, time and path [REL-031].
 */
class RequestEncoderTest {
    private static final int MTU = 1024;
    private static final int AT = 40;
    private static final int DEST_QPN = 0x11;
    private static final int SOURCE_QPN = 0x22;

    /** No ACK is ever armed here: the packets are plain requests (AckTrailerTest has the others). */
    private final RequestEncoder encoder = new RequestEncoder(new PacketWriter(), new AckTrailer(
        new AckScheduler(new EndpointConfig()), new AckWriter(new ReceiveWindow(64, 0), new ResponseCapture(),
        (now, size) -> 64, now -> 0, new EndpointCounters())), EndpointConfig.ACK_DEFER_DELAY_NS);
    private final UnsafeBuffer buffer = new UnsafeBuffer(new byte[16_384]);

    private static SendWqe wqe(final WrOpcode opcode, final long length, final int sendFlags) {
        final SendWqe w = new SendWqe(1, new InlineArena(1, 8192));
        w.opcode = opcode;
        w.length = length;
        w.sendFlags = sendFlags;
        w.remoteAddr = 0x1_0000_0000L;
        w.rkey = 0x1234;
        w.immData = 0x5eed;
        w.msn = 7;
        w.rsn = 3;
        w.psnCount = w.isAtomic() ? 1 : (int) Math.max(1, (length + MTU - 1) / MTU);
        w.isInline = true;
        final int stored = (int) Math.min(length, 8192);
        final UnsafeBuffer payload = new UnsafeBuffer(new byte[stored]);
        for (int i = 0; i < stored; i++) {
            payload.putByte(i, (byte) (i * 31 + 1));
        }
        w.inlineAt = w.arena.reserve(stored);
        w.arena.put(w.inlineAt, 0, payload, 0, stored);
        return w;
    }

    /** Lays out and writes packet {@code index} at {@code offset}, checking the claimed room; @return its length */
    private int encode(final SendWqe w, final int index, final int readSegments, final int offset, final int psn,
                       final boolean retransmit, final int pathId, final long nowNs) {
        final int maxLength = encoder.layout(w, index, readSegments, MTU);
        final int length = encoder.write(new ReferencingSink(buffer, offset, false), offset, psn, retransmit, false, false, pathId, nowNs, DEST_QPN, SOURCE_QPN);
        assertThat(length).isEqualTo(maxLength);
        return length;
    }

    private int msg() {
        return AT + Opcode.of(BaseHeader.opcode(buffer, AT)).msgOffset();
    }

    @Test
    void writePacketsCarryTheirSliceOfTheMessageAndLastOnlyTheFinalOne() {
        final SendWqe w = wqe(WrOpcode.RDMA_WRITE, 2560, 0);
        final int first = encode(w, 0, 1, AT, 100, false, 2, 5_000);
        assertThat(first).isEqualTo(Opcode.WRITE.headerLength() + MTU + WireConstants.INTEGRITY_CHECK_LENGTH);
        assertThat(BaseHeader.opcode(buffer, AT)).isEqualTo(Opcode.WRITE.value());
        assertThat(BaseHeader.flags(buffer, AT)).isZero();
        assertThat(BaseHeader.psn(buffer, AT)).isEqualTo(100);
        assertThat(BaseHeader.payloadLength(buffer, AT)).isEqualTo(MTU);
        assertThat(BaseHeader.pathId(buffer, AT)).isEqualTo(2);
        assertThat(BaseHeader.timestamp(buffer, AT)).isEqualTo(5_000);
        assertThat(BaseHeader.destQpn(buffer, AT)).isEqualTo(DEST_QPN);
        assertThat(BaseHeader.sourceQpn(buffer, AT)).isEqualTo(SOURCE_QPN);
        assertThat(MessageHeader.msn(buffer, msg())).isEqualTo(7);
        assertThat(MessageHeader.messageOffset(buffer, msg())).isZero();
        assertThat(MessageHeader.messageLength(buffer, msg())).isEqualTo(2560);
        assertThat(MessageHeader.rsn(buffer, msg())).isEqualTo(3);
        final int reth = AT + Opcode.WRITE.rethOffset();
        assertThat(RdmaHeader.virtualAddress(buffer, reth)).isEqualTo(0x1_0000_0000L);
        assertThat(RdmaHeader.rkey(buffer, reth)).isEqualTo(0x1234);
        assertThat(RdmaHeader.dmaLength(buffer, reth)).as("the whole message [WIRE-035]").isEqualTo(2560);

        // The last packet: the rest of the message, LAST and ACK_REQ [OPS-002, WIRE-015].
        encode(w, 2, 1, AT, 102, false, 0, 6_000);
        assertThat(BaseHeader.flags(buffer, AT)).isEqualTo(Flags.LAST | Flags.ACK_REQ);
        assertThat(BaseHeader.payloadLength(buffer, AT)).isEqualTo(512);
        assertThat(MessageHeader.messageOffset(buffer, msg())).isEqualTo(2048);
        for (int i = 0; i < 512; i++) {
            assertThat(buffer.getByte(AT + Opcode.WRITE.headerLength() + i)).isEqualTo((byte) ((2048 + i) * 31 + 1));
        }
    }

    @Test
    void aRetransmissionIsTheOriginalWithRetransmitAndAckReqAnotherTimeAndPath() {
        final SendWqe w = wqe(WrOpcode.SEND_WITH_IMM, 3000, 0);
        final int other = 8192;
        final int length = encode(w, 1, 1, AT, 51, false, 0, 1_000);
        assertThat(BaseHeader.flags(buffer, AT)).isZero();
        encode(w, 1, 1, other, 51, true, 3, 9_000);
        assertThat(BaseHeader.flags(buffer, other)).isEqualTo(Flags.RETRANSMIT | Flags.ACK_REQ);
        assertThat(BaseHeader.pathId(buffer, other)).isEqualTo(3);
        assertThat(ImmediateHeader.immediateData(buffer, other + Opcode.SEND_WITH_IMM.immOffset())).isEqualTo(0x5eed);
        // Everything after the base header up to the integrity check is the same [REL-031].
        for (int i = BaseHeader.LENGTH; i < length - WireConstants.INTEGRITY_CHECK_LENGTH; i++) {
            assertThat(buffer.getByte(other + i)).as("byte %d", i).isEqualTo(buffer.getByte(AT + i));
        }
    }

    @Test
    void aReadRequestAsksForItsSegmentsAndIsLastWhenTheyReachTheEnd() {
        final SendWqe w = wqe(WrOpcode.RDMA_READ, 5 * MTU - 100, 0);
        // A first request for a chunk of two slots [OPS-020].
        assertThat(encode(w, 0, 2, AT, 10, false, 0, 0))
            .isEqualTo(Opcode.READ_REQUEST.headerLength() + WireConstants.INTEGRITY_CHECK_LENGTH);
        final int reth = AT + Opcode.READ_REQUEST.rethOffset();
        assertThat(BaseHeader.opcode(buffer, AT)).isEqualTo(Opcode.READ_REQUEST.value());
        assertThat(BaseHeader.flags(buffer, AT)).isZero();
        assertThat(BaseHeader.payloadLength(buffer, AT)).isZero();
        assertThat(MessageHeader.messageOffset(buffer, msg())).isZero();
        assertThat(MessageHeader.messageLength(buffer, msg())).isEqualTo(5 * MTU - 100);
        assertThat(RdmaHeader.virtualAddress(buffer, reth)).as("byte 0 of the read").isEqualTo(0x1_0000_0000L);
        assertThat(RdmaHeader.dmaLength(buffer, reth)).isEqualTo(2 * MTU);

        // A re-request of the run from slot 3: it reaches the end, so it is LAST [WIRE-015].
        encode(w, 3, 4, AT, 13, true, 0, 0);
        assertThat(BaseHeader.flags(buffer, AT)).isEqualTo(Flags.LAST | Flags.ACK_REQ | Flags.RETRANSMIT);
        assertThat(MessageHeader.messageOffset(buffer, msg())).isEqualTo(3 * MTU);
        assertThat(RdmaHeader.dmaLength(buffer, reth)).isEqualTo(2 * MTU - 100);

        // A zero-length READ: one request for nothing, LAST [OPS-023].
        encode(wqe(WrOpcode.RDMA_READ, 0, 0), 0, 1, AT, 20, false, 0, 0);
        assertThat(BaseHeader.flags(buffer, AT)).isEqualTo(Flags.LAST | Flags.ACK_REQ);
        assertThat(RdmaHeader.dmaLength(buffer, reth)).isZero();
    }

    @Test
    void atomicsCarryTheirOperandsAndAnEightByteMessage() {
        final SendWqe add = wqe(WrOpcode.ATOMIC_FETCH_ADD, 8, 0);
        add.compareAdd = 5;
        encode(add, 0, 1, AT, 30, false, 0, 0);
        final int atomic = AT + Opcode.FETCH_ADD.atomicOffset();
        assertThat(BaseHeader.opcode(buffer, AT)).isEqualTo(Opcode.FETCH_ADD.value());
        assertThat(BaseHeader.flags(buffer, AT)).isEqualTo(Flags.LAST | Flags.ACK_REQ);
        assertThat(MessageHeader.messageOffset(buffer, msg())).isZero();
        assertThat(MessageHeader.messageLength(buffer, msg())).isEqualTo(8);
        assertThat(AtomicHeader.virtualAddress(buffer, atomic)).isEqualTo(0x1_0000_0000L);
        assertThat(AtomicHeader.rkey(buffer, atomic)).isEqualTo(0x1234);
        assertThat(AtomicHeader.swapOrAdd(buffer, atomic)).isEqualTo(5);
        assertThat(AtomicHeader.compare(buffer, atomic)).isZero();

        final SendWqe swap = wqe(WrOpcode.ATOMIC_CMP_SWAP, 8, 0);
        swap.compareAdd = 5;
        swap.swap = 9;
        encode(swap, 0, 1, AT, 31, false, 0, 0);
        assertThat(BaseHeader.opcode(buffer, AT)).isEqualTo(Opcode.CMP_SWAP.value());
        assertThat(AtomicHeader.swapOrAdd(buffer, AT + Opcode.CMP_SWAP.atomicOffset())).isEqualTo(9);
        assertThat(AtomicHeader.compare(buffer, AT + Opcode.CMP_SWAP.atomicOffset())).isEqualTo(5);
    }

    @Test
    @DisplayName("[OPS-040] [OPS-003] SOLICITED on every packet of a solicited SEND, SEND_WITH_IMM or WRITE_WITH_IMM, and on no other packet")
    void solicitedIsOnEveryPacketOfASolicitedMessageOnly() {
        for (final WrOpcode op : new WrOpcode[] {WrOpcode.SEND, WrOpcode.SEND_WITH_IMM, WrOpcode.RDMA_WRITE_WITH_IMM}) {
            final SendWqe wqe = wqe(op, 3 * MTU, SendFlags.SOLICITED);
            for (int i = 0; i < 3; i++) {
                encode(wqe, i, 1, AT, 50 + i, false, 0, 0);
                assertThat(BaseHeader.flags(buffer, AT) & Flags.SOLICITED).as(op + " packet " + i).isNotZero();
            }
        }
        // A WRITE completes no receive: the flag has no meaning there and is not sent [OPS-040].
        final SendWqe write = wqe(WrOpcode.RDMA_WRITE, 3 * MTU, SendFlags.SOLICITED);
        for (int i = 0; i < 3; i++) {
            encode(write, i, 1, AT, 60 + i, false, 0, 0);
            assertThat(BaseHeader.flags(buffer, AT) & Flags.SOLICITED).as("WRITE packet " + i).isZero();
        }
    }

    @Test
    void aSolicitedSendOfOnePacketCarriesSolicited() {
        encode(wqe(WrOpcode.SEND, 100, SendFlags.SOLICITED), 0, 1, AT, 40, false, 0, 0);
        assertThat(BaseHeader.opcode(buffer, AT)).isEqualTo(Opcode.SEND.value());
        assertThat(BaseHeader.flags(buffer, AT)).isEqualTo(Flags.LAST | Flags.ACK_REQ | Flags.SOLICITED);
        encode(wqe(WrOpcode.SEND, 100, 0), 0, 1, AT, 41, false, 0, 0);
        assertThat(BaseHeader.flags(buffer, AT)).isEqualTo(Flags.LAST | Flags.ACK_REQ);
    }
}
