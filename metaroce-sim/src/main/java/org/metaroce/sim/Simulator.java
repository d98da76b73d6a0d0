// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.sim;

import java.util.SplittableRandom;

/**
 * The discrete-event kernel: a virtual clock in nanoseconds and a queue of events. Nothing here
 * reads the wall clock; a run is a function of its seed and inputs, so the same seed reproduces
 * every packet, mark and drop.
 *
 * <p>Single-threaded by design, like the endpoints it drives.
 */
public final class Simulator {
    private final long seed;
    private final SplittableRandom random;
    private final EventQueue queue = new EventQueue(1 << 12);
    private long nowNs;
    private long eventsRun;
    private boolean stopRequested;

    /** @param seed seed of every random choice in the run */
    public Simulator(final long seed) {
        this.seed = seed;
        this.random = new SplittableRandom(seed);
    }

    /** @return the seed of this run */
    public long seed() {
        return seed;
    }

    /** @return the current virtual time in nanoseconds */
    public long nowNs() {
        return nowNs;
    }

    /** @return events run so far */
    public long eventsRun() {
        return eventsRun;
    }

    /** @return events waiting */
    public int pendingEvents() {
        return queue.size();
    }

    /**
     * @return an independent random stream for one component, derived from the run's seed in
     *     creation order (so adding a component does not change another's stream only if created later)
     */
    public SplittableRandom newRandom() {
        return random.split();
    }

    /**
     * Schedules an event.
     *
     * @param atNs virtual time, not before now
     * @param handler who handles it
     * @param subject object passed along
     * @param arg int passed along
     */
    public void schedule(final long atNs, final EventHandler handler, final Object subject, final int arg) {
        if (atNs < nowNs) {
            throw new IllegalArgumentException("cannot schedule in the past: " + atNs + " < now " + nowNs);
        }
        queue.add(atNs, handler, subject, arg);
    }

    /** Asks {@link #run(long)} to return after the current event. */
    public void stop() {
        stopRequested = true;
    }

    /**
     * Runs events in time order until the queue is empty, {@link #stop()} is called, or the next
     * event lies beyond {@code untilNs}; the clock then stands at the last event run (or at
     * {@code untilNs} if the limit was reached).
     *
     * @param untilNs last virtual time to simulate
     * @return whether the run stopped because of {@link #stop()} or an empty queue (false: time limit)
     */
    public boolean run(final long untilNs) {
        stopRequested = false;
        while (!queue.isEmpty() && !stopRequested) {
            if (queue.peekTime() > untilNs) {
                nowNs = untilNs;
                return false;
            }
            nowNs = queue.peekTime();
            queue.pollAndRun();
            eventsRun++;
        }
        return true;
    }
}
