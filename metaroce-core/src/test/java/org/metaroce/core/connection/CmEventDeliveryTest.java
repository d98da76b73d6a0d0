// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.connection;

import static org.assertj.core.api.Assertions.assertThat;
import static org.metaroce.core.connection.CmFixture.CLIENT_PORT;
import static org.metaroce.core.connection.CmFixture.MS;
import static org.metaroce.core.connection.CmFixture.S;
import static org.metaroce.core.connection.CmFixture.SERVER_PORT;
import static org.metaroce.core.connection.CmFixture.SERVICE;

import java.security.CodeSource;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

import org.junit.jupiter.api.Test;
import org.metaroce.core.connection.CmFixture.Node;
import org.metaroce.core.engine.QueuePair;
import org.metaroce.core.engine.QueuePairCapabilities;
import org.metaroce.core.testwire.LinkProfile;

/**
 * Connection-manager events are pulled out of the engine once it has finished a step (issue 19):
 * queued while a packet, a poll or a call is processed and handed out by
 * {@link ConnectionManager#deliverEvents()} at the endpoint's return points, so no handler runs
 * while engine code is in the middle of its work.
 */
class CmEventDeliveryTest {
    /** The only frames of the library allowed under a handler: the endpoint's entry points and the delivery. */
    private static final Set<String> DELIVERY_PATH = Set.of("Endpoint.onDatagram", "Endpoint.poll",
        "ConnectionManager.deliverEvents", "CmEventDispatcher.dispatch");
    private static final CodeSource LIBRARY = ConnectionManager.class.getProtectionDomain().getCodeSource();

    /** @return the library's methods on the caller's stack, as Class.method */
    private static List<String> libraryFrames() {
        return StackWalker.getInstance(StackWalker.Option.RETAIN_CLASS_REFERENCE).walk(frames -> frames
            .filter(f -> f.getDeclaringClass().getProtectionDomain().getCodeSource() == LIBRARY)
            .map(f -> f.getDeclaringClass().getSimpleName() + "." + f.getMethodName()).toList());
    }

    @Test
    void noHandlerRunsInsideAPacketAPollOrACallOfTheEngine() {
        final long seed = 7;
        final CmFixture f = new CmFixture(seed, LinkProfile.builder().loss(0.1).build());
        final Node server = f.node(SERVER_PORT, new CmConfig());
        final Node client = f.node(CLIENT_PORT, new CmConfig());
        final Node dead = f.node(CLIENT_PORT + 1, new CmConfig());
        f.wire.filter((from, to, buffer, offset, length, now) -> to == dead.id);
        final Set<String> inside = new TreeSet<>();
        final List<CmEventType> seen = new ArrayList<>();
        final List<QueuePair> created = new ArrayList<>();
        server.cm.listen(SERVICE, server.listenParams());
        for (final Node n : f.nodes) {
            final List<QueuePair> mine = new ArrayList<>();
            n.cm.eventHandler(e -> {
                for (final String frame : libraryFrames()) {
                    if (!DELIVERY_PATH.contains(frame)) {
                        inside.add(e.type() + " under " + frame);
                    }
                }
                seen.add(e.type());
                n.events.add(e);
                // Act on the engine from inside the event: all of it must be consistent here.
                switch (e.type()) {
                    case CONNECT_REQUEST -> n.cm.accept(e, null);
                    case ESTABLISHED -> {
                        final QueuePair qp = n.endpoint.createQueuePair(n.pd, n.sendCq, n.recvCq,
                            QueuePairCapabilities.defaults());
                        mine.add(qp);
                        created.add(qp);
                        if (!e.connection().isServer()) {
                            n.cm.disconnect(e.connection());
                        }
                    }
                    case DISCONNECTED -> {
                        final QueuePair qp = mine.remove(0);
                        created.remove(qp);
                        n.endpoint.destroyQueuePair(qp);
                    }
                    default -> {
                    }
                }
            });
        }
        client.cm.connect(client.connectParams(server));
        client.cm.connect(client.connectParams(dead).connectTimeoutNs(20 * MS));
        f.runUntil(() -> false, 12 * S);

        System.out.println("seed=" + seed + " events " + seen);
        // Raised from packets (CONNECT_REQUEST, ESTABLISHED, DISCONNECTED) and from timers in the
        // manager's poll (UNREACHABLE, TIMEWAIT_EXIT).
        assertThat(seen).contains(CmEventType.CONNECT_REQUEST, CmEventType.ESTABLISHED, CmEventType.DISCONNECTED,
            CmEventType.UNREACHABLE, CmEventType.TIMEWAIT_EXIT);
        assertThat(inside).as("handlers that ran in the middle of an engine step").isEmpty();
        assertThat(created).isEmpty();
        assertThat(server.endpoint.queuePairCount() + client.endpoint.queuePairCount()).isZero();
    }

    @Test
    void anEventACallRaisesReachesTheHandlerAtTheNextPollNotInsideTheCall() {
        final CmFixture f = new CmFixture(3, LinkProfile.perfect());
        final Node client = f.node(CLIENT_PORT, new CmConfig());
        final Node dead = f.node(CLIENT_PORT + 1, new CmConfig());
        f.wire.filter((from, to, buffer, offset, length, now) -> to == dead.id);
        final Connection c = client.cm.connect(client.connectParams(dead));
        f.runUntil(() -> false, MS);
        assertThat(c.state()).isEqualTo(ConnectionState.CONNECTING);

        // Giving up on a connection still connecting raises DISCONNECTED in the call [CM-031] ...
        client.cm.disconnect(c);
        assertThat(client.events).as("delivered inside disconnect()").isEmpty();
        assertThat(client.cm.nextDeadlineNs()).as("an event waits: poll now").isLessThanOrEqualTo(f.wire.now());
        // ... and the endpoint's next poll hands it out.
        client.endpoint.poll(f.wire.now(), new CapturingSink());
        assertThat(client.events).extracting(CmEvent::type).containsExactly(CmEventType.DISCONNECTED);
    }

    @Test
    void withoutAHandlerTheEventWaitsForTheApplicationToPullItAfterThePoll() {
        final CmFixture f = new CmFixture(4, LinkProfile.perfect());
        final Node client = f.node(CLIENT_PORT, new CmConfig());
        final Node dead = f.node(CLIENT_PORT + 1, new CmConfig());
        client.cm.eventHandler(null);
        f.wire.filter((from, to, buffer, offset, length, now) -> to == dead.id);
        final Connection c = client.cm.connect(client.connectParams(dead));
        f.runUntil(() -> false, MS);

        client.cm.disconnect(c);
        assertThat(client.cm.pollEvent()).isNull();
        client.endpoint.poll(f.wire.now(), new CapturingSink());
        final CmEvent e = client.cm.pollEvent();
        assertThat(e).isNotNull();
        assertThat(e.type()).isEqualTo(CmEventType.DISCONNECTED);
        assertThat(e.connection()).isSameAs(c);
        assertThat(client.cm.pollEvent()).isNull();
    }
}
