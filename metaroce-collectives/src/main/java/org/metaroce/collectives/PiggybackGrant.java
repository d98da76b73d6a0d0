// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.collectives;

/**
 * The grant a short data chunk carries in its immediate for the opposite stream [COLL-035].
 *
 * <p>Why: a zero-length grant SEND per consumed slot costs a packet, its acknowledgement and, on an
 * INVOKER rank, a wait for that acknowledgement before the operation may return [COLL-029]. The
 * small-message algorithms (recursive doubling, trees) send data back to the rank whose chunk was
 * just consumed, so the grant rides along for free. Layout of a slot chunk's immediate bits 23..0:
 * bit 23 set, bits 22..16 the cumulative grant mod 128, bits 15..0 the length. A chunk of
 * {@value #MAX_LENGTH} bytes or more carries no grant (bit 23 clear, bits 22..0 the length), which
 * is why a chunk is shorter than 2^23 bytes.
 */
final class PiggybackGrant {
    /** Bit 23 of the immediate: a grant is present. */
    static final int FLAG = 1 << 23;
    /** Chunks shorter than this may carry a grant (16 length bits). */
    static final int MAX_LENGTH = 1 << 16;
    private static final int GRANT_SHIFT = 16;
    /** 7 bits: a new grant exceeds the last one the peer knows by at most the slot count (&le; 64). */
    private static final int GRANT_MASK = 0x7F;

    private PiggybackGrant() {
    }

    /**
     * @param length the chunk's length (&lt; {@link #MAX_LENGTH})
     * @param grant the cumulative grant to announce
     * @return immediate bits 23..0 for a chunk of {@code length} carrying {@code grant}
     */
    static int encode(final int length, final long grant) {
        return FLAG | ((int) (grant & GRANT_MASK) << GRANT_SHIFT) | length;
    }

    /** @return the chunk length encoded in immediate bits 23..0 */
    static int length(final int imm) {
        return (imm & FLAG) != 0 ? imm & (MAX_LENGTH - 1) : imm & (FLAG - 1);
    }

    /**
     * @param imm a data immediate
     * @param granted the cumulative grant known so far
     * @return the cumulative grant after this immediate (unchanged when it carries none)
     */
    static long apply(final int imm, final long granted) {
        if ((imm & FLAG) == 0) {
            return granted;
        }
        final int low = (imm >>> GRANT_SHIFT) & GRANT_MASK;
        return granted + ((low - granted) & GRANT_MASK);
    }
}
