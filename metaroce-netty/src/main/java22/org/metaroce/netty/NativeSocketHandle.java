// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty;

import org.metaroce.netty.linux.LinuxUdpSocket;

/**
 * What the epoll-based waiting ({@link EpollInterest}, {@link NativeReadinessWaiter}) needs of a
 * native socket: its descriptor and its error queue. A narrow view, so that the waiting classes
 * do not depend on {@link NativeUdpSocket}, which itself waits through them.
 */
interface NativeSocketHandle {
    /** @return the kernel socket */
    LinuxUdpSocket linuxSocket();

    /** @return the socket's error queue, read when epoll reports EPOLLERR for it */
    NativeErrorQueue errorQueue();
}
