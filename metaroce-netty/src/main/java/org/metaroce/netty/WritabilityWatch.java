// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty;

/**
 * Where the sink registers a send socket that left part of its batch unsent because its buffer
 * was full ({@link SendFailure#WOULD_BLOCK}), so that a driver blocked in a readiness wait wakes
 * as soon as the socket can take datagrams again, instead of at the end of its idle wait. The
 * sink watches a socket from the hand-over that found it full until the one that empties its
 * batch, then unwatches it (a writable socket would otherwise end every wait at once).
 *
 * <p>Owning thread only.
 */
interface WritabilityWatch {
    /**
     * For a thread that never blocks in a readiness wait (spinning, backoff) or a transport whose
     * own event loop flushes what it queued: a full socket is tried again at the next duty cycle,
     * so there is nothing to watch.
     */
    WritabilityWatch NONE = new WritabilityWatch() {
        @Override
        public void watchWritable(final UdpSocket socket) {
            // The next duty cycle comes without a wait: it hands the batch over again.
        }

        @Override
        public void unwatchWritable(final UdpSocket socket) {
            // Nothing was watched.
        }
    };

    /** @param socket a send socket whose buffer is full: end the wait when it becomes writable */
    void watchWritable(UdpSocket socket);

    /** @param socket a socket passed to {@link #watchWritable} whose batch is now empty (or dropped) */
    void unwatchWritable(UdpSocket socket);
}
