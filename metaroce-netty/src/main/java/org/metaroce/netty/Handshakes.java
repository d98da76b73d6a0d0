// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty;

import java.net.InetSocketAddress;
import java.util.IdentityHashMap;
import java.util.Iterator;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

import org.metaroce.core.connection.CmEventType;

/**
 * The connects and accepts waiting for ESTABLISHED, each with the future its caller holds: the
 * handshake's outcome completes the future, with the connection or with the exception that says
 * what failed, and a caller that gives up has its connection handed back to be torn down.
 *
 * <p>Generic in the connection so that it can be tested without a connection manager; the
 * {@link ConnectionService} keeps core {@code Connection}s, by identity. Owning thread only.
 *
 * @param <C> the connection
 */
final class Handshakes<C> {
    private final Map<C, Pending<C>> pending = new IdentityHashMap<>();

    /** A connect or accept waiting for ESTABLISHED. */
    static final class Pending<C> {
        final CompletableFuture<C> future;
        final InetSocketAddress peer;
        final long serviceId;
        final boolean client;

        /**
         * @param future what the caller waits on
         * @param peer the server (connect) or the client (accept)
         * @param serviceId the Service ID
         * @param client whether this side connects
         */
        Pending(final CompletableFuture<C> future, final InetSocketAddress peer, final long serviceId,
                final boolean client) {
            this.future = future;
            this.peer = peer;
            this.serviceId = serviceId;
            this.client = client;
        }

        /** @return the attempt, for an exception's message */
        String what() {
            return client ? "connection to " + peer + " (service " + serviceId + ")"
                : "accepted connection from " + peer + " (service " + serviceId + ")";
        }
    }

    /** {@code connection}'s handshake is under way for {@code p}'s caller. */
    void started(final C connection, final Pending<C> p) {
        pending.put(connection, p);
    }

    /** The handshake did not start after all (the accept failed): its caller is no longer waiting here. */
    void notStarted(final C connection) {
        pending.remove(connection);
    }

    /** ESTABLISHED: the caller gets the connection. */
    void established(final C connection) {
        final Pending<C> p = pending.remove(connection);
        if (p != null) {
            p.future.complete(connection);
        }
    }

    /** REJECTED: the caller gets the server's reason and private data. */
    void rejected(final C connection, final int reason, final byte[] privateData) {
        final Pending<C> p = pending.remove(connection);
        if (p != null) {
            p.future.completeExceptionally(new ConnectionRejectedException(p.peer, p.serviceId, reason, privateData));
        }
    }

    /** The handshake failed with {@code event} ({@code cause} says how): the caller gets a ConnectionFailedException. */
    void failed(final C connection, final CmEventType event, final String cause) {
        final Pending<C> p = pending.remove(connection);
        if (p != null) {
            p.future.completeExceptionally(new ConnectionFailedException(p.what() + " failed: " + cause, p.peer,
                p.serviceId, event));
        }
    }

    /**
     * The caller of {@code future} gave up.
     *
     * @return its connection, to be torn down, or null if its handshake already ended
     */
    C abandoned(final CompletableFuture<C> future) {
        final Iterator<Map.Entry<C, Pending<C>>> it = pending.entrySet().iterator();
        while (it.hasNext()) {
            final Map.Entry<C, Pending<C>> entry = it.next();
            if (entry.getValue().future == future) {
                // IdentityHashMap entries are unusable once removed: take the key first.
                final C c = entry.getKey();
                it.remove();
                return c;
            }
        }
        return null;
    }

    /** @return the handshakes under way */
    int size() {
        return pending.size();
    }

    /** Forgets every handshake; their futures are the service's to fail. */
    void clear() {
        pending.clear();
    }
}
