// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.connection;

import java.util.ArrayDeque;

/**
 * Delivers connection-manager events: each to the handler of its connection's parameters, else
 * to the default handler, else to a queue the application polls (rdma_get_cm_event).
 *
 * <p>Events are raised while the manager is in the middle of a packet or a call, and handlers may
 * call back into the manager (accept from CONNECT_REQUEST, disconnect from ESTABLISHED, ...).
 * So raising only queues the event, and the manager calls {@link #dispatch()} once the packet or
 * call is fully processed; a dispatch from inside a handler returns at once, and the outer loop
 * delivers what the handler raised, in order.
 */
final class CmEventDispatcher {
    private final ArrayDeque<CmEvent> pending = new ArrayDeque<>();
    private final ArrayDeque<CmEvent> unclaimed = new ArrayDeque<>();
    private CmEventHandler handler;
    private boolean dispatching;

    /** @param handler receives events whose connection has no handler; null to queue them */
    void handler(final CmEventHandler handler) {
        this.handler = handler;
    }

    /** Queues an event for the next {@link #dispatch()}. */
    void raise(final CmEvent event) {
        pending.add(event);
    }

    /** @return the oldest event no handler took, or null */
    CmEvent poll() {
        return unclaimed.poll();
    }

    /** Delivers the queued events, unless a dispatch is already under way further up the stack. */
    void dispatch() {
        if (dispatching) {
            return;
        }
        dispatching = true;
        try {
            CmEvent event;
            while ((event = pending.poll()) != null) {
                final Connection c = event.connection();
                final CmEventHandler h = c.handler != null ? c.handler : handler;
                if (h != null) {
                    h.onEvent(event);
                } else {
                    unclaimed.add(event);
                }
            }
        } finally {
            dispatching = false;
        }
    }
}
