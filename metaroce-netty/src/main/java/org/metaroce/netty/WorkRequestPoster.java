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
 * {@link #flush()}, posts them on the owning thread.
 *
 * <p>Both ways take the same requests and refuse them with the same {@link PostStatus} codes: a
 * ring slot holds as many scatter/gather entries as the queue pair allows ({@link QueuePair#maxSendSge()},
 * {@link QueuePair#maxRecvSge()}), growing the first time a slot meets a larger request (the only
 * allocation after construction), and the owning thread's {@code postSend}/{@code postRecv}
 * judges every request. A refusal on the owning thread cannot be returned to the caller, which
 * has moved on: {@link #refusal()} keeps the first one, with its code, queue pair and wr_id.
 *
 * <p>One producer thread only. The request objects passed in may be refilled as soon as a call
 * returns.
 */
public final class WorkRequestPoster {
    private final MetaRoceDevice device;
    /** INVOKER device: the caller owns it and posts directly. */
    private final boolean direct;
    private final Ring ring;
    /** The first refused post; written once (by whichever thread posted), read by the producer. */
    private volatile Refusal refusal;

    /**
     * A refused post: what {@link QueuePair#postSend} or {@link QueuePair#postRecv} returned on the
     * owning thread, and which request it refused.
     *
     * @param qpn the queue pair's number
     * @param send whether it was a send request (else a receive request)
     * @param wrId the request's wr_id
     * @param status the {@link PostStatus} code, never {@link PostStatus#OK}
     */
    public record Refusal(int qpn, boolean send, long wrId, int status) {
        /** @return e.g. "postSend on QP 12 refused: INVALID_LKEY (wr_id 5000)" */
        @Override
        public String toString() {
            return "post" + (send ? "Send" : "Recv") + " on QP " + qpn + " refused: " + PostStatus.describe(status)
                + " (wr_id " + wrId + ")";
        }
    }

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
     * @param qp a queue pair of the device
     * @param wr the request, with up to {@code qp.maxSendSge()} scatter/gather entries
     * @return the {@link PostStatus} of a direct post; {@link PostStatus#OK} when queued (a refusal
     *     on the owning thread, with the same code a direct post returns, shows in {@link #refusal()})
     * @throws IllegalStateException if the ring is full and the device closed while waiting for room
     */
    public int postSend(final QueuePair qp, final SendRequest wr) {
        if (direct) {
            return note(qp, true, wr.wrId(), qp.postSend(wr));
        }
        ring.add(qp, wr, null);
        return PostStatus.OK;
    }

    /**
     * Posts (INVOKER device) or queues a copy of {@code wr}.
     *
     * @param qp a queue pair of the device
     * @param wr the request, with up to {@code qp.maxRecvSge()} scatter/gather entries
     * @return as {@link #postSend}
     * @throws IllegalStateException as {@link #postSend}
     */
    public int postRecv(final QueuePair qp, final RecvRequest wr) {
        if (direct) {
            return note(qp, false, wr.wrId(), qp.postRecv(wr));
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

    /**
     * @return the first refused post (its {@link Refusal#status()} is the {@link PostStatus} code),
     *     or null when none was refused
     */
    public Refusal refusal() {
        return refusal;
    }

    private int note(final QueuePair qp, final boolean send, final long wrId, final int status) {
        if (status != PostStatus.OK && refusal == null) {
            refusal = new Refusal(qp.qpn(), send, wrId, status);
        }
        return status;
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
            // The slot is the producer's until the tail moves past it: growing it here is safe.
            if (send != null) {
                if (sends[i].maxSge() < send.numSge()) {
                    sends[i] = new SendRequest(Math.max(send.numSge(), qp.maxSendSge()));
                }
                sends[i].copyFrom(send);
            } else {
                if (recvs[i].maxSge() < recv.numSge()) {
                    recvs[i] = new RecvRequest(Math.max(recv.numSge(), qp.maxRecvSge()));
                }
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
                    if (isSend[i]) {
                        note(qp, true, sends[i].wrId(), qp.postSend(sends[i]));
                    } else {
                        note(qp, false, recvs[i].wrId(), qp.postRecv(recvs[i]));
                    }
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
