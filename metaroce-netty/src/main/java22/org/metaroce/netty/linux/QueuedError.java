// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty.linux;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * One entry of a socket's error queue, read with {@code recvmsg(fd, msg, MSG_ERRQUEUE)}
 * ({@link LinuxUdpSocket#receiveError(QueuedError)}) into memory allocated once: the {@code msghdr},
 * a small payload buffer (the kernel returns the start of the offending datagram, which nobody
 * here needs), the original destination and a control buffer, whose {@code IP_RECVERR} /
 * {@code IPV6_RECVERR} message carries the {@code struct sock_extended_err} of
 * {@code <linux/errqueue.h>}:
 *
 * <pre>
 * struct sock_extended_err {      (16 B, followed in the cmsg by the offender's sockaddr)
 *   __u32 ee_errno;   @0          the errno the error stands for (ECONNREFUSED, EMSGSIZE, ...)
 *   __u8  ee_origin;  @4          SO_EE_ORIGIN_LOCAL 1, _ICMP 2, _ICMP6 3 (others: timestamping, zerocopy)
 *   __u8  ee_type;    @5          ICMP type
 *   __u8  ee_code;    @6          ICMP code
 *   __u8  ee_pad;     @7
 *   __u32 ee_info;    @8          the path MTU for EMSGSIZE
 *   __u32 ee_data;    @12
 * };
 * </pre>
 *
 * The decoded fields are read through getters until the next read into this object; nothing is
 * allocated per entry. Also holds the memory of a {@code getsockopt(SO_ERROR)}
 * ({@link LinuxUdpSocket#takePendingError(QueuedError)}). One thread at a time.
 */
public final class QueuedError implements AutoCloseable {
    /** {@code SO_EE_ORIGIN_NONE}. */
    public static final int ORIGIN_NONE = 0;
    /** {@code SO_EE_ORIGIN_LOCAL}: the host's own stack (e.g. a datagram larger than the route's MTU). */
    public static final int ORIGIN_LOCAL = 1;
    /** {@code SO_EE_ORIGIN_ICMP}: an ICMP error. */
    public static final int ORIGIN_ICMP = 2;
    /** {@code SO_EE_ORIGIN_ICMP6}: an ICMPv6 error. */
    public static final int ORIGIN_ICMP6 = 3;
    /** {@link #origin()} when the entry carried no {@code sock_extended_err} (a malformed entry). */
    public static final int NOT_REPORTED = -1;

    /** Bytes of the offending datagram read back: none are needed, the buffer only gives the call somewhere to write. */
    private static final int PAYLOAD = 64;
    /**
     * Control room: the error (16 B + a 28 B offender, {@code CMSG_SPACE} 64 B) and what the
     * socket asked for besides, which {@code ip_recv_error} adds for ICMP errors ({@code IP_TOS},
     * {@code IPV6_TCLASS}, {@code SCM_TIMESTAMPNS}, about 80 B), with room to spare.
     */
    private static final int CONTROL_SPACE = 256;
    private static final int EXTENDED_ERR_SIZE = 16;

    private final Arena arena = Arena.ofShared();
    private final MemorySegment header;
    private final MemorySegment control;
    private final MemorySegment value;
    private final MemorySegment valueLength;
    private int errno;
    private int origin = NOT_REPORTED;
    private int type;
    private int code;
    private int info;
    private boolean controlTruncated;

    /** Allocates the native memory. */
    public QueuedError() {
        header = arena.allocate(Msghdr.MMSGHDR_SIZE, 8);
        final MemorySegment iovec = arena.allocate(Msghdr.IOVEC_SIZE, 8);
        final MemorySegment payload = arena.allocate(PAYLOAD, 8);
        final MemorySegment name = arena.allocate(Sockaddr.SLOT, 8);
        control = arena.allocate(CONTROL_SPACE, 8);
        value = arena.allocate(JAVA_INT);
        valueLength = arena.allocate(JAVA_INT);
        iovec.set(JAVA_LONG, Msghdr.IOV_BASE, payload.address());
        iovec.set(JAVA_LONG, Msghdr.IOV_LEN, (long) PAYLOAD);
        header.set(JAVA_LONG, Msghdr.NAME, name.address());
        header.set(JAVA_LONG, Msghdr.IOV, iovec.address());
        header.set(JAVA_LONG, Msghdr.IOVLEN, 1L);
        header.set(JAVA_LONG, Msghdr.CONTROL, control.address());
    }

    /**
     * @return the errno the entry stands for (e.g. {@code ECONNREFUSED} for an ICMP port
     *     unreachable, {@code EMSGSIZE} for "fragmentation needed"); 0 when {@link #origin()} is
     *     {@link #NOT_REPORTED}
     */
    public int errno() {
        return errno;
    }

    /** @return {@code ee_origin} ({@link #ORIGIN_LOCAL}, {@link #ORIGIN_ICMP}, ...), or {@link #NOT_REPORTED} */
    public int origin() {
        return origin;
    }

    /** @return the ICMP type of an ICMP error */
    public int icmpType() {
        return type;
    }

    /** @return the ICMP code of an ICMP error */
    public int icmpCode() {
        return code;
    }

    /** @return {@code ee_info}: the path MTU of an {@code EMSGSIZE} entry */
    public int info() {
        return info;
    }

    /** @return whether the kernel had more control messages than fit ({@code MSG_CTRUNC}) */
    public boolean controlTruncated() {
        return controlTruncated;
    }

    /** Resets what the kernel overwrites: name and control lengths. */
    void prepare() {
        header.set(JAVA_INT, Msghdr.NAMELEN, Sockaddr.SLOT);
        header.set(JAVA_LONG, Msghdr.CONTROLLEN, (long) CONTROL_SPACE);
        header.set(JAVA_INT, Msghdr.FLAGS, 0);
    }

    /** @return the {@code msghdr} for {@code recvmsg} */
    MemorySegment header() {
        return header;
    }

    /** @return the control buffer the kernel writes the entry's control messages into */
    MemorySegment control() {
        return control;
    }

    /** @return an int for {@code getsockopt}, and its length (set to 4 here) */
    MemorySegment value() {
        return value;
    }

    MemorySegment valueLength() {
        valueLength.set(JAVA_INT, 0, (int) JAVA_INT.byteSize());
        return valueLength;
    }

    /** Decodes the entry the kernel wrote: walks the control messages for the extended error. */
    void received() {
        errno = 0;
        origin = NOT_REPORTED;
        type = 0;
        code = 0;
        info = 0;
        controlTruncated = (header.get(JAVA_INT, Msghdr.FLAGS) & Uapi.MSG_CTRUNC) != 0;
        final long controlLength = Math.min(header.get(JAVA_LONG, Msghdr.CONTROLLEN), CONTROL_SPACE);
        long offset = 0;
        while (offset + Msghdr.CMSG_DATA <= controlLength) {
            final long length = control.get(JAVA_LONG, offset + Msghdr.CMSG_LEN);
            if (length < Msghdr.CMSG_DATA || offset + length > controlLength) {
                break;
            }
            final int level = control.get(JAVA_INT, offset + Msghdr.CMSG_LEVEL);
            final int cmsgType = control.get(JAVA_INT, offset + Msghdr.CMSG_TYPE);
            final boolean error = level == Uapi.IPPROTO_IP && cmsgType == Uapi.IP_RECVERR
                || level == Uapi.IPPROTO_IPV6 && cmsgType == Uapi.IPV6_RECVERR;
            if (error && length - Msghdr.CMSG_DATA >= EXTENDED_ERR_SIZE) {
                final long data = offset + Msghdr.CMSG_DATA;
                errno = control.get(JAVA_INT, data);
                origin = control.get(JAVA_BYTE, data + 4) & 0xFF;
                type = control.get(JAVA_BYTE, data + 5) & 0xFF;
                code = control.get(JAVA_BYTE, data + 6) & 0xFF;
                info = control.get(JAVA_INT, data + 8);
                return;
            }
            offset += Msghdr.cmsgAlign(length);
        }
    }

    /** Releases the native memory. */
    @Override
    public void close() {
        arena.close();
    }
}
