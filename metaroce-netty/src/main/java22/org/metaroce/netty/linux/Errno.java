// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty.linux;

/**
 * The errno values the sockets react to ({@code <asm-generic/errno-base.h>},
 * {@code <asm-generic/errno.h>}) and their names for messages.
 */
public final class Errno {
    /** Operation not permitted (e.g. a firewall rule rejected a send). */
    public static final int EPERM = 1;
    /** Interrupted system call. */
    public static final int EINTR = 4;
    /** I/O error. */
    public static final int EIO = 5;
    /** Bad file descriptor. */
    public static final int EBADF = 9;
    /** Try again: a non-blocking call would block. */
    public static final int EAGAIN = 11;
    /** Out of memory. */
    public static final int ENOMEM = 12;
    /** Permission denied. */
    public static final int EACCES = 13;
    /** ENOSYS: the running kernel has no such system call (epoll_pwait2 before Linux 5.11); the waits fall back to epoll_wait. */
    public static final int ENOSYS = 38;
    /** Invalid argument. */
    public static final int EINVAL = 22;
    /** Message too long for the socket or the path. */
    public static final int EMSGSIZE = 90;
    /** Protocol not available (e.g. a socket option the kernel does not know). */
    public static final int ENOPROTOOPT = 92;
    /** Address family not supported (e.g. IPv6 disabled). */
    public static final int EAFNOSUPPORT = 97;
    /** Address already in use. */
    public static final int EADDRINUSE = 98;
    /** Cannot assign the requested address. */
    public static final int EADDRNOTAVAIL = 99;
    /** Network is unreachable. */
    public static final int ENETUNREACH = 101;
    /** No buffer space available: the device queue or socket memory is exhausted. */
    public static final int ENOBUFS = 105;
    /** Connection refused: an ICMP port unreachable came back on a connected socket. */
    public static final int ECONNREFUSED = 111;
    /** No route to host. */
    public static final int EHOSTUNREACH = 113;

    private Errno() {
    }

    /** @return the symbolic name of {@code errno}, or {@code "errno N"} for one not listed here */
    public static String name(final int errno) {
        return switch (errno) {
            case EPERM -> "EPERM";
            case EINTR -> "EINTR";
            case EIO -> "EIO";
            case EBADF -> "EBADF";
            case EAGAIN -> "EAGAIN";
            case ENOMEM -> "ENOMEM";
            case EACCES -> "EACCES";
            case ENOSYS -> "ENOSYS";
            case EINVAL -> "EINVAL";
            case EMSGSIZE -> "EMSGSIZE";
            case ENOPROTOOPT -> "ENOPROTOOPT";
            case EAFNOSUPPORT -> "EAFNOSUPPORT";
            case EADDRINUSE -> "EADDRINUSE";
            case EADDRNOTAVAIL -> "EADDRNOTAVAIL";
            case ENETUNREACH -> "ENETUNREACH";
            case ENOBUFS -> "ENOBUFS";
            case ECONNREFUSED -> "ECONNREFUSED";
            case EHOSTUNREACH -> "EHOSTUNREACH";
            default -> "errno " + errno;
        };
    }
}
