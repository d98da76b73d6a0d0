// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import java.util.function.Function;

import org.agrona.concurrent.ManyToOneConcurrentArrayQueue;
import org.metaroce.core.engine.Endpoint;

/**
 * A device's commands: work that other threads hand to the owning thread (a bounded lock-free
 * queue, many producers, the owning thread the only consumer). It rejects work once the device is
 * closed or the queue is full, counting each refusal, and wakes the owning thread for what it
 * accepts; the owning thread drains it once per duty cycle. Kept apart from the device so that the
 * rules of a hand-over (what is refused, how a waiting caller learns why) read in one place.
 */
final class CommandQueue {
    private final ManyToOneConcurrentArrayQueue<Runnable> queue;
    private final int capacity;
    private final Endpoint endpoint;
    /** The device's closed flag: set by whichever thread closes it, read here by every producer. */
    private final AtomicBoolean closed;
    private final DriverCounters counters;
    /** Wakes the owning thread where it waits (its runner knows where that is); any thread. */
    private final Runnable wakeup;

    /**
     * @param capacity most commands queued at once
     * @param endpoint what the functions of {@link #submit} are applied to
     * @param closed the device's closed flag (offers fail once it is set)
     * @param counters where refusals are counted
     * @param wakeup wakes the owning thread after a command was queued (any thread, must not block)
     */
    CommandQueue(final int capacity, final Endpoint endpoint, final AtomicBoolean closed,
                 final DriverCounters counters, final Runnable wakeup) {
        this.queue = new ManyToOneConcurrentArrayQueue<>(capacity);
        this.capacity = capacity;
        this.endpoint = endpoint;
        this.closed = closed;
        this.counters = counters;
        this.wakeup = wakeup;
    }

    /**
     * Queues {@code command} without blocking or allocating, and wakes the owning thread.
     *
     * @return false (counted) if the queue is full or the device closed
     */
    boolean offer(final Runnable command) {
        if (closed.get()) {
            counters.increment(DriverCounter.COMMANDS_REJECTED);
            return false;
        }
        if (!queue.offer(command)) {
            counters.increment(DriverCounter.COMMANDS_REJECTED);
            return false;
        }
        wakeup.run();
        return true;
    }

    /**
     * Queues {@code function}; the future completes with its result on the owning thread, or fails
     * with a {@link RejectedExecutionException} at once (full, closed) or when the device closes.
     */
    <T> CompletableFuture<T> submit(final Function<Endpoint, T> function) {
        final Command<T> command = new Command<>(function, endpoint);
        if (!offer(command)) {
            command.future.completeExceptionally(rejection());
        } else if (closed.get()) {
            // Closed after the offer: the close may have drained the queue before the command landed.
            command.cancel();
        }
        return command.future;
    }

    /** @return why an offer was refused: the device is closed, or the queue is full */
    RejectedExecutionException rejection() {
        return new RejectedExecutionException(closed.get() ? "device is closed"
            : "command queue is full (" + capacity + ")");
    }

    /**
     * From a thread other than the owning one: runs {@code function} there and waits for its result.
     *
     * @param timeoutNs how long to wait
     * @param timeoutHint appended to the timeout's message (what the mode suggests to check), or ""
     * @throws RuntimeException whatever {@code function} threw, or an IllegalStateException on
     *     timeout or interrupt
     */
    <T> T call(final Function<Endpoint, T> function, final long timeoutNs, final String timeoutHint) {
        final CompletableFuture<T> future = submit(function);
        try {
            return future.get(timeoutNs, TimeUnit.NANOSECONDS);
        } catch (final ExecutionException ex) {
            final Throwable cause = ex.getCause();
            if (cause instanceof RuntimeException) {
                throw (RuntimeException) cause;
            }
            if (cause instanceof Error) {
                throw (Error) cause;
            }
            throw new IllegalStateException(cause);
        } catch (final TimeoutException ex) {
            throw new IllegalStateException("the owning thread did not run the command within "
                + TimeUnit.NANOSECONDS.toMillis(timeoutNs) + " ms" + timeoutHint, ex);
        } catch (final InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting for the owning thread", ex);
        }
    }

    /**
     * Owning thread: runs what is queued (at most one queue's worth, so that producers cannot keep
     * the cycle from reaching the endpoint).
     *
     * @param runner runs one command (counts it, contains what it throws)
     * @return commands run
     */
    int drain(final Consumer<Runnable> runner) {
        return queue.drain(runner, capacity);
    }

    /** @return whether commands wait for the owning thread */
    boolean isEmpty() {
        return queue.isEmpty();
    }

    /** Owning thread, once closed: drops what is queued, failing the futures of {@link #submit}. */
    void failQueued() {
        Runnable r;
        while ((r = queue.poll()) != null) {
            if (r instanceof Command) {
                ((Command<?>) r).cancel();
            }
        }
    }

    /** A function queued for the owning thread, with the future of its result. */
    private static final class Command<T> implements Runnable {
        final CompletableFuture<T> future = new CompletableFuture<>();
        private final Function<Endpoint, T> function;
        private final Endpoint endpoint;

        Command(final Function<Endpoint, T> function, final Endpoint endpoint) {
            this.function = function;
            this.endpoint = endpoint;
        }

        @Override
        public void run() {
            if (future.isDone()) {
                return;
            }
            try {
                future.complete(function.apply(endpoint));
            } catch (final Throwable t) {
                future.completeExceptionally(t);
            }
        }

        void cancel() {
            future.completeExceptionally(new RejectedExecutionException("device is closed"));
        }
    }
}
