// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.bench.wire;

import java.util.concurrent.TimeUnit;

import org.agrona.BufferUtil;
import org.agrona.concurrent.UnsafeBuffer;
import org.metaroce.bench.BenchmarkBase;
import org.metaroce.core.wire.AckHeader;
import org.metaroce.core.wire.BaseHeader;
import org.metaroce.core.wire.DropReason;
import org.metaroce.core.wire.Flags;
import org.metaroce.core.wire.IntegrityCheck;
import org.metaroce.core.wire.MessageHeader;
import org.metaroce.core.wire.Opcode;
import org.metaroce.core.wire.PacketValidator;
import org.metaroce.core.wire.RdmaHeader;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/**
 * Encode + validate + decode of one WRITE data packet and one ACK packet over off-heap buffers,
 * the work the engine does per packet in the wire layer. {@code baselineCopy} copies the same
 * payload once and is the yardstick: the codec's cost is reported relative to a bare memcpy.
 *
 * <p>Run: {@code java -jar metaroce-bench/target/metaroce-benchmarks.jar WireCodecBenchmark -prof gc}
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class WireCodecBenchmark extends BenchmarkBase {
    @Param({"64", "1024", "4096"})
    int payloadBytes;

    private final BaseHeader base = new BaseHeader();
    private final MessageHeader msg = new MessageHeader();
    private final RdmaHeader reth = new RdmaHeader();
    private final AckHeader ack = new AckHeader();
    private final IntegrityCheck crc = new IntegrityCheck();
    private final PacketValidator validator = new PacketValidator();

    private UnsafeBuffer memoryRegion;
    private UnsafeBuffer packet;
    private int psn;

    @Setup(Level.Trial)
    public void setUp() {
        memoryRegion = new UnsafeBuffer(BufferUtil.allocateDirectAligned(1 << 16, 64));
        for (int i = 0; i < memoryRegion.capacity(); i++) {
            memoryRegion.putByte(i, (byte) i);
        }
        packet = new UnsafeBuffer(BufferUtil.allocateDirectAligned(16 << 10, 64));
    }

    /** The floor: moving the payload once, which any transport must do. */
    @Benchmark
    public int baselineCopy() {
        packet.putBytes(Opcode.WRITE.headerLength(), memoryRegion, 0, payloadBytes);
        return packet.getInt(Opcode.WRITE.headerLength());
    }

    /** Build a WRITE packet from a memory region, seal it, then validate and decode it. */
    @Benchmark
    public long writePacketEncodeDecode() {
        final Opcode op = Opcode.WRITE;
        final int p = psn++;
        base.wrap(packet, 0).initialize(op).flags(Flags.ACK_REQ).destQpn(0x123).psn(p)
            .payloadLength(payloadBytes).pathId(p & 7).timestamp(p * 1000).sourceQpn(0x456);
        msg.wrap(packet, op.msgOffset()).msn(p >>> 4).messageOffset(0).messageLength(1 << 16).rsn(0);
        reth.wrap(packet, op.rethOffset()).virtualAddress(0x7F00_0000_0000L).rkey(0x5EC2E7).dmaLength(1 << 16);
        packet.putBytes(op.headerLength(), memoryRegion, 0, payloadBytes);
        final int length = crc.seal(packet, 0, op.headerLength() + payloadBytes);

        final DropReason reason = validator.validate(packet, 0, length);
        if (reason != null) {
            throw new IllegalStateException(reason.name());
        }
        return BaseHeader.psn(packet, 0) + BaseHeader.destQpn(packet, 0)
            + MessageHeader.messageOffset(packet, op.msgOffset())
            + RdmaHeader.virtualAddress(packet, op.rethOffset()) + RdmaHeader.rkey(packet, op.rethOffset());
    }

    /** Build, seal, validate and decode an ACK with a SACK bitmap (payload size does not apply). */
    @Benchmark
    public long ackPacketEncodeDecode() {
        final Opcode op = Opcode.ACK;
        final int p = psn++;
        base.wrap(packet, 0).initialize(op).destQpn(0x456).psn(p).pathId(p & 7).timestamp(p).sourceQpn(0x123);
        ack.wrap(packet, op.ackOffset()).initialize().cumulativePsn(p).sackBitmap(0x6L | ((long) p << 40))
            .echoedTimestamp(p * 3).ackDelay(2500).ceCount(p >>> 8).echoedPathId(p & 7);
        final int length = crc.seal(packet, 0, op.headerLength());
        final DropReason reason = validator.validate(packet, 0, length);
        if (reason != null) {
            throw new IllegalStateException(reason.name());
        }
        return AckHeader.cumulativePsn(packet, op.ackOffset()) + AckHeader.sackBitmap(packet, op.ackOffset())
            + AckHeader.echoedTimestamp(packet, op.ackOffset()) + AckHeader.ackDelay(packet, op.ackOffset());
    }
}
