// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty;

import java.io.IOException;

/**
 * A {@link UdpSocket} that the owning thread reads itself, in its duty cycle, rather than an event
 * loop: the JDK's non-blocking {@code DatagramChannel}, or a native socket read with
 * {@code recvmmsg}. It delivers to the {@link DatagramReceiver} it was opened with.
 *
 * <p>Owning thread only, except {@link #wakeup()}.
 */
public interface PolledUdpSocket extends UdpSocket {
    /**
     * Reads what has arrived and hands it to the socket's receiver, until the socket is empty,
     * {@code maxDatagrams} were delivered, or the receiver asks to stop. Datagrams already read
     * from the kernel but not delivered (the receiver stopped in the middle of a batch) are
     * delivered first by the next call. Ends with {@link DatagramReceiver#onBatchEnd()} when it
     * delivered anything, also when it fails.
     *
     * @param maxDatagrams most datagrams to deliver (a GRO-coalesced datagram counts once)
     * @return datagrams delivered
     * @throws IOException if the read fails (an ICMP error reported on the socket, a closed socket)
     */
    int receive(int maxDatagrams) throws IOException;

    /**
     * Blocks until a datagram is there to read, {@link #wakeup()} is called, or {@code timeoutNs}
     * passes. It only waits: reading stays {@link #receive(int)}'s.
     *
     * @param timeoutNs longest wait in nanoseconds (a transport may round it up to its clock's unit)
     * @throws IOException if the wait fails
     */
    void awaitReadable(long timeoutNs) throws IOException;

    /**
     * @return whether {@link #awaitReadable} keeps to timeouts shorter than a millisecond (the
     *     native transport with {@code epoll_pwait2}); when not, an owner whose next deadline is
     *     that close parks instead of waiting on the socket, and does not see a datagram arrive
     *     meanwhile
     */
    default boolean awaitsToTheNanosecond() {
        return false;
    }

    /** Ends a current (or the next) {@link #awaitReadable} at once. Any thread. */
    void wakeup();
}
