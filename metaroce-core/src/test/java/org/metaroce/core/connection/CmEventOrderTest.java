// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.connection;

import static org.assertj.core.api.Assertions.assertThat;
import static org.metaroce.core.connection.CmFixture.CLIENT_PORT;
import static org.metaroce.core.connection.CmFixture.MS;
import static org.metaroce.core.connection.CmFixture.S;
import static org.metaroce.core.connection.CmFixture.SERVER_PORT;
import static org.metaroce.core.connection.CmFixture.SERVICE;

import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.metaroce.core.connection.CmFixture.Node;
import org.metaroce.core.engine.QueuePair;
import org.metaroce.core.engine.QueuePairCapabilities;
import org.metaroce.core.testwire.LinkProfile;
import org.metaroce.core.verbs.PostStatus;
import org.metaroce.core.verbs.RecvRequest;
import org.metaroce.core.verbs.SendFlags;
import org.metaroce.core.verbs.SendRequest;
import org.metaroce.core.verbs.WrOpcode;

/**
 * The order and the instant of every connection-manager event of a seeded run in which handlers
 * act on the engine from inside events: accept and reject, post work, connect a second queue
 * pair, disconnect, create and destroy queue pairs. The expected log was recorded with the
 * synchronous dispatcher that events replaced when they became pulled (issue 19); it must not
 * change, so the same events reach the same handlers in the same order at the same time.
 */
class CmEventOrderTest {
    private static final long SEED = 19;
    private static final long OTHER_SERVICE = SERVICE + 1;

    private final List<String> log = new ArrayList<>();

    @Test
    void handlersActingOnTheEngineSeeTheEventsOfTheRecordedRunInItsOrder() {
        System.out.println("CmEventOrderTest seed=" + SEED);
        final CmFixture f = new CmFixture(SEED, LinkProfile.builder().loss(0.15).build());
        final Node server = f.node(SERVER_PORT, new CmConfig());
        final Node a = f.node(CLIENT_PORT, new CmConfig());
        final Node b = f.node(CLIENT_PORT + 1, new CmConfig());
        final Node c = f.node(CLIENT_PORT + 2, new CmConfig());
        final Node dead = f.node(CLIENT_PORT + 3, new CmConfig());
        f.wire.filter((from, to, buffer, offset, length, now) -> to == dead.id || from == dead.id);
        final String[] names = {"server", "a", "b", "c", "dead"};
        for (final Node n : f.nodes) {
            n.cm.eventHandler(e -> onEvent(f, n, names[f.nodes.indexOf(n)], e));
        }
        server.cm.listen(SERVICE, server.listenParams());

        // The server accepts a and b and rejects c; each accept posts receives at once. On each
        // ESTABLISHED it creates an application queue pair and destroys the previous one, so the
        // set of queue pairs changes from inside events.
        final List<QueuePair> spare = new ArrayList<>();
        server.onRequest = e -> {
            if (e.connection().remotePeer() == c.id) {
                server.cm.reject(e, new byte[] {7});
                return;
            }
            server.cm.accept(e, null);
            for (int i = 0; i < 2; i++) {
                e.connection().queuePair().postRecv(new RecvRequest(1).wrId(100 + i)
                    .addSge(server.address(i * 4096L), 4096, server.mr.lkey()));
            }
        };
        reactions.put(server, e -> {
            if (e.type() == CmEventType.ESTABLISHED) {
                if (!spare.isEmpty()) {
                    server.endpoint.destroyQueuePair(spare.remove(0));
                }
                spare.add(server.endpoint.createQueuePair(server.pd, server.sendCq, server.recvCq,
                    QueuePairCapabilities.defaults()));
            }
        });
        // a posts a SEND and connects a second queue pair (with its own handler) on ESTABLISHED;
        // that second connection disconnects as soon as it is up.
        final boolean[] second = new boolean[1];
        reactions.put(a, e -> {
            if (e.type() == CmEventType.ESTABLISHED && !second[0]) {
                second[0] = true;
                assertThat(e.connection().queuePair().postSend(new SendRequest(1).wrId(1).opcode(WrOpcode.SEND)
                    .sendFlags(SendFlags.SIGNALED)
                    .addSge(a.address(0), 3000, a.mr.lkey()))).isEqualTo(PostStatus.OK);
                a.cm.connect(a.connectParams(server).handler(inner -> {
                    record(f, "a2", inner);
                    if (inner.type() == CmEventType.ESTABLISHED) {
                        a.cm.disconnect(inner.connection());
                    }
                }));
            }
        });
        // b disconnects from inside its ESTABLISHED.
        reactions.put(b, e -> {
            if (e.type() == CmEventType.ESTABLISHED) {
                b.cm.disconnect(e.connection());
            }
        });
        // c, rejected, asks a service nobody listens on; rejected again, it tries the dead host.
        reactions.put(c, e -> {
            if (e.type() == CmEventType.REJECTED && e.connection().serviceId() == SERVICE) {
                c.cm.connect(c.connectParams(server).serviceId(OTHER_SERVICE));
            } else if (e.type() == CmEventType.REJECTED) {
                c.cm.connect(c.connectParams(dead).connectTimeoutNs(50 * MS));
            }
        });

        final Connection fromA = a.cm.connect(a.connectParams(server));
        b.cm.connect(b.connectParams(server));
        c.cm.connect(c.connectParams(server));
        final boolean done = f.runUntil(() -> c.count(CmEventType.UNREACHABLE) == 1
            && a.sendCompletions.size() == 1, S);
        assertThat(done).as("c unreachable and a's SEND completed").isTrue();
        a.cm.disconnect(fromA);
        f.runUntil(() -> false, 20 * S);

        log.forEach(System.out::println);
        assertThat(log).containsExactly(EXPECTED);
    }

    private final java.util.Map<Node, java.util.function.Consumer<CmEvent>> reactions = new java.util.HashMap<>();

    private void onEvent(final CmFixture f, final Node n, final String name, final CmEvent e) {
        record(f, name, e);
        n.events.add(e);
        if (e.type() == CmEventType.CONNECT_REQUEST && n.onRequest != null) {
            n.onRequest.accept(e);
        }
        final java.util.function.Consumer<CmEvent> reaction = reactions.get(n);
        if (reaction != null) {
            reaction.accept(e);
        }
    }

    private void record(final CmFixture f, final String name, final CmEvent e) {
        final Connection c = e.connection();
        log.add(f.wire.now() + " " + name + " " + e.type() + " reason=" + e.reason() + " service=" + c.serviceId()
            + " qpn=" + c.localQpn() + " remote=" + c.remoteQpn() + " data=" + e.privateDataLength());
    }

    private static final String[] EXPECTED = {
        "15000 server CONNECT_REQUEST reason=0 service=20000 qpn=0 remote=3252836 data=0",
        "15000 server CONNECT_REQUEST reason=0 service=20000 qpn=0 remote=14408302 data=0",
        "15000 server CONNECT_REQUEST reason=0 service=20000 qpn=0 remote=8214232 data=0",
        "20000 c REJECTED reason=2 service=20000 qpn=8214232 remote=0 data=1",
        "20000 b ESTABLISHED reason=0 service=20000 qpn=14408302 remote=8016381 data=0",
        "20000 a ESTABLISHED reason=0 service=20000 qpn=3252836 remote=14727579 data=0",
        "25000 server ESTABLISHED reason=0 service=20000 qpn=14727579 remote=3252836 data=0",
        "25000 server DISCONNECTED reason=0 service=20000 qpn=8016381 remote=14408302 data=0",
        "30000 b DISCONNECTED reason=0 service=20000 qpn=14408302 remote=8016381 data=0",
        "30000 c REJECTED reason=1 service=20001 qpn=7046551 remote=0 data=0",
        "35000 server CONNECT_REQUEST reason=0 service=20000 qpn=0 remote=4306168 data=0",
        "50030000 c UNREACHABLE reason=0 service=20000 qpn=11322909 remote=0 data=0",
        "50035000 server DISCONNECTED reason=0 service=20000 qpn=14727579 remote=3252836 data=0",
        "50040000 a DISCONNECTED reason=0 service=20000 qpn=3252836 remote=14727579 data=0",
        "100040000 a2 ESTABLISHED reason=0 service=20000 qpn=4306168 remote=13214860 data=0",
        "100045000 server ESTABLISHED reason=0 service=20000 qpn=13214860 remote=4306168 data=0",
        "100045000 server DISCONNECTED reason=0 service=20000 qpn=13214860 remote=4306168 data=0",
        "100050000 a2 DISCONNECTED reason=0 service=20000 qpn=4306168 remote=13214860 data=0",
        "10000025000 server TIMEWAIT_EXIT reason=0 service=20000 qpn=8016381 remote=14408302 data=0",
        "10000030000 b TIMEWAIT_EXIT reason=0 service=20000 qpn=14408302 remote=8016381 data=0",
        "10050035000 server TIMEWAIT_EXIT reason=0 service=20000 qpn=14727579 remote=3252836 data=0",
        "10050040000 a TIMEWAIT_EXIT reason=0 service=20000 qpn=3252836 remote=14727579 data=0",
        "10100045000 server TIMEWAIT_EXIT reason=0 service=20000 qpn=13214860 remote=4306168 data=0",
        "10100050000 a2 TIMEWAIT_EXIT reason=0 service=20000 qpn=4306168 remote=13214860 data=0",
    };
}
