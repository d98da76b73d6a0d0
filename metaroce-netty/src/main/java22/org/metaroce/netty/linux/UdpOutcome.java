// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty.linux;

/**
 * What a {@code sendmmsg}/{@code recvmmsg} call came to, for counting: every result of
 * {@link LinuxUdpSocket#send} and {@link LinuxUdpSocket#receive} maps to exactly one outcome
 * through {@link #of(int)}, without allocating. The data path never throws for these; a counter
 * array indexed by {@link #ordinal()} is the intended use.
 */
public enum UdpOutcome {
    /** At least one message was sent or received. */
    OK,
    /** Nothing to receive, or no room to send ({@code EAGAIN}): the call returned 0. */
    WOULD_BLOCK,
    /** {@code ENOBUFS}: the device queue or socket memory is exhausted; the message was not sent. */
    NO_BUFFERS,
    /** {@code EMSGSIZE}: the datagram (or a GSO segment) is larger than the socket or path allows. */
    MESSAGE_TOO_LONG,
    /** {@code ECONNREFUSED}: an ICMP port unreachable came back (reported on connected sockets). */
    CONNECTION_REFUSED,
    /** {@code ENETUNREACH} or {@code EHOSTUNREACH}: no route, or an ICMP unreachable came back. */
    UNREACHABLE,
    /** {@code EPERM}: a firewall rule (netfilter) rejected the datagram. */
    NOT_PERMITTED,
    /** {@code EIO}: the device reported an I/O error. */
    IO_ERROR,
    /** {@code EINTR}: a signal interrupted the call before anything was transferred; call again. */
    INTERRUPTED,
    /** Any other errno (programming errors such as {@code EBADF} or {@code EINVAL} among them). */
    OTHER;

    /**
     * @param result what {@link LinuxUdpSocket#send} or {@link LinuxUdpSocket#receive} returned:
     *     a count of messages, or a negated errno
     * @return its outcome
     */
    public static UdpOutcome of(final int result) {
        if (result > 0) {
            return OK;
        }
        if (result == 0) {
            return WOULD_BLOCK;
        }
        return ofErrno(-result);
    }

    /** @return the outcome of a call that failed with {@code errno} */
    public static UdpOutcome ofErrno(final int errno) {
        return switch (errno) {
            case Errno.EAGAIN -> WOULD_BLOCK;
            case Errno.ENOBUFS -> NO_BUFFERS;
            case Errno.EMSGSIZE -> MESSAGE_TOO_LONG;
            case Errno.ECONNREFUSED -> CONNECTION_REFUSED;
            case Errno.ENETUNREACH, Errno.EHOSTUNREACH -> UNREACHABLE;
            case Errno.EPERM -> NOT_PERMITTED;
            case Errno.EIO -> IO_ERROR;
            case Errno.EINTR -> INTERRUPTED;
            default -> OTHER;
        };
    }
}
