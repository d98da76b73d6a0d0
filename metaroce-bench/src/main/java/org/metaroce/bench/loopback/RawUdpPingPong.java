// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.bench.loopback;

/**
 * Raw UDP ping-pong through the MetaRoCE device ({@link RawDatagrams}), as {@code raw_udp_lat}: the
 * benchmark thread's device sends one message of plain datagrams, the {@link PeerThread}'s device
 * counts them and sends as many back, and the benchmark thread spins until its device has counted
 * the echo. The floor for any request-response protocol on this driver.
 */
public final class RawUdpPingPong implements PingPongHarness {
    private final MetaRoceEnd client;
    private final RawDatagrams raw;
    private final PeerThread<Echo> server;
    private final Guard guard;
    private final int datagrams;
    private long seen;

    /**
     * @param size message bytes
     * @param idle how both threads wait when there is nothing to do
     */
    public RawUdpPingPong(final int size, final Idle idle) {
        this.guard = new Guard(idle);
        final RawDatagrams[] hook = new RawDatagrams[1];
        client = new MetaRoceEnd(4096, d -> hook[0] = new RawDatagrams(d, size, MetaRoceEnd.PATH_MTU));
        raw = hook[0];
        datagrams = raw.datagramsPerMessage();
        PeerThread<Echo> peer = null;
        try {
            peer = new PeerThread<>("raw-udp-echo", idle, () -> new Echo(size));
            raw.peer(client.peerIdOf(peer.state().end));
            final Echo e = peer.state();
            final int back = e.end.device.call(ep -> e.end.peerIdOf(client));
            e.end.device.call(ep -> {
                e.raw.peer(back);
                return null;
            });
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
    public void roundTrip() {
        raw.addTarget(datagrams);
        final long until = seen + datagrams;
        guard.reset();
        while (true) {
            final int work = client.device.doWork();
            final long got = raw.received();
            if (got >= until) {
                seen = got;
                return;
            }
            if (guard.idle(work)) {
                throw Guard.stuck("raw UDP echo missing (" + got + " of " + until + " datagrams back); "
                + client.device.counters());
            }
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

    /** Sends back as many datagrams as arrived. */
    static final class Echo implements PeerThread.Duty {
        final MetaRoceEnd end;
        final RawDatagrams raw;
        private long echoed;

        Echo(final int size) {
            final RawDatagrams[] hook = new RawDatagrams[1];
            end = new MetaRoceEnd(4096, d -> hook[0] = new RawDatagrams(d, size, MetaRoceEnd.PATH_MTU));
            raw = hook[0];
        }

        @Override
        public int doWork() {
            int work = end.device.doWork();
            final long got = raw.received();
            if (got > echoed) {
                raw.addTarget(got - echoed);
                echoed = got;
                work += end.device.doWork();
            }
            return work;
        }

        @Override
        public void close() {
            end.close();
        }
    }
}
