// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty;

import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import org.metaroce.core.engine.QueuePair;
import org.metaroce.core.verbs.PostStatus;
import org.metaroce.core.verbs.RecvRequest;
import org.metaroce.core.verbs.SendRequest;

/**
 * Posts work requests from one application thread to queue pairs of a device, without allocating.
 * A queue pair belongs to its device's owning thread: on an INVOKER device the application thread
 * is that thread and posts directly; otherwise each request is copied into a preallocated
 * single-producer ring, and one reusable command, offered to the device once per batch by
 * {@link #flush()}, posts them on the owning thread. A refused post is remembered:
 * {@link #refusal()} describes the first one.
 *
 * <p>One producer thread only. The request objects passed in may be refilled as soon as a call
 * returns.
 */
public final class WorkRequestPoster {
    private final MetaRoceDevice device;
    /** INVOKER device: the caller owns it and posts directly. */
    private final boolean direct;
    private final Ring ring;
    private volatile String refusal;

    /**
     * @param device the device whose queue pairs are posted to
     * @param capacity requests the ring holds between two drains (rounded up to a power of two, at least 32)
     */
    public WorkRequestPoster(final MetaRoceDevice device, final int capacity) {
        this.device = device;
        this.direct = device.threadingMode() == ThreadingMode.INVOKER;
        this.ring = direct ? null : new Ring(capacity);
    }

    /**
     * Posts (INVOKER device) or queues a copy of {@code wr}.
     *
     * @return the {@link PostStatus} of a direct post; {@link PostStatus#OK} when queued (a refusal
     *     on the owning thread shows in {@link #refusal()})
     * @throws IllegalStateException if the ring is full and the device closed while waiting for room
     */
    public int postSend(final QueuePair qp, final SendRequest wr) {
        if (direct) {
            return note(qp, true, qp.postSend(wr));
        }
        ring.add(qp, wr, null);
        return PostStatus.OK;
    }

    /**
     * Posts (INVOKER device) or queues a copy of {@code wr}.
     *
     * @return as {@link #postSend}
     * @throws IllegalStateException as {@link #postSend}
     */
    public int postRecv(final QueuePair qp, final RecvRequest wr) {
        if (direct) {
            return note(qp, false, qp.postRecv(wr));
        }
        ring.add(qp, null, wr);
        return PostStatus.OK;
    }

    /**
     * Hands what was queued to the owning thread, unless a drain is already pending. Call it after
     * each batch and again while anything may be pending: a drain that missed the last request is
     * followed by another one. Nothing to do on an INVOKER device.
     */
    public void flush() {
        if (!direct) {
            ring.flush();
        }
    }

    /** @return a description of the first refused post, or null when none was refused */
    public String refusal() {
        return refusal;
    }

    private int note(final QueuePair qp, final boolean send, final int status) {
        if (status != PostStatus.OK && refusal == null) {
            refusal = describe(qp, send, status);
        }
        return status;
    }

    /**
     * @return the text {@link #refusal()} uses for a refused post
     */
    public static String describe(final QueuePair qp, final boolean send, final int status) {
        return "post" + (send ? "Send" : "Recv") + " on QP " + qp.qpn() + " refused: " + PostStatus.describe(status);
    }

    /** The ring from the producer to the owning thread, and the command that drains it. */
    private final class Ring implements Runnable {
        private final int mask;
        private final QueuePair[] qps;
        private final SendRequest[] sends;
        private final RecvRequest[] recvs;
        private final boolean[] isSend;
        /** Written by the producer. */
        private final AtomicLong tail = new AtomicLong();
        /** Written by the owning thread. */
        private final AtomicLong head = new AtomicLong();
        private final AtomicBoolean scheduled = new AtomicBoolean();
        private long cachedHead;

        Ring(final int capacity) {
            final int size = Integer.highestOneBit(Math.max(16, capacity - 1)) << 1;
            mask = size - 1;
            qps = new QueuePair[size];
            sends = new SendRequest[size];
            recvs = new RecvRequest[size];
            isSend = new boolean[size];
            for (int i = 0; i < size; i++) {
                sends[i] = new SendRequest(1);
                recvs[i] = new RecvRequest(1);
            }
        }

        void add(final QueuePair qp, final SendRequest send, final RecvRequest recv) {
            final long t = tail.get();
            if (t - cachedHead > mask) {
                // Full: the owning thread has not caught up yet.
                flush();
                while (t - (cachedHead = head.get()) > mask) {
                    if (device.isClosed()) {
                        throw new IllegalStateException("device closed while posting");
                    }
                    Thread.onSpinWait();
                }
            }
            final int i = (int) (t & mask);
            qps[i] = qp;
            isSend[i] = send != null;
            if (send != null) {
                sends[i].copyFrom(send);
            } else {
                recvs[i].copyFrom(recv);
            }
            tail.lazySet(t + 1);
        }

        void flush() {
            if (tail.get() == head.get() || scheduled.get()) {
                return;
            }
            if (scheduled.compareAndSet(false, true) && !device.offer(this)) {
                scheduled.set(false);
            }
        }

        /** Owning thread: posts everything queued. */
        @Override
        public void run() {
            long h = head.get();
            for (;;) {
                final long t = tail.get();
                while (h < t) {
                    final int i = (int) (h & mask);
                    final QueuePair qp = qps[i];
                    note(qp, isSend[i], isSend[i] ? qp.postSend(sends[i]) : qp.postRecv(recvs[i]));
                    qps[i] = null;
                    h++;
                }
                head.lazySet(h);
                scheduled.set(false);
                // A request published after the last read of the tail but before scheduled was
                // cleared would wait for the next flush: take it now if we can claim the drain.
                if (tail.get() == h || !scheduled.compareAndSet(false, true)) {
                    return;
                }
            }
        }
    }
}
