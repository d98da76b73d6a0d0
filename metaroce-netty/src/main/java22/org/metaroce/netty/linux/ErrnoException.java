// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty.linux;

import java.io.IOException;

/**
 * A setup call (socket, bind, connect, setsockopt, epoll_ctl, ...) failed. The data path never
 * throws this: {@code sendmmsg}/{@code recvmmsg} failures are {@link UdpOutcome}s.
 */
public final class ErrnoException extends IOException {
    private static final long serialVersionUID = 1L;

    /** The errno of the failed call. */
    private final int errno;

    /**
     * @param call what was called, with its arguments where they explain the failure
     *     (e.g. {@code "setsockopt(SO_RCVBUF, 8388608)"})
     * @param errno the errno the call left
     */
    public ErrnoException(final String call, final int errno) {
        super(call + " failed: " + Errno.name(errno));
        this.errno = errno;
    }

    /** @return the errno of the failed call ({@link Errno}) */
    public int errno() {
        return errno;
    }
}
