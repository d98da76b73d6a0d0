// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty;

import org.agrona.collections.Int2ObjectHashMap;
import org.agrona.collections.IntHashSet;
import org.metaroce.netty.linux.Epoll;
import org.metaroce.netty.linux.ErrnoException;
import org.metaroce.netty.linux.LinuxUdpSocket;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What one {@link Epoll} watches each native socket for: endpoint sockets for reading, as long as
 * they are attached; send sockets for writability while a batch waits on them
 * ({@link WritabilityWatch}). epoll takes a descriptor once, so a socket watched both ways is one
 * registration with both events, and dropping one interest modifies it rather than removing it.
 * Changing interest allocates nothing (the sink does it on the data path when a buffer fills).
 *
 * <p>Each registration's token is its descriptor, so that a socket the wait reports
 * {@code EPOLLERR} for ({@code IP_RECVERR}: an error waits on its error queue; epoll reports it
 * whatever the interest) has its queue read ({@link #readErrorQueues}); otherwise readiness is the
 * whole answer of a wait, the next duty cycle reads and writes every socket.
 *
 * <p>Owning thread only.
 */
final class EpollInterest implements WritabilityWatch {
    private static final Logger LOG = LoggerFactory.getLogger(EpollInterest.class);

    private final Epoll epoll;
    /** Descriptors watched for reading ({@link Epoll#EPOLLIN}). */
    private final IntHashSet readable = new IntHashSet();
    /** Descriptors watched for writability ({@link Epoll#EPOLLOUT}). */
    private final IntHashSet writable = new IntHashSet();
    /** The error queue of every descriptor watched either way. */
    private final Int2ObjectHashMap<NativeErrorQueue> errorQueues = new Int2ObjectHashMap<>();

    EpollInterest(final Epoll epoll) {
        this.epoll = epoll;
    }

    /**
     * Watches {@code socket} for reading from now on.
     *
     * @param errors its error queue, read when a wait reports {@code EPOLLERR} for it
     */
    void watchReadable(final LinuxUdpSocket socket, final NativeErrorQueue errors) throws ErrnoException {
        final int fd = socket.fd();
        if (readable.contains(fd)) {
            return;
        }
        if (writable.contains(fd)) {
            epoll.modify(fd, Epoll.EPOLLIN | Epoll.EPOLLOUT, fd);
        } else {
            epoll.add(fd, Epoll.EPOLLIN, fd);
        }
        readable.add(fd);
        errorQueues.put(fd, errors);
    }

    /**
     * Reads the error queue of every socket the last wait reported {@code EPOLLERR} for: epoll is
     * level-triggered, and an error left queued would end every later wait at once.
     *
     * @param ready what {@link Epoll#await} returned
     */
    void readErrorQueues(final int ready) {
        for (int i = 0; i < ready; i++) {
            if ((epoll.readyEvents(i) & Epoll.EPOLLERR) != 0) {
                final NativeErrorQueue errors = errorQueues.get((int) epoll.readyToken(i));
                if (errors != null) {
                    errors.drainAfterEpollError();
                }
            }
        }
    }

    /** Stops watching {@code socket} for reading (before it closes: its descriptor may be reused). */
    void unwatchReadable(final LinuxUdpSocket socket) {
        final int fd = socket.fd();
        if (!readable.remove(fd)) {
            return;
        }
        change(fd, writable.contains(fd) ? Epoll.EPOLLOUT : 0);
    }

    @Override
    public void watchWritable(final UdpSocket socket) {
        final int fd = fd(socket);
        if (writable.contains(fd)) {
            return;
        }
        try {
            if (readable.contains(fd)) {
                epoll.modify(fd, Epoll.EPOLLIN | Epoll.EPOLLOUT, fd);
            } else {
                epoll.add(fd, Epoll.EPOLLOUT, fd);
            }
            writable.add(fd);
            errorQueues.put(fd, ((NativeSocketHandle) socket).errorQueue());
        } catch (final ErrnoException ex) {
            // The batch is still handed over every duty cycle: only the early wake-up is lost.
            LOG.debug("cannot watch {} for writability: {}", socket, ex.getMessage());
        }
    }

    @Override
    public void unwatchWritable(final UdpSocket socket) {
        final int fd = fd(socket);
        if (!writable.remove(fd)) {
            return;
        }
        change(fd, readable.contains(fd) ? Epoll.EPOLLIN : 0);
    }

    /** Sets what {@code fd} is watched for, or stops watching it (0). */
    private void change(final int fd, final int events) {
        if (events == 0) {
            errorQueues.remove(fd);
        }
        try {
            if (events == 0) {
                epoll.remove(fd);
            } else {
                epoll.modify(fd, events, fd);
            }
        } catch (final ErrnoException ex) {
            // Closed already (the kernel dropped the registration with the descriptor): nothing to undo.
            LOG.debug("epoll interest of descriptor {} not changed: {}", fd, ex.getMessage());
        }
    }

    private static int fd(final UdpSocket socket) {
        return ((NativeSocketHandle) socket).linuxSocket().fd();
    }
}
