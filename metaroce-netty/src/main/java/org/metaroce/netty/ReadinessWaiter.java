// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty;

/**
 * Blocks a driver thread until one of the polled endpoint sockets it watches has something to
 * read, {@link #wakeup()} is called, or a timeout passes: what the event loop's wait is for Netty
 * sockets, for a transport whose sockets the owning thread reads itself (the native transport, one
 * {@code epoll_wait} over every device of a {@link SharedDriver}). It only waits: the next duty
 * cycle reads. It also ends when a send socket that the sink registered ({@link WritabilityWatch})
 * can take datagrams again.
 *
 * <p>Owning thread only, except {@link #wakeup()}.
 */
interface ReadinessWaiter extends WritabilityWatch, AutoCloseable {
    /**
     * @param socket an endpoint socket of the same transport, to watch from now on
     * @throws java.io.IOException if the kernel refuses
     */
    void watch(PolledUdpSocket socket) throws java.io.IOException;

    /** @param socket a watched socket, to watch no longer (before it is closed) */
    void unwatch(PolledUdpSocket socket);

    /**
     * @param timeoutNs longest wait (to the nanosecond when {@link #awaitsToTheNanosecond()},
     *     else rounded up to the kernel's milliseconds)
     */
    void await(long timeoutNs);

    /** @return whether {@link #await} keeps to timeouts shorter than a millisecond */
    boolean awaitsToTheNanosecond();

    /** Ends a current (or the next) {@link #await} at once. Any thread. */
    void wakeup();

    /** Releases the waiter's descriptors (the watched sockets stay open). */
    @Override
    void close();
}
