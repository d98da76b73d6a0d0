// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.connection;

/**
 * What the parts of the connection manager need from the manager itself, and no more: the time
 * of the step being taken, a way to say that the next poll must visit the connections, and a
 * way to raise an event. Implemented by an inner class of {@link ConnectionManager}, so no part
 * names the manager (issue 19: narrow contexts, no back-pointers).
 */
interface CmContext {
    /** @return the time of the packet, poll or call being handled (the last {@code nowNs} seen) */
    long nowNs();

    /**
     * Something changed (a packet to send, a state moved, a timer armed): the next poll visits
     * the connections instead of waiting for the earliest deadline.
     */
    void changed();

    /**
     * Queues an event for the connection's handler; it is handed out once the endpoint has
     * finished the step ({@link ConnectionManager#deliverEvents()}).
     *
     * @param type what happened
     * @param c the connection it happened to
     * @param reason a {@link CmReason} code
     * @param privateData the peer's private data carried by the event, never null
     */
    void raise(CmEventType type, Connection c, int reason, byte[] privateData);
}
