// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty;

import org.metaroce.netty.linux.Errno;

/**
 * The {@link SendFailure} of an errno that {@code sendmmsg} returned for the first message of a
 * call: each errno the kernel gives a UDP send maps to one defined outcome of the sink.
 */
final class SendFailures {
    private SendFailures() {
    }

    /**
     * @param errno the error, positive ({@code EAGAIN} is not one: the socket reports it as 0 taken)
     * @return its outcome
     */
    static SendFailure of(final int errno) {
        return switch (errno) {
            case Errno.EAGAIN -> SendFailure.WOULD_BLOCK;
            case Errno.ENOBUFS, Errno.ENOMEM -> SendFailure.NO_BUFFERS;
            case Errno.EMSGSIZE -> SendFailure.MESSAGE_TOO_LONG;
            // ICMP errors: port unreachable reported on a connected socket, or no route / host
            // unreachable for this peer; neither says the kernel cannot segment, so GSO stays on.
            case Errno.ECONNREFUSED, Errno.ENETUNREACH, Errno.EHOSTUNREACH -> SendFailure.PEER_UNREACHABLE;
            case Errno.EPERM, Errno.EACCES -> SendFailure.NOT_PERMITTED;
            case Errno.EBADF -> SendFailure.CLOSED;
            // UDP GSO refused for the route: a UDP-Lite socket or an IPsec transform (udp_send_skb).
            case Errno.EIO -> SendFailure.IO_ERROR;
            default -> SendFailure.OTHER;
        };
    }
}
