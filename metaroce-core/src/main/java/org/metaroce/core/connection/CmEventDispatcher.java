// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.connection;

import java.util.ArrayDeque;

/**
 * Holds connection-manager events from the moment they are raised until the engine is back in a
 * consistent state, then hands each to the handler of its connection's parameters, else to the
 * default handler, else to the queue the application reads (rdma_get_cm_event). The connection's
 * handler is given with the event when it is raised: the connection does not keep it (an event
 * names its connection, and the handler takes the event).
 *
 * <p>Raising only queues: the manager raises events in the middle of a packet, a poll or a call,
 * where a handler that called back in (accept from CONNECT_REQUEST, connect from DISCONNECTED,
 * destroy a queue pair) would find the engine half-way through a change. {@link #dispatch()} runs
 * only when the endpoint has finished a step (see {@link ConnectionManager#deliverEvents()}); it
 * is never reached from a handler, so no dispatch runs inside another, and an event a handler
 * causes is raised into the same queue and delivered after that handler returns, in order.
 */
final class CmEventDispatcher {
    private final ArrayDeque<Raised> pending = new ArrayDeque<>();
    private final ArrayDeque<CmEvent> unclaimed = new ArrayDeque<>();
    private CmEventHandler handler;

    /** @param handler receives events whose connection has no handler; null to queue them */
    void handler(final CmEventHandler handler) {
        this.handler = handler;
    }

    /**
     * Queues an event for the next {@link #dispatch()}.
     *
     * @param own the handler of the connection's parameters, or null for the default handler
     */
    void raise(final CmEvent event, final CmEventHandler own) {
        pending.add(new Raised(event, own));
    }

    /** @return whether events wait for {@link #dispatch()} */
    boolean hasPending() {
        return !pending.isEmpty();
    }

    /** @return the oldest event no handler took, or null */
    CmEvent poll() {
        return unclaimed.poll();
    }

    /**
     * Delivers the queued events in the order they were raised, including those that handlers
     * raise meanwhile (after the handler that raised them has returned).
     */
    void dispatch() {
        Raised raised;
        while ((raised = pending.poll()) != null) {
            final CmEventHandler h = raised.own != null ? raised.own : handler;
            if (h != null) {
                h.onEvent(raised.event);
            } else {
                unclaimed.add(raised.event);
            }
        }
    }

    /** An event and the handler of its connection, if it has one. */
    private record Raised(CmEvent event, CmEventHandler own) {
    }
}
