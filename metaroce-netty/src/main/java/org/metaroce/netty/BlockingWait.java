// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty;

import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.LockSupport;

/**
 * How an application thread waits for a future the device's owning thread completes: on an
 * INVOKER device the waiting thread is the owner, so it drives the device ({@code doWork()}) until
 * the future is done, parking when a cycle found nothing to do but never past the device's next
 * deadline; in the other modes it blocks on the future. Also the rules for who may wait (not a
 * driver thread; on INVOKER only the owner) and the deadline arithmetic the blocking calls share.
 */
final class BlockingWait {
    /** Longest park of an INVOKER wait loop that found nothing to do (datagrams do not wake it). */
    static final long INVOKER_MAX_PARK_NS = TimeUnit.MICROSECONDS.toNanos(50);
    /** Caps timeouts so that deadline arithmetic cannot overflow. */
    static final long MAX_TIMEOUT_NS = Long.MAX_VALUE / 4;

    private final MetaRoceDevice device;

    /** @param device the device whose owning thread completes the futures waited for */
    BlockingWait(final MetaRoceDevice device) {
        this.device = device;
    }

    /**
     * Waits for {@code f}: INVOKER drives the device until it completes; other modes block on it.
     *
     * @param deadline from {@link #deadline}
     * @throws ExecutionException if it completed exceptionally
     * @throws TimeoutException if the deadline passed first (the future is left as it is)
     */
    <T> T await(final CompletableFuture<T> f, final long deadline)
        throws ExecutionException, TimeoutException, InterruptedException {
        if (device.threadingMode() == ThreadingMode.INVOKER) {
            while (!f.isDone()) {
                final int work = device.doWork();
                if (f.isDone()) {
                    break;
                }
                if (Thread.interrupted()) {
                    throw new InterruptedException();
                }
                final long now = System.nanoTime();
                if (now - deadline >= 0) {
                    throw new TimeoutException();
                }
                if (work == 0) {
                    long park = Math.min(INVOKER_MAX_PARK_NS, deadline - now);
                    final long next = device.nextDeadlineNs();
                    if (next != Long.MAX_VALUE) {
                        park = Math.min(park, next - now);
                    }
                    if (park > 0) {
                        LockSupport.parkNanos(park);
                    }
                }
            }
            return f.get();
        }
        final long remaining = deadline - System.nanoTime();
        return f.get(Math.max(0, remaining), TimeUnit.NANOSECONDS);
    }

    /**
     * @param operation the blocking call, for the message
     * @throws IllegalStateException if the calling thread may not wait: on an INVOKER device any
     *     thread but the owner (nobody would drive it), in the other modes the driver thread (it
     *     would wait for itself)
     */
    void requireBlockingThread(final String operation) {
        if (device.threadingMode() == ThreadingMode.INVOKER) {
            if (!device.isOwningThread()) {
                throw new IllegalStateException("ConnectionService." + operation + " on an INVOKER device must be "
                    + "called by the device's owning thread (the thread that built it), which it drives with "
                    + "doWork(); called from " + Thread.currentThread().getName()
                    + " (use the ...Async form from other threads)");
            }
        } else if (device.isOwningThread()) {
            throw new IllegalStateException("ConnectionService." + operation + " blocks and must not be called on "
                + "the driver thread of a " + device.threadingMode() + " device (use the ...Async form)");
        }
    }

    /**
     * @return the {@link System#nanoTime()} at which {@code timeout} from now passes, a timeout too
     *     long to count in nanoseconds capped at {@link #MAX_TIMEOUT_NS}
     * @throws IllegalArgumentException if {@code timeout} is negative
     */
    static long deadline(final Duration timeout) {
        Objects.requireNonNull(timeout, "timeout");
        if (timeout.isNegative()) {
            throw new IllegalArgumentException("timeout must not be negative, got " + timeout);
        }
        long ns;
        try {
            ns = timeout.toNanos();
        } catch (final ArithmeticException ex) {
            ns = MAX_TIMEOUT_NS;
        }
        return System.nanoTime() + Math.min(ns, MAX_TIMEOUT_NS);
    }

    /** @return the value of a future that completed before the caller's timeout could fail it */
    static <T> T resultOf(final CompletableFuture<T> f) {
        try {
            return f.join();
        } catch (final CompletionException ex) {
            throw unchecked(ex.getCause());
        }
    }

    /** @return {@code t} as thrown by a call without checked exceptions (an Error is thrown as it is) */
    static RuntimeException unchecked(final Throwable t) {
        if (t instanceof RuntimeException re) {
            return re;
        }
        if (t instanceof Error err) {
            throw err;
        }
        return new IllegalStateException(t);
    }
}
