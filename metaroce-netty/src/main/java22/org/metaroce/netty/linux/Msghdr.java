// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty.linux;

/**
 * Offsets in {@code struct mmsghdr}, {@code struct iovec} and {@code struct cmsghdr} on the 64-bit
 * Linux ABIs (x86_64 and aarch64 lay them out identically: natural alignment, 8-byte pointers and
 * {@code size_t}). Plain offsets rather than a {@code MemoryLayout}: the batches write a handful
 * of fields per message on the data path, and a constant offset from a precomputed base is what
 * the JIT turns into one store.
 *
 * <pre>
 * struct msghdr {                    struct mmsghdr {
 *   void *msg_name;          @0        struct msghdr msg_hdr;   @0
 *   socklen_t msg_namelen;   @8        unsigned int msg_len;    @56
 *   (4 B padding)                    };                         (64 B, 4 B tail padding)
 *   struct iovec *msg_iov;   @16
 *   size_t msg_iovlen;       @24     struct iovec { void *iov_base @0; size_t iov_len @8; }  (16 B)
 *   void *msg_control;       @32
 *   size_t msg_controllen;   @40     struct cmsghdr { size_t cmsg_len @0; int cmsg_level @8;
 *   int msg_flags;           @48                      int cmsg_type @12; data @16 }
 * };                                 CMSG_ALIGN(n) = n rounded up to 8; CMSG_LEN(n) = 16 + n;
 *                                    CMSG_SPACE(n) = 16 + CMSG_ALIGN(n)
 * </pre>
 */
final class Msghdr {
    static final int NAME = 0;
    static final int NAMELEN = 8;
    static final int IOV = 16;
    static final int IOVLEN = 24;
    static final int CONTROL = 32;
    static final int CONTROLLEN = 40;
    static final int FLAGS = 48;
    /** {@code mmsghdr.msg_len}: bytes sent or received for this message. */
    static final int MSG_LEN = 56;
    /** {@code sizeof(struct mmsghdr)}. */
    static final int MMSGHDR_SIZE = 64;

    static final int IOV_BASE = 0;
    static final int IOV_LEN = 8;
    /** {@code sizeof(struct iovec)}. */
    static final int IOVEC_SIZE = 16;

    static final int CMSG_LEN = 0;
    static final int CMSG_LEVEL = 8;
    static final int CMSG_TYPE = 12;
    /** {@code CMSG_DATA} offset, {@code sizeof(struct cmsghdr)}. */
    static final int CMSG_DATA = 16;

    private Msghdr() {
    }

    /** @return {@code CMSG_ALIGN(n)}: cmsgs are aligned to {@code size_t} */
    static long cmsgAlign(final long n) {
        return (n + 7) & ~7L;
    }

    /** @return {@code CMSG_SPACE(n)}: buffer room for a cmsg with {@code n} data bytes */
    static int cmsgSpace(final int n) {
        return CMSG_DATA + (int) cmsgAlign(n);
    }
}
