// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.connection;

import java.util.function.Consumer;

/** A server's listener on one Service ID (rdma_cm's listening cm_id). */
public final class Listener {
    /** What {@link #close()} asks of the manager (its stopListening): not the manager itself. */
    private final Consumer<Listener> onClose;
    private final long serviceId;
    /** The application object of the listen parameters (which the manager keeps: see {@link ConnectionTable}). */
    private final Object context;
    final int limit;
    int connections;
    boolean closed;

    Listener(final Consumer<Listener> onClose, final long serviceId, final Object context, final int limit) {
        this.onClose = onClose;
        this.serviceId = serviceId;
        this.context = context;
        this.limit = limit;
    }

    /** @return the Service ID served */
    public long serviceId() {
        return serviceId;
    }

    /** @return pending plus established connections that count against the limit */
    public int connections() {
        return connections;
    }

    /** @return most pending plus established connections */
    public int limit() {
        return limit;
    }

    /** @return the application object given in {@link ListenParams#context(Object)} */
    public Object context() {
        return context;
    }

    /** @return whether {@link #close()} was called */
    public boolean isClosed() {
        return closed;
    }

    /**
     * Stops listening: new requests for the Service ID are answered NO_LISTENER. Connections
     * already delivered or established are not affected.
     */
    public void close() {
        onClose.accept(this);
    }

    @Override
    public String toString() {
        return "Listener{serviceId=" + serviceId + ", connections=" + connections + "/" + limit
            + (closed ? ", closed" : "") + '}';
    }
}
