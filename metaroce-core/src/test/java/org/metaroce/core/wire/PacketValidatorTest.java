// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.wire;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** One test per drop reason of specification table 3.7, plus exhaustive single-bit flips. */
class PacketValidatorTest {
    private static final List<GoldenVectors.Vector> VECTORS = GoldenVectors.load();

    private static GoldenVectors.Vector vector(final String name) {
        return VECTORS.stream().filter(v -> v.name().equals(name)).findFirst().orElseThrow();
    }

    private static UnsafeBuffer copy(final GoldenVectors.Vector v, final int extra) {
        final UnsafeBuffer b = new UnsafeBuffer(new byte[v.bytes().length + extra]);
        b.putBytes(0, v.bytes());
        return b;
    }

    /** Re-seals a modified packet so the check under test is the one that fails, not the CRC. */
    private static void reseal(final UnsafeBuffer b, final int length) {
        new IntegrityCheck().seal(b, 0, length - WireConstants.INTEGRITY_CHECK_LENGTH);
    }

    private static DropReason validate(final UnsafeBuffer b, final int length) {
        final PacketValidator validator = new PacketValidator();
        final DropReason reason = validator.validate(b, 0, length);
        if (reason == null) {
            assertThat(validator.counters().accepted() + validator.counters().acceptedTrimmed()).isEqualTo(1);
        } else {
            assertThat(validator.counters().dropped(reason)).isEqualTo(1);
            assertThat(validator.counters().droppedTotal()).isEqualTo(1);
        }
        return reason;
    }

    @Test
    void truncatedBelowBaseHeader() {
        final GoldenVectors.Vector v = vector("send-only");
        for (int len = 0; len < WireConstants.BASE_HEADER_LENGTH; len++) {
            assertThat(validate(copy(v, 0), len)).as("length %d", len).isEqualTo(DropReason.TRUNCATED);
        }
    }

    @Test
    void truncatedInsideExtensionHeaders() {
        final GoldenVectors.Vector v = vector("write-first");
        assertThat(validate(copy(v, 0), 30)).isEqualTo(DropReason.TRUNCATED);
    }

    @Test
    void unsupportedVersion() {
        final GoldenVectors.Vector v = vector("send-only");
        final UnsafeBuffer b = copy(v, 0);
        b.putByte(0, (byte) 0x20);
        reseal(b, v.bytes().length);
        assertThat(validate(b, v.bytes().length)).isEqualTo(DropReason.UNSUPPORTED_VERSION);
    }

    @Test
    void unknownOpcode() {
        final GoldenVectors.Vector v = vector("keepalive");
        for (final int op : new int[] {0x00, 0x0A, 0x14, 0x27, 0x81, 0xFF}) {
            final UnsafeBuffer b = copy(v, 0);
            b.putByte(1, (byte) op);
            reseal(b, v.bytes().length);
            assertThat(validate(b, v.bytes().length)).as("opcode 0x%02x", op).isEqualTo(DropReason.UNKNOWN_OPCODE);
        }
    }

    @Test
    void badHeaderLength() {
        final GoldenVectors.Vector v = vector("write-first");
        final UnsafeBuffer b = copy(v, 0);
        b.putByte(15, (byte) 10);
        reseal(b, v.bytes().length);
        assertThat(validate(b, v.bytes().length)).isEqualTo(DropReason.BAD_HEADER_LENGTH);
    }

    @Test
    void lengthMismatchWhenPayloadLengthDisagreesWithDatagram() {
        final GoldenVectors.Vector v = vector("send-only");
        final UnsafeBuffer b = copy(v, 8);
        assertThat(validate(b, v.bytes().length + 8)).isEqualTo(DropReason.LENGTH_MISMATCH);
        assertThat(validate(copy(v, 0), v.bytes().length - 1)).isEqualTo(DropReason.LENGTH_MISMATCH);
    }

    @Test
    void integrityCheckFailure() {
        final GoldenVectors.Vector v = vector("send-only");
        final UnsafeBuffer b = copy(v, 0);
        b.putByte(50, (byte) (b.getByte(50) ^ 0x01));
        assertThat(validate(b, v.bytes().length)).isEqualTo(DropReason.INTEGRITY_CHECK_FAILED);
    }

    @Test
    void unexpectedPayloadOnReadRequest() {
        final GoldenVectors.Vector v = vector("read-request");
        final int header = Opcode.READ_REQUEST.headerLength();
        final UnsafeBuffer b = new UnsafeBuffer(new byte[header + 8 + 4]);
        b.putBytes(0, v.bytes(), 0, header);
        new BaseHeader().wrap(b, 0).payloadLength(8);
        reseal(b, b.capacity());
        assertThat(validate(b, b.capacity())).isEqualTo(DropReason.UNEXPECTED_PAYLOAD);
    }

    @Test
    void oversizePrivateData() {
        final GoldenVectors.Vector v = vector("connect-request");
        final int header = Opcode.CONNECT_REQUEST.headerLength();
        final int payload = WireConstants.MAX_PRIVATE_DATA + 1;
        final UnsafeBuffer b = new UnsafeBuffer(new byte[header + payload + 4]);
        b.putBytes(0, v.bytes(), 0, header);
        new BaseHeader().wrap(b, 0).payloadLength(payload);
        reseal(b, b.capacity());
        assertThat(validate(b, b.capacity())).isEqualTo(DropReason.OVERSIZE);
    }

    @Test
    void oversizeDataPayload() {
        final GoldenVectors.Vector v = vector("send-only");
        final int header = Opcode.SEND.headerLength();
        final int payload = WireConstants.MAX_DATA_PAYLOAD + 4;
        final UnsafeBuffer b = new UnsafeBuffer(new byte[header + payload + 4]);
        b.putBytes(0, v.bytes(), 0, header);
        new BaseHeader().wrap(b, 0).payloadLength(payload);
        new MessageHeader().wrap(b, Opcode.SEND.msgOffset()).messageLength(1 << 20);
        reseal(b, b.capacity());
        assertThat(validate(b, b.capacity())).isEqualTo(DropReason.OVERSIZE);
    }

    @Test
    void messageBoundsOffsetPlusPayloadBeyondLength() {
        final GoldenVectors.Vector v = vector("send-only");
        final UnsafeBuffer b = copy(v, 0);
        new MessageHeader().wrap(b, Opcode.SEND.msgOffset()).messageLength(63);
        reseal(b, v.bytes().length);
        assertThat(validate(b, v.bytes().length)).isEqualTo(DropReason.BAD_MESSAGE_BOUNDS);
    }

    @Test
    void messageBoundsLengthAbove2GiB() {
        final GoldenVectors.Vector v = vector("send-only");
        final UnsafeBuffer b = copy(v, 0);
        new MessageHeader().wrap(b, Opcode.SEND.msgOffset()).messageLength((1L << 31) + 1);
        reseal(b, v.bytes().length);
        assertThat(validate(b, v.bytes().length)).isEqualTo(DropReason.BAD_MESSAGE_BOUNDS);
    }

    @Test
    void messageBoundsWriteDmaLengthDiffersFromMessageLength() {
        final GoldenVectors.Vector v = vector("write-first");
        final UnsafeBuffer b = copy(v, 0);
        new RdmaHeader().wrap(b, Opcode.WRITE.rethOffset()).dmaLength(4095);
        reseal(b, v.bytes().length);
        assertThat(validate(b, v.bytes().length)).isEqualTo(DropReason.BAD_MESSAGE_BOUNDS);
    }

    @Test
    void messageBoundsReadRangeBeyondMessage() {
        final GoldenVectors.Vector v = vector("read-request");
        final UnsafeBuffer b = copy(v, 0);
        new MessageHeader().wrap(b, Opcode.READ_REQUEST.msgOffset()).messageOffset(4096);
        reseal(b, v.bytes().length);
        assertThat(validate(b, v.bytes().length)).isEqualTo(DropReason.BAD_MESSAGE_BOUNDS);
        new RdmaHeader().wrap(b, Opcode.READ_REQUEST.rethOffset()).dmaLength(4096);
        reseal(b, v.bytes().length);
        assertThat(validate(b, v.bytes().length)).as("re-request of the second half").isNull();
    }

    @Test
    void trimmedPacketIsAcceptedHeaderOnly() {
        final GoldenVectors.Vector v = vector("write-trimmed");
        assertThat(validate(copy(v, 0), v.bytes().length)).isNull();
    }

    @Test
    void trimmedControlPacketIsRejected() {
        final GoldenVectors.Vector v = vector("ack-sack");
        final UnsafeBuffer b = copy(v, 0);
        new BaseHeader().wrap(b, 0).flags(Flags.TRIMMED);
        assertThat(validate(b, Opcode.ACK.headerLength())).isEqualTo(DropReason.BAD_TRIM);
    }

    @Test
    void onlyOpcodesWithPayloadAreTrimmable() {
        for (final Opcode op : Opcode.values()) {
            assertThat(op.isTrimmable()).as(op.name()).isEqualTo(op.maxPayload() > 0 && !op.isConnectionManagement());
        }
        final GoldenVectors.Vector v = vector("read-request");
        final UnsafeBuffer b = copy(v, 0);
        new BaseHeader().wrap(b, 0).flags(Flags.TRIMMED);
        assertThat(validate(b, Opcode.READ_REQUEST.headerLength())).isEqualTo(DropReason.BAD_TRIM);
    }

    @Test
    void trimmedPacketWithPayloadIsRejected() {
        final GoldenVectors.Vector v = vector("send-only");
        final UnsafeBuffer b = copy(v, 0);
        new BaseHeader().wrap(b, 0).flags(Flags.TRIMMED | Flags.LAST);
        assertThat(validate(b, v.bytes().length)).isEqualTo(DropReason.BAD_TRIM);
    }

    @Test
    void attachedAckOnlyOnRequestOpcodes() {
        // [WIRE-072] checked after the Header Length, before the length: its own drop reason.
        for (final String name : new String[] {"ack-sack", "nack-rnr", "read-response", "atomic-response", "cnp",
            "keepalive", "connect-request"}) {
            final GoldenVectors.Vector v = vector(name);
            final UnsafeBuffer b = copy(v, 0);
            final BaseHeader bh = new BaseHeader().wrap(b, 0);
            bh.flags(bh.flags() | Flags.ATTACHED_ACK);
            reseal(b, v.bytes().length);
            assertThat(validate(b, v.bytes().length)).as(name).isEqualTo(DropReason.BAD_ATTACHED_ACK);
        }
    }

    @Test
    void theTrailerCountsInTheLengthAndIsCoveredByTheIntegrityCheck() {
        // [WIRE-005] HL*4 + PL + 36 + 4 with ATTACHED_ACK; [WIRE-040] the check covers the trailer.
        final GoldenVectors.Vector v = vector("send-attached-ack");
        assertThat(v.bytes().length).isEqualTo(Opcode.SEND.headerLength() + 64 + WireConstants.ATTACHED_ACK_LENGTH + 4);
        assertThat(validate(copy(v, 0), v.bytes().length)).isNull();
        final UnsafeBuffer shortened = copy(v, 0);
        reseal(shortened, v.bytes().length - WireConstants.ATTACHED_ACK_LENGTH);
        assertThat(validate(shortened, v.bytes().length - WireConstants.ATTACHED_ACK_LENGTH))
            .as("the same packet without its trailer").isEqualTo(DropReason.LENGTH_MISMATCH);
        final UnsafeBuffer flipped = copy(v, 0);
        flipped.putByte(v.bytes().length - 6, (byte) (flipped.getByte(v.bytes().length - 6) ^ 1));
        assertThat(validate(flipped, v.bytes().length)).as("a bit of the trailer")
            .isEqualTo(DropReason.INTEGRITY_CHECK_FAILED);

        final GoldenVectors.Vector read = vector("read-request");
        final UnsafeBuffer b = copy(read, WireConstants.ATTACHED_ACK_LENGTH);
        final BaseHeader bh = new BaseHeader().wrap(b, 0);
        bh.flags(bh.flags() | Flags.ATTACHED_ACK);
        assertThat(validate(b, Opcode.READ_REQUEST.headerLength() + 4)).as("shorter than header + 36 + 4")
            .isEqualTo(DropReason.TRUNCATED);
        reseal(b, read.bytes().length + WireConstants.ATTACHED_ACK_LENGTH);
        assertThat(validate(b, read.bytes().length + WireConstants.ATTACHED_ACK_LENGTH)).as("a READ_REQUEST carries one")
            .isNull();
    }

    @Test
    void aTrimmedPacketLostItsTrailerAndIsStillATrimmedPacket() {
        // [WIRE-074]: the flag stays, the trailer went with the payload; the trim rules alone apply.
        final GoldenVectors.Vector v = vector("write-trimmed");
        final UnsafeBuffer b = copy(v, 0);
        new BaseHeader().wrap(b, 0).flags(Flags.TRIMMED | Flags.ATTACHED_ACK);
        assertThat(validate(b, v.bytes().length)).isNull();
        final UnsafeBuffer read = copy(vector("read-request"), 0);
        new BaseHeader().wrap(read, 0).flags(Flags.TRIMMED | Flags.ATTACHED_ACK);
        assertThat(validate(read, Opcode.READ_REQUEST.headerLength())).isEqualTo(DropReason.BAD_TRIM);
    }

    static List<GoldenVectors.Vector> protectedVectors() {
        return VECTORS.stream().filter(v -> !v.fields().containsKey("integrity.status")).toList();
    }

    /** CRC-32C detects every single-bit error, so every flip anywhere must be rejected [WIRE-041]. */
    @ParameterizedTest(name = "{0}: every single-bit flip is rejected")
    @MethodSource("protectedVectors")
    void everySingleBitFlipIsRejected(final GoldenVectors.Vector v) {
        final int length = v.bytes().length;
        final UnsafeBuffer b = copy(v, 0);
        final PacketValidator validator = new PacketValidator();
        for (int bit = 0; bit < length * 8; bit++) {
            final int index = bit >>> 3;
            final byte original = b.getByte(index);
            b.putByte(index, (byte) (original ^ (1 << (bit & 7))));
            assertThat(validator.validate(b, 0, length)).as("%s: flip of bit %d", v.name(), bit).isNotNull();
            b.putByte(index, original);
        }
        assertThat(validator.validate(b, 0, length)).isNull();
        assertThat(validator.counters().droppedTotal()).isEqualTo(length * 8L);
        assertThat(validator.counters().accepted()).isEqualTo(1);
    }
}
