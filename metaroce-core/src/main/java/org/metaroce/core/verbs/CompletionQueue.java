// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.verbs;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * A bounded completion queue, as ibv_cq: the engine thread pushes completions and one
 * application thread polls them with {@link #poll(WorkCompletion[], int)} (ibv_poll_cq
 * semantics). Lock-free single-producer/single-consumer ring in the Aeron style: preallocated
 * slots, a head and a tail counter on separate cache lines published with release stores and
 * read with acquire loads, and cached copies of the other side's counter so the common case
 * touches no shared cache line. Neither side allocates.
 *
 * <p><b>Overflow is an error, never a silent loss.</b> As with IBV_EVENT_CQ_ERR, a push into a
 * full queue fails, is counted in {@link #overflowCount()} and latches {@link #isInError()}.
 * From then on every push fails and is counted too, because delivering a later completion after
 * a lost one would let the application believe that earlier work had finished. Completions
 * already queued can still be polled. The engine, on a failed push, moves every queue pair that
 * uses this CQ to ERR (and their flushed completions are counted as overflow as well); the
 * application must treat an errored CQ as dead, drain it and destroy it. Size the queue like
 * with verbs: at least the sum of the send and receive queue depths it serves.
 *
 * <p>Threading: exactly one producer thread may call {@link #push}; exactly one consumer thread
 * may call {@link #poll}; the query methods may be called from anywhere and are snapshots.
 */
public final class CompletionQueue extends CompletionQueueConsumerFields {
    /** Largest capacity accepted, 2^20 completions. */
    public static final int MAX_CAPACITY = 1 << 20;

    private static final VarHandle HEAD;
    private static final VarHandle TAIL;

    static {
        try {
            final MethodHandles.Lookup lookup = MethodHandles.lookup();
            HEAD = lookup.findVarHandle(CompletionQueueHead.class, "head", long.class);
            TAIL = lookup.findVarHandle(CompletionQueueTail.class, "tail", long.class);
        } catch (final ReflectiveOperationException ex) {
            throw new ExceptionInInitializerError(ex);
        }
    }

    private final int capacity;
    private final WorkCompletion[] slots;
    /**
     * The consumer thread while it waits in {@link #awaitCompletions}, else null: {@link #push}
     * unparks it (the completion channel of verbs, ibv_req_notify_cq and ibv_get_cq_event).
     */
    private volatile Thread waiter;

    /**
     * @param capacity number of completions the queue holds, 1..{@link #MAX_CAPACITY} (any
     *     value, not only powers of two)
     */
    public CompletionQueue(final int capacity) {
        if (capacity < 1 || capacity > MAX_CAPACITY) {
            throw new IllegalArgumentException("completion queue capacity must be in 1.."
                + MAX_CAPACITY + ", was " + capacity);
        }
        this.capacity = capacity;
        this.slots = new WorkCompletion[capacity];
        for (int i = 0; i < capacity; i++) {
            slots[i] = new WorkCompletion();
        }
    }

    /**
     * @return completions ever pushed (producer thread only): a driver compares two readings to
     *     learn whether a completion appeared in between
     */
    public long completionsPushed() {
        return tail;
    }

    /**
     * @return number of completions the queue holds
     */
    public int capacity() {
        return capacity;
    }

    /**
     * Appends one completion. Producer thread only.
     *
     * @param wrId work request id
     * @param status outcome
     * @param opcode what completed
     * @param byteLen bytes transferred (unsigned)
     * @param immData immediate data
     * @param wcFlags {@link WorkCompletion#WC_WITH_IMM} or 0
     * @param qpNum local QP number
     * @param srcQp remote QP number
     * @return true if queued; false if the queue is full or already in error, in which case the
     *     completion is counted in {@link #overflowCount()} and the queue is (now) in error
     */
    public boolean push(
        final long wrId,
        final WcStatus status,
        final WcOpcode opcode,
        final int byteLen,
        final int immData,
        final int wcFlags,
        final int qpNum,
        final int srcQp) {
        if (inError) {
            recordOverflow();
            return false;
        }
        final long currentTail = tail;
        if (currentTail - headCache >= capacity) {
            headCache = (long)HEAD.getAcquire(this);
            if (currentTail - headCache >= capacity) {
                recordOverflow();
                inError = true;
                return false;
            }
        }
        slots[tailIndex].set(wrId, status, opcode, byteLen, immData, wcFlags, qpNum, srcQp);
        if (++tailIndex == capacity) {
            tailIndex = 0;
        }
        TAIL.setRelease(this, currentTail + 1);
        // StoreLoad: the consumer publishes itself and then reads the tail; we publish the tail and
        // then read the consumer. Without the fence both could miss the other and the consumer
        // would sleep its whole wait with a completion queued.
        VarHandle.fullFence();
        final Thread w = waiter;
        if (w != null) {
            java.util.concurrent.locks.LockSupport.unpark(w);
        }
        return true;
    }

    /**
     * Parks the consumer thread until a completion is pushed, {@code maxWaitNs} pass, or the thread
     * is unparked or interrupted, whichever is first; returns at once if a completion is already
     * queued. A doorbell instead of a polling sleep: an application thread whose completions come
     * from another thread (a driver) wakes when they do, not at its next timer tick. Consumer
     * thread only.
     *
     * @param maxWaitNs longest wait in nanoseconds
     * @return false if a completion was already queued (no wait), true if it waited
     */
    public boolean awaitCompletions(final long maxWaitNs) {
        waiter = Thread.currentThread();
        try {
            if ((long) TAIL.getVolatile(this) != head) {
                return false;
            }
            java.util.concurrent.locks.LockSupport.parkNanos(this, maxWaitNs);
            return true;
        } finally {
            waiter = null;
        }
    }

    /**
     * Moves up to {@code max} completions, oldest first, into caller-owned objects, as
     * ibv_poll_cq. Consumer thread only.
     *
     * @param out reusable completions to fill from index 0; entries must be non-null
     * @param max most completions wanted
     * @return number filled: at most {@code max}, at most {@code out.length}, 0 when empty
     * @throws IllegalArgumentException if {@code max} is negative
     */
    public int poll(final WorkCompletion[] out, final int max) {
        if (max < 0) {
            throw new IllegalArgumentException("max must not be negative, was " + max);
        }
        final int limit = Math.min(max, out.length);
        final long currentHead = head;
        long available = tailCache - currentHead;
        if (available < limit) {
            tailCache = (long)TAIL.getAcquire(this);
            available = tailCache - currentHead;
        }
        final int count = (int)Math.min(available, limit);
        int index = headIndex;
        for (int i = 0; i < count; i++) {
            out[i].copyFrom(slots[index]);
            if (++index == capacity) {
                index = 0;
            }
        }
        if (count > 0) {
            headIndex = index;
            HEAD.setRelease(this, currentHead + count);
        }
        return count;
    }

    /**
     * @return completions waiting to be polled (a snapshot when called concurrently)
     */
    public int size() {
        final long h = (long)HEAD.getAcquire(this);
        final long t = (long)TAIL.getAcquire(this);
        return (int)Math.max(0, Math.min(capacity, t - h));
    }

    /**
     * @return whether no completion is waiting
     */
    public boolean isEmpty() {
        return size() == 0;
    }

    /**
     * Lets an engine that prefers back-pressure to errors hold completions back while the
     * application is slow (a snapshot; exact when called from the producer thread, since only
     * the producer adds).
     *
     * @return free slots
     */
    public int remainingCapacity() {
        return capacity - size();
    }

    /**
     * @return whether the queue overflowed (IBV_EVENT_CQ_ERR); latched
     */
    public boolean isInError() {
        return inError;
    }

    /**
     * @return completions that could not be queued since creation
     */
    public long overflowCount() {
        return overflowCount;
    }

    private void recordOverflow() {
        overflowCount = overflowCount + 1; // single writer: the producer thread
    }

    @Override
    public String toString() {
        return "CompletionQueue{capacity=" + capacity
            + ", size=" + size()
            + ", inError=" + inError
            + ", overflowCount=" + overflowCount + "}";
    }
}

// Cache-line padding in the Agrona style: field order inside one class is up to the JVM, but
// superclass fields come first, so a chain of classes keeps head and tail apart.

abstract class CompletionQueuePadding1 {
    long p01, p02, p03, p04, p05, p06, p07, p08, p09, p10, p11, p12, p13, p14, p15, p16;
}

abstract class CompletionQueueTail extends CompletionQueuePadding1 {
    /** Completions ever pushed; written by the producer only. */
    long tail;
    /** Slot the next push writes; producer only. */
    int tailIndex;
    /** Producer's last view of head. */
    long headCache;
    /** Producer writes, anyone reads. */
    volatile long overflowCount;
    /** Producer writes, anyone reads; latched. */
    volatile boolean inError;
}

abstract class CompletionQueuePadding2 extends CompletionQueueTail {
    long p21, p22, p23, p24, p25, p26, p27, p28, p29, p30, p31, p32, p33, p34, p35, p36;
}

abstract class CompletionQueueHead extends CompletionQueuePadding2 {
    /** Completions ever polled; written by the consumer only. */
    long head;
}

abstract class CompletionQueueConsumerFields extends CompletionQueueHead {
    /** Slot the next poll reads; consumer only. */
    int headIndex;
    /** Consumer's last view of tail. */
    long tailCache;
    long p41, p42, p43, p44, p45, p46, p47, p48, p49, p50, p51, p52, p53, p54, p55, p56;
}
