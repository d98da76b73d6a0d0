// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.verbs;

/**
 * Checks the shape of a work request at post time, the way a NIC driver does before ringing the
 * doorbell, so that most local mistakes fail synchronously with a {@link PostStatus} code
 * instead of as an error completion later. Allocation-free and exception-free for any request
 * content (null arguments are programming errors and throw).
 *
 * <p>Every SGE is resolved through the key space and checked with
 * {@link MemoryRegion#checkLocal(long, int, boolean)}: the engine will later read or write the
 * bytes through the region's buffer, never through a raw address. The overloads taking a
 * {@link ProtectionDomain} additionally reject lkeys of other domains, which a QP must do; the
 * {@link MemoryKeySpace} overloads accept any live lkey.
 *
 * <p>Checks run in this order and the first failure wins: opcode present and flags known;
 * SGE count; operation-specific shape (atomics, INLINE); per SGE length, lkey, permission and
 * bounds; total length; inline size.
 */
public final class WorkRequestValidator {
    /** Largest message in bytes, the protocol's limit on Message Length ([WIRE-031]). */
    public static final long MAX_MESSAGE_SIZE = 1L << 31;

    private WorkRequestValidator() {
    }

    /**
     * @param wr request to check
     * @param keys key space resolving lkeys
     * @param maxSge the QP's SGE limit for sends
     * @param maxInline the QP's inline limit in bytes
     * @return a {@link PostStatus} code
     */
    public static int validateSend(final SendRequest wr, final MemoryKeySpace keys, final int maxSge, final int maxInline) {
        return validateSend(wr, keys, null, maxSge, maxInline);
    }

    /**
     * @param wr request to check
     * @param pd the QP's protection domain; lkeys of other domains are {@link PostStatus#INVALID_LKEY}
     * @param maxSge the QP's SGE limit for sends
     * @param maxInline the QP's inline limit in bytes
     * @return a {@link PostStatus} code
     */
    public static int validateSend(final SendRequest wr, final ProtectionDomain pd, final int maxSge, final int maxInline) {
        return validateSend(wr, pd.keySpace(), pd, maxSge, maxInline);
    }

    /**
     * @param wr request to check
     * @param keys key space resolving lkeys
     * @param maxSge the QP's SGE limit for receives
     * @return a {@link PostStatus} code
     */
    public static int validateRecv(final RecvRequest wr, final MemoryKeySpace keys, final int maxSge) {
        return validateRecv(wr, keys, null, maxSge);
    }

    /**
     * @param wr request to check
     * @param pd the QP's protection domain; lkeys of other domains are {@link PostStatus#INVALID_LKEY}
     * @param maxSge the QP's SGE limit for receives
     * @return a {@link PostStatus} code
     */
    public static int validateRecv(final RecvRequest wr, final ProtectionDomain pd, final int maxSge) {
        return validateRecv(wr, pd.keySpace(), pd, maxSge);
    }

    private static int validateSend(
        final SendRequest wr,
        final MemoryKeySpace keys,
        final ProtectionDomain pd,
        final int maxSge,
        final int maxInline) {
        final WrOpcode opcode = wr.opcode();
        final int flags = wr.sendFlags();
        if (opcode == null || (flags & ~SendFlags.ALL) != 0) {
            return PostStatus.INVALID_ARGUMENT;
        }
        final int numSge = wr.numSge();
        if (numSge > maxSge) {
            return PostStatus.TOO_MANY_SGE;
        }
        final boolean inline = (flags & SendFlags.INLINE) != 0;
        if (opcode.isAtomic()) {
            if (inline || numSge != 1 || wr.sge(0).length() != 8 || (wr.remoteAddr() & 7) != 0) {
                return PostStatus.INVALID_ARGUMENT;
            }
        } else if (inline && opcode == WrOpcode.RDMA_READ) {
            return PostStatus.INVALID_ARGUMENT;
        }
        final boolean needWrite = opcode.writesLocalMemory();
        long total = 0;
        for (int i = 0; i < numSge; i++) {
            final ScatterGatherEntry sge = wr.sge(i);
            final int result = checkSge(sge, keys, pd, needWrite);
            if (result != PostStatus.OK) {
                return result;
            }
            total += sge.length();
        }
        if (total > MAX_MESSAGE_SIZE) {
            return PostStatus.LOCAL_LENGTH_ERROR;
        }
        if (inline && total > maxInline) {
            return PostStatus.INLINE_TOO_LARGE;
        }
        return PostStatus.OK;
    }

    private static int validateRecv(
        final RecvRequest wr,
        final MemoryKeySpace keys,
        final ProtectionDomain pd,
        final int maxSge) {
        final int numSge = wr.numSge();
        if (numSge > maxSge) {
            return PostStatus.TOO_MANY_SGE;
        }
        long total = 0;
        for (int i = 0; i < numSge; i++) {
            final ScatterGatherEntry sge = wr.sge(i);
            final int result = checkSge(sge, keys, pd, true);
            if (result != PostStatus.OK) {
                return result;
            }
            total += sge.length();
        }
        return total > MAX_MESSAGE_SIZE ? PostStatus.LOCAL_LENGTH_ERROR : PostStatus.OK;
    }

    private static int checkSge(
        final ScatterGatherEntry sge,
        final MemoryKeySpace keys,
        final ProtectionDomain pd,
        final boolean needWrite) {
        if (sge.length() < 0) {
            return PostStatus.LOCAL_LENGTH_ERROR;
        }
        final MemoryRegion region = pd != null ? pd.lookupLkey(sge.lkey()) : keys.lookupLkey(sge.lkey());
        if (region == null) {
            return PostStatus.INVALID_LKEY;
        }
        switch (region.checkLocal(sge.addr(), sge.length(), needWrite)) {
            case MemoryAccessResult.OK:
                return PostStatus.OK;
            case MemoryAccessResult.INVALID_KEY:
                return PostStatus.INVALID_LKEY;
            default:
                return PostStatus.LOCAL_PROTECTION;
        }
    }
}
