// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty;

import org.agrona.concurrent.IdleStrategy;
import org.metaroce.core.verbs.CompletionQueue;

/**
 * How the thread that drives an {@link ThreadingMode#INVOKER} device waits when a loop found
 * nothing to do: it yields the processor for a number of rounds, then blocks in
 * {@link MetaRoceDevice#awaitWork(long)} until a datagram, a command from another thread or the
 * endpoint's next deadline. Where more threads run than there are processors this hands the
 * processor to whoever has work and still wakes up for the next datagram at once, where a parking
 * backoff would sleep through it.
 *
 * <p>By default it does not spin: every idle round of the caller's loop is followed by another poll
 * of the device, a system call, and a spinning thread keeps the processor that the thread it waits
 * for needs (Open MPI's {@code mpi_yield_when_idle} yields from the first idle round for the same
 * reason). Measured with 4 INVOKER ranks on 2 cores (docs/collectives.md), an 8-byte all-reduce took
 * a median of 190&ndash;200 &micro;s with 20 spins and 10 yields and 122&ndash;141 &micro;s with no
 * spins and 1,000 yields; 200 spins made it 950 &micro;s. The number of yields mattered far less
 * (10 and 1,000 were within the noise of each other at every size); with 1,000 a rank whose peer
 * answers within about a millisecond is not put to sleep in {@code epoll_wait} first. Where
 * each thread has a processor to itself, spins cost nothing and answer faster: pass them to the
 * four-argument constructor.
 *
 * <p>Use it from the device's owning thread only (as {@code awaitWork} requires), one instance per
 * thread.
 */
public final class InvokerIdleStrategy implements IdleStrategy {
    /** Default rounds of {@link Thread#onSpinWait()} before yielding. */
    public static final int DEFAULT_SPINS = 0;
    /** Default rounds of {@link Thread#yield()} before blocking. */
    public static final int DEFAULT_YIELDS = 1_000;
    /** Default longest single wait in {@code awaitWork}, 1 ms. */
    public static final long DEFAULT_MAX_WAIT_NS = 1_000_000L;

    /** The blocking wait of the last stage: the device's awaitWork, or a completion queue's doorbell. */
    private final java.util.function.LongConsumer waiter;
    private final String alias;
    private final int maxSpins;
    private final int maxYields;
    private final long maxWaitNs;
    private int spins;
    private int yields;

    /**
     * With the defaults: {@value #DEFAULT_SPINS} spins, {@value #DEFAULT_YIELDS} yields, then waits
     * of at most {@value #DEFAULT_MAX_WAIT_NS} ns.
     *
     * @param device the INVOKER device the calling thread drives
     */
    public InvokerIdleStrategy(final MetaRoceDevice device) {
        this(device, DEFAULT_SPINS, DEFAULT_YIELDS, DEFAULT_MAX_WAIT_NS);
    }

    /**
     * @param device the INVOKER device the calling thread drives
     * @param maxSpins rounds of busy spinning before yielding (&ge; 0)
     * @param maxYields rounds of yielding before blocking (&ge; 0)
     * @param maxWaitNs longest single wait in {@link MetaRoceDevice#awaitWork(long)} (&gt; 0)
     * @throws IllegalArgumentException if the device is not in INVOKER mode or a bound is out of range
     */
    public InvokerIdleStrategy(final MetaRoceDevice device, final int maxSpins, final int maxYields,
                               final long maxWaitNs) {
        if (device == null || device.threadingMode() != ThreadingMode.INVOKER) {
            throw new IllegalArgumentException("InvokerIdleStrategy needs an INVOKER device, got "
                + (device == null ? "null" : device.threadingMode()));
        }
        if (maxSpins < 0 || maxYields < 0) {
            throw new IllegalArgumentException("maxSpins and maxYields must be >= 0, got " + maxSpins + " and "
                + maxYields);
        }
        if (maxWaitNs <= 0) {
            throw new IllegalArgumentException("maxWaitNs must be > 0, got " + maxWaitNs);
        }
        this.waiter = device::awaitWork;
        this.alias = "invoker-await";
        this.maxSpins = maxSpins;
        this.maxYields = maxYields;
        this.maxWaitNs = maxWaitNs;
    }

    private InvokerIdleStrategy(final java.util.function.LongConsumer waiter, final String alias) {
        this.waiter = waiter;
        this.alias = alias;
        this.maxSpins = DEFAULT_SPINS;
        this.maxYields = DEFAULT_YIELDS;
        this.maxWaitNs = DEFAULT_MAX_WAIT_NS;
    }

    /**
     * The same spin, yield, block sequence for a thread whose completions another thread (a
     * driver) pushes: its last stage parks in {@link CompletionQueue#awaitCompletions} until a
     * completion arrives (the doorbell), at most {@value #DEFAULT_MAX_WAIT_NS} ns at a time, instead
     * of parking blind.
     *
     * @param cq the completion queue the calling thread consumes
     * @return a new strategy for the calling thread
     */
    public static InvokerIdleStrategy untilCompletion(final CompletionQueue cq) {
        if (cq == null) {
            throw new IllegalArgumentException("untilCompletion needs the completion queue the thread consumes");
        }
        return new InvokerIdleStrategy(cq::awaitCompletions, "cq-doorbell");
    }

    @Override
    public void idle(final int workCount) {
        if (workCount > 0) {
            reset();
        } else {
            idle();
        }
    }

    @Override
    public void idle() {
        if (spins < maxSpins) {
            spins++;
            Thread.onSpinWait();
        } else if (yields < maxYields) {
            yields++;
            Thread.yield();
        } else {
            waiter.accept(maxWaitNs);
        }
    }

    @Override
    public void reset() {
        spins = 0;
        yields = 0;
    }

    @Override
    public String alias() {
        return alias;
    }
}
