// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;

import org.agrona.BufferUtil;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.metaroce.core.SeededRandomSource;
import org.metaroce.core.reliability.ReceiveWindow;
import org.metaroce.core.verbs.AccessFlags;
import org.metaroce.core.verbs.MemoryKeySpace;
import org.metaroce.core.verbs.MemoryRegion;
import org.metaroce.core.verbs.ProtectionDomain;
import org.metaroce.core.verbs.WrOpcode;
import org.metaroce.core.wire.BaseHeader;
import org.metaroce.core.wire.IntegrityCheck;
import org.metaroce.core.wire.Opcode;
import org.metaroce.core.wire.WireConstants;

/**
 * A payload handed to the driver by reference ({@link TransmitSink#reference}): the bytes the
 * driver sends (the buffer's, with the referenced memory in the payload's place) are exactly the
 * packet the engine writes when it copies, integrity check included [WIRE-040], and the payload's
 * room in the buffer is never written. A payload the sink refuses, one that spans two
 * scatter/gather entries, or one in memory the JDK's CRC cannot read in place is copied.
 */
class PayloadReferenceTest {
    private static final int MTU = 1024;
    private static final int AT = 40;
    /** What the payload's room holds before the packet is written; still there after a reference. */
    private static final byte UNTOUCHED = (byte) 0xEE;

    private final RequestEncoder encoder = new RequestEncoder(new PacketWriter(), new AckTrailer(
        new AckScheduler(new EndpointConfig()), new AckWriter(new ReceiveWindow(64, 0), new ResponseCapture(),
        (now, size) -> 64, now -> 0, new EndpointCounters())), EndpointConfig.ACK_DEFER_DELAY_NS);
    private final ProtectionDomain pd = new ProtectionDomain(1, new MemoryKeySpace(new SeededRandomSource(11)));

    private static ByteBuffer memory(final int bytes) {
        final ByteBuffer b = BufferUtil.allocateDirectAligned(bytes, 64);
        for (int i = 0; i < bytes; i++) {
            b.put(i, (byte) (i * 13 + 5));
        }
        return b;
    }

    private static SendWqe wqe(final WrOpcode opcode, final MemoryRegion... sges) {
        final SendWqe w = new SendWqe(2, new InlineArena(1, 64));
        w.opcode = opcode;
        long length = 0;
        for (final MemoryRegion mr : sges) {
            w.sgeAddr[w.numSge] = mr.address();
            w.sgeLength[w.numSge] = mr.length();
            w.sgeRegion[w.numSge] = mr;
            w.numSge++;
            length += mr.length();
        }
        w.length = length;
        w.remoteAddr = 0x2_0000_0000L;
        w.rkey = 0x77;
        w.immData = 0xabc;
        w.msn = 3;
        w.psnCount = (int) Math.max(1, (length + MTU - 1) / MTU);
        return w;
    }

    private static UnsafeBuffer packetBuffer() {
        final UnsafeBuffer b = new UnsafeBuffer(BufferUtil.allocateDirectAligned(8192, 64));
        b.setMemory(0, 8192, UNTOUCHED);
        return b;
    }

    /** Writes packet {@code index} through {@code sink}; @return its length */
    private int write(final SendWqe w, final int index, final ReferencingSink sink) {
        final int max = encoder.layout(w, index, 1, MTU);
        final int length = encoder.write(sink, AT, 500 + index, false, false, false, 1, 9_000, 0x11, 0x22);
        assertThat(length).isEqualTo(max);
        return length;
    }

    @Test
    void aReferencedPayloadSendsTheSameBytesAsACopiedOneAndIsNeverWritten() {
        final MemoryRegion mr = pd.registerMemory(memory(2500), AccessFlags.ALL);
        for (final WrOpcode opcode : new WrOpcode[] {WrOpcode.RDMA_WRITE, WrOpcode.RDMA_WRITE_WITH_IMM,
            WrOpcode.SEND, WrOpcode.SEND_WITH_IMM}) {
            for (int index = 0; index < 3; index++) { // a full first, a full middle and a short last packet
                final ReferencingSink copying = new ReferencingSink(packetBuffer(), AT, false);
                final ReferencingSink referencing = new ReferencingSink(packetBuffer(), AT, true);
                final int length = write(wqe(opcode, mr), index, copying);
                assertThat(write(wqe(opcode, mr), index, referencing)).isEqualTo(length);

                final Opcode op = Opcode.of(BaseHeader.opcode(copying.buffer, AT));
                final int payload = length - op.headerLength() - WireConstants.INTEGRITY_CHECK_LENGTH;
                assertThat(referencing.references).as("%s packet %d", opcode, index).hasSize(1);
                final long[] r = referencing.references.get(0);
                assertThat(r[0]).isEqualTo(AT + op.headerLength());
                assertThat(r[1]).isEqualTo(mr.address() + (long) index * MTU);
                assertThat(r[2]).isEqualTo(payload);
                assertThat(referencing.sent(length)).as("%s packet %d on the wire", opcode, index)
                    .isEqualTo(copying.sent(length));
                for (int i = 0; i < payload; i++) {
                    assertThat(referencing.buffer.getByte(AT + op.headerLength() + i)).isEqualTo(UNTOUCHED);
                }
                assertThat(new IntegrityCheck().verify(new UnsafeBuffer(referencing.sent(length)), 0, length)).isTrue();
            }
        }
    }

    @Test
    void aSinkThatRefusesGetsTheCopyAndSpanningOrRawMemoryIsNotOffered() {
        final MemoryRegion mr = pd.registerMemory(memory(1500), AccessFlags.ALL);
        final ReferencingSink refusing = new ReferencingSink(packetBuffer(), AT, false);
        final int length = write(wqe(WrOpcode.RDMA_WRITE, mr), 0, refusing);
        // The payload is in the buffer itself, the region's first bytes, and the check covers it.
        final int header = Opcode.WRITE.headerLength();
        for (int i = 0; i < MTU; i++) {
            assertThat(refusing.buffer.getByte(AT + header + i)).isEqualTo(mr.buffer().getByte(i));
        }
        assertThat(new IntegrityCheck().verify(refusing.buffer, AT, length)).isTrue();

        // Packet 1 of two 600-byte entries spans both: copied, as the sink is offered nothing.
        final MemoryRegion a = pd.registerMemory(memory(600), AccessFlags.ALL);
        final MemoryRegion b = pd.registerMemory(memory(600), AccessFlags.ALL);
        final ReferencingSink spanning = new ReferencingSink(packetBuffer(), AT, true);
        write(wqe(WrOpcode.RDMA_WRITE, a, b), 0, spanning);
        assertThat(spanning.references).isEmpty();
        // Packet 1 lies in b alone: referenced.
        write(wqe(WrOpcode.RDMA_WRITE, a, b), 1, spanning);
        assertThat(spanning.references).hasSize(1);
        assertThat(spanning.references.get(0)[1]).isEqualTo(b.address() + (MTU - 600));

        // Memory registered by raw address: the intrinsic CRC cannot read it in place, so it is copied.
        final UnsafeBuffer raw = new UnsafeBuffer(memory(1500));
        final MemoryRegion rawRegion = pd.registerMemory(new UnsafeBuffer(raw.addressOffset(), 1500), AccessFlags.ALL);
        assertThat(IntegrityCheck.intrinsic(rawRegion.buffer())).isFalse();
        final ReferencingSink rawSink = new ReferencingSink(packetBuffer(), AT, true);
        final int rawLength = write(wqe(WrOpcode.RDMA_WRITE, rawRegion), 0, rawSink);
        assertThat(rawSink.references).isEmpty();
        assertThat(new IntegrityCheck().verify(new UnsafeBuffer(rawSink.sent(rawLength)), 0, rawLength)).isTrue();
    }

    @Test
    void aRegionOverADirectBufferIsASliceOfItThatLeavesTheCallersPositionAlone() {
        final ByteBuffer caller = memory(4096);
        caller.position(1000).limit(3000);
        final MemoryRegion mr = pd.registerMemory(caller, AccessFlags.ALL);
        assertThat(mr.address()).isEqualTo(BufferUtil.address(caller) + 1000);
        assertThat(mr.buffer().byteBuffer()).isNotNull().isNotSameAs(caller);
        assertThat(mr.buffer().addressOffset()).isEqualTo(mr.address());
        assertThat(mr.buffer().capacity()).isEqualTo(2000);
        assertThat(mr.buffer().getByte(0)).isEqualTo((byte) (1000 * 13 + 5));
        final ReferencingSink sink = new ReferencingSink(packetBuffer(), AT, true);
        write(wqe(WrOpcode.RDMA_WRITE, mr), 1, sink);
        assertThat(caller.position()).isEqualTo(1000);
        assertThat(caller.limit()).isEqualTo(3000);
    }
}
