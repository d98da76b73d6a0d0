// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty;

import java.util.concurrent.TimeUnit;

import org.metaroce.netty.linux.Epoll;
import org.metaroce.netty.linux.ErrnoException;

/**
 * A {@link ReadinessWaiter} over native endpoint sockets: one {@code epoll_wait} for every device
 * of a driver thread, woken by an {@code eventfd}, and by send sockets that become writable while
 * a batch waits on them. A socket the wait reports {@code EPOLLERR} for has its error queue read
 * before the wait returns (else every later wait would end at once). Built through
 * {@link NativeTransportLoader}.
 */
final class NativeReadinessWaiter implements ReadinessWaiter {
    /** Ready descriptors read per wait: readiness is the whole answer, the duty cycle reads every socket. */
    private static final int EVENTS = 16;

    private final Epoll epoll;
    private final EpollInterest interest;

    NativeReadinessWaiter() throws ErrnoException {
        epoll = new Epoll(EVENTS);
        interest = new EpollInterest(epoll);
    }

    @Override
    public void watch(final PolledUdpSocket socket) throws ErrnoException {
        final NativeSocketHandle nat = (NativeSocketHandle) socket;
        interest.watchReadable(nat.linuxSocket(), nat.errorQueue());
    }

    @Override
    public void unwatch(final PolledUdpSocket socket) {
        interest.unwatchReadable(((NativeSocketHandle) socket).linuxSocket());
    }

    @Override
    public void watchWritable(final UdpSocket socket) {
        interest.watchWritable(socket);
    }

    @Override
    public void unwatchWritable(final UdpSocket socket) {
        interest.unwatchWritable(socket);
    }

    @Override
    public void await(final long timeoutNs) {
        interest.readErrorQueues(epoll.awaitNanos(timeoutNs));
    }

    @Override
    public boolean awaitsToTheNanosecond() {
        return epoll.nanosecondWaits();
    }

    @Override
    public void wakeup() {
        epoll.wakeUp();
    }

    @Override
    public void close() {
        epoll.close();
    }
}
