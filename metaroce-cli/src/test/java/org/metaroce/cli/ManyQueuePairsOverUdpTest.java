// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.metaroce.core.connection.CmConfig;
import org.metaroce.core.connection.CmEvent;
import org.metaroce.core.connection.CmEventType;
import org.metaroce.core.connection.CmReason;
import org.metaroce.core.connection.ConnectParams;
import org.metaroce.core.connection.Connection;
import org.metaroce.core.connection.ConnectionState;
import org.metaroce.core.connection.ListenParams;
import org.metaroce.core.engine.EndpointConfig;
import org.metaroce.core.engine.EndpointCounter;
import org.metaroce.core.engine.QueuePair;
import org.metaroce.core.engine.QueuePairCapabilities;
import org.metaroce.core.verbs.AccessFlags;
import org.metaroce.core.verbs.PostStatus;
import org.metaroce.core.verbs.QpState;
import org.metaroce.core.verbs.RecvRequest;
import org.metaroce.core.verbs.SendFlags;
import org.metaroce.core.verbs.SendRequest;
import org.metaroce.core.verbs.WcOpcode;
import org.metaroce.core.verbs.WcStatus;
import org.metaroce.core.verbs.WorkCompletion;
import org.metaroce.core.verbs.WrOpcode;
import org.metaroce.netty.ThreadingMode;

/**
 * Two devices on 127.0.0.1 connected through the connection manager (real UDP sockets, the
 * device's peer table as the peer directory, as the CLI does) with 64 queue pairs at once: every
 * connection reaches ESTABLISHED on both sides with 4 paths; each queue pair WRITEs 256 KiB
 * sprayed over its 4 paths and then SENDs a message; every byte is verified; then half the
 * connections are disconnected by the client and half by the server, and all 64 end DISCONNECTED
 * (reason NORMAL) on both sides with their queue pairs in ERR.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ManyQueuePairsOverUdpTest {
    static final int QPS = 64;
    static final int PATHS = 4;
    static final int MTU = 4096;
    static final int WRITE_BYTES = 256 << 10;
    /** More than one MTU, so the SEND is a multi-packet message too. */
    static final int SEND_BYTES = 6000;
    static final int SEND_SLOT = 8192;
    static final int SEND_AREA = QPS * WRITE_BYTES;
    static final int REGION = SEND_AREA + QPS * SEND_SLOT;
    static final long SERVICE = 0x4D52_4F43_0000_0040L;
    static final long STEP_NS = TimeUnit.SECONDS.toNanos(15);

    private UdpCmNode a;
    private UdpCmNode b;

    @AfterEach
    void close() {
        if (a != null) {
            a.close();
        }
        if (b != null) {
            b.close();
        }
    }

    static byte[] index(final int q) {
        return ByteBuffer.allocate(4).putInt(q).array();
    }

    static int index(final CmEvent e) {
        return ByteBuffer.wrap(e.privateData()).getInt();
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(value = ThreadingMode.class, names = {"INVOKER", "DEDICATED"})
    void sixtyFourQueuePairsWriteSendVerifyAndDisconnect(final ThreadingMode mode) {
        final long start = System.nanoTime();
        final EndpointConfig ec = new EndpointConfig().minRtoNs(TimeUnit.MILLISECONDS.toNanos(5));
        final CmConfig cc = new CmConfig().connectTimeoutNs(TimeUnit.SECONDS.toNanos(10));
        a = new UdpCmNode("A(client)", mode, REGION, PATHS, 4 * QPS, ec, cc, d -> { });
        b = new UdpCmNode("B(server)", mode, REGION, PATHS, 4 * QPS, ec, cc, d -> { });
        final UdpCmNode[] both = {a, b};
        final QueuePairCapabilities caps = new QueuePairCapabilities(8, 8, 1, 1, 16);

        // Server: accept every request and post the receive of its SEND at once (on the owning thread).
        final Connection[] serverConns = new Connection[QPS];
        final int[] bPaths = b.device.entropyPorts();
        b.onOwnerEvent = e -> {
            if (e.type() != CmEventType.CONNECT_REQUEST) {
                return;
            }
            final int q = index(e);
            if (!b.cm.accept(e, index(q))) {
                throw new AssertionError("accept of connection " + q + " failed");
            }
            final Connection c = e.connection();
            c.context(q);
            serverConns[q] = c;
            final int status = c.queuePair().postRecv(new RecvRequest(1).wrId(q)
                .addSge(b.address(SEND_AREA + (long) q * SEND_SLOT), SEND_SLOT, b.mr.lkey()));
            if (status != PostStatus.OK) {
                throw new AssertionError("postRecv on connection " + q + ": " + status);
            }
        };
        b.call(ep -> b.cm.listen(SERVICE, new ListenParams().resources(b.pd, b.sendCq, b.recvCq, caps)
            .accessFlags(AccessFlags.ALL).pathMtu(MTU).paths(bPaths).limit(QPS)));

        // Sources: a different pattern per queue pair, for the WRITE and for the SEND.
        for (int q = 0; q < QPS; q++) {
            UdpCmNode.fill(a.buffer(), q * WRITE_BYTES, WRITE_BYTES, q);
            UdpCmNode.fill(a.buffer(), SEND_AREA + q * SEND_SLOT, SEND_BYTES, 1000 + q);
        }

        // Client: 64 connections at once.
        final int serverPeer = a.device.peerId(b.device.localAddress());
        final int[] aPaths = a.device.entropyPorts();
        final Connection[] clientConns = a.call(ep -> {
            final Connection[] cs = new Connection[QPS];
            for (int q = 0; q < QPS; q++) {
                cs[q] = a.cm.connect(new ConnectParams().peer(serverPeer).serviceId(SERVICE)
                    .resources(a.pd, a.sendCq, a.recvCq, caps).accessFlags(AccessFlags.ALL).pathMtu(MTU)
                    .paths(aPaths).privateData(index(q)).context(q)
                    .timeoutNs(TimeUnit.MILLISECONDS.toNanos(5)));
            }
            return cs;
        });

        final boolean established = UdpCmNode.pump(STEP_NS, () -> a.count(CmEventType.ESTABLISHED) == QPS
            && b.count(CmEventType.ESTABLISHED) == QPS || failed(a) || failed(b), both);
        assertThat(a.ownerFailures).as("client handler").isEmpty();
        assertThat(b.ownerFailures).as("server handler").isEmpty();
        assertThat(established).as(() -> "64 ESTABLISHED on both sides; client events " + summary(a)
            + ", server events " + summary(b) + UdpCmNode.describe(both)).isTrue();
        assertThat(a.events).as("client events").extracting(CmEvent::type).containsOnly(CmEventType.ESTABLISHED);
        assertThat(b.events).as("server events").extracting(CmEvent::type)
            .containsOnly(CmEventType.CONNECT_REQUEST, CmEventType.ESTABLISHED);
        assertThat(b.count(CmEventType.CONNECT_REQUEST)).isEqualTo(QPS);
        final long connectMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);

        final List<String> wrong = a.call(ep -> {
            final List<String> problems = new ArrayList<>();
            for (int q = 0; q < QPS; q++) {
                for (final Connection c : new Connection[] {clientConns[q], serverConns[q]}) {
                    if (c.state() != ConnectionState.ESTABLISHED || c.pathCount() != PATHS || c.pathMtu() != MTU
                        || (Integer) c.context() != q) {
                        problems.add(q + ": " + c);
                    }
                }
                if (clientConns[q].remoteQpn() != serverConns[q].localQpn()
                    || serverConns[q].remoteQpn() != clientConns[q].localQpn()) {
                    problems.add(q + ": QPNs do not match: " + clientConns[q] + " / " + serverConns[q]);
                }
            }
            return problems;
        });
        assertThat(wrong).as("negotiated connections").isEmpty();
        assertThat((int) a.call(ep -> ep.queuePairCount(QpState.RTS))).as("client QPs in RTS").isEqualTo(QPS);
        assertThat((int) b.call(ep -> ep.queuePairCount(QpState.RTS))).as("server QPs in RTS").isEqualTo(QPS);

        // One WRITE of 256 KiB and one SEND per queue pair, all posted at once.
        a.call(ep -> {
            for (int q = 0; q < QPS; q++) {
                final QueuePair qp = clientConns[q].queuePair();
                final int w = qp.postSend(new SendRequest(1).wrId(2L * q).opcode(WrOpcode.RDMA_WRITE)
                    .sendFlags(SendFlags.SIGNALED).addSge(a.address((long) q * WRITE_BYTES), WRITE_BYTES, a.mr.lkey())
                    .remoteAddr(b.address((long) q * WRITE_BYTES)).rkey(b.mr.rkey()));
                final int s = qp.postSend(new SendRequest(1).wrId(2L * q + 1).opcode(WrOpcode.SEND)
                    .sendFlags(SendFlags.SIGNALED).addSge(a.address(SEND_AREA + (long) q * SEND_SLOT), SEND_BYTES,
                        a.mr.lkey()));
                if (w != PostStatus.OK || s != PostStatus.OK) {
                    throw new AssertionError("post on QP " + q + ": write " + w + ", send " + s);
                }
            }
            return null;
        });
        final boolean transferred = UdpCmNode.pump(STEP_NS, () -> a.sendCompletions.size() >= 2 * QPS
            && b.recvCompletions.size() >= QPS, both);
        assertThat(transferred).as(() -> "128 send completions on A (" + a.sendCompletions.size() + ") and 64 "
            + "receive completions on B (" + b.recvCompletions.size() + ")" + UdpCmNode.describe(both)).isTrue();
        final long transferMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start) - connectMs;

        assertThat(a.sendCompletions).as(() -> "client completions" + UdpCmNode.describe(both))
            .hasSize(2 * QPS).extracting(WorkCompletion::status).containsOnly(WcStatus.SUCCESS);
        for (final WorkCompletion wc : a.sendCompletions) {
            final int q = (int) (wc.wrId() / 2);
            assertThat(wc.qpNum()).as("QPN of completion " + wc.wrId()).isEqualTo(clientConns[q].localQpn());
            assertThat(wc.opcode()).isEqualTo(wc.wrId() % 2 == 0 ? WcOpcode.RDMA_WRITE : WcOpcode.SEND);
        }
        assertThat(b.recvCompletions).hasSize(QPS);
        final boolean[] seen = new boolean[QPS];
        for (final WorkCompletion wc : b.recvCompletions) {
            final int q = (int) wc.wrId();
            assertThat(wc.status()).as("receive " + q).isEqualTo(WcStatus.SUCCESS);
            assertThat(wc.byteLen()).as("receive " + q).isEqualTo(SEND_BYTES);
            assertThat(wc.qpNum()).as("receive " + q).isEqualTo(serverConns[q].localQpn());
            assertThat(seen[q]).as("receive " + q + " completed twice").isFalse();
            seen[q] = true;
        }
        // B's owning thread wrote B's memory: compare there.
        b.call(ep -> {
            for (int q = 0; q < QPS; q++) {
                UdpCmNode.assertSameBytes("WRITE of QP " + q, a.buffer(), q * WRITE_BYTES, b.buffer(),
                    q * WRITE_BYTES, WRITE_BYTES);
                UdpCmNode.assertSameBytes("SEND of QP " + q, a.buffer(), SEND_AREA + q * SEND_SLOT, b.buffer(),
                    SEND_AREA + q * SEND_SLOT, SEND_BYTES);
            }
            return null;
        });
        // Every queue pair sprayed its packets over all 4 of its paths.
        final long[][] perPath = a.call(ep -> {
            final long[][] out = new long[QPS][PATHS];
            for (int q = 0; q < QPS; q++) {
                for (int p = 0; p < PATHS; p++) {
                    out[q][p] = clientConns[q].queuePair().paths().sent(p);
                }
            }
            return out;
        });
        for (int q = 0; q < QPS; q++) {
            assertThat(clientConns[q].queuePair().paths().pathCount()).isEqualTo(PATHS);
            for (int p = 0; p < PATHS; p++) {
                assertThat(perPath[q][p]).as("packets of QP " + q + " on path " + p).isPositive();
            }
        }
        assertThat(a.device.endpoint().counters().get(EndpointCounter.QP_ERRORS)).isZero();
        assertThat(b.device.endpoint().counters().get(EndpointCounter.QP_ERRORS)).isZero();
        assertThat(b.device.endpoint().counters().get(EndpointCounter.PEER_MISMATCH)).isZero();

        // Teardown: even connections disconnected by the client, odd ones by the server.
        a.call(ep -> {
            for (int q = 0; q < QPS; q += 2) {
                a.cm.disconnect(clientConns[q]);
            }
            return null;
        });
        b.call(ep -> {
            for (int q = 1; q < QPS; q += 2) {
                b.cm.disconnect(serverConns[q]);
            }
            return null;
        });
        final boolean disconnected = UdpCmNode.pump(STEP_NS, () -> a.count(CmEventType.DISCONNECTED) >= QPS
            && b.count(CmEventType.DISCONNECTED) >= QPS, both);
        assertThat(disconnected).as(() -> "64 DISCONNECTED on both sides: client " + a.count(CmEventType.DISCONNECTED)
            + ", server " + b.count(CmEventType.DISCONNECTED) + UdpCmNode.describe(both)).isTrue();
        // Let duplicates, if any, arrive.
        UdpCmNode.pump(TimeUnit.MILLISECONDS.toNanos(50), () -> false, both);
        for (final UdpCmNode n : both) {
            final List<CmEvent> ds = n.events(CmEventType.DISCONNECTED);
            assertThat(ds).as(n.name + " DISCONNECTED events").hasSize(QPS);
            assertThat(ds).extracting(CmEvent::reason).as(n.name + " reasons").containsOnly(CmReason.NORMAL);
            assertThat(ds).extracting(e -> (Integer) e.connection().context()).as(n.name + " connections")
                .containsExactlyInAnyOrderElementsOf(range(QPS));
            // [CM-039]: the QPs the connection manager created moved to ERR and were destroyed with the connection.
            assertThat((int) n.call(ep -> {
                int gone = 0;
                for (final CmEvent e : ds) {
                    final QueuePair qp = e.connection().queuePair();
                    gone += qp.state() == QpState.ERR && qp.isDestroyed() ? 1 : 0;
                }
                return gone;
            })).as(n.name + " QPs in ERR and destroyed").isEqualTo(QPS);
            assertThat((int) n.call(ep -> ep.queuePairCount())).as(n.name + " live QPs").isZero();
            assertThat((int) n.call(ep -> {
                int timewait = 0;
                for (final CmEvent e : ds) {
                    timewait += e.connection().state() == ConnectionState.TIMEWAIT ? 1 : 0;
                }
                return timewait;
            })).as(n.name + " connections in TIMEWAIT").isEqualTo(QPS);
        }
        System.out.printf("ManyQueuePairsOverUdpTest %s: 64 connections in %d ms, 16 MiB + 64 SENDs in %d ms, "
            + "total %d ms%n  A: %s%n  B: %s%n  A cm: %s%n  B cm: %s%n", mode, connectMs, transferMs,
            TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start), a.device.endpoint().counters(),
            b.device.endpoint().counters(), a.cm.counters(), b.cm.counters());
    }

    private static List<Integer> range(final int n) {
        final List<Integer> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            out.add(i);
        }
        return out;
    }

    private static boolean failed(final UdpCmNode n) {
        return !n.ownerFailures.isEmpty() || n.count(CmEventType.REJECTED) > 0 || n.count(CmEventType.UNREACHABLE) > 0
            || n.count(CmEventType.CONNECT_ERROR) > 0 || n.count(CmEventType.DISCONNECTED) > 0;
    }

    private static String summary(final UdpCmNode n) {
        final StringBuilder sb = new StringBuilder("{");
        for (final CmEventType t : CmEventType.values()) {
            final long c = n.count(t);
            if (c > 0) {
                sb.append(t).append('=').append(c).append(' ');
            }
        }
        final List<String> bad = new ArrayList<>();
        for (final CmEvent e : n.events) {
            if (e.type() != CmEventType.ESTABLISHED && e.type() != CmEventType.CONNECT_REQUEST && bad.size() < 5) {
                bad.add(e.toString());
            }
        }
        return sb.append(bad).append('}').toString();
    }
}
