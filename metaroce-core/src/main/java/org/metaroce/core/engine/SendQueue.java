// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.engine;

import org.metaroce.core.verbs.MemoryRegion;
import org.metaroce.core.verbs.PostStatus;
import org.metaroce.core.verbs.ScatterGatherEntry;
import org.metaroce.core.verbs.SendFlags;
import org.metaroce.core.verbs.SendRequest;
import org.metaroce.core.verbs.WcOpcode;
import org.metaroce.core.verbs.WcStatus;
import org.metaroce.core.verbs.WrOpcode;

/**
 * The send queue of a queue pair (specification section 5): the ring of posted work requests,
 * what starting one assigns (its first PSN, MSN and RSN [OPS-043]), the order rules that hold a
 * request back before it starts (RNR wait, SQD, FENCE, MAX_RD_ATOMIC), and completions, which
 * leave in post order [OPS-040], on success, on flush [REL-051] or on a failure. It alone owns:
 * <ul>
 *   <li>the ring and its three positions: {@code head} (oldest not completed), {@code nextToStart}
 *       (oldest with packets still to send) and {@code tail} (next free);</li>
 *   <li>the next MSN and RSN, and the READs and atomics started and not yet answered.</li>
 * </ul>
 * The {@link Requester} decides when a request's packets leave and when they are delivered; it
 * tells this queue, which completes whatever has become complete at the head. A work request's
 * sequence number ({@code head <= seq < tail}) is what the {@link Scoreboard} records per PSN.
 */
final class SendQueue {
    private final RequesterContext qp;
    private final EndpointCounters counters;
    private final SendWqe[] ring;
    /** INLINE payloads of the requests in the ring, freed in post order as they complete [OPS-041]. */
    private final InlineArena inlineArena;
    private long head;
    private long nextToStart;
    private long tail;
    private int nextMsn;
    private int nextRsn;
    private int outstandingReadAtomic;

    SendQueue(final RequesterContext qp, final int depth, final int maxSge, final int maxInlineData,
              final EndpointCounters counters) {
        this.qp = qp;
        this.counters = counters;
        ring = new SendWqe[depth];
        inlineArena = new InlineArena(depth, maxInlineData);
        for (int i = 0; i < depth; i++) {
            ring[i] = new SendWqe(maxSge, inlineArena);
        }
    }

    /** @return work requests posted and not yet completed */
    int queued() {
        return (int) (tail - head);
    }

    /** @return send work requests that have started and not yet completed */
    int startedOutstanding() {
        return (int) (nextToStart - head) + (nextToStart != tail && ring[(int) (nextToStart % ring.length)].started ? 1 : 0);
    }

    /** @return whether a request has packets still to send */
    boolean hasUnsent() {
        return nextToStart != tail;
    }

    /** @return whether no request is outstanding: completions are only ever taken in order */
    boolean isIdle() {
        return head == tail;
    }

    /** @return the sequence number of the oldest request with packets still to send */
    long nextToStartSeq() {
        return nextToStart;
    }

    /** @return the oldest request with packets still to send (valid while {@link #hasUnsent}) */
    SendWqe nextToStart() {
        return ring[(int) (nextToStart % ring.length)];
    }

    /** The request at {@link #nextToStart} has had its last packet assigned. */
    void advance() {
        nextToStart++;
    }

    /** @return the request with sequence number {@code seq} */
    SendWqe at(final long seq) {
        return ring[(int) (seq % ring.length)];
    }

    /** @return the storage of this queue's INLINE payloads (tests read its capacity) */
    InlineArena inlineArena() {
        return inlineArena;
    }

    /** @return a human-readable account of the queue, for a stalled run's error message */
    String describe() {
        return (tail - head) + " WRs outstanding (" + (tail - nextToStart) + " not started)";
    }

    // ------------------------------------------------------------------ posting

    int post(final SendRequest wr, final int pathMtu) {
        if (tail - head >= ring.length) {
            return PostStatus.QUEUE_FULL;
        }
        final SendWqe wqe = ring[(int) (tail % ring.length)];
        wqe.reset();
        wqe.wrId = wr.wrId();
        wqe.opcode = wr.opcode();
        wqe.sendFlags = wr.sendFlags();
        wqe.immData = wr.immData();
        wqe.remoteAddr = wr.remoteAddr();
        wqe.rkey = wr.rkey();
        wqe.compareAdd = wr.compareAdd();
        wqe.swap = wr.swap();
        wqe.length = wr.totalLength();
        final int n = wr.numSge();
        final boolean inline = (wr.sendFlags() & SendFlags.INLINE) != 0;
        // The copy is made now [OPS-041]: the caller may reuse the source as soon as this returns.
        final long inlineAt = inline ? inlineArena.reserve((int) wqe.length) : 0;
        int inlineOffset = 0;
        for (int i = 0; i < n; i++) {
            final ScatterGatherEntry sge = wr.sge(i);
            final MemoryRegion mr = qp.pd().lookupLkey(sge.lkey());
            wqe.sgeAddr[i] = sge.addr();
            wqe.sgeLength[i] = sge.length();
            wqe.sgeRegion[i] = mr;
            if (inline) {
                inlineArena.put(inlineAt, inlineOffset, mr.buffer(), (int) mr.offsetOf(sge.addr()), sge.length());
                inlineOffset += sge.length();
            }
        }
        wqe.numSge = n;
        wqe.isInline = inline;
        wqe.inlineAt = inlineAt;
        switch (wqe.opcode) {
            case RDMA_READ, SEND, SEND_WITH_IMM, RDMA_WRITE, RDMA_WRITE_WITH_IMM ->
                wqe.psnCount = (int) Math.max(1, (wqe.length + pathMtu - 1) / pathMtu);
            default -> wqe.psnCount = 1;
        }
        tail++;
        return PostStatus.OK;
    }

    // ------------------------------------------------------------------ starting

    /**
     * Whether the next packet of {@code wqe}, the oldest request with packets still to send, may
     * leave now as far as the order rules go, before the congestion window, pacing, the scoreboard
     * and the credit are asked: the requester's emission of new packets and its tail probe's choice
     * of a new packet apply the same rules.
     *
     * @param rnrWaiting whether packets are waiting out an RNR delay
     */
    boolean mayStart(final SendWqe wqe, final boolean rnrWaiting) {
        if (rnrWaiting && wqe.consumesReceive()) {
            // The responder has no receive posted: later receive-consuming messages wait out
            // the RNR delay too instead of collecting RNR NACKs of their own [REL-039].
            return false;
        }
        if (!wqe.started) {
            if (qp.isSendQueueDraining()) {
                return false;
            }
            if ((wqe.sendFlags & SendFlags.FENCE) != 0 && outstandingReadAtomic > 0) {
                return false;
            }
            if (wqe.isReadOrAtomic() && outstandingReadAtomic >= qp.maxRdAtomic()) {
                return false;
            }
        }
        return true;
    }

    /** Starts {@code wqe} at {@code firstPsn}, if it has not started: its MSN, RSN and the READ/atomic count. */
    void start(final SendWqe wqe, final int firstPsn) {
        if (!wqe.started) {
            wqe.started = true;
            wqe.firstPsn = firstPsn;
            wqe.msn = nextMsn++;
            if (wqe.consumesReceive()) {
                wqe.rsn = nextRsn++;
            }
            if (wqe.isReadOrAtomic()) {
                outstandingReadAtomic++;
            }
        }
    }

    /** One packet of {@code wqe} was delivered; its last ends a READ's or atomic's count. */
    void delivered(final SendWqe wqe) {
        wqe.psnsDelivered++;
        if (wqe.psnsDelivered == wqe.psnCount && wqe.isReadOrAtomic()) {
            outstandingReadAtomic--;
        }
    }

    /** Test hook (the engine tests' TwoNodeFixture.startSequences): the first MSN and RSN instead of 0 [OPS-043]. */
    void startSequences(final int msn, final int rsn) {
        nextMsn = msn;
        nextRsn = rsn;
    }

    // ------------------------------------------------------------------ completion

    /** Completes, in post order, every request at the head whose packets have all been delivered. */
    void completeInOrder() {
        while (head != nextToStart) {
            final SendWqe wqe = ring[(int) (head % ring.length)];
            if (!wqe.isComplete()) {
                return;
            }
            final boolean pushed = (wqe.sendFlags & SendFlags.SIGNALED) == 0 || push(wqe, WcStatus.SUCCESS);
            retire(wqe);
            head++;
            if (!pushed) {
                // The CQ latched its error: this completion is counted as overflow, and the QP fails.
                qp.onCompletionQueueOverflow(qp.sendCq());
                return;
            }
        }
    }

    /** The request at the head left the queue: its inline payload's room is free again. */
    private void retire(final SendWqe wqe) {
        if (wqe.isInline) {
            inlineArena.release(wqe.inlineAt, (int) wqe.length);
        }
        wqe.reset();
    }

    private boolean push(final SendWqe wqe, final WcStatus status) {
        final int byteLen = wqe.isAtomic() ? 8 : (int) wqe.length;
        final boolean ok = qp.sendCq().push(wqe.wrId, status, wcOpcode(wqe.opcode), byteLen, 0, 0, qp.qpn(),
            qp.destQpnOrZero());
        if (!ok) {
            counters.increment(EndpointCounter.CQ_OVERFLOWS);
        }
        return ok;
    }

    static WcOpcode wcOpcode(final WrOpcode opcode) {
        return switch (opcode) {
            case SEND, SEND_WITH_IMM -> WcOpcode.SEND;
            case RDMA_WRITE, RDMA_WRITE_WITH_IMM -> WcOpcode.RDMA_WRITE;
            case RDMA_READ -> WcOpcode.RDMA_READ;
            case ATOMIC_CMP_SWAP -> WcOpcode.COMP_SWAP;
            case ATOMIC_FETCH_ADD -> WcOpcode.FETCH_ADD;
        };
    }

    /**
     * Marks the oldest outstanding send request failed with {@code status}, for when the peer is
     * declared dead; the caller then moves the QP to ERR, which completes it [CM-030].
     */
    void failOldest(final WcStatus status) {
        if (head != tail) {
            final SendWqe wqe = ring[(int) (head % ring.length)];
            if (wqe.error == null) {
                wqe.error = status;
            }
        }
    }

    /**
     * Ends the QP with {@code status} on {@code wqe}: the QP goes to ERR, which flushes the rest.
     *
     * @param tracePsn the PSN the trace record names (the oldest outstanding)
     */
    void fail(final SendWqe wqe, final WcStatus status, final int tracePsn) {
        if (wqe.error == null) {
            wqe.error = status;
        }
        qp.trace(TraceEvent.WR_FAILED, tracePsn, status.ordinal(), 0, 0);
        qp.enterError(AsyncEventType.QP_FATAL);
    }

    /**
     * Completes every outstanding request in post order: finished ones with SUCCESS (if
     * signaled), the failed one with its error, everything else with WR_FLUSH_ERR.
     */
    void flush() {
        long failed = -1;
        for (long i = head; i != tail; i++) {
            if (ring[(int) (i % ring.length)].error != null) {
                failed = i;
                break;
            }
        }
        // [REL-051]: before the failed WR, done ones succeed and the rest flush; the failed WR gets
        // its error; every later WR flushes even if its packets were acknowledged. Without a failed
        // WR everything outstanding flushes.
        while (head != tail) {
            final SendWqe wqe = ring[(int) (head % ring.length)];
            final WcStatus status;
            if (head == failed) {
                status = wqe.error;
            } else if (failed >= 0 && head < failed && wqe.isComplete()) {
                status = WcStatus.SUCCESS;
            } else {
                status = WcStatus.WR_FLUSH_ERR;
            }
            if (status != WcStatus.SUCCESS || (wqe.sendFlags & SendFlags.SIGNALED) != 0) {
                push(wqe, status);
            }
            retire(wqe);
            head++;
        }
        nextToStart = tail;
        outstandingReadAtomic = 0;
    }

    /** Drops every request without completions (modify to RESET); the sequences start again at 0. */
    void discard() {
        for (long i = head; i != tail; i++) {
            ring[(int) (i % ring.length)].reset();
        }
        inlineArena.clear();
        head = tail;
        nextToStart = tail;
        outstandingReadAtomic = 0;
        nextMsn = 0;
        nextRsn = 0;
    }
}
