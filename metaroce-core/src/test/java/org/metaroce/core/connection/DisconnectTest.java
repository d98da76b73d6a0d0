// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.connection;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;
import static org.metaroce.core.connection.CmFixture.CLIENT_PORT;
import static org.metaroce.core.connection.CmFixture.MS;
import static org.metaroce.core.connection.CmFixture.S;
import static org.metaroce.core.connection.CmFixture.SERVER_PORT;
import static org.metaroce.core.connection.CmFixture.SERVICE;

import java.util.List;

import org.junit.jupiter.api.Test;
import org.metaroce.core.connection.CmFixture.Node;
import org.metaroce.core.engine.QueuePair;
import org.metaroce.core.testwire.LinkProfile;
import org.metaroce.core.testwire.PacketFate;
import org.metaroce.core.testwire.PacketFilter;
import org.metaroce.core.testwire.PacketMatcher;
import org.metaroce.core.testwire.TraceEvent;
import org.metaroce.core.verbs.PostStatus;
import org.metaroce.core.verbs.QpState;
import org.metaroce.core.verbs.RecvRequest;
import org.metaroce.core.verbs.SendFlags;
import org.metaroce.core.verbs.SendRequest;
import org.metaroce.core.verbs.WcStatus;
import org.metaroce.core.verbs.WorkCompletion;
import org.metaroce.core.verbs.WrOpcode;
import org.metaroce.core.wire.Opcode;

/** Teardown [CM-031..CM-034]: disconnects, lost replies, time-wait, and queue pairs that fail by themselves. */
class DisconnectTest {
    private static final int DREQ = Opcode.DISCONNECT_REQUEST.value();
    private static final int DREP = Opcode.DISCONNECT_REPLY.value();
    private static final int KEEPALIVE = Opcode.KEEPALIVE.value();

    /** A connected pair; the server posted two receives at accept time. */
    private static final class Pair {
        final CmFixture f;
        final Node server;
        final Node client;
        final Connection c;
        final Connection s;

        Pair(final long seed, final CmConfig serverConfig, final CmConfig clientConfig, final ConnectTweak tweak) {
            f = new CmFixture(seed, LinkProfile.perfect());
            server = f.node(SERVER_PORT, serverConfig);
            client = f.node(CLIENT_PORT, clientConfig);
            server.cm.listen(SERVICE, server.listenParams());
            server.onRequest = e -> {
                server.cm.accept(e, null);
                for (int i = 0; i < 2; i++) {
                    e.connection().queuePair().postRecv(new RecvRequest(1).wrId(100 + i)
                        .addSge(server.address(i * 4096L), 4096, server.mr.lkey()));
                }
            };
            c = client.cm.connect(tweak.apply(client.connectParams(server)));
            assertThat(f.runUntil(() -> client.count(CmEventType.ESTABLISHED) == 1
                && server.count(CmEventType.ESTABLISHED) == 1, S)).isTrue();
            s = server.first(CmEventType.CONNECT_REQUEST).connection();
        }

        Pair(final long seed) {
            this(seed, new CmConfig(), new CmConfig(), p -> p);
        }
    }

    @FunctionalInterface
    private interface ConnectTweak {
        ConnectParams apply(ConnectParams p);
    }

    @Test
    void disconnectEndsBothSidesAndFlushesOutstandingWork() {
        final Pair p = new Pair(1);
        for (int i = 0; i < 2; i++) {
            assertThat(p.c.queuePair().postRecv(new RecvRequest(1).wrId(200 + i)
                .addSge(p.client.address(i * 4096L), 4096, p.client.mr.lkey()))).isEqualTo(PostStatus.OK);
        }
        assertThat(p.c.queuePair().postSend(new SendRequest(1).wrId(7).opcode(WrOpcode.RDMA_WRITE)
            .addSge(p.client.address(0), 500_000, p.client.mr.lkey()).remoteAddr(p.server.address(0))
            .rkey(p.server.mr.rkey()))).isEqualTo(PostStatus.OK);
        final long start = p.f.wire.now();
        p.client.cm.disconnect(p.c);
        // [CM-031]: the QP is in ERR as soon as DISCONNECT_REQUEST is sent.
        assertThat(p.c.queuePair().state()).isEqualTo(QpState.ERR);
        assertThat(p.c.state()).isEqualTo(ConnectionState.DISCONNECTING);
        assertThat(p.f.runUntil(() -> p.client.count(CmEventType.DISCONNECTED) == 1
            && p.server.count(CmEventType.DISCONNECTED) == 1, S)).isTrue();
        assertThat(p.f.wire.now() - start).as("one round trip").isLessThan(MS);
        for (final Node n : new Node[] {p.client, p.server}) {
            assertThat(n.first(CmEventType.DISCONNECTED).reason()).isEqualTo(CmReason.NORMAL);
        }
        assertThat(p.s.queuePair().state()).isEqualTo(QpState.ERR);
        assertThat(p.c.state()).isEqualTo(ConnectionState.TIMEWAIT);
        assertThat(p.s.state()).isEqualTo(ConnectionState.TIMEWAIT);
        // Outstanding work requests of both sides completed with WR_FLUSH_ERR.
        assertThat(p.client.sendCompletions).singleElement().satisfies(wc -> {
            assertThat(wc.wrId()).isEqualTo(7);
            assertThat(wc.status()).isEqualTo(WcStatus.WR_FLUSH_ERR);
        });
        assertThat(p.client.recvCompletions).hasSize(2)
            .allSatisfy(wc -> assertThat(wc.status()).isEqualTo(WcStatus.WR_FLUSH_ERR));
        assertThat(p.server.recvCompletions).hasSize(2)
            .allSatisfy(wc -> assertThat(wc.status()).isEqualTo(WcStatus.WR_FLUSH_ERR));
        assertThat(p.f.wire.trace().count(e -> e.opcode() == DREQ)).isEqualTo(1);
        assertThat(p.f.wire.trace().count(e -> e.opcode() == DREP)).isEqualTo(1);

        // [CM-034]: time-wait for QPN_QUARANTINE, then TIMEWAIT_EXIT and nothing is left.
        assertThat(p.f.runUntil(() -> p.client.count(CmEventType.TIMEWAIT_EXIT) == 1
            && p.server.count(CmEventType.TIMEWAIT_EXIT) == 1, 20 * S)).isTrue();
        assertThat(p.f.wire.now() - start).isBetween(10 * S, 10 * S + MS);
        p.f.runUntil(() -> false, S);
        for (final Node n : new Node[] {p.client, p.server}) {
            assertThat(n.cm.connectionCount()).isZero();
            assertThat(n.cm.handshakeTableSize()).isZero();
        }
        assertThat(p.c.state()).isEqualTo(ConnectionState.CLOSED);
        assertThat(p.client.events).extracting(CmEvent::type).containsExactly(CmEventType.ESTABLISHED,
            CmEventType.DISCONNECTED, CmEventType.TIMEWAIT_EXIT);
        assertThat(p.server.events).extracting(CmEvent::type).containsExactly(CmEventType.CONNECT_REQUEST,
            CmEventType.ESTABLISHED, CmEventType.DISCONNECTED, CmEventType.TIMEWAIT_EXIT);
        // Disconnecting again is harmless.
        p.client.cm.disconnect(p.c);
        assertThat(p.client.events).hasSize(3);
    }

    @Test
    void lostDisconnectReplyIsAnsweredFromTimewait() {
        final Pair p = new Pair(2);
        p.f.wire.filter(PacketFilter.dropNth(1, PacketMatcher.opcode(DREP)));
        final long start = p.f.wire.now();
        p.client.cm.disconnect(p.c);
        assertThat(p.f.runUntil(() -> p.client.count(CmEventType.DISCONNECTED) == 1, 5 * S)).isTrue();
        // The retransmitted DISCONNECT_REQUEST (after 100 ms) met the server in time-wait [CM-034].
        assertThat(p.f.wire.now() - start).isBetween(100 * MS, 101 * MS);
        assertThat(p.f.wire.trace().count(e -> e.opcode() == DREQ)).isEqualTo(2);
        assertThat(p.server.count(CmEventType.DISCONNECTED)).isEqualTo(1);
        assertThat(p.s.state()).isEqualTo(ConnectionState.TIMEWAIT);
    }

    @Test
    void unansweredDisconnectCompletesAfterTheDisconnectTimeout() {
        final Pair p = new Pair(3);
        p.f.wire.linkBoth(p.client.id, p.server.id, LinkProfile.builder().blackhole(0, Long.MAX_VALUE).build());
        final long start = p.f.wire.now();
        p.client.cm.disconnect(p.c);
        assertThat(p.f.runUntil(() -> p.client.count(CmEventType.DISCONNECTED) == 1, 5 * S)).isTrue();
        // [CM-032]: DISCONNECT_TIMEOUT (1 s) with retransmissions at 100, 300 and 700 ms.
        assertThat(p.f.wire.now() - start).isEqualTo(S);
        assertThat(p.f.wire.trace().count(e -> e.opcode() == DREQ)).isEqualTo(4);
        assertThat(p.server.count(CmEventType.DISCONNECTED)).isZero();
    }

    @Test
    void simultaneousDisconnectsAnswerEachOther() {
        final Pair p = new Pair(4);
        p.client.cm.disconnect(p.c);
        p.server.cm.disconnect(p.s);
        assertThat(p.f.runUntil(() -> p.client.count(CmEventType.DISCONNECTED) == 1
            && p.server.count(CmEventType.DISCONNECTED) == 1, S)).isTrue();
        p.f.runUntil(() -> false, 2 * S);
        assertThat(p.client.count(CmEventType.DISCONNECTED)).isEqualTo(1);
        assertThat(p.server.count(CmEventType.DISCONNECTED)).isEqualTo(1);
        assertThat(p.f.wire.trace().count(e -> e.opcode() == DREQ)).isEqualTo(2);
        assertThat(p.f.wire.trace().count(e -> e.opcode() == DREP)).isEqualTo(2);
    }

    @Test
    void queuePairErrorOnBothSidesDisconnectsWithQpError() {
        final Pair p = new Pair(5);
        // A WRITE with a wrong rkey: REMOTE_ACCESS NACK, fatal for both QPs [QP-009].
        assertThat(p.c.queuePair().postSend(new SendRequest(1).wrId(1).opcode(WrOpcode.RDMA_WRITE)
            .sendFlags(SendFlags.SIGNALED).addSge(p.client.address(0), 100, p.client.mr.lkey())
            .remoteAddr(p.server.address(0)).rkey(p.server.mr.rkey() ^ 0x5555))).isEqualTo(PostStatus.OK);
        assertThat(p.f.runUntil(() -> p.client.count(CmEventType.DISCONNECTED) == 1
            && p.server.count(CmEventType.DISCONNECTED) == 1, S)).isTrue();
        assertThat(p.client.sendCompletions.get(0).status()).isEqualTo(WcStatus.REM_ACCESS_ERR);
        assertThat(p.client.first(CmEventType.DISCONNECTED).reason()).isEqualTo(CmReason.QP_ERROR);
        assertThat(p.server.first(CmEventType.DISCONNECTED).reason()).isEqualTo(CmReason.QP_ERROR);
        assertThat(p.f.wire.now()).isLessThan(10 * MS);
        // [CM-033]: the client, whose QP failed on the NACK it received, told the server; the server
        // sent the fatal NACK, from which the client learns, so it sent no DISCONNECT_REQUEST and
        // answered the client's from time-wait [CM-034].
        assertThat(p.f.wire.trace().count(e -> e.opcode() == DREQ && e.from() == p.client.id)).isEqualTo(1);
        assertThat(p.f.wire.trace().count(e -> e.opcode() == DREQ && e.from() == p.server.id)).isZero();
        assertThat(p.f.wire.trace().count(e -> e.opcode() == DREP && e.from() == p.server.id)).isEqualTo(1);
        assertThat(p.s.state()).isEqualTo(ConnectionState.TIMEWAIT);
        assertThat(p.c.state()).isEqualTo(ConnectionState.TIMEWAIT);
    }

    /**
     * [REL-052, CM-039]: the server's QP that sent a fatal NACK stays in ERR, holding its listener
     * slot, to repeat the NACK for DISCONNECT_TIMEOUT, and is then destroyed; with the client's
     * DISCONNECT_REQUEST (which shows it learned the cause) it goes at once.
     */
    @Test
    void queuePairThatSentAFatalNackLingersThenIsDestroyed() {
        for (final boolean clientDisconnectArrives : new boolean[] {false, true}) {
            final Pair p = new Pair(13);
            if (!clientDisconnectArrives) {
                p.f.wire.filter(PacketFilter.dropOpcode(DREQ));
            }
            final Listener listener = p.server.cm.listener(SERVICE);
            assertThat(p.c.queuePair().postSend(new SendRequest(1).wrId(1).opcode(WrOpcode.RDMA_WRITE)
                .sendFlags(SendFlags.SIGNALED).addSge(p.client.address(0), 100, p.client.mr.lkey())
                .remoteAddr(p.server.address(0)).rkey(p.server.mr.rkey() ^ 0x5555))).isEqualTo(PostStatus.OK);
            assertThat(p.f.runUntil(() -> p.server.count(CmEventType.DISCONNECTED) == 1, S)).isTrue();
            final long failedAt = p.f.wire.now();
            final QueuePair qp = p.s.queuePair();
            if (clientDisconnectArrives) {
                assertThat(p.f.runUntil(qp::isDestroyed, 10 * MS)).isTrue();
                assertThat(listener.connections()).isZero();
                continue;
            }
            assertThat(qp.state()).isEqualTo(QpState.ERR);
            assertThat(qp.isDestroyed()).as("lingers to repeat its NACK").isFalse();
            assertThat(listener.connections()).as("slot held while the QP lingers").isEqualTo(1);
            assertThat(p.f.runUntil(qp::isDestroyed, 2 * S)).isTrue();
            assertThat(p.f.wire.now() - failedAt).isBetween(S - 10 * MS, S + 10 * MS);
            assertThat(p.server.endpoint.queuePairCount()).isZero();
            assertThat(listener.connections()).isZero();
            assertThat(p.s.state()).isEqualTo(ConnectionState.TIMEWAIT);
        }
    }

    /** Time of the last packet the wire delivered to {@code node}. */
    private static long lastDeliveredTo(final CmFixture f, final int node) {
        final List<TraceEvent> delivered = f.wire.trace().select(e -> e.to() == node
            && e.fate() == PacketFate.DELIVERED);
        return delivered.get(delivered.size() - 1).timeNs();
    }

    @Test
    void deadPeerIsDeclaredByKeepaliveAndDisconnectedAtOnce() {
        // The client's requester gets no RTT sample and has a 1 s timeout, so keepalive (2 s) finds
        // the dead peer before the retransmissions of its outstanding WRITE run out.
        // RETRY_TIMEOUT 0: KEEPALIVE_PROBES alone decide [CM-030] (the default budget is 15 s [REL-060]).
        final Pair p = new Pair(10, new CmConfig(), new CmConfig(), c -> c.timeoutNs(S).retryTimeoutNs(0));
        p.s.queuePair().modify(QpState.RTS, new org.metaroce.core.verbs.QpAttributes().retryTimeoutNs(0));
        // Traffic first, so that the last packet each side hears is a data packet or its ACK.
        assertThat(p.c.queuePair().postRecv(new RecvRequest(1).wrId(300)
            .addSge(p.client.address(0), 4096, p.client.mr.lkey()))).isEqualTo(PostStatus.OK);
        assertThat(p.s.queuePair().postSend(new SendRequest(1).wrId(301).opcode(WrOpcode.SEND)
            .sendFlags(SendFlags.SIGNALED).addSge(p.server.address(65_536), 100, p.server.mr.lkey())))
            .isEqualTo(PostStatus.OK);
        assertThat(p.f.runUntil(() -> p.client.recvCompletions.size() == 1 && p.server.sendCompletions.size() == 1,
            S)).isTrue();
        p.client.recvCompletions.clear();
        p.server.sendCompletions.clear();

        // The peer vanishes: the wire drops everything from now on.
        p.f.wire.filter(PacketFilter.dropMatching(PacketMatcher.any()));
        final QueuePair qp = p.c.queuePair();
        for (int i = 0; i < 2; i++) {
            assertThat(qp.postRecv(new RecvRequest(1).wrId(200 + i)
                .addSge(p.client.address(8192 + i * 4096L), 4096, p.client.mr.lkey()))).isEqualTo(PostStatus.OK);
        }
        assertThat(qp.postSend(new SendRequest(1).wrId(1).opcode(WrOpcode.RDMA_WRITE).sendFlags(SendFlags.SIGNALED)
            .addSge(p.client.address(0), 3000, p.client.mr.lkey()).remoteAddr(p.server.address(0))
            .rkey(p.server.mr.rkey()))).isEqualTo(PostStatus.OK);
        assertThat(qp.postSend(new SendRequest(1).wrId(2).opcode(WrOpcode.SEND).sendFlags(SendFlags.SIGNALED)
            .addSge(p.client.address(0), 100, p.client.mr.lkey()))).isEqualTo(PostStatus.OK);

        assertThat(p.f.runUntil(() -> p.client.count(CmEventType.DISCONNECTED) == 1, 5 * S)).isTrue();
        // [CM-030]: KEEPALIVE_IDLE + KEEPALIVE_PROBES x KEEPALIVE_INTERVAL = 2 s after the last packet.
        assertThat(p.f.wire.now() - lastDeliveredTo(p.f, p.client.id)).isBetween(2 * S, 2 * S + MS);
        assertThat(p.f.wire.trace().count(e -> e.opcode() == KEEPALIVE && e.from() == p.client.id)).isEqualTo(5);
        assertThat(qp.isPeerDead()).isTrue();
        assertThat(qp.state()).isEqualTo(QpState.ERR);
        assertThat(p.client.first(CmEventType.DISCONNECTED).reason()).isEqualTo(CmReason.QP_ERROR);
        assertThat(p.client.cm.counters().get(CmCounter.PEERS_DEAD)).isEqualTo(1);
        // At once: no disconnect exchange with a dead peer, straight to time-wait.
        assertThat(p.c.state()).isEqualTo(ConnectionState.TIMEWAIT);
        assertThat(p.f.wire.trace().count(e -> e.opcode() == DREQ)).isZero();
        // The oldest send completes with RETRY_EXC_ERR, everything else is flushed.
        p.client.drain();
        assertThat(p.client.sendCompletions).extracting(WorkCompletion::wrId, WorkCompletion::status).containsExactly(
            tuple(1L, WcStatus.RETRY_EXC_ERR),
            tuple(2L, WcStatus.WR_FLUSH_ERR));
        assertThat(p.client.recvCompletions).extracting(WorkCompletion::wrId).containsExactly(200L, 201L);
        assertThat(p.client.recvCompletions).allSatisfy(wc -> assertThat(wc.status()).isEqualTo(WcStatus.WR_FLUSH_ERR));

        // The server sees the client die the same way, 2 s after the last packet it heard.
        assertThat(p.f.runUntil(() -> p.server.count(CmEventType.DISCONNECTED) == 1, 5 * S)).isTrue();
        assertThat(p.f.wire.now() - lastDeliveredTo(p.f, p.server.id)).isBetween(2 * S, 2 * S + MS);
        assertThat(p.s.queuePair().isPeerDead()).isTrue();
        p.server.drain();
        assertThat(p.server.recvCompletions).hasSize(2)
            .allSatisfy(wc -> assertThat(wc.status()).isEqualTo(WcStatus.WR_FLUSH_ERR));
        assertThat(p.f.wire.trace().count(e -> e.opcode() == DREQ)).isZero();

        // [CM-034]: the identities are kept for QPN_QUARANTINE, then forgotten.
        assertThat(p.f.runUntil(() -> p.client.count(CmEventType.TIMEWAIT_EXIT) == 1
            && p.server.count(CmEventType.TIMEWAIT_EXIT) == 1, 20 * S)).isTrue();
        assertThat(p.client.events).extracting(CmEvent::type).containsExactly(CmEventType.ESTABLISHED,
            CmEventType.DISCONNECTED, CmEventType.TIMEWAIT_EXIT);
        assertThat(p.client.cm.connectionCount()).isZero();
        assertThat(p.server.cm.connectionCount()).isZero();
    }

    @Test
    void fatalNackBeforeReadyToUseIsAConnectErrorOnTheServer() {
        final CmFixture f = new CmFixture(11, LinkProfile.perfect());
        final Node server = f.node(SERVER_PORT, new CmConfig());
        final Node client = f.node(CLIENT_PORT, new CmConfig());
        f.wire.filter(PacketFilter.dropOpcode(Opcode.READY_TO_USE.value()));
        server.cm.listen(SERVICE, server.listenParams());
        server.onRequest = e -> server.cm.accept(e, null);
        final Connection c = client.cm.connect(client.connectParams(server));
        assertThat(f.runUntil(() -> client.count(CmEventType.ESTABLISHED) == 1, S)).isTrue();
        // The first request the server's QP sees in RTR is a WRITE with a wrong rkey.
        assertThat(c.queuePair().postSend(new SendRequest(1).wrId(1).opcode(WrOpcode.RDMA_WRITE)
            .sendFlags(SendFlags.SIGNALED).addSge(client.address(0), 100, client.mr.lkey())
            .remoteAddr(server.address(0)).rkey(server.mr.rkey() ^ 0x5555))).isEqualTo(PostStatus.OK);
        assertThat(f.runUntil(() -> client.count(CmEventType.DISCONNECTED) == 1, S)).isTrue();
        final Connection s = server.first(CmEventType.CONNECT_REQUEST).connection();
        assertThat(server.events).extracting(CmEvent::type)
            .containsExactly(CmEventType.CONNECT_REQUEST, CmEventType.CONNECT_ERROR);
        assertThat(server.first(CmEventType.CONNECT_ERROR).reason()).isEqualTo(CmReason.QP_ERROR);
        assertThat(server.cm.counters().get(CmCounter.COMM_EST)).isZero();
        assertThat(s.queuePair().state()).isEqualTo(QpState.ERR);
        assertThat(s.state()).isEqualTo(ConnectionState.TIMEWAIT);
        assertThat(client.sendCompletions.get(0).status()).isEqualTo(WcStatus.REM_ACCESS_ERR);
        assertThat(client.first(CmEventType.DISCONNECTED).reason()).isEqualTo(CmReason.QP_ERROR);
        // [CM-033]: only the side that received the fatal NACK sent DISCONNECT_REQUEST.
        assertThat(f.wire.trace().count(e -> e.opcode() == DREQ && e.from() == server.id)).isZero();
        assertThat(f.wire.trace().count(e -> e.opcode() == DREQ && e.from() == client.id)).isEqualTo(1);
        assertThat(f.wire.now()).isLessThan(10 * MS);
        // The server's CONNECT_REPLY retransmissions stopped with the failure.
        final long replies = f.wire.trace().count(e -> e.opcode() == Opcode.CONNECT_REPLY.value());
        f.runUntil(() -> false, 3 * S);
        assertThat(f.wire.trace().count(e -> e.opcode() == Opcode.CONNECT_REPLY.value())).isEqualTo(replies);
        assertThat(server.events).hasSize(2);
    }

    @Test
    void destroyingAnEstablishedQueuePairDisconnects() {
        final Pair p = new Pair(12);
        p.server.endpoint.destroyQueuePair(p.s.queuePair());
        assertThat(p.s.queuePair().isDestroyed()).isTrue();
        assertThat(p.f.runUntil(() -> p.client.count(CmEventType.DISCONNECTED) == 1
            && p.server.count(CmEventType.DISCONNECTED) == 1, S)).isTrue();
        assertThat(p.f.wire.now()).isLessThan(10 * MS);
        for (final Node n : new Node[] {p.client, p.server}) {
            assertThat(n.first(CmEventType.DISCONNECTED).reason()).isEqualTo(CmReason.NORMAL);
        }
        assertThat(p.c.queuePair().state()).isEqualTo(QpState.ERR);
        assertThat(p.f.wire.trace().count(e -> e.opcode() == DREQ && e.from() == p.server.id)).isEqualTo(1);
        assertThat(p.f.wire.trace().count(e -> e.opcode() == DREP && e.from() == p.client.id)).isEqualTo(1);
    }

    @Test
    void deadPeerIsFoundThroughTheRetransmissionTimeoutOfOutstandingWork() {
        final Pair p = new Pair(6, new CmConfig(), new CmConfig(), c -> c.retryCount(2).timeoutNs(MS).retryTimeoutNs(0));
        p.f.wire.linkBoth(p.client.id, p.server.id, LinkProfile.builder().blackhole(0, Long.MAX_VALUE).build());
        p.c.queuePair().postSend(new SendRequest(1).wrId(1).opcode(WrOpcode.SEND).sendFlags(SendFlags.SIGNALED)
            .addSge(p.client.address(0), 100, p.client.mr.lkey()));
        final long start = p.f.wire.now();
        assertThat(p.f.runUntil(() -> p.client.count(CmEventType.DISCONNECTED) == 1, 10 * S)).isTrue();
        // Retries exhausted after a few milliseconds; then DISCONNECT_TIMEOUT of unanswered requests.
        assertThat(p.f.wire.now() - start).isBetween(S, S + 100 * MS);
        assertThat(p.client.sendCompletions.get(0).status()).isEqualTo(WcStatus.RETRY_EXC_ERR);
        assertThat(p.client.first(CmEventType.DISCONNECTED).reason()).isEqualTo(CmReason.QP_ERROR);
    }

    @Test
    void disconnectWhileConnectingGivesUpAtOnce() {
        final CmFixture f = new CmFixture(9, LinkProfile.perfect());
        final Node server = f.node(SERVER_PORT, new CmConfig());
        final Node client = f.node(CLIENT_PORT, new CmConfig());
        f.wire.link(client.id, server.id, LinkProfile.builder().blackhole(0, Long.MAX_VALUE).build());
        final Connection c = client.cm.connect(client.connectParams(server));
        f.runUntil(() -> false, MS);
        client.cm.disconnect(c);
        assertThat(c.queuePair().state()).isEqualTo(QpState.ERR);
        assertThat(c.state()).isEqualTo(ConnectionState.CLOSED);
        f.runUntil(() -> false, 5 * S);
        assertThat(client.events).extracting(CmEvent::type).containsExactly(CmEventType.DISCONNECTED);
        assertThat(client.cm.connectionCount()).isZero();
    }
}
