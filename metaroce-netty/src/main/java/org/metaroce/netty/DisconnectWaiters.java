// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty;

import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * The futures waiting for connections to be over (DISCONNECTED, or a pending request rejected),
 * all of a connection's completed together when it is.
 *
 * <p>Generic in the connection so that it can be tested without a connection manager; the
 * {@link ConnectionService} keeps core {@code Connection}s, by identity. Owning thread only.
 *
 * @param <C> the connection
 */
final class DisconnectWaiters<C> {
    private final Map<C, List<CompletableFuture<Void>>> waiters = new IdentityHashMap<>();

    /** {@code waiter} completes when {@code connection} is over. */
    void add(final C connection, final CompletableFuture<Void> waiter) {
        waiters.computeIfAbsent(connection, k -> new ArrayList<>()).add(waiter);
    }

    /** {@code connection} is over: its waiters complete, and it is forgotten. */
    void over(final C connection) {
        final List<CompletableFuture<Void>> done = waiters.remove(connection);
        if (done != null) {
            for (final CompletableFuture<Void> w : done) {
                w.complete(null);
            }
        }
    }

    /** @return the connections waited for */
    int size() {
        return waiters.size();
    }

    /** Forgets every waiter; their futures are the service's to fail. */
    void clear() {
        waiters.clear();
    }
}
