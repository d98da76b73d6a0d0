// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.connection;

import java.util.ArrayDeque;

import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.metaroce.core.SeededRandomSource;
import org.metaroce.core.engine.DatagramEndpoint;
import org.metaroce.core.engine.Endpoint;
import org.metaroce.core.engine.EndpointConfig;
import org.metaroce.core.engine.PeerDirectory;
import org.metaroce.core.engine.QueuePairCapabilities;
import org.metaroce.core.engine.TransmitSink;
import org.metaroce.core.verbs.AccessFlags;
import org.metaroce.core.verbs.CompletionQueue;
import org.metaroce.core.verbs.ProtectionDomain;
import org.metaroce.core.verbs.QpState;
import org.metaroce.core.wire.BaseHeader;
import org.metaroce.core.wire.ConnectHeader;
import org.metaroce.core.wire.DropReason;
import org.metaroce.core.wire.FuzzPackets;
import org.metaroce.core.wire.IntegrityCheck;
import org.metaroce.core.wire.Opcode;
import org.metaroce.core.wire.PacketValidator;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.FuzzTest;

/**
 * Structure-aware fuzzing of the connection manager (issue 14 item 6). A listening server and a
 * client that connects to it exchange their handshake over a wire the input controls (deliver,
 * drop, duplicate, reorder); in between, the input injects connection-manager packets built field
 * by field by {@link FuzzPackets}, with a valid integrity check, into either side: from third
 * parties mostly (who may echo the cookies and Transaction IDs they saw), sometimes spoofing the
 * legitimate peer. The server's application accepts, rejects or ignores third-party requests as
 * the input says; it always accepts the legitimate client.
 *
 * <p>Invariants:
 * <ul>
 *   <li>no exception escapes either endpoint or connection manager;</li>
 *   <li>every packet sent passes validation; connection-manager packets leave from the endpoint
 *       port with PSN 0 and Path ID 0;</li>
 *   <li>bounded state: the handshake table stays within MAX_HANDSHAKES, and the server holds a
 *       queue pair only for requests its application accepted (plus none for the rest);</li>
 *   <li>queue-pair states are legal for the connection states (ESTABLISHED implies RTS);</li>
 *   <li>unless the input spoofed the client or the server, the legitimate connection is
 *       ESTABLISHED on both sides once the wire settles, whatever third parties sent.</li>
 * </ul>
 *
 * <p>In the normal build this replays the committed inputs in
 * {@code src/test/resources/org/metaroce/core/connection/HandshakeFuzzTestInputs}; a campaign is
 * described in docs/fuzzing.md.
 */
public class HandshakeFuzzTest {
    static final int SERVER = 0;
    static final int CLIENT = 1;
    /** Third parties: peer ids that are neither side. */
    static final int FIRST_STRANGER = 2;
    static final int STRANGERS = 3;
    static final int SERVER_PORT = 4796;
    static final int CLIENT_PORT = 49_000;
    static final long SERVICE = 20_000;
    static final long MS = 1_000_000L;
    static final int MAX_STEPS = 64;
    static final int MAX_HANDSHAKES = 8;
    static final int SINK_CAPACITY = 64 * 1024;
    private static final UnsafeBuffer SINK_BUFFER = new UnsafeBuffer(new byte[SINK_CAPACITY]);

    @FuzzTest(maxDuration = "10m")
    void handshakeSurvivesFuzzedConnectionManagerPackets(final FuzzedDataProvider data) {
        new Run(data).run();
    }

    /** Entry point of Jazzer's standalone driver, used to minimize the corpus (docs/fuzzing.md). */
    public static void fuzzerTestOneInput(final FuzzedDataProvider data) {
        new Run(data).run();
    }

    /** One input: server, client, the wire between them and what third parties saw. */
    static final class Run {
        final FuzzedDataProvider d;
        final Node server;
        final Node client;
        final ArrayDeque<Packet> inFlight = new ArrayDeque<>();
        final FuzzPackets packets = new FuzzPackets();
        final FuzzPackets.Hints hints = new FuzzPackets.Hints();
        final UnsafeBuffer scratch = new UnsafeBuffer(new byte[FuzzPackets.MAX_FORGED]);
        final UnsafeBuffer cookie = new UnsafeBuffer(new byte[20]);
        final IntegrityCheck crc = new IntegrityCheck();
        final Sink sink = new Sink();
        /** Budget of virtual time the fuzzed phase may use: well inside CONNECT_TIMEOUT. */
        final long fuzzTimeBudgetNs;
        long now = 1_000_000_000L;
        long start = now;
        int step;
        Connection legit;
        /** Whether the input impersonated the client or the server (then establishment is not guaranteed). */
        boolean spoofed;
        int acceptedStrangers;

        Run(final FuzzedDataProvider d) {
            this.d = d;
            // Small tables keep the per-input setup cheap and put their limits within reach; answer
            // rates stay high enough that third parties cannot starve the client for a whole
            // CONNECT_TIMEOUT with the few packets one input sends.
            final CmConfig config = new CmConfig().maxHandshakes(MAX_HANDSHAKES)
                .answerQueueCapacity(4 << d.consumeInt(0, 3)).rateLimiterBuckets(16 << d.consumeInt(0, 2))
                .answerRatePerSource(d.consumeBoolean() ? 1000 : 100)
                .globalAnswerRate(d.consumeBoolean() ? 0 : 200);
            if (d.consumeBoolean()) {
                config.cookieLifetimeSeconds(d.consumeInt(1, 8));
            }
            server = new Node(SERVER, SERVER_PORT, config);
            client = new Node(CLIENT, CLIENT_PORT, config);
            fuzzTimeBudgetNs = config.connectTimeoutNs() / 3;
            final int mtu = 256 << d.consumeInt(0, 3);
            final int caps = d.consumeInt(0, 7);
            server.cm.listen(SERVICE, new ListenParams()
                .resources(server.pd, server.sendCq, server.recvCq, new QueuePairCapabilities(8, 8, 1, 1, 2))
                .accessFlags(AccessFlags.ALL).pathMtu(256 << d.consumeInt(0, 3)).capabilities(d.consumeInt(0, 7))
                .paths(50_000, 50_001, 50_002, 50_003));
            server.cm.eventHandler(this::onServerEvent);
            client.params = new ConnectParams().peer(SERVER).serviceId(SERVICE)
                .resources(client.pd, client.sendCq, client.recvCq, new QueuePairCapabilities(8, 8, 1, 1, 2))
                .accessFlags(AccessFlags.ALL).pathMtu(mtu).capabilities(caps).paths(60_000, 60_001)
                .privateData(d.consumeBytes(d.consumeInt(0, 32)));
            client.cm.eventHandler(e -> { });
            hints.serviceId = SERVICE;
        }

        /** The server's application: always accepts the client; third parties as the input says. */
        private void onServerEvent(final CmEvent e) {
            final boolean isLegit = e.connection() != null && e.connection().remotePeer() == CLIENT && legit != null
                && e.connection().transactionId() == legit.transactionId();
            if (e.type() == CmEventType.ESTABLISHED) {
                server.established.add(e.connection());
                server.legitEstablished |= isLegit;
            }
            if (e.type() != CmEventType.CONNECT_REQUEST) {
                return;
            }
            if (isLegit) {
                server.cm.accept(e, new byte[] {1, 2, 3});
                return;
            }
            switch (d.consumeInt(0, 3)) {
                case 0 -> server.cm.reject(e, null);
                case 1 -> { } // left pending: the application decides later, or never
                default -> {
                    if (server.cm.accept(e, null)) {
                        acceptedStrangers++;
                    }
                }
            }
        }

        void run() {
            try {
                if (d.consumeBoolean()) {
                    connect();
                }
                while (d.remainingBytes() > 0 && step < MAX_STEPS) {
                    step++;
                    doStep();
                    pollBoth();
                    checkStep();
                }
                if (legit == null) {
                    connect();
                }
                settle();
                checkEnd();
            } catch (AssertionError e) {
                throw new AssertionError(e.getMessage() + "\n  at step " + step + ", now " + now + ", spoofed "
                    + spoofed + "\n  client connection " + legit + "\n  server " + server.cm + " " + server.cm.counters()
                    + "\n  client " + client.cm + " " + client.cm.counters(), e);
            }
        }

        private void connect() {
            legit = client.cm.connect(client.params);
            pollBoth();
        }

        private void doStep() {
            switch (d.consumeInt(0, 9)) {
                case 0, 1, 2 -> inject();
                case 3, 4 -> deliverHead();
                case 5 -> {
                    final Packet p = inFlight.pollFirst();
                    if (p != null) {
                        switch (d.consumeInt(0, 2)) {
                            case 0 -> { } // lost
                            case 1 -> {
                                inFlight.addLast(p.copy());
                                inFlight.addFirst(p);
                            }
                            default -> inFlight.addLast(p);
                        }
                    }
                }
                case 6 -> { // a packet in flight changed and resealed: whoever did it impersonates its sender
                    final Packet p = inFlight.pollFirst();
                    if (p != null) {
                        packets.mutate(d, p.buffer, p.length);
                        spoofed |= p.from == CLIENT || p.from == SERVER;
                        deliver(p.to, p.buffer, p.length, p.from);
                    }
                }
                case 7 -> {
                    final long advance = d.consumeInt(0, 200) * MS;
                    if (now + advance - start <= fuzzTimeBudgetNs) {
                        now += advance;
                    }
                }
                case 8 -> {
                    if (legit == null) {
                        connect();
                    }
                }
                default -> {
                    // The server's application decides on a pending third-party request late, or a
                    // third-party connection is torn down.
                    for (final Connection c : pendingStrangers()) {
                        if (d.consumeBoolean()) {
                            server.cm.disconnect(c);
                        }
                    }
                }
            }
        }

        /** Established third-party connections on the server (never the legitimate one). */
        private java.util.List<Connection> pendingStrangers() {
            final java.util.List<Connection> out = new java.util.ArrayList<>();
            for (final Connection c : server.established) {
                if (c.remotePeer() != CLIENT && c.state() == ConnectionState.ESTABLISHED) {
                    out.add(c);
                }
            }
            return out;
        }

        /** A fuzzed CM packet (rarely any packet) to one side, from a third party or spoofing the other side. */
        private void inject() {
            final Node to = d.consumeInt(0, 3) != 0 ? server : client;
            final int from = d.consumeInt(0, 7) == 0 ? (to == server ? CLIENT : SERVER)
                : FIRST_STRANGER + d.consumeInt(0, STRANGERS - 1);
            final Node other = to == server ? client : server;
            hints.destQpn = switch (d.consumeInt(0, 3)) {
                case 0 -> 0;
                case 1 -> other.lastQpn; // the QPN the other side's last packet came from
                default -> to.lastQpn;
            };
            hints.sourceQpn = d.consumeBoolean() ? other.lastQpn : d.consumeInt(1, 0xFF_FFFF);
            hints.initialPsn = legit == null ? 0 : d.consumeBoolean() ? legit.localInitialPsn() : legit.remoteInitialPsn();
            hints.mtu = 1024;
            final int length = packets.build(d, scratch, hints, d.consumeInt(0, 7) != 0);
            spoofed |= from == CLIENT || from == SERVER;
            deliver(to.id, scratch, length, from);
        }

        private void deliverHead() {
            final Packet p = inFlight.pollFirst();
            if (p != null) {
                deliver(p.to, p.buffer, p.length, p.from);
            }
        }

        void deliver(final int to, final MutableDirectBuffer buffer, final int length, final int from) {
            if (to == SERVER || to == CLIENT) {
                final Node node = to == SERVER ? server : client;
                node.endpoint.onDatagram(now, buffer, 0, length, from, DatagramEndpoint.ECN_NOT_ECT);
            }
            // Packets to third parties are gone; their content was noted when they were sent.
        }

        void pollBoth() {
            sink.from = server;
            server.endpoint.poll(now, sink);
            sink.from = client;
            client.endpoint.poll(now, sink);
            server.endpoint.nextDeadlineNs();
            client.endpoint.nextDeadlineNs();
        }

        private void checkStep() {
            check(server.cm.handshakeTableSize() <= MAX_HANDSHAKES, "handshake table %d above MAX_HANDSHAKES",
                server.cm.handshakeTableSize());
            // A queue pair exists only for a request the application accepted: the legitimate one
            // and the third parties it chose to accept.
            check(server.endpoint.queuePairCount() <= 1 + acceptedStrangers,
                "server holds %d queue pairs for %d accepted third parties", server.endpoint.queuePairCount(),
                acceptedStrangers);
            check(client.endpoint.queuePairCount() <= 1, "client holds %d queue pairs",
                client.endpoint.queuePairCount());
            for (final Connection c : server.established) {
                checkQueuePair(c);
            }
            if (legit != null) {
                checkQueuePair(legit);
            }
        }

        private static void checkQueuePair(final Connection c) {
            if (c.state() == ConnectionState.ESTABLISHED && c.queuePair() != null && !c.queuePair().isDestroyed()) {
                final QpState s = c.queuePair().state();
                check(s == QpState.RTS || s == QpState.ERR, "established connection with its QP in %s: %s", s, c);
            }
        }

        /** Delivers everything and runs the timers until the legitimate handshake is over (at most 20 s). */
        private void settle() {
            final long end = now + 20_000 * MS;
            for (int i = 0; i < 5_000; i++) {
                if (!inFlight.isEmpty()) {
                    while (!inFlight.isEmpty()) {
                        deliverHead();
                    }
                    pollBoth();
                    continue;
                }
                if (legit.state() != ConnectionState.CONNECTING && server.legitEstablished) {
                    return;
                }
                final long deadline = Math.min(server.endpoint.nextDeadlineNs(), client.endpoint.nextDeadlineNs());
                if (deadline == Long.MAX_VALUE || deadline > end) {
                    return;
                }
                now = Math.max(now, deadline);
                pollBoth();
            }
        }

        private void checkEnd() {
            checkStep();
            if (!spoofed) {
                check(legit.state() == ConnectionState.ESTABLISHED,
                    "the legitimate connection did not establish: %s", legit.state());
                check(server.legitEstablished, "the server did not see the legitimate connection established");
                check(legit.queuePair().state() == QpState.RTS, "client QP in %s", legit.queuePair().state());
            }
        }

        /** One side: endpoint, connection manager and the resources its connections use. */
        final class Node {
            final int id;
            final int port;
            final Endpoint endpoint;
            final ConnectionManager cm;
            final ProtectionDomain pd;
            final CompletionQueue sendCq;
            final CompletionQueue recvCq;
            final java.util.List<Connection> established = new java.util.ArrayList<>();
            ConnectParams params;
            boolean legitEstablished;
            /** Source QPN of this side's latest packet: a QPN third parties can learn from the wire. */
            int lastQpn;

            Node(final int id, final int port, final CmConfig config) {
                this.id = id;
                this.port = port;
                endpoint = new Endpoint(new EndpointConfig().receiveWindowPackets(64).keepaliveIdleNs(0),
                    new SeededRandomSource(0xC0DE + id));
                cm = new ConnectionManager(endpoint, port, PeerDirectory.IDENTITY, config);
                pd = endpoint.allocateProtectionDomain();
                sendCq = endpoint.createCompletionQueue(64);
                recvCq = endpoint.createCompletionQueue(64);
            }
        }

        /** Collects what both sides send, checks it, and lets third parties learn cookies and IDs. */
        final class Sink implements TransmitSink {
            Node from;

            @Override
            public MutableDirectBuffer buffer() {
                return SINK_BUFFER;
            }

            @Override
            public int claim(final int maxLength) {
                return maxLength <= SINK_CAPACITY ? 0 : NO_ROOM;
            }

            @Override
            public void commit(final int offset, final int length, final int peerId, final int entropy) {
                final DropReason reason = PacketValidator.firstViolation(crc, SINK_BUFFER, offset, length);
                check(reason == null, "side %d sent a packet that fails validation: %s", from.id, reason);
                final Opcode opcode = Opcode.of(BaseHeader.opcode(SINK_BUFFER, offset));
                if (opcode.isConnectionManagement()) {
                    if (entropy != from.port || BaseHeader.psn(SINK_BUFFER, offset) != 0
                        || BaseHeader.pathId(SINK_BUFFER, offset) != 0) {
                        check(false, "side %d sent %s from port %d with PSN %d path %d [CM-001, ENC-003]", from.id,
                            opcode, entropy, BaseHeader.psn(SINK_BUFFER, offset), BaseHeader.pathId(SINK_BUFFER, offset));
                    }
                    hints.transactionId = ConnectHeader.transactionId(SINK_BUFFER, offset + opcode.cmOffset());
                    if (opcode == Opcode.CONNECT_CHALLENGE) {
                        cookie.putBytes(0, SINK_BUFFER, offset + opcode.cmOffset() + ConnectHeader.COOKIE_OFFSET, 20);
                        hints.cookie = cookie;
                    }
                }
                from.lastQpn = BaseHeader.sourceQpn(SINK_BUFFER, offset);
                final byte[] copy = new byte[length];
                SINK_BUFFER.getBytes(offset, copy);
                inFlight.addLast(new Packet(new UnsafeBuffer(copy), length, from.id, peerId));
            }
        }
    }

    /** A datagram on the wire. */
    record Packet(UnsafeBuffer buffer, int length, int from, int to) {
        Packet copy() {
            final byte[] bytes = new byte[buffer.capacity()];
            buffer.getBytes(0, bytes);
            return new Packet(new UnsafeBuffer(bytes), length, from, to);
        }
    }

    static void check(final boolean condition, final String format, final Object... args) {
        if (!condition) {
            throw new AssertionError(String.format(format, args));
        }
    }
}
