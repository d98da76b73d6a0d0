// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.connection;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.metaroce.core.connection.CmFixture.CLIENT_PORT;
import static org.metaroce.core.connection.CmFixture.MS;
import static org.metaroce.core.connection.CmFixture.S;
import static org.metaroce.core.connection.CmFixture.SERVER_PORT;
import static org.metaroce.core.connection.CmFixture.SERVICE;

import java.nio.ByteOrder;
import java.util.List;

import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.metaroce.core.connection.CmFixture.Node;
import org.metaroce.core.engine.QueuePair;
import org.metaroce.core.engine.QueuePairCapabilities;
import org.metaroce.core.testwire.LinkProfile;
import org.metaroce.core.testwire.PacketFate;
import org.metaroce.core.testwire.PacketFilter;
import org.metaroce.core.testwire.PacketMatcher;
import org.metaroce.core.testwire.TraceEvent;
import org.metaroce.core.verbs.AccessFlags;
import org.metaroce.core.verbs.PostStatus;
import org.metaroce.core.verbs.QpState;
import org.metaroce.core.verbs.RecvRequest;
import org.metaroce.core.verbs.SendFlags;
import org.metaroce.core.verbs.SendRequest;
import org.metaroce.core.verbs.WcStatus;
import org.metaroce.core.verbs.WrOpcode;
import org.metaroce.core.wire.BaseHeader;
import org.metaroce.core.wire.ConnectHeader;
import org.metaroce.core.wire.Opcode;

/** The handshake of section 9 end to end on the in-memory wire, then real traffic over the result. */
class HandshakeTest {
    private static final int REQUEST = Opcode.CONNECT_REQUEST.value();

    /** Accepts every request with {@code reply} private data and posts two receives on the new QP. */
    private static void acceptWith(final Node server, final byte[] reply) {
        server.onRequest = e -> {
            assertThat(server.cm.accept(e, reply)).isTrue();
            final QueuePair qp = e.connection().queuePair();
            assertThat(qp.state()).isEqualTo(QpState.RTR);
            for (int i = 0; i < 2; i++) {
                assertThat(qp.postRecv(new RecvRequest(1).wrId(100 + i)
                    .addSge(server.address(512 * 1024 + i * 65536L), 65536, server.mr.lkey())))
                    .isEqualTo(PostStatus.OK);
            }
        };
    }

    private static void fill(final UnsafeBuffer b, final int offset, final int length, final int seed) {
        for (int i = 0; i < length; i++) {
            b.putByte(offset + i, (byte) (i * 31 + seed));
        }
    }

    private static void assertSameBytes(final UnsafeBuffer x, final int xOffset, final UnsafeBuffer y,
                                        final int yOffset, final int length) {
        for (int i = 0; i < length; i++) {
            if (x.getByte(xOffset + i) != y.getByte(yOffset + i)) {
                throw new AssertionError("byte " + i + " differs");
            }
        }
    }

    private static boolean established(final Node a, final Node b) {
        return a.count(CmEventType.ESTABLISHED) > 0 && b.count(CmEventType.ESTABLISHED) > 0;
    }

    @Test
    void handshakeConnectsQueuePairsThatCarryWritesAndSendsBothWays() {
        final CmFixture f = new CmFixture(1, LinkProfile.perfect());
        final Node server = f.node(SERVER_PORT, new CmConfig());
        final Node client = f.node(CLIENT_PORT, new CmConfig());
        server.cm.listen(SERVICE, server.listenParams());
        acceptWith(server, server.regionInfo(0, 65536));

        final Connection c =
            client.cm.connect(client.connectParams(server).privateData(client.regionInfo(600_000, 8192)));
        assertThat(c.queuePair().state()).isEqualTo(QpState.INIT);
        assertThat(c.state()).isEqualTo(ConnectionState.CONNECTING);
        assertThat(f.runUntil(() -> established(client, server), S)).isTrue();
        assertThat(f.wire.now()).as("three round trips of 5 us links").isLessThan(MS);

        // Private data went both ways, unchanged.
        final CmEvent request = server.first(CmEventType.CONNECT_REQUEST);
        assertThat(request.privateData()).isEqualTo(client.regionInfo(600_000, 8192));
        final CmEvent clientUp = client.first(CmEventType.ESTABLISHED);
        assertThat(clientUp.privateData()).isEqualTo(server.regionInfo(0, 65536));
        assertThat(clientUp.connection()).isSameAs(c);

        final Connection s = request.connection();
        final QueuePair cq = c.queuePair();
        final QueuePair sq = s.queuePair();
        assertThat(cq.state()).isEqualTo(QpState.RTS);
        assertThat(sq.state()).isEqualTo(QpState.RTS);
        assertThat(cq.destQpn()).isEqualTo(sq.qpn());
        assertThat(sq.destQpn()).isEqualTo(cq.qpn());
        assertThat(cq.remotePeer()).isEqualTo(server.id);
        assertThat(sq.remotePeer()).isEqualTo(client.id);
        assertThat(c.localInitialPsn()).isEqualTo(s.remoteInitialPsn());
        assertThat(s.localInitialPsn()).isEqualTo(c.remoteInitialPsn());
        assertThat(cq.nextSendPsn()).isEqualTo(c.localInitialPsn());
        assertThat(sq.expectedReceivePsn()).isEqualTo(c.localInitialPsn());
        assertThat(sq.nextSendPsn()).isEqualTo(s.localInitialPsn());
        assertThat(server.cm.handshakeTableSize()).isEqualTo(1);

        // CM packets left the endpoint port with path 0 and PSN 0 [CM-001, ENC-003].
        for (final TraceEvent e : f.wire.trace().select(t -> t.opcode() >= 0x20 && t.opcode() <= 0x26)) {
            assertThat(e.entropy()).isEqualTo(e.from() == server.id ? SERVER_PORT : CLIENT_PORT);
            assertThat(e.psn()).isZero();
        }

        // WRITE from the client into the region the server described in its private data.
        final UnsafeBuffer info = new UnsafeBuffer(clientUp.privateData());
        final long remoteAddress = info.getLong(0, ByteOrder.BIG_ENDIAN);
        final int rkey = info.getInt(8, ByteOrder.BIG_ENDIAN);
        fill(client.mr.buffer(), 0, 30_000, 7);
        assertThat(cq.postSend(new SendRequest(1).wrId(1).opcode(WrOpcode.RDMA_WRITE).sendFlags(SendFlags.SIGNALED)
            .addSge(client.address(0), 30_000, client.mr.lkey()).remoteAddr(remoteAddress + 100).rkey(rkey)))
            .isEqualTo(PostStatus.OK);
        // SEND from the client into the receive the server posted at accept time.
        fill(client.mr.buffer(), 100_000, 5000, 3);
        assertThat(cq.postSend(new SendRequest(1).wrId(2).opcode(WrOpcode.SEND).sendFlags(SendFlags.SIGNALED)
            .addSge(client.address(100_000), 5000, client.mr.lkey()))).isEqualTo(PostStatus.OK);
        // WRITE from the server into the region the client described in its private data.
        final UnsafeBuffer cinfo = new UnsafeBuffer(request.privateData());
        fill(server.mr.buffer(), 200_000, 8192, 11);
        assertThat(sq.postSend(new SendRequest(1).wrId(3).opcode(WrOpcode.RDMA_WRITE).sendFlags(SendFlags.SIGNALED)
            .addSge(server.address(200_000), 8192, server.mr.lkey())
            .remoteAddr(cinfo.getLong(0, ByteOrder.BIG_ENDIAN)).rkey(cinfo.getInt(8, ByteOrder.BIG_ENDIAN))))
            .isEqualTo(PostStatus.OK);

        assertThat(f.runUntil(() -> client.sendCompletions.size() == 2 && server.sendCompletions.size() == 1
            && server.recvCompletions.size() == 1, S)).isTrue();
        assertThat(client.sendCompletions).allSatisfy(wc -> assertThat(wc.status()).isEqualTo(WcStatus.SUCCESS));
        assertThat(server.sendCompletions.get(0).status()).isEqualTo(WcStatus.SUCCESS);
        assertThat(server.recvCompletions.get(0).status()).isEqualTo(WcStatus.SUCCESS);
        assertThat(server.recvCompletions.get(0).byteLen()).isEqualTo(5000);
        assertSameBytes(client.mr.buffer(), 0, server.mr.buffer(), 100, 30_000);
        assertSameBytes(client.mr.buffer(), 100_000, server.mr.buffer(), 512 * 1024, 5000);
        assertSameBytes(server.mr.buffer(), 200_000, client.mr.buffer(), 600_000, 8192);
        System.out.println(server.cm + " / " + client.cm);
    }

    /** [CM-021] private data is at most 256 bytes: more is refused when the connection is set up. */
    @Test
    void privateDataIsLimitedTo256Bytes() {
        final ConnectParams ok = new ConnectParams().privateData(new byte[256]);
        assertThat(ok).isNotNull();
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> new ConnectParams().privateData(new byte[257]))
            .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void applicationRejectReachesTheClientWithPrivateData() {
        // [CM-012] a rejecting application: CONNECT_REJECT REJECTED_BY_APPLICATION with its private data.
        final CmFixture f = new CmFixture(2, LinkProfile.perfect());
        final Node server = f.node(SERVER_PORT, new CmConfig());
        final Node client = f.node(CLIENT_PORT, new CmConfig());
        server.cm.listen(SERVICE, server.listenParams());
        server.onRequest = e -> server.cm.reject(e, new byte[] {'b', 'u', 's', 'y'});
        final Connection c = client.cm.connect(client.connectParams(server));
        assertThat(f.runUntil(() -> client.count(CmEventType.REJECTED) > 0, S)).isTrue();
        final CmEvent rejected = client.first(CmEventType.REJECTED);
        assertThat(rejected.reason()).isEqualTo(CmReason.REJECTED_BY_APPLICATION);
        assertThat(rejected.privateData()).containsExactly('b', 'u', 's', 'y');
        assertThat(c.queuePair().state()).isEqualTo(QpState.ERR);
        assertThat(c.state()).isEqualTo(ConnectionState.CLOSED);
        assertThat(server.endpoint.queuePairCount()).as("no QP for a rejected request").isZero();
        assertThat(server.events).extracting(CmEvent::type).containsExactly(CmEventType.CONNECT_REQUEST);
        assertThat(client.events).extracting(CmEvent::type).containsExactly(CmEventType.REJECTED);
    }

    @Test
    void noListenerIsRejectedAfterOneRoundTrip() {
        final CmFixture f = new CmFixture(3, LinkProfile.perfect());
        final Node server = f.node(SERVER_PORT, new CmConfig());
        final Node client = f.node(CLIENT_PORT, new CmConfig());
        final Connection c = client.cm.connect(client.connectParams(server).privateData(new byte[] {1, 2, 3}));
        assertThat(f.runUntil(() -> client.count(CmEventType.REJECTED) > 0, 5 * S)).isTrue();
        assertThat(f.wire.now()).isLessThan(MS);
        assertThat(client.first(CmEventType.REJECTED).reason()).isEqualTo(CmReason.NO_LISTENER);
        assertThat(client.first(CmEventType.REJECTED).privateDataLength()).isZero();
        assertThat(c.queuePair().state()).isEqualTo(QpState.ERR);
        assertThat(server.events).isEmpty();
        assertThat(server.cm.handshakeTableSize()).isZero();
        assertThat(f.wire.trace().count(e -> e.opcode() == REQUEST)).isEqualTo(1);
    }

    @Test
    void deadServerEndsInUnreachableAfterTheRetransmissionSchedule() {
        final CmFixture f = new CmFixture(4, LinkProfile.perfect());
        final Node server = f.node(SERVER_PORT, new CmConfig());
        final Node client = f.node(CLIENT_PORT, new CmConfig());
        f.wire.link(client.id, server.id, LinkProfile.builder().blackhole(0, Long.MAX_VALUE).build());
        final Connection c = client.cm.connect(client.connectParams(server));
        assertThat(f.runUntil(() -> client.count(CmEventType.UNREACHABLE) > 0, 10 * S)).isTrue();
        // [CM-023]: CONNECT_TIMEOUT (3 s) after the first CONNECT_REQUEST, sent at t = 0.
        assertThat(f.wire.now()).isEqualTo(3 * S);
        // [CM-022]: retransmissions after 100, 200, 400, 800 ms, then every second.
        assertThat(f.wire.trace().select(e -> e.opcode() == REQUEST && e.fate().isDrop()))
            .extracting(TraceEvent::sentNs)
            .containsExactly(0L, 100 * MS, 300 * MS, 700 * MS, 1500 * MS, 2500 * MS);
        assertThat(c.queuePair().state()).isEqualTo(QpState.ERR);
        assertThat(c.state()).isEqualTo(ConnectionState.CLOSED);
        assertThat(client.events).extracting(CmEvent::type).containsExactly(CmEventType.UNREACHABLE);
        assertThat(client.cm.connectionCount()).isZero();
    }

    @ParameterizedTest(name = "seed {0}")
    @ValueSource(longs = {10, 11, 12, 13, 14, 15, 16, 17, 18, 19})
    void handshakeUnderTwentyPercentLossCompletesExactlyOnce(final long seed) {
        final CmFixture f = new CmFixture(seed, LinkProfile.builder().loss(0.2).build());
        final Node server = f.node(SERVER_PORT, new CmConfig());
        final Node client = f.node(CLIENT_PORT, new CmConfig().connectTimeoutNs(30 * S));
        server.cm.listen(SERVICE, server.listenParams());
        acceptWith(server, new byte[] {42});
        final Connection c = client.cm.connect(client.connectParams(server).privateData(new byte[] {7}));
        assertThat(f.runUntil(() -> established(client, server), 30 * S)).isTrue();
        // Let every retransmission and duplicate play out.
        f.runUntil(() -> false, 5 * S);
        assertExactlyOnce(server, client, c);
        assertThat(client.first(CmEventType.ESTABLISHED).privateData()).containsExactly(42);
        assertThat(server.first(CmEventType.CONNECT_REQUEST).privateData()).containsExactly(7);
        sendOneMessage(f, client, server, c);
    }

    @ParameterizedTest(name = "seed {0}")
    @ValueSource(longs = {20, 21, 22, 23, 24})
    void handshakeUnderDuplicationAndReorderingCompletesExactlyOnce(final long seed) {
        final CmFixture f = new CmFixture(seed, LinkProfile.builder().duplicate(0.5, 200_000).reorder(0.3)
            .jitterNs(20_000).build());
        final Node server = f.node(SERVER_PORT, new CmConfig());
        final Node client = f.node(CLIENT_PORT, new CmConfig());
        server.cm.listen(SERVICE, server.listenParams());
        acceptWith(server, null);
        final Connection c = client.cm.connect(client.connectParams(server));
        assertThat(f.runUntil(() -> established(client, server), 5 * S)).isTrue();
        f.runUntil(() -> false, 5 * S);
        assertExactlyOnce(server, client, c);
        sendOneMessage(f, client, server, c);
    }

    private static void assertExactlyOnce(final Node server, final Node client, final Connection c) {
        assertThat(server.count(CmEventType.CONNECT_REQUEST)).isEqualTo(1);
        assertThat(server.count(CmEventType.ESTABLISHED)).isEqualTo(1);
        assertThat(client.count(CmEventType.ESTABLISHED)).isEqualTo(1);
        assertThat(server.events).hasSize(2);
        assertThat(client.events).hasSize(1);
        assertThat(server.endpoint.queuePairCount()).isEqualTo(1);
        assertThat(server.endpoint.queuePairCount(QpState.RTS)).isEqualTo(1);
        assertThat(c.queuePair().state()).isEqualTo(QpState.RTS);
        assertThat(server.cm.connectionCount()).isEqualTo(1);
        System.out.println("  server " + server.cm + "\n  client " + client.cm);
    }

    private static void sendOneMessage(final CmFixture f, final Node client, final Node server, final Connection c) {
        fill(client.mr.buffer(), 0, 3000, 5);
        assertThat(c.queuePair().postSend(new SendRequest(1).wrId(9).opcode(WrOpcode.SEND)
            .sendFlags(SendFlags.SIGNALED).addSge(client.address(0), 3000, client.mr.lkey()))).isEqualTo(PostStatus.OK);
        assertThat(f.runUntil(() -> server.recvCompletions.size() == 1 && client.sendCompletions.size() == 1, 30 * S))
            .isTrue();
        assertThat(server.recvCompletions.get(0).status()).isEqualTo(WcStatus.SUCCESS);
        assertSameBytes(client.mr.buffer(), 0, server.mr.buffer(), 512 * 1024, 3000);
    }

    @Test
    void lostReadyToUseIsReplacedByTheFirstRequestPacket() {
        final CmFixture f = new CmFixture(5, LinkProfile.perfect());
        final Node server = f.node(SERVER_PORT, new CmConfig());
        final Node client = f.node(CLIENT_PORT, new CmConfig());
        f.wire.filter(PacketFilter.dropOpcode(Opcode.READY_TO_USE.value()));
        server.cm.listen(SERVICE, server.listenParams());
        acceptWith(server, null);
        client.cm.eventHandler(e -> {
            client.events.add(e);
            if (e.type() == CmEventType.ESTABLISHED) {
                // [CM-007] data may follow READY_TO_USE at once.
                e.connection().queuePair().postSend(new SendRequest(1).wrId(1).opcode(WrOpcode.SEND)
                    .sendFlags(SendFlags.SIGNALED).addSge(client.address(0), 100, client.mr.lkey()));
            }
        });
        client.cm.connect(client.connectParams(server));
        assertThat(f.runUntil(() -> established(client, server) && client.sendCompletions.size() == 1, S)).isTrue();
        // [CM-013, CM-014]: the server's responder took the data in RTR; COMM_EST moved it to RTS.
        assertThat(f.wire.now()).isLessThan(MS);
        assertThat(server.cm.counters().get(CmCounter.COMM_EST)).isEqualTo(1);
        assertThat(server.recvCompletions).hasSize(1);
        assertThat(client.sendCompletions.get(0).status()).isEqualTo(WcStatus.SUCCESS);
    }

    @Test
    void commEstEstablishesTheServerWhenTheFirstDataPacketArrivesAfterALostReadyToUse() {
        final CmFixture f = new CmFixture(12, LinkProfile.perfect());
        final Node server = f.node(SERVER_PORT, new CmConfig());
        final Node client = f.node(CLIENT_PORT, new CmConfig());
        assertThat(Opcode.READY_TO_USE.value()).isEqualTo(0x24);
        f.wire.filter(PacketFilter.dropOpcode(0x24));
        server.cm.listen(SERVICE, server.listenParams());
        acceptWith(server, null);
        final Connection c = client.cm.connect(client.connectParams(server));
        assertThat(f.runUntil(() -> client.count(CmEventType.ESTABLISHED) == 1, S)).isTrue();
        // No data for 50 ms (less than the server's first CONNECT_REPLY retransmission): the server
        // waits in RTR.
        f.runUntil(() -> false, 50 * MS);
        final Connection s = server.first(CmEventType.CONNECT_REQUEST).connection();
        assertThat(s.state()).isEqualTo(ConnectionState.ACCEPTED);
        assertThat(s.queuePair().state()).isEqualTo(QpState.RTR);
        assertThat(server.count(CmEventType.ESTABLISHED)).isZero();

        fill(client.mr.buffer(), 0, 3000, 11);
        assertThat(c.queuePair().postSend(new SendRequest(1).wrId(1).opcode(WrOpcode.SEND)
            .sendFlags(SendFlags.SIGNALED).addSge(client.address(0), 3000, client.mr.lkey())))
            .isEqualTo(PostStatus.OK);
        assertThat(f.runUntil(() -> server.count(CmEventType.ESTABLISHED) == 1, S)).isTrue();
        // [CM-013]: ESTABLISHED at the arrival of the first request packet, through COMM_EST.
        final List<TraceEvent> data = f.wire.trace().select(e -> e.to() == server.id
            && e.fate() == PacketFate.DELIVERED && Opcode.of(e.opcode()) != null && Opcode.of(e.opcode()).isRequest());
        assertThat(data).isNotEmpty();
        assertThat(f.wire.now()).isEqualTo(data.get(0).timeNs());
        assertThat(s.state()).isEqualTo(ConnectionState.ESTABLISHED);
        assertThat(s.queuePair().state()).isEqualTo(QpState.RTS);
        assertThat(server.cm.counters().get(CmCounter.COMM_EST)).isEqualTo(1);
        assertThat(f.wire.trace().count(e -> e.opcode() == 0x24)).isPositive();
        assertThat(f.wire.trace().count(e -> e.opcode() == 0x24 && e.fate() != PacketFate.DROPPED_FILTER)).isZero();

        // [CM-014]: the data the responder took in RTR is intact.
        assertThat(f.runUntil(() -> server.recvCompletions.size() == 1 && client.sendCompletions.size() == 1, S))
            .isTrue();
        assertThat(server.recvCompletions.get(0).status()).isEqualTo(WcStatus.SUCCESS);
        assertThat(server.recvCompletions.get(0).byteLen()).isEqualTo(3000);
        assertThat(client.sendCompletions.get(0).status()).isEqualTo(WcStatus.SUCCESS);
        assertSameBytes(client.mr.buffer(), 0, server.mr.buffer(), 512 * 1024, 3000);

        // The server's QP is a full RTS QP: it sends back with the PSN it announced.
        fill(server.mr.buffer(), 0, 2000, 17);
        assertThat(c.queuePair().postRecv(new RecvRequest(1).wrId(50).addSge(client.address(65_536), 4096,
            client.mr.lkey()))).isEqualTo(PostStatus.OK);
        assertThat(s.queuePair().postSend(new SendRequest(1).wrId(51).opcode(WrOpcode.SEND)
            .sendFlags(SendFlags.SIGNALED).addSge(server.address(0), 2000, server.mr.lkey())))
            .isEqualTo(PostStatus.OK);
        assertThat(f.runUntil(() -> client.recvCompletions.size() == 1 && server.sendCompletions.size() == 1, S))
            .isTrue();
        assertThat(client.recvCompletions.get(0).status()).isEqualTo(WcStatus.SUCCESS);
        assertSameBytes(server.mr.buffer(), 0, client.mr.buffer(), 65_536, 2000);

        // CONNECT_REPLY is no longer retransmitted, and nothing else happens.
        final long replies = f.wire.trace().count(e -> e.opcode() == Opcode.CONNECT_REPLY.value());
        f.runUntil(() -> false, 3 * S);
        assertThat(f.wire.trace().count(e -> e.opcode() == Opcode.CONNECT_REPLY.value())).isEqualTo(replies);
        assertThat(server.events).extracting(CmEvent::type)
            .containsExactly(CmEventType.CONNECT_REQUEST, CmEventType.ESTABLISHED);
        assertThat(client.events).extracting(CmEvent::type).containsExactly(CmEventType.ESTABLISHED);
    }

    @Test
    void serverWithoutReadyToUseOrTrafficGivesUpAndTellsTheClient() {
        final CmFixture f = new CmFixture(6, LinkProfile.perfect());
        final Node server = f.node(SERVER_PORT, new CmConfig());
        final Node client = f.node(CLIENT_PORT, new CmConfig());
        f.wire.filter(PacketFilter.dropMatching(PacketMatcher.opcode(Opcode.READY_TO_USE.value())
            .or(PacketMatcher.opcode(Opcode.DISCONNECT_REPLY.value()))));
        server.cm.listen(SERVICE, server.listenParams());
        acceptWith(server, null);
        final Connection c = client.cm.connect(client.connectParams(server));
        assertThat(f.runUntil(() -> client.count(CmEventType.DISCONNECTED) > 0, 10 * S)).isTrue();
        // [CM-024]: CONNECT_ERROR on the server 3 s after CONNECT_REPLY, which retransmitted meanwhile [CM-022].
        assertThat(server.events).extracting(CmEvent::type)
            .containsExactly(CmEventType.CONNECT_REQUEST, CmEventType.CONNECT_ERROR);
        assertThat(f.wire.now()).isBetween(3 * S, 3 * S + MS);
        assertThat(f.wire.trace().count(e -> e.opcode() == Opcode.CONNECT_REPLY.value())).isEqualTo(6);
        // [CM-033]: the server's DISCONNECT_REQUEST (QP_ERROR) ends the client's connection.
        assertThat(client.first(CmEventType.DISCONNECTED).reason()).isEqualTo(CmReason.QP_ERROR);
        assertThat(c.queuePair().state()).isEqualTo(QpState.ERR);
        assertThat(server.first(CmEventType.CONNECT_REQUEST).connection().queuePair().state()).isEqualTo(QpState.ERR);
    }

    @Test
    void negotiationTakesTheMinimaAndTheIntersectionAndSizesReadDepth() {
        final CmFixture f = new CmFixture(7, LinkProfile.perfect());
        final Node server = f.node(SERVER_PORT, new CmConfig());
        final Node client = f.node(CLIENT_PORT, new CmConfig());
        server.cm.listen(SERVICE, server.listenParams().pathMtu(1024).paths(50_000, 50_001)
            .capabilities(ConnectHeader.CAP_RECEIVER_CREDIT | ConnectHeader.CAP_ECN).initiatorDepth(2)
            .responderResources(16));
        acceptWith(server, null);
        final Connection c = client.cm.connect(client.connectParams(server).pathMtu(4096)
            .paths(60_000, 60_001, 60_002, 60_003).capabilities(ConnectHeader.CAP_RECEIVER_CREDIT
                | ConnectHeader.CAP_GO_BACK_N | ConnectHeader.CAP_ECN).initiatorDepth(8).responderResources(4));
        assertThat(f.runUntil(() -> established(client, server), S)).isTrue();
        final Connection s = server.first(CmEventType.CONNECT_REQUEST).connection();
        assertThat(s.proposedPathMtu()).isEqualTo(4096);
        assertThat(s.proposedPathCount()).isEqualTo(4);

        for (final Connection x : List.of(c, s)) {
            assertThat(x.pathMtu()).isEqualTo(1024);
            assertThat(x.pathCount()).isEqualTo(2);
            assertThat(x.capabilities()).isEqualTo(ConnectHeader.CAP_RECEIVER_CREDIT | ConnectHeader.CAP_ECN);
            assertThat(x.queuePair().pathMtu()).isEqualTo(1024);
            assertThat(x.queuePair().paths().pathCount()).isEqualTo(2);
        }
        assertThat(c.queuePair().paths().entropy(1)).isEqualTo(60_001);
        assertThat(s.queuePair().paths().entropy(1)).isEqualTo(50_001);
        // Server outstanding = min(s.ID 2, c.RR 4); client outstanding = min(s.RR 16, c.ID 8).
        assertThat(s.initiatorDepth()).isEqualTo(2);
        assertThat(c.initiatorDepth()).isEqualTo(8);
        assertThat(c.responderResources()).isEqualTo(2);
        assertThat(s.responderResources()).isEqualTo(8);

        // Behaviour: a 3000-byte SEND travels as three 1024-byte-MTU packets.
        f.wire.trace().clear();
        c.queuePair().postSend(new SendRequest(1).wrId(1).opcode(WrOpcode.SEND).addSge(client.address(0), 3000,
            client.mr.lkey()));
        assertThat(f.runUntil(() -> server.recvCompletions.size() == 1, S)).isTrue();
        assertThat(f.wire.trace().count(e -> e.opcode() == Opcode.SEND.value() && e.fate() == PacketFate.DELIVERED))
            .isEqualTo(3);
        // Behaviour: READ depth is the negotiated Initiator Depth (8 for the client, 2 for the server).
        assertThat(firstBurstOfReads(f, client, server, c.queuePair(), 12)).isEqualTo(8);
        assertThat(firstBurstOfReads(f, server, client, s.queuePair(), 5)).isEqualTo(2);
    }

    /** Posts {@code n} small READs and returns how many READ_REQUESTs left in the first instant. */
    private static long firstBurstOfReads(final CmFixture f, final Node from, final Node to, final QueuePair qp,
                                          final int n) {
        f.wire.trace().clear();
        final int before = from.sendCompletions.size();
        for (int i = 0; i < n; i++) {
            assertThat(qp.postSend(new SendRequest(1).wrId(50 + i).opcode(WrOpcode.RDMA_READ)
                .sendFlags(SendFlags.SIGNALED).addSge(from.address(700_000 + i * 64L), 64, from.mr.lkey())
                .remoteAddr(to.address(0)).rkey(to.mr.rkey()))).isEqualTo(PostStatus.OK);
        }
        assertThat(f.runUntil(() -> from.sendCompletions.size() == before + n, S)).isTrue();
        final List<TraceEvent> reads = f.wire.trace().select(e -> e.opcode() == Opcode.READ_REQUEST.value()
            && e.from() == from.id && e.fate() == PacketFate.DELIVERED);
        final long first = reads.get(0).sentNs();
        return reads.stream().filter(e -> e.sentNs() == first).count();
    }

    @Test
    void staleCookieRestartsTheHandshakeOnceThenRejects() {
        // Deliver a second CONNECT_REQUEST only when its cookie is older than the 1 s lifetime.
        final PacketFilter onlyStale = (from, to, buf, off, len, now) -> isSecondRequest(buf, off, len)
            && CookieJar.seconds(now) - cookieTime(buf, off) <= 1;
        // First attempt stale, then the restarted one is let through.
        final CmFixture f = new CmFixture(8, LinkProfile.perfect());
        final Node server = f.node(SERVER_PORT, new CmConfig().cookieLifetimeSeconds(1));
        final Node client = f.node(CLIENT_PORT, new CmConfig().connectTimeoutNs(10 * S));
        server.cm.listen(SERVICE, server.listenParams());
        acceptWith(server, null);
        f.wire.filter((from, to, buf, off, len, now) -> cookieTime(buf, off) == 0 && onlyStale.drop(from, to, buf, off,
            len, now));
        client.cm.connect(client.connectParams(server));
        assertThat(f.runUntil(() -> established(client, server), 10 * S)).isTrue();
        assertThat(server.cm.counters().get(CmCounter.STALE_COOKIE)).isEqualTo(1);
        assertThat(client.events).extracting(CmEvent::type).containsExactly(CmEventType.ESTABLISHED);

        // Every attempt stale: the second STALE_COOKIE is final [CM-008].
        final CmFixture g = new CmFixture(9, LinkProfile.perfect());
        final Node server2 = g.node(SERVER_PORT, new CmConfig().cookieLifetimeSeconds(1));
        final Node client2 = g.node(CLIENT_PORT, new CmConfig().connectTimeoutNs(20 * S));
        server2.cm.listen(SERVICE, server2.listenParams());
        acceptWith(server2, null);
        g.wire.filter(onlyStale);
        final Connection c2 = client2.cm.connect(client2.connectParams(server2));
        assertThat(g.runUntil(() -> client2.count(CmEventType.REJECTED) > 0, 20 * S)).isTrue();
        assertThat(client2.first(CmEventType.REJECTED).reason()).isEqualTo(CmReason.STALE_COOKIE);
        assertThat(server2.cm.counters().get(CmCounter.STALE_COOKIE)).isEqualTo(2);
        assertThat(server2.events).isEmpty();
        assertThat(c2.queuePair().state()).isEqualTo(QpState.ERR);
    }

    private static boolean isSecondRequest(final DirectBuffer buf, final int off, final int len) {
        return len > 72 - 1 && PacketMatcher.opcodeOf(buf, off, len) == REQUEST
            && !CookieJar.isZero(buf, off + BaseHeader.LENGTH + ConnectHeader.COOKIE_OFFSET);
    }

    private static int cookieTime(final DirectBuffer buf, final int off) {
        return buf.getInt(off + BaseHeader.LENGTH + ConnectHeader.COOKIE_OFFSET, ByteOrder.BIG_ENDIAN);
    }

    @Test
    void listenerLimitAndExistingQueuePair() {
        final CmFixture f = new CmFixture(10, LinkProfile.perfect());
        final Node server = f.node(SERVER_PORT, new CmConfig());
        final Node client = f.node(CLIENT_PORT, new CmConfig());
        final Listener listener = server.cm.listen(SERVICE, server.listenParams().limit(1));
        acceptWith(server, null);
        client.cm.connect(client.connectParams(server));
        // A client may also bring its own QP in RESET [CM-005].
        final QueuePair own = client.endpoint.createQueuePair(client.pd, client.sendCq, client.recvCq,
            QueuePairCapabilities.defaults());
        final Connection second = client.cm.connect(new ConnectParams().peer(server.id).serviceId(SERVICE)
            .queuePair(own).accessFlags(AccessFlags.REMOTE_WRITE).paths(60_010));
        assertThat(second.queuePair()).isSameAs(own);
        assertThat(f.runUntil(() -> client.count(CmEventType.REJECTED) > 0 && established(client, server), S)).isTrue();
        assertThat(client.first(CmEventType.REJECTED).reason()).isEqualTo(CmReason.NO_RESOURCES);
        assertThat(listener.connections()).isEqualTo(1);
        assertThat(server.count(CmEventType.CONNECT_REQUEST)).isEqualTo(1);

        // Closing the listener: later requests meet NO_LISTENER.
        listener.close();
        client.cm.connect(client.connectParams(server));
        assertThat(f.runUntil(() -> client.count(CmEventType.REJECTED) == 2, S)).isTrue();
        assertThat(client.events(CmEventType.REJECTED).get(1).reason()).isEqualTo(CmReason.NO_LISTENER);
    }

    @Test
    void eventsWaitInTheQueueWithoutAHandler() {
        final CmFixture f = new CmFixture(11, LinkProfile.perfect());
        final Node server = f.node(SERVER_PORT, new CmConfig());
        final Node client = f.node(CLIENT_PORT, new CmConfig());
        server.cm.eventHandler(null);
        client.cm.eventHandler(null);
        server.cm.listen(SERVICE, server.listenParams());
        final Connection c = client.cm.connect(client.connectParams(server).privateData(new byte[] {5}));
        final CmEvent[] request = new CmEvent[1];
        assertThat(f.runUntil(() -> (request[0] = server.cm.pollEvent()) != null, S)).isTrue();
        assertThat(request[0].type()).isEqualTo(CmEventType.CONNECT_REQUEST);
        assertThat(request[0].privateData()).containsExactly(5);
        assertThat(server.cm.accept(request[0], new byte[] {6})).isTrue();
        final CmEvent[] up = new CmEvent[1];
        assertThat(f.runUntil(() -> (up[0] = client.cm.pollEvent()) != null, S)).isTrue();
        assertThat(up[0].type()).isEqualTo(CmEventType.ESTABLISHED);
        assertThat(up[0].connection()).isSameAs(c);
        assertThat(up[0].privateData()).containsExactly(6);
        assertThat(f.runUntil(() -> (up[0] = server.cm.pollEvent()) != null, S)).isTrue();
        assertThat(up[0].type()).isEqualTo(CmEventType.ESTABLISHED);
        assertThat(up[0].connection()).isSameAs(request[0].connection());
        assertThat(server.cm.pollEvent()).isNull();
        assertThat(client.cm.pollEvent()).isNull();
    }

    @Test
    void parametersAreCheckedWhenGiven() {
        final ConnectParams p = new ConnectParams();
        assertThatThrownBy(() -> p.privateData(new byte[257])).hasMessageContaining("256");
        assertThatThrownBy(() -> p.pathMtu(1000)).hasMessageContaining("pathMtu");
        assertThatThrownBy(() -> p.paths(5, 5)).hasMessageContaining("distinct");
        assertThatThrownBy(() -> p.capabilities(0x40)).hasMessageContaining("capability");
        assertThatThrownBy(() -> new CmConfig().secretRotationNs(S)).hasMessageContaining("COOKIE_LIFETIME");
        final CmFixture f = new CmFixture(12, LinkProfile.perfect());
        final Node server = f.node(SERVER_PORT, new CmConfig());
        final Node client = f.node(CLIENT_PORT, new CmConfig());
        assertThatThrownBy(() -> client.cm.connect(new ConnectParams().peer(server.id).serviceId(1).paths(1)))
            .hasMessageContaining("resources");
        assertThatThrownBy(() -> client.cm.connect(client.connectParams(server).responderResources(17)))
            .hasMessageContaining("maxDestRdAtomic");
        server.cm.listen(SERVICE, server.listenParams());
        assertThatThrownBy(() -> server.cm.listen(SERVICE, server.listenParams()))
            .isInstanceOf(IllegalStateException.class);
    }
}
