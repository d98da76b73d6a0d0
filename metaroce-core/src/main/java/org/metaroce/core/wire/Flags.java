// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.wire;

/** Base header flag bits (specification 3.3.1). */
public final class Flags {
    /** Acknowledge without coalescing delay. */
    public static final int ACK_REQ = 0x8000;
    /** Solicited event for the receive completion. */
    public static final int SOLICITED = 0x4000;
    /** Last packet of the message in PSN order [WIRE-015]. */
    public static final int LAST = 0x2000;
    /** The PSN was sent before [WIRE-016]. */
    public static final int RETRANSMIT = 0x1000;
    /** A switch removed payload and integrity check [WIRE-042]. */
    public static final int TRIMMED = 0x0800;
    /**
     * An ACK rides on this request packet in a 36-byte trailer between the payload and the
     * Integrity Check [WIRE-071] (v1.0.15; only with the ATTACHED_ACK capability [REL-070]).
     */
    public static final int ATTACHED_ACK = 0x0400;
    /** Bits that have a meaning in version 1; all others are reserved [WIRE-002]. */
    public static final int DEFINED = ACK_REQ | SOLICITED | LAST | RETRANSMIT | TRIMMED | ATTACHED_ACK;

    private Flags() {
    }

    /**
     * Renders flags as "A|S|L|R|T|K" letters for logs and tools.
     *
     * @param flags flag word
     * @return letters of the set flags, or "-" when none
     */
    public static String toString(final int flags) {
        final StringBuilder sb = new StringBuilder(11);
        append(sb, flags, ACK_REQ, "A");
        append(sb, flags, SOLICITED, "S");
        append(sb, flags, LAST, "L");
        append(sb, flags, RETRANSMIT, "R");
        append(sb, flags, TRIMMED, "T");
        append(sb, flags, ATTACHED_ACK, "K");
        return sb.length() == 0 ? "-" : sb.toString();
    }

    private static void append(final StringBuilder sb, final int flags, final int bit, final String name) {
        if ((flags & bit) != 0) {
            if (sb.length() > 0) {
                sb.append('|');
            }
            sb.append(name);
        }
    }
}
