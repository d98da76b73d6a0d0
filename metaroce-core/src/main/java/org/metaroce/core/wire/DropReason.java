// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.wire;

/**
 * Why a datagram was dropped before it reached a queue pair (specification 3.7). Every drop is
 * counted under exactly one reason [WIRE-050].
 */
public enum DropReason {
    /** Shorter than the base header, or than the header plus the integrity check. */
    TRUNCATED,
    /** Version other than 1 [WIRE-011]. */
    UNSUPPORTED_VERSION,
    /** Opcode not in table 3.4 [WIRE-020]. */
    UNKNOWN_OPCODE,
    /** Header Length differs from the opcode's layout [WIRE-012]. */
    BAD_HEADER_LENGTH,
    /** TRIMMED set on an opcode that cannot be trimmed, or a trimmed packet that is not header-only [WIRE-042]. */
    BAD_TRIM,
    /** Datagram length differs from header + Payload Length + 4 [WIRE-005]. */
    LENGTH_MISMATCH,
    /** CRC-32C mismatch [WIRE-041]. */
    INTEGRITY_CHECK_FAILED,
    /** Payload on an opcode that carries none [WIRE-021]. */
    UNEXPECTED_PAYLOAD,
    /** Payload beyond the opcode's limit [WIRE-022]. */
    OVERSIZE,
    /** Message offset/length or DMA length inconsistent [WIRE-033], [WIRE-035]. */
    BAD_MESSAGE_BOUNDS,
    /**
     * ATTACHED_ACK on an opcode that is not a request (v1.0.15, [WIRE-072]); checked after the
     * Header Length (step 4a of table 3.7), so it is not in table order here.
     */
    BAD_ATTACHED_ACK;

    private static final DropReason[] VALUES = values();

    /**
     * @param ordinal an ordinal of this enum
     * @return the constant, without the array copy {@link #values()} makes
     */
    public static DropReason ofOrdinal(final int ordinal) {
        return VALUES[ordinal];
    }

    /** @return number of constants */
    public static int count() {
        return VALUES.length;
    }
}
