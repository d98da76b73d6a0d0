// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.bench.loopback;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;

import org.agrona.concurrent.IdleStrategy;

/**
 * The other end of a loopback contender, on its own busy thread: it builds its state on that
 * thread (INVOKER-mode devices and Aeron invokers belong to the thread that drives them), then
 * runs the state's duty cycle until {@link #close()}, idling with the run's {@link Idle}
 * strategy when there is nothing to do.
 * Together with the benchmark thread this makes the two busy threads every contender gets.
 *
 * @param <T> the end's state
 */
public final class PeerThread<T extends PeerThread.Duty> implements AutoCloseable {
    /** How long setup and shutdown may take before the harness gives up (an anti-hang guard). */
    static final long GUARD_NS = TimeUnit.SECONDS.toNanos(20);

    /** One end's work. */
    public interface Duty {
        /** @return work done in this cycle (0 = idle) */
        int doWork();

        /** Releases the end's resources, on the peer thread, after the last cycle. */
        void close();
    }

    private final Thread thread;
    private final CompletableFuture<T> state = new CompletableFuture<>();
    private final CompletableFuture<Void> finished = new CompletableFuture<>();
    /** Set once the peer thread has built it (the constructor waits for that): a plain read from then on. */
    private final T built;
    private volatile boolean running = true;
    private volatile Throwable failure;

    /**
     * Starts the thread and waits until {@code factory} has built the state on it.
     *
     * @param name thread name
     * @param idle how the thread waits when a duty cycle did nothing
     * @param factory builds the end on the new thread
     */
    public PeerThread(final String name, final Idle idle, final Supplier<T> factory) {
        // A Netty FastThreadLocalThread, like the benchmark thread (NettyThreadExecutor): Netty pools its
        // per-packet objects only on such threads.
        thread = new io.netty.util.concurrent.FastThreadLocalThread(() -> run(idle.newStrategy(), factory), name);
        thread.setDaemon(true);
        thread.start();
        built = await(state, "start");
    }

    private void run(final IdleStrategy idle, final Supplier<T> factory) {
        T duty = null;
        try {
            duty = factory.get();
            state.complete(duty);
            while (running) {
                idle.idle(duty.doWork());
            }
        } catch (final Throwable t) {
            failure = t;
            state.completeExceptionally(t);
        } finally {
            try {
                if (duty != null) {
                    duty.close();
                }
            } catch (final RuntimeException ex) {
                if (failure == null) {
                    failure = ex;
                }
            }
            finished.complete(null);
        }
    }

    /** @return the end's state (for reading its thread-safe counters) */
    public T state() {
        return built;
    }

    /** @return whether the peer thread is still running its duty cycle */
    public boolean isRunning() {
        return running && !finished.isDone();
    }

    /** @throws IllegalStateException if the peer thread failed */
    public void checkHealthy() {
        final Throwable t = failure;
        if (t != null) {
            throw new IllegalStateException("the peer thread " + thread.getName() + " failed: " + t, t);
        }
    }

    @Override
    public void close() {
        running = false;
        await(finished, "stop");
        checkHealthy();
    }

    private <V> V await(final CompletableFuture<V> future, final String what) {
        try {
            return future.get(GUARD_NS, TimeUnit.NANOSECONDS);
        } catch (final ExecutionException ex) {
            throw new IllegalStateException("the peer thread " + thread.getName() + " failed to " + what + ": "
                + ex.getCause(), ex.getCause());
        } catch (final TimeoutException ex) {
            throw new IllegalStateException("the peer thread " + thread.getName() + " did not " + what + " within "
                + TimeUnit.NANOSECONDS.toSeconds(GUARD_NS) + " s", ex);
        } catch (final InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", ex);
        }
    }
}
