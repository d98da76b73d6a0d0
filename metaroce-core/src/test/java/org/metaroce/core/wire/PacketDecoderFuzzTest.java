package org.metaroce.core.wire;

import static org.assertj.core.api.Assertions.assertThat;

import org.agrona.concurrent.UnsafeBuffer;

import com.code_intelligence.jazzer.junit.FuzzTest;

/**
 * Coverage-guided fuzzing of the receive path's first stage: validation and decoding of every
 * header the opcode implies. Property: no input throws, and an accepted packet's headers lie
 * within the datagram. In the normal build this runs in regression mode over the seed corpus in
 * {@code src/test/resources/.../PacketDecoderFuzzTestInputs}; run a campaign with
 * {@code JAZZER_FUZZ=1 ./mvnw -pl metaroce-core test -Dtest=PacketDecoderFuzzTest}.
 */
class PacketDecoderFuzzTest {
    private final PacketValidator validator = new PacketValidator();
    private final BaseHeader base = new BaseHeader();
    private final MessageHeader msg = new MessageHeader();
    private final RdmaHeader reth = new RdmaHeader();
    private final ImmediateHeader imm = new ImmediateHeader();
    private final AtomicHeader atomic = new AtomicHeader();
    private final AtomicAckHeader aack = new AtomicAckHeader();
    private final AckHeader ack = new AckHeader();
    private final NackHeader nack = new NackHeader();
    private final ConnectHeader cm = new ConnectHeader();

    @FuzzTest(maxDuration = "60s")
    void decodeNeverThrows(final byte[] datagram) {
        final UnsafeBuffer buffer = new UnsafeBuffer(datagram);
        final DropReason reason = validator.validate(buffer, 0, datagram.length);
        if (reason != null) {
            return;
        }
        final Opcode opcode = Opcode.of(base.wrap(buffer, 0).opcode());
        assertThat(opcode).isNotNull();
        assertThat(opcode.headerLength()).isLessThanOrEqualTo(datagram.length);
        long sink = base.flags() + base.destQpn() + base.psn() + base.payloadLength() + base.pathId()
            + base.timestamp() + base.sourceQpn();
        if (opcode.msgOffset() != Opcode.ABSENT) {
            msg.wrap(buffer, opcode.msgOffset());
            sink += msg.msn() + msg.messageOffset() + msg.messageLength() + msg.rsn();
            assertThat(msg.messageOffset() + base.payloadLength()).isLessThanOrEqualTo(msg.messageLength());
        }
        if (opcode.rethOffset() != Opcode.ABSENT) {
            reth.wrap(buffer, opcode.rethOffset());
            sink += reth.virtualAddress() + reth.rkey() + reth.dmaLength();
        }
        if (opcode.immOffset() != Opcode.ABSENT) {
            sink += imm.wrap(buffer, opcode.immOffset()).immediateData();
        }
        if (opcode.atomicOffset() != Opcode.ABSENT) {
            atomic.wrap(buffer, opcode.atomicOffset());
            sink += atomic.virtualAddress() + atomic.rkey() + atomic.swapOrAdd() + atomic.compare();
        }
        if (opcode.aackOffset() != Opcode.ABSENT) {
            sink += aack.wrap(buffer, opcode.aackOffset()).originalData();
        }
        if (opcode.ackOffset() != Opcode.ABSENT) {
            ack.wrap(buffer, opcode.ackOffset());
            sink += ack.cumulativePsn() + ack.sackBitmap() + ack.echoedTimestamp() + ack.ackDelay()
                + ack.ceCount() + ack.credit() + ack.echoedPathId() + ack.ackFlags();
        }
        if (opcode.nackOffset() != Opcode.ABSENT) {
            nack.wrap(buffer, opcode.nackOffset());
            sink += nack.reason() + nack.rnrTimer() + nack.nackPsn();
            NackReason.of(nack.reason());
        }
        if (opcode.cmOffset() != Opcode.ABSENT) {
            cm.wrap(buffer, opcode.cmOffset());
            sink += cm.serviceId() + cm.transactionId() + cm.initialPsn() + cm.pathMtu() + cm.capabilities()
                + cm.initiatorDepth() + cm.responderResources() + cm.pathCount() + cm.reason();
        }
        assertThat(sink).isNotNull();
    }
}
