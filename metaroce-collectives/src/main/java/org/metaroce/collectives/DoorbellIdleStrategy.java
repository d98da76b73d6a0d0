package org.metaroce.collectives;

import org.agrona.concurrent.IdleStrategy;
import org.metaroce.core.verbs.CompletionQueue;

/**
 * How a rank whose device has a driver thread waits: it spins a few rounds, yields a few more,
 * then parks until the driver pushes a completion into its queue
 * ({@link CompletionQueue#awaitCompletions}), at most {@value #MAX_WAIT_NS} ns at a time. Why:
 * every event an operation waits for (a chunk, a grant, a WRITE's acknowledgement) reaches the
 * rank as a completion, and the backoff it replaces parked 1 to 50 us blind, which with the
 * kernel's timer slack made every hop of a small all-reduce wait up to about 100 us for nothing.
 * One instance per rank thread (its counters are that thread's).
 */
final class DoorbellIdleStrategy implements IdleStrategy {
    /** Rounds of {@link Thread#onSpinWait()}: an answer often comes within microseconds. */
    static final int SPINS = 20;
    /** Rounds of {@link Thread#yield()}: where threads outnumber cores, the driver may need this one's. */
    static final int YIELDS = 10;
    /** Longest single park; the operation's deadline is checked between parks. */
    static final long MAX_WAIT_NS = 1_000_000L;

    private final CompletionQueue cq;
    private int spins;
    private int yields;

    /** @param cq the completion queue the rank polls (it must be this thread's to consume) */
    DoorbellIdleStrategy(final CompletionQueue cq) {
        this.cq = cq;
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
        if (spins < SPINS) {
            spins++;
            Thread.onSpinWait();
        } else if (yields < YIELDS) {
            yields++;
            Thread.yield();
        } else {
            cq.awaitCompletions(MAX_WAIT_NS);
        }
    }

    @Override
    public void reset() {
        spins = 0;
        yields = 0;
    }

    @Override
    public String alias() {
        return "cq-doorbell";
    }
}
