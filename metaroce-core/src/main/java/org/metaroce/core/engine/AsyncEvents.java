// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.engine;

/**
 * A bounded queue of asynchronous events (verbs ibv_get_async_event), filled by the endpoint's
 * owning thread and drained by the application on the same thread. Allocation-free: events are
 * (type, QP number) pairs in preallocated arrays. When full, the oldest event is overwritten and
 * counted as lost, so a slow reader never blocks the engine.
 */
public final class AsyncEvents {
    private final AsyncEventType[] types;
    private final int[] qpns;
    private int head;
    private int count;
    private long lost;

    AsyncEvents(final int capacity) {
        types = new AsyncEventType[capacity];
        qpns = new int[capacity];
    }

    void raise(final AsyncEventType type, final int qpn) {
        if (count == types.length) {
            head = (head + 1) % types.length;
            count--;
            lost++;
        }
        final int i = (head + count) % types.length;
        types[i] = type;
        qpns[i] = qpn;
        count++;
    }

    /** @return whether an event is waiting */
    public boolean isEmpty() {
        return count == 0;
    }

    /** @return the type of the oldest event, or null when there is none */
    public AsyncEventType peekType() {
        return count == 0 ? null : types[head];
    }

    /** @return the QP number (or CQ-less 0) of the oldest event; meaningless when empty */
    public int peekQpn() {
        return qpns[head];
    }

    /** Removes the oldest event, if any. */
    public void remove() {
        if (count > 0) {
            types[head] = null;
            head = (head + 1) % types.length;
            count--;
        }
    }

    /** @return events overwritten because nobody drained the queue */
    public long lost() {
        return lost;
    }

    /** @return number of waiting events */
    public int size() {
        return count;
    }
}
