package org.metaroce.cli;

import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import org.metaroce.core.engine.QueuePair;
import org.metaroce.core.verbs.PostStatus;
import org.metaroce.core.verbs.RecvRequest;
import org.metaroce.core.verbs.SendRequest;
import org.metaroce.netty.MetaRoceDevice;

/**
 * Posts work requests for the benchmark thread. A queue pair belongs to its device's owning
 * thread: in INVOKER mode the benchmark thread is that thread and posts directly; in DEDICATED and
 * SHARED mode requests are copied into a preallocated single-producer ring and one reusable
 * command, offered to the device once per batch, posts them on the owning thread. Neither path
 * allocates.
 */
abstract class Poster {

    static Poster direct() {
        return new Direct();
    }

    static Poster queued(final MetaRoceDevice device, final int capacity) {
        return new Queued(device, capacity);
    }

    /** Posts (or queues) a copy of {@code wr}; the request may be refilled when this returns. */
    abstract void postSend(QueuePair qp, SendRequest wr);

    /** Posts (or queues) a copy of {@code wr}. */
    abstract void postRecv(QueuePair qp, RecvRequest wr);

    /** Hands what was queued since the last call to the owning thread. */
    void flush() {
    }

    /** @throws BenchException if a post was refused */
    abstract void check();

    static String refusal(final QueuePair qp, final String what, final int status) {
        return "post" + what + " on QP " + qp.qpn() + " refused: " + PostStatus.describe(status);
    }

    /** The owning thread posts itself. */
    private static final class Direct extends Poster {
        @Override
        void postSend(final QueuePair qp, final SendRequest wr) {
            final int status = qp.postSend(wr);
            if (status != PostStatus.OK) {
                throw new BenchException(refusal(qp, "Send", status));
            }
        }

        @Override
        void postRecv(final QueuePair qp, final RecvRequest wr) {
            final int status = qp.postRecv(wr);
            if (status != PostStatus.OK) {
                throw new BenchException(refusal(qp, "Recv", status));
            }
        }

        @Override
        void check() {
        }
    }

    /** A ring from the benchmark thread to the owning thread. */
    private static final class Queued extends Poster implements Runnable {
        private final MetaRoceDevice device;
        private final int mask;
        private final QueuePair[] qps;
        private final SendRequest[] sends;
        private final RecvRequest[] recvs;
        private final boolean[] isSend;
        /** Written by the producer (benchmark thread). */
        private final AtomicLong tail = new AtomicLong();
        /** Written by the consumer (owning thread). */
        private final AtomicLong head = new AtomicLong();
        private final AtomicBoolean scheduled = new AtomicBoolean();
        private long cachedHead;
        private volatile String error;

        Queued(final MetaRoceDevice device, final int capacity) {
            this.device = device;
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

        private int claim() {
            final long t = tail.get();
            if (t - cachedHead > mask) {
                // Full: the owning thread has not caught up yet.
                flush();
                while (t - (cachedHead = head.get()) > mask) {
                    check();
                    if (device.isClosed()) {
                        throw new BenchException("device closed while posting");
                    }
                    Thread.onSpinWait();
                }
            }
            return (int) (t & mask);
        }

        @Override
        void postSend(final QueuePair qp, final SendRequest wr) {
            final int i = claim();
            qps[i] = qp;
            sends[i].copyFrom(wr);
            isSend[i] = true;
            tail.lazySet(tail.get() + 1);
        }

        @Override
        void postRecv(final QueuePair qp, final RecvRequest wr) {
            final int i = claim();
            qps[i] = qp;
            recvs[i].copyFrom(wr);
            isSend[i] = false;
            tail.lazySet(tail.get() + 1);
        }

        @Override
        void flush() {
            // Called after every batch and on every turn of the benchmark loop while anything is
            // pending, so a drain that missed the last request is followed by another one.
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
                    final int status = isSend[i] ? qp.postSend(sends[i]) : qp.postRecv(recvs[i]);
                    if (status != PostStatus.OK && error == null) {
                        error = refusal(qp, isSend[i] ? "Send" : "Recv", status);
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

        @Override
        void check() {
            final String e = error;
            if (e != null) {
                throw new BenchException(e);
            }
        }
    }
}
