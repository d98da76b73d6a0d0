// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty;

import java.io.IOException;
import java.net.Inet6Address;
import java.net.InetSocketAddress;

import org.metaroce.netty.linux.Epoll;
import org.metaroce.netty.linux.LinuxUdpSocket;

/**
 * A {@link PolledUdpSocket} on a native Linux UDP socket ({@link LinuxUdpSocket}): sends a batch
 * synchronously with {@code sendmmsg} ({@link NativeSender}), reads with {@code recvmmsg}
 * ({@link NativeReader}) delivering the raw source, the ECN field and the GRO segment size, and
 * waits in its own {@code epoll_wait}, woken through an {@code eventfd}. A socket opened without a
 * receiver only sends, and has neither read slots nor a wait.
 *
 * <p>The socket is in its epoll set only while its owner waits now and then: it joins at the first
 * {@link #awaitReadable} and leaves after {@link #UNWATCH_AFTER_READS} reads without a wait. Every
 * datagram queued to a socket in an epoll set runs the epoll callback in the sender's system call,
 * whether or not anyone waits: on loopback it made each 64-byte {@code sendmmsg} of a ping-pong
 * between two spinning threads about 0.26 us slower (in C: 2.94 against 3.20 us), half a
 * microsecond per round trip. A spinning owner never waits, so it never pays it.
 *
 * <p>Every socket sets {@code IP_RECVERR}, so that a datagram a queue of the host drops is reported
 * ({@code ENOBUFS}, {@link SendFailure#NO_BUFFERS}) rather than taken for sent; its error queue
 * ({@link NativeErrorQueue}) is read whenever a send or read fails and whenever a wait reports
 * {@code EPOLLERR} for it.
 *
 * <p>The wait of a receiving socket is also a {@link WritabilityWatch}: an INVOKER device's sink
 * registers its full send sockets here, so that {@link #awaitReadable} ends when one can take
 * datagrams again.
 *
 * <p>Owning thread only, except {@link #wakeup()}.
 */
final class NativeUdpSocket implements PolledUdpSocket, WritabilityWatch, NativeSocketHandle {
    private final LinuxUdpSocket socket;
    private final InetSocketAddress localAddress;
    private final SocketCapabilities capabilities;
    private final NativeSender sender;
    private final NativeReader reader;
    private final NativeErrorQueue errors;
    private final Epoll readiness;
    /** What {@link #readiness} watches: this socket for reading while waits come, full send sockets for writability. */
    private final EpollInterest interest;
    /** Whether this socket is in {@link #readiness}'s set for reading. */
    private boolean watchingReads;
    /** Reads since the last wait, counted while {@link #watchingReads}. */
    private int readsSinceWait;
    private volatile boolean closed;

    /**
     * Reads without a wait in between after which the socket leaves its epoll set: about half a
     * millisecond of a spinning owner's idle reads, while an owner that waits whenever a few duty
     * cycles found nothing stays in the set, and pays the two {@code epoll_ctl} calls rarely.
     */
    static final int UNWATCH_AFTER_READS = 1024;

    /**
     * Opens and binds the socket.
     *
     * @param options address, buffers, traffic class (ECT(0) included by the caller)
     * @param receiver where datagrams go, or null for a socket that only sends
     * @param slots datagrams per {@code recvmmsg}
     * @param slotBytes bytes per receive slot
     * @param gro whether to turn UDP GRO on (receiving sockets)
     * @param counters where the error queue's entries are counted
     * @throws IOException if the socket cannot be opened, set up or bound
     */
    NativeUdpSocket(final SocketOptions options, final DatagramReceiver receiver, final int slots,
                    final int slotBytes, final boolean gro, final DriverCounters counters) throws IOException {
        final InetSocketAddress bind = options.bind();
        final LinuxUdpSocket opened = LinuxUdpSocket.open(bind.getAddress() instanceof Inet6Address);
        NativeErrorQueue queue = null;
        NativeSender send = null;
        NativeReader read = null;
        Epoll wait = null;
        EpollInterest watch = null;
        try {
            queue = new NativeErrorQueue(opened, counters);
            opened.setReceiveBufferSize(options.receiveBufferBytes());
            opened.setSendBufferSize(options.sendBufferBytes());
            opened.setTrafficClass(options.trafficClass());
            opened.setReceiveErrors(true);
            // MetaRoCE does no path MTU discovery: a datagram too large for the path is dropped
            // and reported, never fragmented [ENC-021].
            opened.setDontFragment(true);
            if (receiver != null) {
                opened.setReceiveTrafficClass(true);
                opened.setReceiveTimestamps(true);
                if (gro) {
                    opened.setGro(true);
                }
            }
            opened.bind(bind);
            localAddress = opened.localAddress();
            send = new NativeSender(opened, queue);
            if (receiver != null) {
                read = new NativeReader(opened, slots, slotBytes, receiver, queue);
                // One event is enough: readiness is the whole answer, the next duty cycle reads and sends.
                // The socket itself joins the set at the first wait (see the class comment).
                wait = new Epoll(1);
                watch = new EpollInterest(wait);
            }
        } catch (final IOException | RuntimeException ex) {
            closeAll(opened, send, read, queue, wait);
            final IOException io = new java.net.BindException("cannot open native UDP socket on " + bind + ": "
                + ex.getMessage());
            io.initCause(ex);
            throw io;
        }
        this.socket = opened;
        this.sender = send;
        this.reader = read;
        this.errors = queue;
        this.readiness = wait;
        this.interest = watch;
        this.capabilities = new SocketCapabilities(true, receiver != null && gro, true, true, true);
    }

    /** @return the socket's descriptor, for a {@link ReadinessWaiter} */
    @Override
    public LinuxUdpSocket linuxSocket() {
        return socket;
    }

    /** @return the socket's error queue, for a wait that saw {@code EPOLLERR} for it */
    @Override
    public NativeErrorQueue errorQueue() {
        return errors;
    }

    @Override
    public InetSocketAddress localAddress() {
        return localAddress;
    }

    @Override
    public SocketCapabilities capabilities() {
        return capabilities;
    }

    @Override
    public int send(final SendBatch batch) {
        if (closed) {
            batch.stopBecause(SendFailure.CLOSED);
            return 0;
        }
        return sender.send(batch);
    }

    @Override
    public OutboundState outboundState() {
        return OutboundState.IDLE; // sendmmsg is synchronous: nothing waits here
    }

    @Override
    public boolean connect(final InetSocketAddress peer) throws IOException {
        socket.connect(peer);
        return true;
    }

    @Override
    public int receive(final int maxDatagrams) throws IOException {
        if (reader == null) {
            throw new IllegalStateException("socket " + localAddress + " was opened to send only");
        }
        if (closed) {
            throw new java.nio.channels.ClosedChannelException();
        }
        if (watchingReads && ++readsSinceWait >= UNWATCH_AFTER_READS) {
            // A spinning owner: leave the epoll set, so that datagrams sent here skip its callback.
            interest.unwatchReadable(socket);
            watchingReads = false;
        }
        return reader.receive(maxDatagrams);
    }

    @Override
    public void awaitReadable(final long timeoutNs) throws IOException {
        if (readiness == null) {
            throw new IllegalStateException("socket " + localAddress + " was opened to send only");
        }
        if (closed) {
            throw new java.nio.channels.ClosedChannelException();
        }
        readsSinceWait = 0;
        if (!watchingReads) {
            // epoll_ctl(ADD) checks readiness as it inserts: a datagram that came since the last read ends the wait.
            interest.watchReadable(socket, errors);
            watchingReads = true;
        }
        interest.readErrorQueues(readiness.awaitNanos(timeoutNs));
    }

    /** @return whether the socket is in its epoll set for reading now (tests) */
    boolean watchingReads() {
        return watchingReads;
    }

    @Override
    public boolean awaitsToTheNanosecond() {
        return readiness != null && readiness.nanosecondWaits();
    }

    @Override
    public void watchWritable(final UdpSocket socket) {
        receivingInterest().watchWritable(socket);
    }

    @Override
    public void unwatchWritable(final UdpSocket socket) {
        receivingInterest().unwatchWritable(socket);
    }

    private EpollInterest receivingInterest() {
        if (interest == null) {
            throw new IllegalStateException("socket " + localAddress + " was opened to send only: it has no wait");
        }
        return interest;
    }

    @Override
    public void wakeup() {
        if (readiness != null && !closed) {
            readiness.wakeUp();
        }
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        closeAll(socket, sender, reader, errors, readiness);
    }

    private static void closeAll(final LinuxUdpSocket socket, final NativeSender sender, final NativeReader reader,
                                 final NativeErrorQueue errors, final Epoll readiness) {
        if (readiness != null) {
            readiness.close();
        }
        if (reader != null) {
            reader.close();
        }
        if (sender != null) {
            sender.close();
        }
        socket.close();
        if (errors != null) {
            errors.close();
        }
    }

    @Override
    public String toString() {
        return "NativeUdpSocket[" + localAddress + "]";
    }
}
