// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.connection;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class CmEventDispatcherTest {
    private static final byte[] NONE = new byte[0];

    private static CmEvent event(final CmEventType type, final Connection c) {
        return new CmEvent(type, c, null, CmReason.NORMAL, NONE);
    }

    @Test
    void aConnectionsHandlerComesFirstThenTheDefaultThenTheQueue() {
        final CmEventDispatcher d = new CmEventDispatcher();
        final List<String> seen = new ArrayList<>();
        final Connection own = new Connection(false, 1, 1, null);
        final CmEventHandler ownHandler = e -> seen.add("own " + e.type());
        final Connection other = new Connection(false, 1, 2, null);

        d.raise(event(CmEventType.ESTABLISHED, other), null);
        d.raise(event(CmEventType.ESTABLISHED, own), ownHandler);
        assertThat(seen).as("raising only queues").isEmpty();
        d.dispatch();
        assertThat(seen).containsExactly("own ESTABLISHED");
        assertThat(d.poll().connection()).isSameAs(other);
        assertThat(d.poll()).isNull();

        d.handler(e -> seen.add("default " + e.type()));
        d.raise(event(CmEventType.DISCONNECTED, other), null);
        d.dispatch();
        assertThat(seen).containsExactly("own ESTABLISHED", "default DISCONNECTED");
        assertThat(d.poll()).isNull();
    }

    @Test
    void eventsRaisedByAHandlerAreDeliveredAfterItReturnsInOrder() {
        // A handler may call back into the manager, which raises more events into the same queue;
        // the dispatch under way delivers them once the handler has returned, never inside it.
        final CmEventDispatcher d = new CmEventDispatcher();
        final List<String> seen = new ArrayList<>();
        final Connection c = new Connection(true, 1, 1, null);
        d.handler(e -> {
            seen.add("start " + e.type());
            if (e.type() == CmEventType.CONNECT_REQUEST) {
                d.raise(event(CmEventType.ESTABLISHED, c), null);
                d.raise(event(CmEventType.DISCONNECTED, c), null);
                assertThat(d.hasPending()).isTrue();
            }
            seen.add("end " + e.type());
        });
        d.raise(event(CmEventType.CONNECT_REQUEST, c), null);
        d.dispatch();
        assertThat(seen).containsExactly("start CONNECT_REQUEST", "end CONNECT_REQUEST", "start ESTABLISHED",
            "end ESTABLISHED", "start DISCONNECTED", "end DISCONNECTED");
        assertThat(d.hasPending()).isFalse();
    }
}
