// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty.linux;

/**
 * Constants of the Linux UAPI headers the sockets use, with the header each comes from. The
 * values are those of the generic Linux ABI shared by x86_64 and aarch64 (the architectures
 * {@link NativeUdp} admits); the few that differ between architectures elsewhere (e.g. on MIPS,
 * SPARC or Alpha) are not needed here.
 */
final class Uapi {
    // <linux/socket.h>, <bits/socket_type.h>
    static final int AF_UNSPEC = 0;
    static final int AF_INET = 2;
    static final int AF_INET6 = 10;
    static final int SOCK_DGRAM = 2;
    static final int SOCK_NONBLOCK = 0x800;       // == O_NONBLOCK (04000)
    static final int SOCK_CLOEXEC = 0x80000;      // == O_CLOEXEC (02000000)

    // <asm-generic/socket.h>
    static final int SOL_SOCKET = 1;
    static final int SO_REUSEADDR = 2;
    static final int SO_ERROR = 4;
    static final int SO_SNDBUF = 7;
    static final int SO_RCVBUF = 8;
    /** SO_TIMESTAMPNS_OLD, whose SCM_TIMESTAMPNS carries a {@code timespec} of two longs on 64-bit Linux. */
    static final int SO_TIMESTAMPNS = 35;
    static final int SCM_TIMESTAMPNS = SO_TIMESTAMPNS;
    // <linux/time.h>
    static final int CLOCK_REALTIME = 0;

    // <linux/in.h>, <linux/in6.h>
    static final int IPPROTO_IP = 0;
    static final int IPPROTO_UDP = 17;
    static final int IPPROTO_IPV6 = 41;
    static final int IPPROTO_UDPLITE = 136;
    static final int IP_TOS = 1;
    static final int IP_MTU_DISCOVER = 10;
    static final int IP_PMTUDISC_WANT = 1;
    static final int IP_PMTUDISC_DO = 2;
    static final int IPV6_MTU_DISCOVER = 23;
    static final int IPV6_PMTUDISC_WANT = 1;
    static final int IPV6_PMTUDISC_DO = 2;
    static final int IP_RECVERR = 11;
    static final int IP_RECVTOS = 13;
    static final int IPV6_RECVERR = 25;
    static final int IPV6_V6ONLY = 26;
    static final int IPV6_RECVTCLASS = 66;
    static final int IPV6_TCLASS = 67;

    // <linux/udp.h>: SOL_UDP is IPPROTO_UDP
    static final int SOL_UDP = IPPROTO_UDP;
    static final int UDP_SEGMENT = 103;
    static final int UDP_GRO = 104;

    // <linux/socket.h>: msghdr.msg_flags on receive, recvmsg flags
    static final int MSG_CTRUNC = 0x8;
    static final int MSG_TRUNC = 0x20;
    static final int MSG_DONTWAIT = 0x40;
    static final int MSG_ERRQUEUE = 0x2000;

    // <linux/eventpoll.h>
    static final int EPOLL_CLOEXEC = 0x80000;
    static final int EPOLL_CTL_ADD = 1;
    static final int EPOLL_CTL_DEL = 2;
    static final int EPOLL_CTL_MOD = 3;

    // <linux/eventfd.h>
    static final int EFD_CLOEXEC = 0x80000;
    static final int EFD_NONBLOCK = 0x800;

    // <asm-generic/mman-common.h>, <linux/mman.h>: the page of Syscalls' stubs
    static final int PROT_READ = 0x1;
    static final int PROT_WRITE = 0x2;
    static final int PROT_EXEC = 0x4;
    static final int MAP_PRIVATE = 0x02;
    static final int MAP_ANONYMOUS = 0x20;

    private Uapi() {
    }
}
