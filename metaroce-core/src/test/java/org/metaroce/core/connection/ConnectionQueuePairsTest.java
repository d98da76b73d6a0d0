// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.connection;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.metaroce.core.SeededRandomSource;
import org.metaroce.core.engine.Endpoint;
import org.metaroce.core.engine.EndpointConfig;
import org.metaroce.core.engine.QueuePair;
import org.metaroce.core.engine.QueuePairCapabilities;
import org.metaroce.core.verbs.CompletionQueue;
import org.metaroce.core.verbs.ProtectionDomain;
import org.metaroce.core.verbs.QpState;

/** [CM-039, REL-052]: an ended connection's queue pair goes to ERR, lingers, is destroyed, and frees its slot. */
class ConnectionQueuePairsTest {
    private Endpoint endpoint;
    private ProtectionDomain pd;
    private CompletionQueue cq;
    private Listener listener;
    private int changes;
    private ConnectionQueuePairs queuePairs;

    @BeforeEach
    void setUp() {
        endpoint = new Endpoint(new EndpointConfig(), new SeededRandomSource(1));
        pd = endpoint.allocateProtectionDomain();
        cq = endpoint.createCompletionQueue(64);
        listener = new Listener(l -> { }, 1, null, 4);
        queuePairs = new ConnectionQueuePairs(endpoint, new CmContext() {
            @Override
            public long nowNs() {
                return 0;
            }

            @Override
            public void changed() {
                changes++;
            }

            @Override
            public void raise(final CmEventType type, final Connection c, final int reason, final byte[] data) {
                throw new AssertionError("no event expected");
            }
        });
    }

    private Connection serverWithQueuePair(final boolean owned) {
        final QueuePair qp = endpoint.createQueuePair(pd, cq, cq, QueuePairCapabilities.defaults());
        final Connection c = new Connection(true, 1, 1, listener);
        c.qp = qp;
        c.localQpn = qp.qpn();
        c.ownsQueuePair = owned;
        c.countedInListener = true;
        listener.connections++;
        return c;
    }

    @Test
    void anOwnedQueuePairLingersInErrThenGoesWithItsListenerSlot() {
        final Connection c = serverWithQueuePair(true);
        final QueuePair qp = c.qp;

        queuePairs.release(1_000, c, 500);

        assertThat(qp.state()).as("outstanding work flushes [QP-022]").isEqualTo(QpState.ERR);
        assertThat(endpoint.queuePair(c.localQpn)).isSameAs(qp);
        assertThat(listener.connections()).as("the slot is held as long as the QP").isEqualTo(1);
        assertThat(changes).isEqualTo(1);

        queuePairs.destroyRetired(1_499);
        assertThat(endpoint.queuePair(c.localQpn)).as("still repeating a fatal NACK [REL-052]").isSameAs(qp);
        assertThat(queuePairs.deadlineNs()).isEqualTo(1_500);

        queuePairs.destroyRetired(1_500);
        assertThat(endpoint.queuePair(c.localQpn)).isNull();
        assertThat(qp.isDestroyed()).isTrue();
        assertThat(listener.connections()).isZero();
        assertThat(queuePairs.deadlineNs()).isEqualTo(Long.MAX_VALUE);
    }

    @Test
    void closingEndsALingerAlreadyRunning() {
        final Connection c = serverWithQueuePair(true);
        queuePairs.release(0, c, 10_000);

        queuePairs.release(100, c, 0);
        queuePairs.destroyRetired(100);

        assertThat(c.qp.isDestroyed()).isTrue();
        assertThat(listener.connections()).isZero();
    }

    @Test
    void aQueuePairTheApplicationOwnsIsLeftAloneButTheSlotIsFreedAtOnce() {
        final Connection c = serverWithQueuePair(false);

        queuePairs.release(0, c, 0);
        queuePairs.destroyRetired(0);

        assertThat(c.qp.state()).isEqualTo(QpState.RESET);
        assertThat(c.qp.isDestroyed()).isFalse();
        assertThat(listener.connections()).isZero();
        assertThat(changes).isZero();
    }
}
