// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.connection;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.metaroce.core.SeededRandomSource;
import org.metaroce.core.engine.AsyncEventType;
import org.metaroce.core.engine.Endpoint;
import org.metaroce.core.engine.EndpointConfig;
import org.metaroce.core.engine.QueuePair;
import org.metaroce.core.engine.QueuePairCapabilities;
import org.metaroce.core.verbs.ProtectionDomain;

class QpEventQueueTest {
    private static List<QueuePair> queuePairs(final int n) {
        final Endpoint ep = new Endpoint(new EndpointConfig(), new SeededRandomSource(5));
        final ProtectionDomain pd = ep.allocateProtectionDomain();
        final List<QueuePair> qps = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            qps.add(ep.createQueuePair(pd, ep.createCompletionQueue(4), ep.createCompletionQueue(4),
                QueuePairCapabilities.defaults()));
        }
        return qps;
    }

    @Test
    void reportsAreActedOnInTheOrderTheyCame() {
        final List<QueuePair> qps = queuePairs(3);
        final QpEventQueue q = new QpEventQueue();
        assertThat(q.isEmpty()).isTrue();
        q.add(qps.get(0), AsyncEventType.COMM_EST);
        q.add(qps.get(1), null);
        q.add(qps.get(0), AsyncEventType.QP_FATAL);
        assertThat(q.size()).isEqualTo(3);
        assertThat(q.headQueuePair()).isSameAs(qps.get(0));
        assertThat(q.headType()).isEqualTo(AsyncEventType.COMM_EST);
        q.removeHead();
        assertThat(q.headQueuePair()).isSameAs(qps.get(1));
        assertThat(q.headType()).as("null: destroyed").isNull();
        q.removeHead();
        assertThat(q.headType()).isEqualTo(AsyncEventType.QP_FATAL);
        q.removeHead();
        assertThat(q.isEmpty()).isTrue();
    }

    @Test
    void growsAroundTheRingWithoutLosingOrder() {
        // More reports than the initial 16 slots, added while the head is mid-ring.
        final List<QueuePair> qps = queuePairs(40);
        final QpEventQueue q = new QpEventQueue();
        for (int i = 0; i < 10; i++) {
            q.add(qps.get(i), AsyncEventType.COMM_EST);
        }
        for (int i = 0; i < 7; i++) {
            q.removeHead();
        }
        for (int i = 10; i < 40; i++) {
            q.add(qps.get(i), i % 2 == 0 ? AsyncEventType.QP_REQ_ERR : AsyncEventType.QP_ACCESS_ERR);
        }
        assertThat(q.size()).isEqualTo(33);
        for (int i = 7; i < 40; i++) {
            assertThat(q.headQueuePair()).as("report %d", i).isSameAs(qps.get(i));
            assertThat(q.headType()).isEqualTo(i < 10 ? AsyncEventType.COMM_EST
                : i % 2 == 0 ? AsyncEventType.QP_REQ_ERR : AsyncEventType.QP_ACCESS_ERR);
            q.removeHead();
        }
        assertThat(q.isEmpty()).isTrue();
    }
}
