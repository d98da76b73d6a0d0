// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty;

/** Whether a {@link UdpSocket} holds datagrams it has not yet handed to the kernel. */
public enum OutboundState {
    /** Nothing waits in the transport: a send goes to the kernel at once. */
    IDLE,
    /** Datagrams wait in the transport's queue, below its high water mark. */
    QUEUED,
    /** The transport's queue is above its high water mark: the sink takes no new packets. */
    BACKED_UP
}
