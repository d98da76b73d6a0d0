// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.engine;

/**
 * Which queue pairs of an {@link Endpoint} a poll has to visit, and the earliest deadline among
 * them, at a cost that grows with the queue pairs that have something to do rather than with all
 * of them (a host of a 128-host all-to-all has 254 queue pairs, of which a handful are active at
 * any instant).
 *
 * <p>A queue pair's answer to {@link QueuePair#nextDeadlineNs()} and whether polling it does
 * anything change only when something happens to it: a packet for it, a verb posted or applied to
 * it, or a poll of it. Each such event marks it <em>stale</em> (its cached deadline must be
 * recomputed) and <em>ready</em> (the next poll visits it). Between events, a poll before its
 * deadline does nothing, so the schedule lets a poll skip it: the poll visits the ready queue
 * pairs plus those whose cached deadline has come, in the endpoint's rotating order, and the
 * endpoint's next deadline is the minimum of a heap of cached deadlines. A queue pair a poll left
 * with possibly more to send (the driver's sink ran out of room, or its per-poll budget was spent)
 * stays ready.
 *
 * <p>Queue pairs are numbered by their position in the endpoint's poll order ({@code pollIndex});
 * the ready set is a bit set over positions, so visiting it in rotating order is the original
 * order restricted to the ready queue pairs. Allocation-free once the arrays have grown to the
 * number of queue pairs (creation and destruction are setup, not the data path). Positions do not
 * move while a poll walks them: queue pairs are created and destroyed only by the application's
 * calls, and nothing calls the application from inside the walk (connection-manager events are
 * delivered before it starts).
 */
final class PollSchedule {
    private QueuePair[] byIndex = new QueuePair[16];
    private int size;
    private long[] ready = new long[1];
    private QueuePair[] heap = new QueuePair[16];
    private int heapSize;
    private QueuePair[] stale = new QueuePair[16];
    private int staleCount;

    /** @return queue pairs scheduled */
    int size() {
        return size;
    }

    /** @return the queue pair at a position of the poll order */
    QueuePair at(final int index) {
        return byIndex[index];
    }

    /** Appends a new queue pair at the end of the poll order; it is ready and stale. */
    void add(final QueuePair qp) {
        if (size == byIndex.length) {
            byIndex = java.util.Arrays.copyOf(byIndex, size * 2);
            stale = java.util.Arrays.copyOf(stale, size * 2);
            heap = java.util.Arrays.copyOf(heap, size * 2);
        }
        if ((size >> 6) >= ready.length) {
            ready = java.util.Arrays.copyOf(ready, ready.length * 2);
        }
        qp.pollIndex = size;
        qp.heapIndex = -1;
        qp.cachedDeadlineNs = Long.MAX_VALUE;
        qp.stale = false;
        byIndex[size++] = qp;
        touched(qp);
    }

    /** Removes a queue pair; those after it move one position forward, as in the poll order. */
    void remove(final QueuePair qp) {
        final int index = qp.pollIndex;
        if (index < 0 || index >= size || byIndex[index] != qp) {
            return;
        }
        if (qp.heapIndex >= 0) {
            heapRemove(qp.heapIndex);
        }
        if (qp.stale) {
            for (int i = 0; i < staleCount; i++) {
                if (stale[i] == qp) {
                    stale[i] = stale[--staleCount];
                    stale[staleCount] = null;
                    break;
                }
            }
            qp.stale = false;
        }
        for (int i = index; i < size - 1; i++) {
            final boolean nextReady = isReady(i + 1);
            byIndex[i] = byIndex[i + 1];
            byIndex[i].pollIndex = i;
            setReady(i, nextReady);
        }
        setReady(size - 1, false);
        byIndex[--size] = null;
        qp.pollIndex = -1;
    }

    /** Something happened to the queue pair: recompute its deadline and visit it in the next poll. */
    void touched(final QueuePair qp) {
        if (qp.pollIndex < 0) {
            return; // destroyed
        }
        setReady(qp.pollIndex, true);
        markStale(qp);
    }

    /** The queue pair was polled, or its cached deadline is out of date. */
    void markStale(final QueuePair qp) {
        if (!qp.stale && qp.pollIndex >= 0) {
            qp.stale = true;
            stale[staleCount++] = qp;
        }
    }

    /** Keeps a queue pair for the next poll (it may have more to send). */
    void keepReady(final QueuePair qp) {
        if (qp.pollIndex >= 0) {
            setReady(qp.pollIndex, true);
        }
    }

    /** Recomputes the cached deadline of every stale queue pair. */
    void refresh() {
        for (int i = 0; i < staleCount; i++) {
            final QueuePair qp = stale[i];
            stale[i] = null;
            qp.stale = false;
            update(qp, qp.nextDeadlineNs());
        }
        staleCount = 0;
    }

    /**
     * Before a poll: recomputes the cached deadline of the stale queue pairs that are not ready.
     * A ready one is visited by this poll anyway and is stale again afterwards, so its deadline
     * is left for {@link #refresh()} (or for the poll after, if the sink fills before it is reached).
     */
    void refreshNotReady() {
        int kept = 0;
        for (int i = 0; i < staleCount; i++) {
            final QueuePair qp = stale[i];
            stale[i] = null;
            if (isReady(qp.pollIndex)) {
                stale[kept++] = qp;
            } else {
                qp.stale = false;
                update(qp, qp.nextDeadlineNs());
            }
        }
        staleCount = kept;
    }

    /**
     * Makes every queue pair whose cached deadline is at or before {@code nowNs} ready and takes
     * it out of the heap. The poll that follows visits it (and marks it stale) unless the sink
     * fills first; until it is visited its deadline is still the one it had, which is past, and
     * the endpoint reports the sink's room as its deadline meanwhile. A queue pair that waits
     * behind a full sink therefore costs nothing per poll.
     */
    void collectDue(final long nowNs) {
        while (heapSize > 0 && heap[0].cachedDeadlineNs <= nowNs) {
            final QueuePair qp = heap[0];
            heapRemove(0);
            setReady(qp.pollIndex, true);
        }
    }

    /** @return the earliest cached deadline (MAX_VALUE when none); call {@link #refresh()} first */
    long earliestDeadlineNs() {
        return heapSize == 0 ? Long.MAX_VALUE : heap[0].cachedDeadlineNs;
    }

    /**
     * @param from the first position to look at
     * @param end one past the last position to look at
     * @return the first ready position in [from, end), or -1
     */
    int nextReady(final int from, final int end) {
        if (from >= end) {
            return -1;
        }
        int word = from >> 6;
        long bits = ready[word] & (-1L << (from & 63));
        while (true) {
            if (bits != 0) {
                final int index = (word << 6) + Long.numberOfTrailingZeros(bits);
                return index < end ? index : -1;
            }
            if (++word << 6 >= end) {
                return -1;
            }
            bits = ready[word];
        }
    }

    /** Takes a position out of the ready set (the poll is about to visit it). */
    void clearReady(final int index) {
        setReady(index, false);
    }

    private boolean isReady(final int index) {
        return (ready[index >> 6] & (1L << (index & 63))) != 0;
    }

    private void setReady(final int index, final boolean value) {
        if (value) {
            ready[index >> 6] |= 1L << (index & 63);
        } else {
            ready[index >> 6] &= ~(1L << (index & 63));
        }
    }

    // ---- binary min-heap of cached deadlines; queue pairs without a deadline are not in it

    private void update(final QueuePair qp, final long deadlineNs) {
        if (qp.heapIndex >= 0 && qp.cachedDeadlineNs == deadlineNs) {
            return;
        }
        qp.cachedDeadlineNs = deadlineNs;
        if (deadlineNs == Long.MAX_VALUE) {
            if (qp.heapIndex >= 0) {
                heapRemove(qp.heapIndex);
            }
            return;
        }
        if (qp.heapIndex < 0) {
            qp.heapIndex = heapSize;
            heap[heapSize++] = qp;
        }
        siftDown(siftUp(qp.heapIndex));
    }

    private void heapRemove(final int index) {
        final QueuePair removed = heap[index];
        removed.heapIndex = -1;
        final QueuePair last = heap[--heapSize];
        heap[heapSize] = null;
        if (index == heapSize) {
            return;
        }
        heap[index] = last;
        last.heapIndex = index;
        siftDown(siftUp(index));
    }

    private int siftUp(int index) {
        final QueuePair qp = heap[index];
        while (index > 0) {
            final int parent = (index - 1) >>> 1;
            if (heap[parent].cachedDeadlineNs <= qp.cachedDeadlineNs) {
                break;
            }
            heap[index] = heap[parent];
            heap[index].heapIndex = index;
            index = parent;
        }
        heap[index] = qp;
        qp.heapIndex = index;
        return index;
    }

    private void siftDown(int index) {
        final QueuePair qp = heap[index];
        while (true) {
            int child = 2 * index + 1;
            if (child >= heapSize) {
                break;
            }
            if (child + 1 < heapSize && heap[child + 1].cachedDeadlineNs < heap[child].cachedDeadlineNs) {
                child++;
            }
            if (heap[child].cachedDeadlineNs >= qp.cachedDeadlineNs) {
                break;
            }
            heap[index] = heap[child];
            heap[index].heapIndex = index;
            index = child;
        }
        heap[index] = qp;
        qp.heapIndex = index;
    }
}
