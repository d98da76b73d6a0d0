// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty;

/**
 * Why a {@link UdpSocket} stopped taking a {@link SendBatch}: the kernel's error for the datagram
 * after the ones it took. Each maps to one outcome in the sink.
 */
public enum SendFailure {
    /** EAGAIN / EWOULDBLOCK: the socket's send buffer is full. The rest is kept and sent again later. */
    WOULD_BLOCK,
    /** ENOBUFS: the host dropped the datagram (queue or memory). Counted as a send error; the protocol retransmits. */
    NO_BUFFERS,
    /** EMSGSIZE: larger than the path allows. Counted; a segmented message turns UDP GSO off. */
    MESSAGE_TOO_LONG,
    /**
     * ECONNREFUSED: an ICMP "port unreachable" from an earlier datagram, reported by this send.
     * The error is consumed by the report: a datagram with an address is sent once more, one to
     * the connected peer is dropped and counted.
     */
    PEER_UNREACHABLE,
    /** EPERM / EACCES: a firewall rule refused the datagram. Counted as a send error. */
    NOT_PERMITTED,
    /** The socket is closed. Counted as a send error. */
    CLOSED,
    /**
     * EIO: the kernel cannot send this GSO message on its route (a UDP-Lite socket, or an IPsec
     * transform on the route). Counted; a segmented message turns GSO off.
     */
    IO_ERROR,
    /** Any other error (EINVAL for a refused GSO message, ...). Counted; a segmented message turns GSO off. */
    OTHER
}
