// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.bench.loopback;

/**
 * Raw UDP ping-pong through the MetaRoCE device ({@link RawDatagrams}), as {@code raw_udp_lat}: the
 * benchmark thread's device sends one message of plain datagrams, the {@link PeerThread}'s device
 * counts them and sends as many back, and the benchmark thread spins until its device has counted
 * the echo. Both ends act between their device's read and send ({@code doWork(step)}), as the
 * SEND ping-pong does, so a reply and the next message leave in the cycle that read what they
 * answer. The floor for any request-response protocol on this driver.
 */
public final class RawUdpPingPong implements PingPongHarness {
    private final MetaRoceEnd client;
    private final RawDatagrams raw;
    private final PeerThread<Echo> server;
    private final Guard guard;
    private final int datagrams;
    private long seen;
    /** The datagram count that completes the current round's echo. */
    private long until;
    /** Whether the current round's echo is complete. */
    private boolean back;
    /** Whether the next round's message was already queued by the step that saw this echo complete. */
    private boolean pinged;
    private final java.util.function.IntSupplier clientStep = this::clientStep;

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
        if (!pinged) {
            raw.addTarget(datagrams);
        }
        pinged = false;
        until = seen + datagrams;
        back = false;
        guard.reset();
        while (!back) {
            if (guard.idle(client.device.doWork(clientStep))) {
                throw Guard.stuck("raw UDP echo missing (" + raw.received() + " of " + until + " datagrams back); "
                    + client.device.counters());
            }
        }
    }

    /**
     * The client's step between its device's read and send: when the echo is complete, the next
     * message is queued at once, so that it leaves in this cycle's send (as the SEND ping-pong
     * posts its next ping), not after another read.
     */
    private int clientStep() {
        final long got = raw.received();
        if (back || got < until) {
            return 0;
        }
        seen = got;
        back = true;
        raw.addTarget(datagrams);
        pinged = true;
        return 1;
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
            // Echo between the device's reading and sending: the reply leaves in the cycle that
            // read the message, as the SEND ping-pong's echo does, not after another read.
            return end.device.doWork(echoStep);
        }

        private final java.util.function.IntSupplier echoStep = this::echo;

        private int echo() {
            final long got = raw.received();
            if (got <= echoed) {
                return 0;
            }
            raw.addTarget(got - echoed);
            echoed = got;
            return 1;
        }

        @Override
        public void close() {
            end.close();
        }
    }
}
