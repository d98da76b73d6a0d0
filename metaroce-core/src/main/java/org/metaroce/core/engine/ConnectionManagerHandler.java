// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.engine;

import org.agrona.DirectBuffer;

/**
 * Receives the connection-manager packets an endpoint sees (specification section 9) and emits
 * its own. The handshake lives outside the queue-pair engine so that an endpoint without one (a
 * test wiring QPs by hand) simply counts and drops them.
 */
public interface ConnectionManagerHandler {
    /**
     * A validated connection-manager packet arrived.
     *
     * @param nowNs current time
     * @param buffer holds the packet
     * @param offset first byte of the packet
     * @param length packet length
     * @param peerId the driver's identifier of the sender's address
     */
    void onPacket(long nowNs, DirectBuffer buffer, int offset, int length, int peerId);

    /**
     * Emits handshake packets and runs handshake timers.
     *
     * @param nowNs current time
     * @param sink where packets go
     * @return packets emitted
     */
    int poll(long nowNs, TransmitSink sink);

    /** @return when {@link #poll} must run again, or {@link Long#MAX_VALUE} */
    long nextDeadlineNs();

    /**
     * The endpoint has finished a step and is consistent again: hand the application the events
     * raised since the last call. Called right after {@link #onPacket} and, in the endpoint's poll,
     * right after {@link #poll} and before the queue pairs are polled; never while a packet, a
     * poll or a queue pair is being processed. What the application does from here (create,
     * connect or destroy queue pairs, post work) therefore needs no guard in the engine.
     */
    default void deliverEvents() {
        // Handlers without application events have nothing to deliver.
    }

    /**
     * A queue pair raised an asynchronous event (it moved to ERR by itself, or COMM_EST, ...).
     * Called on the endpoint's owning thread from inside {@code onDatagram} or {@code poll}: the
     * handler only takes note (and acts at its next {@link #poll}); it must not re-enter the
     * endpoint from here.
     *
     * @param qp the queue pair
     * @param type what happened
     */
    default void onQueuePairEvent(final QueuePair qp, final AsyncEventType type) {
        // Handlers that do not track queue pairs ignore it.
    }

    /**
     * A queue pair was destroyed.
     *
     * @param qp the queue pair (no longer usable)
     */
    default void onQueuePairDestroyed(final QueuePair qp) {
        // Handlers that do not track queue pairs ignore it.
    }
}
