// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.conformance.tester;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.DatagramChannel;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedList;
import java.util.List;
import java.util.function.Predicate;

/**
 * The suite's wire end: one UDP socket that sends crafted datagrams to the IUT and collects
 * everything the IUT sends back, in the style of packetdrill: {@link #inject} a packet,
 * {@link #poll} for a packet matching a predicate within a tolerance, {@link #collect} what
 * matches during a window. Packets not consumed by an expectation stay in the backlog for later ones, so
 * unrelated traffic (keepalives, coalesced ACKs) never makes a case fail by accident.
 */
public final class LowerTester implements AutoCloseable {
    private final DatagramChannel channel;
    private final InetSocketAddress local;
    private final Thread receiver;
    private final LinkedList<Packet> backlog = new LinkedList<>();
    private final List<Packet> trace = new ArrayList<>();
    private volatile InetSocketAddress target;
    private volatile boolean closed;
    private long sent;

    /**
     * Binds a socket.
     *
     * @param bind local address (port 0 for any)
     * @param target where injected packets go (the IUT's endpoint address)
     */
    public LowerTester(final InetSocketAddress bind, final InetSocketAddress target) {
        this.target = target;
        try {
            channel = DatagramChannel.open();
            channel.setOption(StandardSocketOptions.SO_RCVBUF, 4 << 20);
            channel.bind(bind);
            local = (InetSocketAddress) channel.getLocalAddress();
        } catch (final IOException ex) {
            throw new UncheckedIOException("cannot bind the lower tester on " + bind, ex);
        }
        receiver = new Thread(this::receiveLoop, "lower-tester-rx-" + local.getPort());
        receiver.setDaemon(true);
        receiver.start();
    }

    /** @return the tester's address: its endpoint address as the IUT sees it */
    public InetSocketAddress localAddress() {
        return local;
    }

    /** @return where injected packets go */
    public InetSocketAddress target() {
        return target;
    }

    /** @param target a new destination for injected packets */
    public void target(final InetSocketAddress target) {
        this.target = target;
    }

    private void receiveLoop() {
        final ByteBuffer buf = ByteBuffer.allocate(65536);
        while (!closed) {
            try {
                buf.clear();
                final SocketAddress from = channel.receive(buf);
                final long now = System.nanoTime();
                buf.flip();
                final byte[] bytes = new byte[buf.remaining()];
                buf.get(bytes);
                final Packet p = new Packet(bytes, (InetSocketAddress) from, now);
                synchronized (backlog) {
                    backlog.add(p);
                    trace.add(p);
                    backlog.notifyAll();
                }
            } catch (final ClosedChannelException ex) {
                return;
            } catch (final IOException ex) {
                if (closed) {
                    return;
                }
            }
        }
    }

    /**
     * Sends one datagram to the target.
     *
     * @param datagram the bytes
     */
    public void inject(final byte[] datagram) {
        inject(datagram, target);
    }

    /**
     * Sends one datagram to an address.
     *
     * @param datagram the bytes
     * @param to destination
     */
    public void inject(final byte[] datagram, final InetSocketAddress to) {
        try {
            channel.send(ByteBuffer.wrap(datagram), to);
            sent++;
        } catch (final IOException ex) {
            throw new UncheckedIOException("cannot send to " + to, ex);
        }
    }

    /** @return datagrams injected so far */
    public long sentCount() {
        return sent;
    }

    /**
     * Waits for the first packet (backlog first, then new arrivals) matching {@code match}, and
     * removes it from the backlog.
     *
     * @param match what to wait for
     * @param timeoutMs tolerance: how long to wait
     * @return the packet, or null when none matched in time
     */
    public Packet poll(final Predicate<Packet> match, final long timeoutMs) {
        final long deadline = System.nanoTime() + timeoutMs * 1_000_000L;
        synchronized (backlog) {
            while (true) {
                for (final Iterator<Packet> it = backlog.iterator(); it.hasNext();) {
                    final Packet p = it.next();
                    if (match.test(p)) {
                        it.remove();
                        return p;
                    }
                }
                final long waitNs = deadline - System.nanoTime();
                if (waitNs <= 0) {
                    return null;
                }
                try {
                    backlog.wait(Math.max(1, waitNs / 1_000_000L));
                } catch (final InterruptedException ex) {
                    Thread.currentThread().interrupt();
                    return null;
                }
            }
        }
    }

    /**
     * Collects every packet matching {@code match} that arrives (or is in the backlog) during
     * the next {@code windowMs}.
     *
     * @param match filter
     * @param windowMs observation window
     * @return the packets, in arrival order
     */
    public List<Packet> collect(final Predicate<Packet> match, final long windowMs) {
        sleep(windowMs);
        final List<Packet> out = new ArrayList<>();
        synchronized (backlog) {
            for (final Iterator<Packet> it = backlog.iterator(); it.hasNext();) {
                final Packet p = it.next();
                if (match.test(p)) {
                    it.remove();
                    out.add(p);
                }
            }
        }
        return out;
    }

    /** Forgets every packet not yet consumed. */
    public void clearBacklog() {
        synchronized (backlog) {
            backlog.clear();
        }
    }

    /** @return a copy of every packet received so far */
    public List<Packet> trace() {
        synchronized (backlog) {
            return new ArrayList<>(trace);
        }
    }

    /** Sleeps without throwing (the suite's time is wall-clock; cases use generous tolerances). */
    public static void sleep(final long ms) {
        try {
            Thread.sleep(ms);
        } catch (final InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public void close() {
        closed = true;
        try {
            channel.close();
        } catch (final IOException ex) {
            // Closing.
        }
        try {
            receiver.join(2000);
        } catch (final InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
    }
}
