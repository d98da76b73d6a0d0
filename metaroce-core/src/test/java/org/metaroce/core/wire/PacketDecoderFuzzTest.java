// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.wire;

import static org.assertj.core.api.Assertions.assertThat;

import org.agrona.concurrent.UnsafeBuffer;

import com.code_intelligence.jazzer.junit.FuzzTest;

/**
 * Coverage-guided fuzzing of the receive path's first stage: validation and decoding of every
 * header the opcode implies. Property: no input throws, and every accepted packet is
 * self-consistent: its length matches its headers and payload, its headers lie inside the
 * datagram, and its message bounds hold. In the normal build this runs in regression mode
 * over the seed corpus in {@code src/test/resources/.../PacketDecoderFuzzTestInputs}; run a campaign with
 * {@code JAZZER_FUZZ=1 ./mvnw -pl metaroce-core test -Dtest=PacketDecoderFuzzTest}.
 */
class PacketDecoderFuzzTest {
    private final PacketValidator validator = new PacketValidator();
    private final BaseHeader base = new BaseHeader();
    private final MessageHeader msg = new MessageHeader();
    private final RdmaHeader reth = new RdmaHeader();

    @FuzzTest(maxDuration = "60s")
    void acceptedPacketsAreSelfConsistent(final byte[] datagram) {
        final UnsafeBuffer buffer = new UnsafeBuffer(datagram);
        final DropReason reason = validator.validate(buffer, 0, datagram.length);
        if (reason != null) {
            return;
        }
        final Opcode opcode = Opcode.of(base.wrap(buffer, 0).opcode());
        assertThat(opcode).as("accepted packet has a known opcode").isNotNull();
        final int headerLength = opcode.headerLength();
        final int payloadLength = base.payloadLength();
        if ((base.flags() & Flags.TRIMMED) != 0) {
            assertThat(opcode.isTrimmable()).as("only trimmable opcodes are accepted trimmed").isTrue();
            assertThat(payloadLength).as("a trimmed packet carries no payload").isZero();
            assertThat(datagram.length).as("a trimmed packet is exactly its headers").isEqualTo(headerLength);
        } else {
            assertThat(datagram.length).as("datagram = headers + payload + integrity check")
                .isEqualTo(headerLength + payloadLength + WireConstants.INTEGRITY_CHECK_LENGTH);
            assertThat(payloadLength).as("payload within the opcode's limit").isLessThanOrEqualTo(opcode.maxPayload());
        }
        // Every header the opcode implies lies inside the header block, so the receive path's
        // flyweights never read payload bytes or past the datagram.
        assertWithinHeaders(opcode, opcode.msgOffset(), MessageHeader.LENGTH);
        assertWithinHeaders(opcode, opcode.rethOffset(), RdmaHeader.LENGTH);
        assertWithinHeaders(opcode, opcode.immOffset(), ImmediateHeader.LENGTH);
        assertWithinHeaders(opcode, opcode.atomicOffset(), AtomicHeader.LENGTH);
        assertWithinHeaders(opcode, opcode.aackOffset(), AtomicAckHeader.LENGTH);
        assertWithinHeaders(opcode, opcode.ackOffset(), AckHeader.LENGTH);
        assertWithinHeaders(opcode, opcode.nackOffset(), NackHeader.LENGTH);
        assertWithinHeaders(opcode, opcode.cmOffset(), ConnectHeader.LENGTH);
        if (opcode.msgOffset() != Opcode.ABSENT) {
            msg.wrap(buffer, opcode.msgOffset());
            assertThat(msg.messageLength()).as("message length bound").isLessThanOrEqualTo(WireConstants.MAX_MESSAGE_LENGTH);
            assertThat(msg.messageOffset() + payloadLength).as("payload inside the message")
                .isLessThanOrEqualTo(msg.messageLength());
            if (opcode.rethOffset() != Opcode.ABSENT && opcode != Opcode.READ_REQUEST) {
                assertThat(reth.wrap(buffer, opcode.rethOffset()).dmaLength()).as("RETH DMA length = message length")
                    .isEqualTo(msg.messageLength());
            }
        }
    }

    private static void assertWithinHeaders(final Opcode opcode, final int offset, final int length) {
        if (offset != Opcode.ABSENT) {
            assertThat(offset + length).as("%s header at %d+%d inside %d header bytes", opcode, offset, length,
                opcode.headerLength()).isLessThanOrEqualTo(opcode.headerLength());
        }
    }
}
