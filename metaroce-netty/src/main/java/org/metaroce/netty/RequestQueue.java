// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty;

import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;
import java.util.function.Predicate;
import java.util.function.ToLongFunction;

/**
 * The connection requests of each Service ID that nobody has taken yet, and the futures waiting
 * for the next one: a request goes to the oldest waiter still waiting, or is queued; a waiter
 * takes the oldest queued request still pending, or waits. A request stops being pending when the
 * connection manager expires its handshake entry; such requests are skipped when handed out, and
 * dropped from the head as new ones arrive, so a peer whose requests the application does not take
 * cannot grow the queue beyond what the listener lets be pending at once [CM-039].
 *
 * <p>Generic in the request so that it can be tested without a connection manager; the
 * {@link ConnectionService} queues {@link IncomingRequest}s. Owning thread only.
 *
 * @param <R> the request
 */
final class RequestQueue<R> {
    private final ToLongFunction<R> serviceIdOf;
    private final Predicate<R> pending;
    private final Map<Long, ArrayDeque<R>> queued = new HashMap<>();
    private final Map<Long, ArrayDeque<CompletableFuture<R>>> waiters = new HashMap<>();

    /**
     * @param serviceIdOf the Service ID a request is for
     * @param pending whether a request still waits for the application's decision
     */
    RequestQueue(final ToLongFunction<R> serviceIdOf, final Predicate<R> pending) {
        this.serviceIdOf = serviceIdOf;
        this.pending = pending;
    }

    /**
     * Completes {@code waiter} with the oldest pending request of {@code serviceId}, or keeps it
     * until one arrives (call it with a waiter not yet done). Requests no longer pending that it
     * passes over are dropped.
     */
    void take(final long serviceId, final CompletableFuture<R> waiter) {
        final ArrayDeque<R> queue = queued.get(serviceId);
        R r;
        while (queue != null && (r = queue.poll()) != null) {
            if (pending.test(r)) {
                if (!waiter.complete(r)) {
                    queue.addFirst(r);
                }
                return;
            }
        }
        final ArrayDeque<CompletableFuture<R>> w = waiters.computeIfAbsent(serviceId, k -> new ArrayDeque<>());
        w.removeIf(CompletableFuture::isDone);
        w.add(waiter);
    }

    /** A request arrived: the oldest waiter still waiting gets it, or it is queued. */
    void arrived(final R request) {
        final long serviceId = serviceIdOf.applyAsLong(request);
        final ArrayDeque<CompletableFuture<R>> w = waiters.get(serviceId);
        CompletableFuture<R> f;
        while (w != null && (f = w.poll()) != null) {
            if (f.complete(request)) {
                return;
            }
        }
        final ArrayDeque<R> queue = queued.computeIfAbsent(serviceId, k -> new ArrayDeque<>());
        R head;
        while ((head = queue.peekFirst()) != null && !pending.test(head)) {
            queue.pollFirst();
        }
        queue.add(request);
    }

    /** A request handed to a waiter that gave up (interrupted) goes back to the head of its queue. */
    void giveBack(final R request) {
        queued.computeIfAbsent(serviceIdOf.applyAsLong(request), k -> new ArrayDeque<>()).addFirst(request);
    }

    /** @return the requests queued for {@code serviceId}, those no longer pending included */
    int queued(final long serviceId) {
        final ArrayDeque<R> queue = queued.get(serviceId);
        return queue == null ? 0 : queue.size();
    }

    /** Forgets everything; each queued request still pending goes to {@code undecided} first (to be rejected). */
    void clear(final Consumer<R> undecided) {
        for (final ArrayDeque<R> queue : queued.values()) {
            for (final R r : queue) {
                if (pending.test(r)) {
                    undecided.accept(r);
                }
            }
        }
        queued.clear();
        waiters.clear();
    }
}
