// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.sim;

/**
 * A binary min-heap of events ordered by (time, insertion sequence), kept in parallel primitive
 * arrays so scheduling allocates nothing once the arrays have grown to the run's working size.
 * The sequence number breaks ties in insertion order, which makes a run a pure function of its
 * inputs: two events at the same nanosecond always fire in the order they were scheduled.
 */
public final class EventQueue {
    private long[] times;
    private long[] seqs;
    private EventHandler[] handlers;
    private Object[] subjects;
    private int[] args;
    private int size;
    private long nextSeq;

    /** @param initialCapacity events held before the arrays grow */
    public EventQueue(final int initialCapacity) {
        final int n = Math.max(16, initialCapacity);
        times = new long[n];
        seqs = new long[n];
        handlers = new EventHandler[n];
        subjects = new Object[n];
        args = new int[n];
    }

    /** @return events waiting */
    public int size() {
        return size;
    }

    /** @return whether no event waits */
    public boolean isEmpty() {
        return size == 0;
    }

    /** @return time of the earliest event; only valid when not empty */
    public long peekTime() {
        return times[0];
    }

    /**
     * Adds an event.
     *
     * @param timeNs when it fires
     * @param handler who handles it
     * @param subject object passed to the handler
     * @param arg int passed to the handler
     */
    public void add(final long timeNs, final EventHandler handler, final Object subject, final int arg) {
        if (size == times.length) {
            grow();
        }
        int i = size++;
        final long seq = nextSeq++;
        // Sift up: move parents down until the slot for the new event is found.
        while (i > 0) {
            final int parent = (i - 1) >>> 1;
            if (less(times[parent], seqs[parent], timeNs, seq)) {
                break;
            }
            move(parent, i);
            i = parent;
        }
        set(i, timeNs, seq, handler, subject, arg);
    }

    /**
     * Removes the earliest event and runs its handler.
     *
     * @return the time of the event that ran
     */
    public long pollAndRun() {
        final long time = times[0];
        final EventHandler handler = handlers[0];
        final Object subject = subjects[0];
        final int arg = args[0];
        removeTop();
        handler.onEvent(time, subject, arg);
        return time;
    }

    private void removeTop() {
        final int last = --size;
        final long t = times[last];
        final long s = seqs[last];
        final EventHandler h = handlers[last];
        final Object o = subjects[last];
        final int a = args[last];
        handlers[last] = null;
        subjects[last] = null;
        if (last == 0) {
            return;
        }
        int i = 0;
        final int half = last >>> 1;
        while (i < half) {
            int child = 2 * i + 1;
            final int right = child + 1;
            if (right < last && less(times[right], seqs[right], times[child], seqs[child])) {
                child = right;
            }
            if (!less(times[child], seqs[child], t, s)) {
                break;
            }
            move(child, i);
            i = child;
        }
        set(i, t, s, h, o, a);
    }

    private static boolean less(final long t1, final long s1, final long t2, final long s2) {
        return t1 < t2 || (t1 == t2 && s1 < s2);
    }

    private void move(final int from, final int to) {
        times[to] = times[from];
        seqs[to] = seqs[from];
        handlers[to] = handlers[from];
        subjects[to] = subjects[from];
        args[to] = args[from];
    }

    private void set(final int i, final long t, final long s, final EventHandler h, final Object o, final int a) {
        times[i] = t;
        seqs[i] = s;
        handlers[i] = h;
        subjects[i] = o;
        args[i] = a;
    }

    private void grow() {
        final int n = times.length * 2;
        times = java.util.Arrays.copyOf(times, n);
        seqs = java.util.Arrays.copyOf(seqs, n);
        handlers = java.util.Arrays.copyOf(handlers, n);
        subjects = java.util.Arrays.copyOf(subjects, n);
        args = java.util.Arrays.copyOf(args, n);
    }
}
