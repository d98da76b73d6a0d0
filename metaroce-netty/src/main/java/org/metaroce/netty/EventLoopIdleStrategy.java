// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty;

import java.util.concurrent.locks.LockSupport;

import org.agrona.concurrent.IdleStrategy;

/**
 * An idle strategy for {@link ThreadingMode#DEDICATED} devices that blocks in the event loop's own
 * wait ({@code epoll_wait} or {@code Selector.select}) until a datagram arrives, a command is
 * submitted, or the endpoint's next deadline is due, whichever comes first. It costs no CPU while
 * idle, at the price of a wake-up latency of a few microseconds.
 *
 * <p>A device recognises this class and never calls its {@code idle} methods; used anywhere else
 * it parks for at most {@link #maxWaitNs()}.
 */
public final class EventLoopIdleStrategy implements IdleStrategy {
    /** Default longest single wait, 10 ms. */
    public static final long DEFAULT_MAX_WAIT_NS = 10_000_000L;

    private final long maxWaitNs;

    /** Waits at most {@link #DEFAULT_MAX_WAIT_NS} at a time. */
    public EventLoopIdleStrategy() {
        this(DEFAULT_MAX_WAIT_NS);
    }

    /**
     * @param maxWaitNs longest single wait in nanoseconds (the driver re-checks its state after each)
     */
    public EventLoopIdleStrategy(final long maxWaitNs) {
        if (maxWaitNs <= 0) {
            throw new IllegalArgumentException("maxWaitNs must be > 0, got " + maxWaitNs);
        }
        this.maxWaitNs = maxWaitNs;
    }

    /** @return longest single wait in nanoseconds */
    public long maxWaitNs() {
        return maxWaitNs;
    }

    @Override
    public void idle(final int workCount) {
        if (workCount <= 0) {
            idle();
        }
    }

    @Override
    public void idle() {
        LockSupport.parkNanos(maxWaitNs);
    }

    @Override
    public void reset() {
        // Stateless.
    }

    @Override
    public String alias() {
        return "event-loop";
    }
}
