// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.testwire;

import java.nio.ByteOrder;

import org.agrona.DirectBuffer;
import org.metaroce.core.wire.BaseHeader;

/**
 * Selects packets on an {@link InMemoryWire} by link and content, so that {@link PacketFilter}
 * factories can say "which packets" separately from "drop how many". Reads only the two fields
 * every MetaRoCE packet carries at fixed offsets: the opcode byte and the big-endian PSN.
 */
@FunctionalInterface
public interface PacketMatcher {
    /** Value {@link #opcodeOf} returns for a packet too short to hold an opcode. */
    int NO_OPCODE = -1;
    /** Value {@link #psnOf} returns for a packet too short to hold a PSN. */
    int NO_PSN = -1;

    /**
     * @param fromNode sending node id
     * @param toNode receiving node id
     * @param buf holds the UDP payload
     * @param off first byte of the payload
     * @param len payload length
     * @return whether the packet is selected
     */
    boolean matches(int fromNode, int toNode, DirectBuffer buf, int off, int len);

    /** @return a matcher selecting every packet */
    static PacketMatcher any() {
        return (from, to, buf, off, len) -> true;
    }

    /** @return a matcher selecting packets whose opcode byte (payload offset 1) is {@code opcode} */
    static PacketMatcher opcode(final int opcode) {
        return (from, to, buf, off, len) -> opcodeOf(buf, off, len) == opcode;
    }

    /** @return a matcher selecting packets whose PSN (big-endian int at payload offset 8) is {@code psn} */
    static PacketMatcher psn(final int psn) {
        return (from, to, buf, off, len) -> len >= BaseHeader.PSN_OFFSET + Integer.BYTES && psnOf(buf, off, len) == psn;
    }

    /** @return a matcher selecting packets with both this opcode and this PSN */
    static PacketMatcher opcodePsn(final int opcode, final int psn) {
        return opcode(opcode).and(psn(psn));
    }

    /** @return a matcher selecting packets sent from {@code fromNode} to {@code toNode} */
    static PacketMatcher link(final int fromNode, final int toNode) {
        return (from, to, buf, off, len) -> from == fromNode && to == toNode;
    }

    /** @return a matcher selecting packets sent by {@code fromNode} */
    static PacketMatcher from(final int fromNode) {
        return (from, to, buf, off, len) -> from == fromNode;
    }

    default PacketMatcher and(final PacketMatcher other) {
        return (from, to, buf, off, len) -> matches(from, to, buf, off, len) && other.matches(from, to, buf, off, len);
    }

    default PacketMatcher or(final PacketMatcher other) {
        return (from, to, buf, off, len) -> matches(from, to, buf, off, len) || other.matches(from, to, buf, off, len);
    }

    default PacketMatcher negate() {
        return (from, to, buf, off, len) -> !matches(from, to, buf, off, len);
    }

    /** @return the opcode byte of the packet, or {@link #NO_OPCODE} if it is too short */
    static int opcodeOf(final DirectBuffer buf, final int off, final int len) {
        return len > BaseHeader.OPCODE_OFFSET ? buf.getByte(off + BaseHeader.OPCODE_OFFSET) & 0xFF : NO_OPCODE;
    }

    /** @return the PSN of the packet, or {@link #NO_PSN} if it is too short */
    static int psnOf(final DirectBuffer buf, final int off, final int len) {
        return len >= BaseHeader.PSN_OFFSET + Integer.BYTES
            ? buf.getInt(off + BaseHeader.PSN_OFFSET, ByteOrder.BIG_ENDIAN) : NO_PSN;
    }
}
