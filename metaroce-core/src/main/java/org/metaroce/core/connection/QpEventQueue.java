// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.connection;

import org.metaroce.core.engine.AsyncEventType;
import org.metaroce.core.engine.QueuePair;

/**
 * What the engine reported about connections' queue pairs and the connection manager has not yet
 * acted on [CM-013, CM-030, CM-033]: a FIFO of (queue pair, event type), the type null when the
 * queue pair was destroyed. The engine reports from the middle of a packet or of its own poll,
 * where the manager must not change queue pairs, so reports wait here for the manager's next
 * poll. Only queue pairs of connections are queued, and each raises at most a few events in its
 * life, so the ring stays small; it grows by doubling on the setup path, never on the data path.
 */
final class QpEventQueue {
    private QueuePair[] qps = new QueuePair[16];
    private AsyncEventType[] types = new AsyncEventType[16];
    private int head;
    private int count;

    /** @return whether nothing is queued */
    boolean isEmpty() {
        return count == 0;
    }

    /** @return reports queued */
    int size() {
        return count;
    }

    /**
     * @param qp the queue pair
     * @param type what happened to it; null for "destroyed"
     */
    void add(final QueuePair qp, final AsyncEventType type) {
        if (count == qps.length) {
            final int n = qps.length;
            final QueuePair[] q = new QueuePair[n * 2];
            final AsyncEventType[] t = new AsyncEventType[n * 2];
            for (int i = 0; i < n; i++) {
                q[i] = qps[(head + i) % n];
                t[i] = types[(head + i) % n];
            }
            qps = q;
            types = t;
            head = 0;
        }
        final int at = (head + count) % qps.length;
        qps[at] = qp;
        types[at] = type;
        count++;
    }

    /** @return the queue pair of the oldest report; only if not empty */
    QueuePair headQueuePair() {
        return qps[head];
    }

    /** @return the type of the oldest report, null for "destroyed"; only if not empty */
    AsyncEventType headType() {
        return types[head];
    }

    /** Drops the oldest report, releasing its queue pair for the garbage collector. */
    void removeHead() {
        qps[head] = null;
        types[head] = null;
        head = (head + 1) % qps.length;
        count--;
    }
}
