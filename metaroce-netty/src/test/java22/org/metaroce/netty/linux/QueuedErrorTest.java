// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty.linux;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.lang.foreign.MemorySegment;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Decoding an error-queue entry's control messages as the kernel lays them out, and entries that
 * are not what they should be: the extended error after another control message, none at all,
 * one cut short, and a control length that lies. A malformed entry decodes to
 * {@link QueuedError#NOT_REPORTED}, never an exception or a read outside the buffer.
 */
class QueuedErrorTest {
    @BeforeEach
    void available() {
        assumeTrue(NativeUdp.isAvailable(), () -> "native transport unavailable: " + NativeUdp.unavailabilityReason());
    }

    @Test
    void theExtendedErrorIsFoundAfterAnotherControlMessage() {
        try (QueuedError entry = new QueuedError()) {
            final MemorySegment c = entry.control();
            // IP_TOS (1 byte of data, CMSG_SPACE 24), as ip_recv_error puts it first when asked for.
            cmsg(c, 0, Uapi.IPPROTO_IP, Uapi.IP_TOS, 1);
            final long next = Msghdr.cmsgSpace(1);
            // IP_RECVERR: sock_extended_err (16 B) + the offender's sockaddr_in (16 B).
            final long err = cmsg(c, next, Uapi.IPPROTO_IP, Uapi.IP_RECVERR, 32);
            c.set(JAVA_INT, err, Errno.EMSGSIZE);
            c.set(JAVA_BYTE, err + 4, (byte) QueuedError.ORIGIN_ICMP);
            c.set(JAVA_BYTE, err + 5, (byte) 3);
            c.set(JAVA_BYTE, err + 6, (byte) 4);
            c.set(JAVA_INT, err + 8, 1400);
            received(entry, next + Msghdr.cmsgSpace(32), 0);
            assertThat(entry.origin()).isEqualTo(QueuedError.ORIGIN_ICMP);
            assertThat(entry.errno()).isEqualTo(Errno.EMSGSIZE);
            assertThat(entry.icmpType()).isEqualTo(3);
            assertThat(entry.icmpCode()).isEqualTo(4);
            assertThat(entry.info()).as("path MTU").isEqualTo(1400);
            assertThat(entry.controlTruncated()).isFalse();
        }
    }

    @Test
    void anIpv6ErrorIsReadFromItsOwnLevel() {
        try (QueuedError entry = new QueuedError()) {
            final long err = cmsg(entry.control(), 0, Uapi.IPPROTO_IPV6, Uapi.IPV6_RECVERR, 16 + 28);
            entry.control().set(JAVA_INT, err, Errno.ECONNREFUSED);
            entry.control().set(JAVA_BYTE, err + 4, (byte) QueuedError.ORIGIN_ICMP6);
            received(entry, Msghdr.cmsgSpace(16 + 28), 0);
            assertThat(entry.origin()).isEqualTo(QueuedError.ORIGIN_ICMP6);
            assertThat(entry.errno()).isEqualTo(Errno.ECONNREFUSED);
        }
    }

    @Test
    void malformedEntriesDecodeToNotReported() {
        try (QueuedError entry = new QueuedError()) {
            final MemorySegment c = entry.control();
            // No control message at all.
            received(entry, 0, 0);
            assertThat(entry.origin()).isEqualTo(QueuedError.NOT_REPORTED);
            assertThat(entry.errno()).isZero();

            // An IP_RECVERR too short for a sock_extended_err.
            cmsg(c, 0, Uapi.IPPROTO_IP, Uapi.IP_RECVERR, 8);
            received(entry, Msghdr.cmsgSpace(8), 0);
            assertThat(entry.origin()).isEqualTo(QueuedError.NOT_REPORTED);

            // A cmsg_len beyond the control length (and a control length beyond the buffer), cut
            // short by the kernel (MSG_CTRUNC): nothing is read past either.
            cmsg(c, 0, Uapi.IPPROTO_IP, Uapi.IP_RECVERR, 4096);
            received(entry, 1 << 20, Uapi.MSG_CTRUNC);
            assertThat(entry.origin()).isEqualTo(QueuedError.NOT_REPORTED);
            assertThat(entry.controlTruncated()).isTrue();

            // A cmsg_len smaller than a header: the walk stops instead of looping.
            c.set(JAVA_LONG, 0, 3L);
            received(entry, 64, 0);
            assertThat(entry.origin()).isEqualTo(QueuedError.NOT_REPORTED);
        }
    }

    /** Writes a cmsghdr at {@code at}; @return the offset of its data */
    private static long cmsg(final MemorySegment c, final long at, final int level, final int type, final int dataBytes) {
        c.set(JAVA_LONG, at + Msghdr.CMSG_LEN, (long) Msghdr.CMSG_DATA + dataBytes);
        c.set(JAVA_INT, at + Msghdr.CMSG_LEVEL, level);
        c.set(JAVA_INT, at + Msghdr.CMSG_TYPE, type);
        return at + Msghdr.CMSG_DATA;
    }

    /** What {@code recvmsg} leaves in the header, then decoding. */
    private static void received(final QueuedError entry, final long controlLength, final int flags) {
        entry.prepare();
        entry.header().set(JAVA_LONG, Msghdr.CONTROLLEN, controlLength);
        entry.header().set(JAVA_INT, Msghdr.FLAGS, flags);
        entry.received();
    }
}
