// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.bench.loopback;

/**
 * Raw UDP bandwidth through the MetaRoCE device ({@link RawDatagrams}): the ceiling for any
 * protocol on top of this driver. The benchmark thread's device emits datagrams of up to
 * the path MTU ({@link Link}); the {@link PeerThread}'s device receives and counts them.
 * Nothing slows the sender down but the socket buffers, so datagrams are lost: delivered bytes are
 * what the receiver counted.
 *
 * <p>The datagrams are dropped by the receiving endpoint at their first byte, so the self-check
 * verifies counts (every datagram of a short, paced burst arrives), not contents.
 */
public final class RawUdpStream implements StreamHarness {
    /** Datagrams allowed ahead of the sink before the sender runs its duty cycle. */
    private static final int BACKLOG = 256;

    private final int size;
    private final MetaRoceEnd client;
    private final RawDatagrams raw;
    private final PeerThread<Receiver> server;
    private final Guard guard;
    private final int datagrams;

    /**
     * @param size message bytes (cut into datagrams of the path MTU)
     * @param idle how both threads wait when there is nothing to do
     * @param link datagram size (path MTU) and GRO of both devices
     */
    public RawUdpStream(final int size, final Idle idle, final Link link) {
        this.guard = new Guard(idle);
        if (size < 1) {
            throw new IllegalArgumentException("size must be positive, got " + size);
        }
        this.size = size;
        final RawDatagrams[] hook = new RawDatagrams[1];
        client = new MetaRoceEnd(4096, d -> hook[0] = new RawDatagrams(d, size, link.pathMtu()), link);
        raw = hook[0];
        datagrams = raw.datagramsPerMessage();
        PeerThread<Receiver> peer = null;
        try {
            peer = new PeerThread<>("raw-udp-receiver", idle, () -> new Receiver(link));
            raw.peer(client.peerIdOf(peer.state().end));
        } catch (final RuntimeException ex) {
            if (peer != null) {
                peer.close();
            }
            client.close();
            throw ex;
        }
        server = peer;
    }

    @Override
    public int messageBytes() {
        return size;
    }

    @Override
    public long deliveredBytes() {
        return server.state().received * size / datagrams;
    }

    @Override
    public void send() {
        raw.addTarget(datagrams);
        guard.reset();
        while (raw.backlog() > BACKLOG) {
            if (guard.idle(client.device.doWork())) {
                throw Guard.stuck("raw UDP sender stuck with " + raw.backlog() + " datagrams to send; "
                + client.device.counters());
            }
        }
    }

    @Override
    public void sendAndAwait(final int messages) {
        final long expected = server.state().received + (long) messages * datagrams;
        // Paced: one message at a time, so that no socket buffer overflows and nothing is lost.
        for (int i = 0; i < messages; i++) {
            raw.addTarget(datagrams);
            final long until = server.state().received + datagrams;
            guard.reset();
            while (server.state().received < until) {
                if (guard.idle(client.device.doWork())) {
                    throw Guard.stuck("raw UDP: " + (until - server.state().received) + " datagrams of a paced "
                    + "message did not arrive; sender " + client.device.counters());
                }
            }
        }
        if (server.state().received != expected) {
            throw new IllegalStateException("raw UDP: the receiver counted " + server.state().received
                + " datagrams, " + expected + " were sent");
        }
    }

    @Override
    public void close() {
        try {
            server.close();
        } finally {
            client.close();
        }
    }

    /** The receiving device: counts what arrives. */
    static final class Receiver implements PeerThread.Duty {
        final MetaRoceEnd end;
        volatile long received;

        Receiver(final Link link) {
            end = new MetaRoceEnd(4096, null, link);
        }

        @Override
        public int doWork() {
            final int work = end.device.doWork();
            if (work > 0) {
                received = end.device.endpoint().counters().get(org.metaroce.core.engine.EndpointCounter.MALFORMED);
            }
            return work;
        }

        @Override
        public void close() {
            end.close();
        }
    }
}
