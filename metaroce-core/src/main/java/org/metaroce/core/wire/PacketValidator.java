// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.wire;

import org.agrona.DirectBuffer;

/**
 * Validates a received datagram in the order of specification table 3.7 and counts the outcome.
 * It never throws for any content of the datagram, allocates nothing and touches no queue-pair
 * state: a datagram that fails here changes nothing but a counter [WIRE-050].
 *
 * <p>Not thread safe: one instance per endpoint-owning thread (it reuses a CRC engine).
 */
public final class PacketValidator {
    private final IntegrityCheck integrityCheck = new IntegrityCheck();
    private final WireCounters counters;

    /** Creates a validator with its own counters. */
    public PacketValidator() {
        this(new WireCounters());
    }

    /**
     * Creates a validator that counts into {@code counters}.
     *
     * @param counters where accepted and dropped datagrams are counted
     */
    public PacketValidator(final WireCounters counters) {
        this.counters = counters;
    }

    /** @return the counters this validator updates */
    public WireCounters counters() {
        return counters;
    }

    /**
     * Validates and counts a datagram.
     *
     * @param buffer holds the datagram; {@code offset + length} must lie within it
     * @param offset first byte of the MetaRoCE packet (UDP payload)
     * @param length UDP payload length
     * @return null when the packet is acceptable, otherwise the first violated rule
     */
    public DropReason validate(final DirectBuffer buffer, final int offset, final int length) {
        final DropReason reason = firstViolation(integrityCheck, buffer, offset, length);
        if (reason == null) {
            counters.accepted((BaseHeader.flags(buffer, offset) & Flags.TRIMMED) != 0);
        } else {
            counters.drop(reason);
        }
        return reason;
    }

    /**
     * The checks of table 3.7 without counting; usable by tools such as the compliance suite.
     *
     * @param crc CRC engine to use
     * @param buffer holds the datagram
     * @param offset first byte of the packet
     * @param length datagram length
     * @return null when acceptable, otherwise the first violated rule
     */
    public static DropReason firstViolation(
        final IntegrityCheck crc, final DirectBuffer buffer, final int offset, final int length) {
        if (length < WireConstants.BASE_HEADER_LENGTH) {
            return DropReason.TRUNCATED;
        }
        if (BaseHeader.version(buffer, offset) != WireConstants.VERSION) {
            return DropReason.UNSUPPORTED_VERSION;
        }
        final Opcode opcode = Opcode.of(BaseHeader.opcode(buffer, offset));
        if (opcode == null) {
            return DropReason.UNKNOWN_OPCODE;
        }
        final int headerLength = opcode.headerLength();
        if (BaseHeader.headerLengthWords(buffer, offset) != opcode.headerLengthWords()) {
            return DropReason.BAD_HEADER_LENGTH;
        }
        final int payloadLength = BaseHeader.payloadLength(buffer, offset);
        final int flags = BaseHeader.flags(buffer, offset);
        final boolean attached = (flags & Flags.ATTACHED_ACK) != 0;
        if (attached && !opcode.isRequest()) {
            return DropReason.BAD_ATTACHED_ACK;
        }
        if ((flags & Flags.TRIMMED) != 0) {
            // A trimmed packet lost an attached ACK with its payload: its flag changes nothing here [WIRE-074].
            if (!opcode.isTrimmable() || payloadLength != 0 || length != headerLength) {
                return DropReason.BAD_TRIM;
            }
            return boundsViolation(opcode, buffer, offset, 0);
        }
        // The attached ACK's trailer sits between payload and Integrity Check [WIRE-005], [WIRE-071].
        final int minimum = headerLength + WireConstants.INTEGRITY_CHECK_LENGTH
            + (attached ? WireConstants.ATTACHED_ACK_LENGTH : 0);
        if (length < minimum) {
            return DropReason.TRUNCATED;
        }
        if (length != minimum + payloadLength) {
            return DropReason.LENGTH_MISMATCH;
        }
        if (!crc.verify(buffer, offset, length)) {
            return DropReason.INTEGRITY_CHECK_FAILED;
        }
        if (payloadLength > 0) {
            if (opcode.maxPayload() == 0) {
                return DropReason.UNEXPECTED_PAYLOAD;
            }
            if (payloadLength > opcode.maxPayload()) {
                return DropReason.OVERSIZE;
            }
        }
        return boundsViolation(opcode, buffer, offset, payloadLength);
    }

    private static DropReason boundsViolation(
        final Opcode opcode, final DirectBuffer buffer, final int offset, final int payloadLength) {
        final int msg = opcode.msgOffset();
        if (msg == Opcode.ABSENT) {
            return null;
        }
        final long messageOffset = MessageHeader.messageOffset(buffer, offset + msg);
        final long messageLength = MessageHeader.messageLength(buffer, offset + msg);
        if (messageLength > WireConstants.MAX_MESSAGE_LENGTH || messageOffset + payloadLength > messageLength) {
            return DropReason.BAD_MESSAGE_BOUNDS;
        }
        final int reth = opcode.rethOffset();
        if (reth != Opcode.ABSENT) {
            final long dmaLength = RdmaHeader.dmaLength(buffer, offset + reth);
            if (opcode == Opcode.READ_REQUEST) {
                if (messageOffset + dmaLength > messageLength) {
                    return DropReason.BAD_MESSAGE_BOUNDS;
                }
            } else if (dmaLength != messageLength) {
                return DropReason.BAD_MESSAGE_BOUNDS;
            }
        }
        return null;
    }
}
