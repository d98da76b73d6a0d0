package org.metaroce.collectives;

import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import org.metaroce.core.engine.QueuePair;
import org.metaroce.core.verbs.PostStatus;
import org.metaroce.core.verbs.RecvRequest;
import org.metaroce.core.verbs.SendRequest;
import org.metaroce.netty.MetaRoceDevice;

/**
 * Hands work requests from the application thread to the device's owning thread without
 * allocating: requests are copied into a preallocated single-producer ring, and one reusable
 * command, offered to the device once per batch, posts them there. On an INVOKER device the
 * caller is the owning thread and requests are posted at once. A refused post is remembered and
 * reported by {@link #error()}.
 */
final class PostRing implements Runnable {
    private final MetaRoceDevice device;
    /** INVOKER device: this thread owns it, post directly. */
    private final boolean direct;
    private final int mask;
    private final QueuePair[] qps;
    private final SendRequest[] sends;
    private final RecvRequest[] recvs;
    private final boolean[] isSend;
    private final AtomicLong tail = new AtomicLong();
    private final AtomicLong head = new AtomicLong();
    private final AtomicBoolean scheduled = new AtomicBoolean();
    private long cachedHead;
    private volatile String error;

    PostRing(final MetaRoceDevice device, final int capacity) {
        this.device = device;
        this.direct = device.threadingMode() == org.metaroce.netty.ThreadingMode.INVOKER;
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
            flush();
            while (t - (cachedHead = head.get()) > mask) {
                if (device.isClosed()) {
                    throw new IllegalStateException("device closed while posting");
                }
                Thread.onSpinWait();
            }
        }
        return (int) (t & mask);
    }

    void postSend(final QueuePair qp, final SendRequest wr) {
        if (direct) {
            check(qp, true, qp.postSend(wr));
            return;
        }
        final int i = claim();
        qps[i] = qp;
        sends[i].copyFrom(wr);
        isSend[i] = true;
        tail.lazySet(tail.get() + 1);
    }

    void postRecv(final QueuePair qp, final RecvRequest wr) {
        if (direct) {
            check(qp, false, qp.postRecv(wr));
            return;
        }
        final int i = claim();
        qps[i] = qp;
        recvs[i].copyFrom(wr);
        isSend[i] = false;
        tail.lazySet(tail.get() + 1);
    }

    /** Offers the drain command if anything is queued and no drain is pending. */
    void flush() {
        if (direct || tail.get() == head.get() || scheduled.get()) {
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
                check(qp, isSend[i], isSend[i] ? qp.postSend(sends[i]) : qp.postRecv(recvs[i]));
                qps[i] = null;
                h++;
            }
            head.lazySet(h);
            scheduled.set(false);
            if (tail.get() == h || !scheduled.compareAndSet(false, true)) {
                return;
            }
        }
    }

    private void check(final QueuePair qp, final boolean send, final int status) {
        if (status != PostStatus.OK && error == null) {
            error = "post" + (send ? "Send" : "Recv") + " on QP " + qp.qpn() + " refused: "
                + PostStatus.describe(status);
        }
    }

    /** @return the first refused post's description, or null */
    String error() {
        return error;
    }
}
