// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.verbs;

/**
 * Memory-region and queue-pair access rights, bit-compatible in meaning with libibverbs
 * {@code IBV_ACCESS_*}. A region grants rights to its keys; a queue pair additionally limits
 * which remote operations it will serve at all.
 */
public final class AccessFlags {
    /** The local side may write the memory (receive targets, READ and atomic results). */
    public static final int LOCAL_WRITE = 1;
    /** Peers may RDMA WRITE into the memory. */
    public static final int REMOTE_WRITE = 2;
    /** Peers may RDMA READ the memory. */
    public static final int REMOTE_READ = 4;
    /** Peers may perform atomic operations on the memory. */
    public static final int REMOTE_ATOMIC = 8;
    /** Every bit defined above; any other bit is rejected. */
    public static final int ALL = LOCAL_WRITE | REMOTE_WRITE | REMOTE_READ | REMOTE_ATOMIC;

    private AccessFlags() {
    }

    /**
     * Checks region access flags against the verbs rule: memory that peers may change must be
     * writable locally too (ibv_reg_mr fails with EINVAL otherwise), because the local side
     * cannot be promised read-only memory that a peer can overwrite.
     *
     * @param access the flags
     * @return {@code access}, for chaining
     * @throws IllegalArgumentException naming the broken rule or the unknown bits
     */
    public static int validate(final int access) {
        requireKnown(access);
        if ((access & (REMOTE_WRITE | REMOTE_ATOMIC)) != 0 && (access & LOCAL_WRITE) == 0) {
            throw new IllegalArgumentException("access flags " + toString(access)
                + " violate the verbs rule: REMOTE_WRITE or REMOTE_ATOMIC requires LOCAL_WRITE");
        }
        return access;
    }

    /**
     * Rejects bits outside {@link #ALL}, without the LOCAL_WRITE rule (queue-pair access flags
     * only say which remote operations a QP serves).
     *
     * @param access the flags
     * @return {@code access}, for chaining
     * @throws IllegalArgumentException if an unknown bit is set
     */
    public static int requireKnown(final int access) {
        if ((access & ~ALL) != 0) {
            throw new IllegalArgumentException("unknown access flag bits 0x"
                + Integer.toHexString(access & ~ALL) + " in " + toString(access)
                + " (allowed: LOCAL_WRITE|REMOTE_WRITE|REMOTE_READ|REMOTE_ATOMIC)");
        }
        return access;
    }

    /**
     * @param access the flags
     * @param flag one flag
     * @return whether {@code flag} is set in {@code access}
     */
    public static boolean has(final int access, final int flag) {
        return (access & flag) == flag;
    }

    /**
     * Renders flags for error messages and logs.
     *
     * @param access the flags
     * @return e.g. "LOCAL_WRITE|REMOTE_READ", "NONE" for zero, unknown bits as hex
     */
    public static String toString(final int access) {
        if (access == 0) {
            return "NONE";
        }
        final StringBuilder sb = new StringBuilder(48);
        append(sb, access, LOCAL_WRITE, "LOCAL_WRITE");
        append(sb, access, REMOTE_WRITE, "REMOTE_WRITE");
        append(sb, access, REMOTE_READ, "REMOTE_READ");
        append(sb, access, REMOTE_ATOMIC, "REMOTE_ATOMIC");
        final int unknown = access & ~ALL;
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
