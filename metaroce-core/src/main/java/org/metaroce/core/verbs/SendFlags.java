// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.verbs;

/** Send request flags, with the meanings of libibverbs {@code IBV_SEND_*}. */
public final class SendFlags {
    /** Generate a completion on success (errors always complete). */
    public static final int SIGNALED = 1;
    /** Do not start this request until earlier READs and atomics have completed. */
    public static final int FENCE = 2;
    /** Ask the peer to raise a solicited event for the receive completion. */
    public static final int SOLICITED = 4;
    /**
     * Copy the payload at post time so the buffers may be reused at once. Unlike verbs, the
     * SGEs must still carry valid lkeys: bytes are only ever read through a registered region,
     * so a wrong address cannot crash the JVM.
     */
    public static final int INLINE = 8;
    /** Every flag defined above. */
    public static final int ALL = SIGNALED | FENCE | SOLICITED | INLINE;

    private SendFlags() {
    }

    /**
     * @param flags send flags
     * @return e.g. "SIGNALED|INLINE", "NONE" for zero, unknown bits as hex
     */
    public static String toString(final int flags) {
        if (flags == 0) {
            return "NONE";
        }
        final StringBuilder sb = new StringBuilder(40);
        append(sb, flags, SIGNALED, "SIGNALED");
        append(sb, flags, FENCE, "FENCE");
        append(sb, flags, SOLICITED, "SOLICITED");
        append(sb, flags, INLINE, "INLINE");
        final int unknown = flags & ~ALL;
        if (unknown != 0) {
            if (sb.length() > 0) {
                sb.append('|');
            }
            sb.append("0x").append(Integer.toHexString(unknown));
        }
        return sb.toString();
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
