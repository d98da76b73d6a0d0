// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.collectives;

import java.util.ArrayList;
import java.util.concurrent.TimeUnit;

import org.agrona.collections.Int2ObjectHashMap;
import org.agrona.concurrent.IdleStrategy;
import org.metaroce.core.verbs.CompletionQueue;
import org.metaroce.core.verbs.RecvRequest;
import org.metaroce.core.verbs.SendFlags;
import org.metaroce.core.verbs.SendRequest;
import org.metaroce.core.verbs.WcOpcode;
import org.metaroce.core.verbs.WcStatus;
import org.metaroce.core.verbs.WorkCompletion;
import org.metaroce.core.verbs.WrOpcode;
import org.metaroce.netty.WorkRequestPoster;

/**
 * Runs an operation's plan on the calling thread: polls the completion queue, processes arrived
 * chunks (copy or reduce out of the slot, then grant the slot back), grants regions of the
 * destinations of placed receives (whose chunks arrive in place) [COLL-033, COLL-034], and posts
 * chunk WRITEs as grants, regions and dependencies allow [COLL-006..COLL-011]. Posting goes
 * through a {@link WorkRequestPoster} to the device's owning thread; the completion queue is read
 * directly. On an INVOKER device the calling thread is the owning thread: it posts directly and
 * drives the device itself in the same loop (no hand-off to a driver thread) [COLL-029], and a
 * send whose chunks fit the device's inline limit is posted INLINE and mostly unsignaled, so the
 * operation need not wait for its acknowledgements [COLL-038]. Nothing here allocates per chunk.
 */
final class Engine {
    /** Immediate data type field (bits 31..30). */
    static final int IMM_DATA = 0;
    static final int IMM_GRANT = 1;
    /** A data chunk written into a region the receiver granted, not into a slot [COLL-034]. */
    static final int IMM_PLACED = 2;
    /** A grant that also names a region of the receiver's destination, in its payload [COLL-033]. */
    static final int IMM_REGION = 3;
    /** Bytes of a region grant's payload, and of every receive buffer [COLL-004, COLL-033]. */
    static final int CONTROL_BYTES = 32;
    static final int LENGTH_BITS = 24;
    static final int LENGTH_MASK = (1 << LENGTH_BITS) - 1;
    static final int SEQ_MASK = 0x3F;
    static final long GRANT_MASK = (1L << 30) - 1;
    /** Largest chunk the immediate's length field can describe (bit 23 marks a piggybacked grant, COLL-035). */
    static final int MAX_CHUNK_BYTES = PiggybackGrant.FLAG - 8;

    /**
     * INVOKER: operations that send at most this many bytes run their step inside the device's duty
     * cycle, larger ones after it (see {@link #run}).
     */
    static final long IN_CYCLE_SEND_BYTES = 64 << 10;
    /**
     * INVOKER: the same for Rabenseifner's all-reduce, whose steps halve and double the vector (a
     * few exchanges, no pipeline of chunks on one link): up to 128 KiB sent, its 64 KiB all-reduce on
     * 4 to 8 ranks. Same minutes, 4 ranks pinned on 2 cores far apart, in the cycle against after
     * it: 64 KiB 0.90-0.97 of the time in five pairs; 256 KiB-4 MiB 0.93-1.03 (no gain), 8 and 32
     * MiB 1.04-1.08 (docs/collectives.md, "The step inside the duty cycle for Rabenseifner").
     */
    static final long IN_CYCLE_SEND_BYTES_HALVING = 128 << 10;
    private static final long WR_GRANT = 1L << 62;
    private static final long WR_DATA = 1L << 61;
    private static final int RECV_INDEX_SHIFT = 16;

    /** @return the work request id of receive buffer {@code index} of the link to {@code peer} */
    static long recvWrId(final int peer, final int index) {
        return ((long) index << RECV_INDEX_SHIFT) | peer;
    }

    final int rank;
    final int size;
    final Link[] links;
    private final Int2ObjectHashMap<Link> byQpn = new Int2ObjectHashMap<>();
    private final CompletionQueue cq;
    private final WorkCompletion[] wcs = new WorkCompletion[64];
    private final WorkRequestPoster ring;
    private final SendRequest wr = new SendRequest(1);
    private final RecvRequest rr = new RecvRequest(1);
    /** A view of one control buffer (a region grant being read or written), big-endian on the wire. */
    private final org.agrona.concurrent.UnsafeBuffer control = new org.agrona.concurrent.UnsafeBuffer(0, 0);
    private final IdleStrategy idle;
    private final long opTimeoutNs;
    final int chunkBytes;
    /** Send queue depth of every link's queue pair. */
    final int sqDepth;
    /**
     * Posted inline and unsignaled, a link's data WRITEs go with a signaled one at least every so
     * many requests, so the send queue never fills with requests whose completion is unknown
     * [COLL-038].
     */
    private final int signalEvery;
    /** INVOKER: the device's inline limit; a send whose chunks all fit is inline [COLL-038]. 0 otherwise. */
    private final int inlineBytes;
    /** The INVOKER device this thread drives, or null when a driver thread owns it. */
    private final org.metaroce.netty.MetaRoceDevice invoker;
    private final ArrayList<Transfer> active = new ArrayList<>();
    /** {@link #step}, as the application step of an INVOKER device's duty cycle (made once: no allocation per cycle). */
    private final java.util.function.IntSupplier step = this::step;
    private volatile CollectiveException broken;
    /** What this rank did ({@link CollectiveCounter}), published in the device's counters file. */
    final org.metaroce.netty.CounterGroup counters;
    private String op = "setup";
    /** While {@link #drainSends} runs: a failed completion is recorded on its link, not thrown. */
    private boolean draining;
    /** Device and endpoint counters, appended to failures so they can be diagnosed. */
    java.util.function.Supplier<String> diagnostics = () -> "";

    Engine(final int rank, final int size, final Link[] links, final CompletionQueue cq, final WorkRequestPoster ring,
           final IdleStrategy idle, final long opTimeoutNs, final int chunkBytes, final int sqDepth,
           final org.metaroce.netty.MetaRoceDevice invoker) {
        this.invoker = invoker;
        this.rank = rank;
        this.size = size;
        this.links = links;
        this.cq = cq;
        this.ring = ring;
        this.idle = idle;
        this.opTimeoutNs = opTimeoutNs;
        this.chunkBytes = chunkBytes;
        this.sqDepth = sqDepth;
        this.signalEvery = Math.max(1, sqDepth / 2);
        // A driver thread reads the source of a post later, on its own thread: nothing is inline there.
        this.inlineBytes = invoker == null ? 0 : invoker.endpoint().config().maxInlineData();
        this.counters = new org.metaroce.netty.CounterGroup(org.metaroce.netty.CounterType.COLLECTIVES,
            "coll rank " + rank + "/" + size, rank, CollectiveCounter.names());
        for (int i = 0; i < wcs.length; i++) {
            wcs[i] = new WorkCompletion();
        }
        for (final Link l : links) {
            if (l != null) {
                byQpn.put(l.qp.qpn(), l);
            }
        }
    }

    /** @return the failure that broke the communicator, or null */
    CollectiveException broken() {
        return broken;
    }

    /** Marks the communicator broken (e.g. closed) so later operations fail at once. */
    void breakWith(final CollectiveException ex) {
        if (broken == null) {
            broken = ex;
        }
    }

    /**
     * Runs transfers to completion: every receive processed and every send's WRITEs completed or,
     * inline, posted, so the caller's buffers may be reused when this returns [COLL-010, COLL-038].
     *
     * @param name operation name for errors
     * @param transfers the plan, in the order both ends agree on
     * @throws CollectiveException on a failed completion, a protocol violation or the timeout
     */
    void run(final String name, final Plan transfers) {
        run(name, transfers, IN_CYCLE_SEND_BYTES);
    }

    /**
     * As {@link #run(String, Plan)}, for a plan whose step may run inside an INVOKER device's
     * duty cycle up to {@code inCycleSendBytes} sent.
     *
     * @param name operation name for errors
     * @param transfers the plan, in the order both ends agree on
     * @param inCycleSendBytes the most bytes this rank sends for which the step runs in the cycle
     * @throws CollectiveException on a failed completion, a protocol violation or the timeout
     */
    void run(final String name, final Plan transfers, final long inCycleSendBytes) {
        final CollectiveException b = broken;
        if (b != null) {
            throw new CollectiveException(name + " on rank " + rank + ": the communicator is broken by an "
                + "earlier failure: " + b.getMessage(), name, b.peerRank(), b);
        }
        if (invoker != null && !invoker.isOwningThread()) {
            throw new IllegalStateException(name + " on rank " + rank + ": the communicator's device is in INVOKER "
                + "mode, so every operation must run on its owning thread, not " + Thread.currentThread().getName()
                + " [COLL-029]");
        }
        op = name;
        long sendBytes = 0;
        try {
            for (int i = 0; i < transfers.size(); i++) {
                final Transfer t = transfers.get(i);
                if (t.chunks == 0) {
                    continue; // both ends skip empty transfers: nothing is sent for them
                }
                final Link l = links[t.peer];
                if (l.failure != null) {
                    throw new CollectiveException(name + " on rank " + rank + " needs rank " + l.peer
                        + ", whose connection failed earlier: " + l.failure, name, l.peer, null);
                }
                if (t.isSend()) {
                    sendBytes += t.bytes;
                    t.inline = Math.min(t.bytes, t.chunkBytes) <= inlineBytes;
                    t.firstSeq = l.sendPlanned;
                    l.sendPlanned += t.chunks;
                    l.sends.addLast(t);
                } else {
                    t.firstSeq = l.recvPlanned;
                    l.recvPlanned += t.chunks;
                    l.recvs.addLast(t);
                    if (t.placed) {
                        l.placedRecvs.add(t);
                    }
                }
                active.add(t);
            }
            // INVOKER, short operations: the step runs inside the device's duty cycle, between its
            // read and its send, so what it posts on a chunk just read (the next hop's WRITE, a
            // grant) leaves in that cycle, not after another read of the socket in the next one,
            // and the acknowledgements of the last chunks leave in the cycle that read them, not in
            // a cycle of their own. Such a cycle's read stops at the first datagram that completes
            // a work request, which costs a pipelined ring of many packets more cycles: same-JVM
            // A/B on 4 ranks sharing 2 cores, 0.92-0.98 of the time from 8 B to 8 KiB, 0.93-1.0 at
            // 32 KiB, but 1.06-1.17 for the ring at 128 KiB (docs/collectives.md, 2026-12-04).
            final boolean inCycle = invoker != null && sendBytes <= inCycleSendBytes;
            final long deadline = System.nanoTime() + opTimeoutNs;
            idle.reset();
            while (true) {
                final int work = invoker == null ? step() : inCycle ? drive(name) : driveThenStep(name);
                final WorkRequestPoster.Refusal postError = ring.refusal();
                if (postError != null) {
                    throw fail(new CollectiveException(name + " on rank " + rank + ": " + postError, name, -1, null));
                }
                if (allDone() && (invoker == null || drained())) {
                    if (invoker != null && !inCycle) {
                        drive(name, null); // flushes the acknowledgements of what this loop consumed last
                    }
                    counters.increment(CollectiveCounter.OPERATIONS.ordinal());
                    break;
                }
                if (work == 0) {
                    final long now = System.nanoTime();
                    if (now - deadline > 0) {
                        throw fail(timeout(name));
                    }
                    if (invoker == null || invoker.nextDeadlineNs() - now > 0) {
                        idle.idle();
                    }
                } else {
                    idle.reset();
                }
            }
        } catch (final CollectiveException ex) {
            throw fail(ex);
        } finally {
            active.clear();
            for (final Link l : links) {
                if (l != null) {
                    l.sends.clear();
                    l.recvs.clear();
                    l.placedRecvs.clear();
                    l.placedCursor = 0;
                }
            }
        }
    }

    /**
     * INVOKER: one duty cycle of the device with {@link #step} between its read and its send (its
     * reads, the step, its timers and sends).
     */
    private int drive(final String name) {
        return drive(name, step);
    }

    /** INVOKER: one duty cycle of the device (its reads, timers and sends), then {@link #step}. */
    private int driveThenStep(final String name) {
        return drive(name, null) + step();
    }

    /** INVOKER: one duty cycle, with {@code application} between its read and its send unless null. */
    private int drive(final String name, final java.util.function.IntSupplier application) {
        if (invoker.isClosed()) {
            throw new CollectiveException(name + " on rank " + rank + ": the device is closed", name, -1, null);
        }
        return application == null ? invoker.doWork() : invoker.doWork(application);
    }

    /**
     * One step of the operation: reap completions, process arrived chunks, grant regions and slots,
     * post what grants and dependencies allow, and hand the posts to the device.
     *
     * @return the work done (0 when nothing moved)
     */
    private int step() {
        int work = poll();
        for (final Link l : links) {
            if (l != null) {
                // Sends before the grant: a short chunk to the peer carries the grant [COLL-035].
                work += progressRecvs(l) + progressRegions(l) + progressSends(l) + progressGrant(l);
            }
        }
        ring.flush();
        return work;
    }

    /**
     * INVOKER: whether every grant this rank posted has been acknowledged. Nobody drives the device
     * between operations, so an operation returns only once its grants have left (a peer waiting
     * for a slot would otherwise wait for this rank's next call) [COLL-029]. Inline data WRITEs are
     * not waited for: their bytes were copied at post, and the next operation retransmits them if
     * need be [COLL-038].
     */
    private boolean drained() {
        for (final Link l : links) {
            if (l != null && l.sqCompleted < l.grantsPosted && l.failure == null) {
                return false;
            }
        }
        return true;
    }

    /**
     * Close without {@code finish} [COLL-039]: drives the device (INVOKER) or waits for its driver
     * until every data chunk this rank posted is known to have reached its peer, so that chunks an
     * operation did not wait for (inline ones, COLL-038) are not lost when the connections go. A
     * link is settled when all its chunks are known complete (a signaled completion, or an empty
     * send queue), or when its connection failed. Failed completions are recorded, not thrown, and
     * judged at the end: a connection that ended with WR_FLUSH_ERR alone was ended by the peer
     * (it closed its communicator, which it does after its last operation, so it needs nothing
     * more from this rank); any other error leaves chunks not known to have arrived.
     *
     * @param timeoutNs how long to wait at most
     * @throws CollectiveException naming the peer when chunks to it may be lost (its connection
     *     failed with an error other than WR_FLUSH_ERR) or are still unacknowledged at the timeout
     */
    void drainSends(final long timeoutNs) {
        final String name = "close";
        op = name;
        draining = true;
        try {
            final long deadline = System.nanoTime() + timeoutNs;
            idle.reset();
            while (true) {
                int work = 0;
                if (invoker != null) {
                    if (invoker.isClosed()) {
                        break; // the device is gone: nothing more can be sent or acknowledged
                    }
                    work += invoker.doWork();
                }
                int n;
                while ((n = poll()) > 0) {
                    work += n;
                }
                ring.flush();
                if (sendsSettled()) {
                    break;
                }
                if (work == 0) {
                    final long now = System.nanoTime();
                    if (now - deadline > 0) {
                        throw new CollectiveException(unsettled(name + " on rank " + rank + " timed out after "
                            + TimeUnit.NANOSECONDS.toMillis(timeoutNs) + " ms:", false)
                            + " (a peer died, hangs, or does not drive its device) [COLL-039]", name,
                            firstUnsettledPeer(false), null);
                    }
                    if (invoker == null || invoker.nextDeadlineNs() - now > 0) {
                        idle.idle();
                    }
                } else {
                    idle.reset();
                }
            }
        } finally {
            draining = false;
        }
        final int lostTo = firstUnsettledPeer(true);
        if (lostTo >= 0) {
            throw new CollectiveException(unsettled(name + " on rank " + rank + ":", true) + " [COLL-039]", name,
                lostTo, null);
        }
    }

    /** @return whether every link's chunks are known complete, or its connection failed */
    private boolean sendsSettled() {
        for (final Link l : links) {
            if (l != null && l.failure == null && l.sendDone < l.sent
                // Unsignaled chunks complete silently: an empty send queue says they all did. Only
                // the owning thread may ask; with a driver thread every chunk is signaled anyway.
                && (invoker == null || l.qp.outstandingSends() > 0)) {
                return false;
            }
        }
        return true;
    }

    /**
     * @param lost true: links whose connection failed with chunks not known to have arrived (an
     *     error other than WR_FLUSH_ERR); false: links with chunks still unacknowledged
     * @return the first such link's peer, or -1
     */
    private int firstUnsettledPeer(final boolean lost) {
        for (final Link l : links) {
            if (l != null && isUnsettled(l, lost)) {
                return l.peer;
            }
        }
        return -1;
    }

    private boolean isUnsettled(final Link l, final boolean lost) {
        if (l.sendDone >= l.sent) {
            return false;
        }
        if (lost) {
            return l.failure != null && l.failedWith != WcStatus.WR_FLUSH_ERR;
        }
        return l.failure == null && (invoker == null || !invoker.isClosed() && l.qp.outstandingSends() > 0);
    }

    private String unsettled(final String head, final boolean lost) {
        final StringBuilder sb = new StringBuilder(head);
        for (final Link l : links) {
            if (l != null && isUnsettled(l, lost)) {
                sb.append(" up to ").append(l.sent - l.sendDone).append(" chunk(s) posted to rank ").append(l.peer)
                    .append(lost ? " may be lost: " + l.failure : " not acknowledged").append(';');
            }
        }
        return sb.toString();
    }

    private CollectiveException fail(final CollectiveException ex) {
        if (broken == null) {
            // Counted once: fail() may see the same failure again on its way out of run().
            counters.increment(CollectiveCounter.OPERATIONS_FAILED.ordinal());
        }
        breakWith(ex);
        return ex;
    }

    private boolean allDone() {
        for (int i = 0; i < active.size(); i++) {
            final Transfer t = active.get(i);
            if (t.progressed < t.chunks) {
                return false;
            }
            if (t.isSend() && !t.inline && links[t.peer].sendDone < t.firstSeq + t.chunks) {
                return false;
            }
        }
        return true;
    }

    private CollectiveException timeout(final String name) {
        final StringBuilder sb = new StringBuilder().append(name).append(" on rank ").append(rank)
            .append(" timed out after ").append(TimeUnit.NANOSECONDS.toMillis(opTimeoutNs)).append(" ms:");
        int culprit = -1;
        for (final Link l : links) {
            if (l == null) {
                continue;
            }
            final Transfer r = l.recvs.peekFirst();
            if (r != null) {
                sb.append(" waiting for data from rank ").append(l.peer).append(" (chunk ").append(r.progressed + 1)
                    .append(" of ").append(r.chunks).append(");");
                culprit = culprit < 0 ? l.peer : culprit;
            }
            final Transfer s = l.sends.peekFirst();
            if (s != null && l.sent >= l.granted) {
                sb.append(" waiting for a slot grant from rank ").append(l.peer).append(';');
                culprit = culprit < 0 ? l.peer : culprit;
            } else if (s != null && s.placed && l.regionCount == 0) {
                sb.append(" waiting for a region grant from rank ").append(l.peer).append(" [COLL-033];");
                culprit = culprit < 0 ? l.peer : culprit;
            }
            if (l.sendDone < l.awaited) {
                sb.append(" waiting for rank ").append(l.peer).append(" to acknowledge ").append(l.awaited - l.sendDone)
                    .append(" chunk(s);");
                culprit = culprit < 0 ? l.peer : culprit;
            }
        }
        sb.append(" (a peer died, hangs, or called a different operation)");
        return new CollectiveException(sb.toString(), name, culprit, null);
    }

    private int poll() {
        final int n = cq.poll(wcs, wcs.length);
        for (int i = 0; i < n; i++) {
            onCompletion(wcs[i]);
        }
        return n;
    }

    private void onCompletion(final WorkCompletion wc) {
        final Link l = byQpn.get(wc.qpNum());
        if (l == null) {
            return; // a queue pair of another user of the device
        }
        if (wc.status() != WcStatus.SUCCESS) {
            if (l.failedWith == null || l.failedWith == WcStatus.WR_FLUSH_ERR) {
                l.failedWith = wc.status();
            }
            if (l.failure == null) {
                final String hint = wc.status() == WcStatus.RETRY_EXC_ERR ? " (rank " + l.peer + " stopped answering)"
                    : wc.status() == WcStatus.WR_FLUSH_ERR ? " (the connection to rank " + l.peer
                    + " is in error: the peer died or closed its communicator)" : "";
                l.failure = (wc.opcode() == WcOpcode.RECV || wc.opcode() == WcOpcode.RECV_RDMA_WITH_IMM ? "receive"
                    : "send") + " to/from rank " + l.peer + " failed: " + wc.status() + hint + diagnostics.get();
            }
            // A peer that finished and closed its communicator breaks only the operations that still
            // need it; this one fails if it does, or if a data WRITE failed: an inline one of an
            // earlier operation, which did not wait for it, fails the operation that reaps it
            // [COLL-038]. Not when the connection ended with WR_FLUSH_ERR alone: the peer
            // disconnected, which it does once its last operation, and so every chunk it needed
            // from this rank, has arrived (a rank that closes right after its last operation held
            // the ACK of this rank's last inline chunk, or lost it) [COLL-039]. After any other
            // error on the connection a failed data WRITE fails it as before, and the close
            // reports chunks that may be lost.
            final boolean dataLost = (wc.wrId() & WR_DATA) != 0 && l.failedWith != WcStatus.WR_FLUSH_ERR;
            if (!draining && (l.inUse() || dataLost)) {
                throw new CollectiveException(op + " on rank " + rank + ": " + l.failure, op, l.peer, null);
            }
            return;
        }
        if (wc.opcode() == WcOpcode.RECV_RDMA_WITH_IMM || wc.opcode() == WcOpcode.RECV) {
            onReceive(l, wc);
            return;
        }
        // Only signaled requests complete; each one's completion completes every request before it.
        if (!l.completedSignaled()) {
            throw new CollectiveException(op + " on rank " + rank + ": a send completion (wr_id " + wc.wrId()
                + ") from the connection to rank " + l.peer + " for no signaled request [COLL-038]", op, l.peer, null);
        }
    }

    private void onReceive(final Link l, final WorkCompletion wc) {
        if ((wc.wcFlags() & WorkCompletion.WC_WITH_IMM) == 0) {
            throw new CollectiveException(op + " on rank " + rank + ": rank " + l.peer
                + " sent a message without immediate data [COLL-007]", op, l.peer, null);
        }
        final int imm = wc.immData();
        final int type = imm >>> 30;
        final int index = (int) (wc.wrId() >>> RECV_INDEX_SHIFT);
        if (type == IMM_DATA || type == IMM_PLACED) {
            final int seq = (imm >>> LENGTH_BITS) & SEQ_MASK;
            if (seq != (int) (l.arrived & SEQ_MASK) || l.arrived - l.consumed >= l.localSlots) {
                throw new CollectiveException(op + " on rank " + rank + ": rank " + l.peer + " wrote chunk sequence "
                    + seq + " where " + (l.arrived & SEQ_MASK) + " was due, or into a slot it was not granted "
                    + "[COLL-008]", op, l.peer, null);
            }
            final int position = (int) (l.arrived % l.localSlots);
            l.slotLength[position] = PiggybackGrant.length(imm);
            if (type == IMM_DATA) {
                l.granted = PiggybackGrant.apply(imm, l.granted);
            }
            l.slotPlaced[position] = type == IMM_PLACED;
            l.arrived++;
        } else if (type == IMM_GRANT) {
            l.granted += ((imm & GRANT_MASK) - l.granted) & GRANT_MASK;
        } else {
            onRegionGrant(l, wc, index);
            l.granted += ((imm & GRANT_MASK) - l.granted) & GRANT_MASK;
        }
        rr.clear().wrId(wc.wrId()).addSge(l.controlBase + (long) index * CONTROL_BYTES, CONTROL_BYTES, l.controlLkey);
        ring.postRecv(l.qp, rr);
    }

    /** Queues the region a region grant names for this rank's placed chunks [COLL-033]. */
    private void onRegionGrant(final Link l, final WorkCompletion wc, final int index) {
        if (wc.byteLen() != CONTROL_BYTES) {
            throw new CollectiveException(op + " on rank " + rank + ": rank " + l.peer + " sent a region grant of "
                + wc.byteLen() + " bytes, not " + CONTROL_BYTES + " [COLL-033]", op, l.peer, null);
        }
        control.wrap(l.controlBase + (long) index * CONTROL_BYTES, CONTROL_BYTES);
        final long first = control.getLong(0, java.nio.ByteOrder.BIG_ENDIAN);
        final int chunks = control.getInt(8, java.nio.ByteOrder.BIG_ENDIAN);
        final int rkey = control.getInt(12, java.nio.ByteOrder.BIG_ENDIAN);
        final long address = control.getLong(16, java.nio.ByteOrder.BIG_ENDIAN);
        final long bytes = control.getLong(24, java.nio.ByteOrder.BIG_ENDIAN);
        final int capacity = l.regionFirst.length;
        final long expected = l.regionCount > 0 ? l.regionFirst[(l.regionHead + l.regionCount - 1) % capacity]
            + l.regionChunks[(l.regionHead + l.regionCount - 1) % capacity] : l.sent;
        if (chunks <= 0 || bytes <= 0 || bytes > (long) chunks * chunkBytes || first < expected
            || l.regionCount == capacity) {
            throw new RankDisagreementException(op + " on rank " + rank + ": rank " + l.peer + " granted a malformed region "
                + "(chunks " + first + ".." + (first + chunks - 1) + ", " + bytes + " bytes; chunk " + expected
                + " or later was due, " + l.regionCount + " regions pending): the ranks disagree on the operation's "
                + "arguments, the order of calls or the latency threshold [COLL-033]", op, l.peer, null);
        }
        final int at = (l.regionHead + l.regionCount) % capacity;
        l.regionFirst[at] = first;
        l.regionChunks[at] = chunks;
        l.regionRkey[at] = rkey;
        l.regionAddress[at] = address;
        l.regionBytes[at] = bytes;
        l.regionCount++;
    }

    private int progressRecvs(final Link l) {
        int work = 0;
        Transfer t;
        while ((t = l.recvs.peekFirst()) != null && l.arrived > l.consumed) {
            final int j = t.progressed;
            if (t.dependsOn != null && t.dependsOn.progressed <= j) {
                break; // the operand is the result of an earlier receive
            }
            final Transfer g = t.guard;
            if (g != null && (g.firstSeq < 0 || g.progressed <= j
                || !g.inline && links[g.peer].sendDone <= g.firstSeq + j)) {
                break; // the destination is still the source of an unacknowledged WRITE (inline: of none, COLL-038)
            }
            final int slot = (int) (l.consumed % l.localSlots);
            final int length = t.chunkLength(j);
            if (l.slotLength[slot] != length) {
                throw new RankDisagreementException(op + " on rank " + rank + ": rank " + l.peer + " sent a chunk of "
                    + l.slotLength[slot] + " bytes where " + length + " were expected: the ranks disagree on the "
                    + "operation's arguments (count, type, root) or on the order of calls [COLL-009]", op, l.peer, null);
            }
            if (l.slotPlaced[slot] != t.placed) {
                throw new RankDisagreementException(op + " on rank " + rank + ": rank " + l.peer + " wrote a chunk "
                    + (l.slotPlaced[slot] ? "into a region" : "into a slot") + " where " + (t.placed ? "a region"
                    : "a slot") + " was due: the ranks disagree on the operation's arguments (count, type, root), "
                    + "the order of calls or the latency threshold [COLL-034]", op, l.peer, null);
            }
            final long src = l.localBase + (long) slot * chunkBytes;
            final long dst = t.address + t.chunkOffset(j);
            if (t.staged()) {
                Reductions.copy(t.regionAddress + t.chunkOffset(j), dst, length); // the guard allowed it above
            } else if (t.placed) {
                // already in place: the WRITE went straight to the destination [COLL-034]
            } else if (t.kind == Transfer.Kind.RECV_COPY) {
                Reductions.copy(src, dst, length);
            } else if (t.kind == Transfer.Kind.RECV_DISCARD) {
                // the wire baseline: nothing to do with the bytes [COLL-030]
            } else {
                Reductions.reduce(t.type, t.reduceOp, dst, t.operand + t.chunkOffset(j), src, length / t.type.size());
            }
            counters.increment(t.placed ? CollectiveCounter.CHUNKS_RECEIVED_PLACED.ordinal()
                : CollectiveCounter.CHUNKS_RECEIVED_SLOT.ordinal());
            l.consumed++;
            t.progressed++;
            if (t.progressed == t.chunks) {
                l.recvs.pollFirst();
            }
            work++;
        }
        return work;
    }

    /**
     * Grants the sender regions of placed receives' destinations, in stream order, for chunks
     * inside the grant window (below {@code consumed + S}) whose destination is free (their guard
     * chunk has completed); each region grant also carries the cumulative grant [COLL-033].
     */
    private int progressRegions(final Link l) {
        int work = 0;
        while (l.placedCursor < l.placedRecvs.size() && l.sqPosted - l.sqCompleted < sqDepth) {
            final Transfer t = l.placedRecvs.get(l.placedCursor);
            if (t.regionGranted == t.chunks) {
                l.placedCursor++;
                continue;
            }
            final long due = l.consumed + l.localSlots;
            long limit = Math.min(t.chunks, due - t.firstSeq);
            final Transfer g = t.staged() ? null : t.guard; // staging memory is free at once
            if (g != null) {
                // Inline: the bytes were copied at post, the source is free once posted [COLL-038].
                final long completed = g.inline ? g.progressed : Math.min(g.progressed, links[g.peer].sendDone - g.firstSeq);
                limit = Math.min(limit, completed);
            }
            if (limit <= t.regionGranted) {
                break;
            }
            final int from = t.regionGranted;
            final int chunks = (int) limit - from;
            final long offset = t.chunkOffset(from);
            final long bytes = Math.min(t.bytes - offset, (long) chunks * chunkBytes);
            final long buffer = l.controlOutBase + (l.regionsPosted % sqDepth) * CONTROL_BYTES;
            control.wrap(buffer, CONTROL_BYTES);
            control.putLong(0, t.firstSeq + from, java.nio.ByteOrder.BIG_ENDIAN);
            control.putInt(8, chunks, java.nio.ByteOrder.BIG_ENDIAN);
            control.putInt(12, t.rkey, java.nio.ByteOrder.BIG_ENDIAN);
            control.putLong(16, t.regionAddress + offset, java.nio.ByteOrder.BIG_ENDIAN);
            control.putLong(24, bytes, java.nio.ByteOrder.BIG_ENDIAN);
            l.grantsAnnounced = due;
            wr.clear().wrId(WR_GRANT | l.peer).opcode(WrOpcode.SEND_WITH_IMM).sendFlags(SendFlags.SIGNALED)
                .immData((IMM_REGION << 30) | (int) (due & GRANT_MASK)).addSge(buffer, CONTROL_BYTES, l.controlLkey);
            ring.postSend(l.qp, wr);
            l.sqPosted++;
            l.grantsPosted = l.sqPosted;
            l.postedSignaled();
            l.regionsPosted++;
            counters.increment(CollectiveCounter.REGION_GRANTS_SENT.ordinal());
            t.regionGranted = (int) limit;
            work++;
        }
        return work;
    }

    /**
     * Announces freed slots to the peer as one cumulative grant [COLL-006], but only once half the
     * slots are free again or the peer has used every slot it was told of: otherwise the grant rides
     * on this rank's next short chunk to the peer for free [COLL-035], and the peer still has slots.
     */
    private int progressGrant(final Link l) {
        final long due = l.consumed + l.localSlots;
        if (due == l.grantsAnnounced || l.sqPosted - l.sqCompleted >= sqDepth) {
            return 0;
        }
        final int batch = Math.max(Math.min(2, l.localSlots), (l.localSlots + 1) / 2);
        if (due - l.grantsAnnounced < batch && l.arrived < l.grantsAnnounced) {
            return 0;
        }
        l.grantsAnnounced = due;
        counters.increment(CollectiveCounter.GRANT_MESSAGES_SENT.ordinal());
        wr.clear().wrId(WR_GRANT | l.peer).opcode(WrOpcode.SEND_WITH_IMM).sendFlags(SendFlags.SIGNALED)
            .immData((IMM_GRANT << 30) | (int) (due & GRANT_MASK));
        ring.postSend(l.qp, wr);
        l.sqPosted++;
        l.grantsPosted = l.sqPosted;
        l.postedSignaled();
        return 1;
    }

    private int progressSends(final Link l) {
        int work = 0;
        Transfer t;
        while ((t = l.sends.peekFirst()) != null && l.sent < l.granted && l.sqPosted - l.sqCompleted < sqDepth) {
            final int j = t.progressed;
            if (t.dependsOn != null && t.dependsOn.progressed <= j) {
                break;
            }
            final int length = t.chunkLength(j);
            final int capacity = l.regionFirst.length;
            final long remote;
            final int rkey;
            final int type;
            if (t.placed) {
                if (l.regionCount == 0) {
                    break; // the receiver has not granted where this chunk goes yet [COLL-033]
                }
                final int h = l.regionHead;
                final long first = l.regionFirst[h];
                final long offset = (l.sent - first) * chunkBytes;
                if (l.sent < first || offset + length > l.regionBytes[h]) {
                    throw new RankDisagreementException(op + " on rank " + rank + ": rank " + l.peer + " granted a region "
                        + "for chunks " + first + ".." + (first + l.regionChunks[h] - 1) + " (" + l.regionBytes[h]
                        + " bytes) where chunk " + l.sent + " of " + length + " bytes is due: the ranks disagree on the "
                        + "operation's arguments or on the order of calls [COLL-034]", op, l.peer, null);
                }
                remote = l.regionAddress[h] + offset;
                rkey = l.regionRkey[h];
                type = IMM_PLACED;
                if (l.sent + 1 == first + l.regionChunks[h]) {
                    l.regionHead = (h + 1) % capacity;
                    l.regionCount--;
                }
            } else {
                if (l.regionCount > 0 && l.regionFirst[l.regionHead] <= l.sent) {
                    throw new RankDisagreementException(op + " on rank " + rank + ": rank " + l.peer + " granted a region "
                        + "for chunk " + l.sent + ", which this rank writes into a slot: the ranks disagree on the "
                        + "operation's arguments or on the order of calls [COLL-034]", op, l.peer, null);
                }
                remote = l.remoteBase + (l.sent % l.remoteSlots) * (long) chunkBytes;
                rkey = l.remoteRkey;
                type = IMM_DATA;
            }
            int low = length;
            if (type == IMM_DATA && length < PiggybackGrant.MAX_LENGTH) {
                final long due = l.consumed + l.localSlots;
                low = PiggybackGrant.encode(length, due);
                l.grantsAnnounced = due;
            }
            // Inline (INVOKER, COLL-038): the post copies the bytes, and the WRITE is signaled only
            // when signalEvery requests have gone since the last signaled one, so that a full send
            // queue always holds a request whose completion will come.
            final boolean signaled = !t.inline || l.sqPosted + 1 - l.lastSignaled >= signalEvery;
            wr.clear().wrId(WR_DATA | l.peer).opcode(WrOpcode.RDMA_WRITE_WITH_IMM)
                .sendFlags((t.inline ? SendFlags.INLINE : 0) | (signaled ? SendFlags.SIGNALED : 0))
                .immData((type << 30) | ((int) (l.sent & SEQ_MASK) << LENGTH_BITS) | low)
                .addSge(t.address + t.chunkOffset(j), length, t.lkey).remoteAddr(remote).rkey(rkey);
            ring.postSend(l.qp, wr);
            l.sqPosted++;
            l.sent++;
            if (!t.inline) {
                l.awaited = l.sent;
            }
            if (signaled) {
                l.postedSignaled();
            }
            counters.increment(CollectiveCounter.CHUNKS_SENT.ordinal());
            counters.add(CollectiveCounter.CHUNK_BYTES_SENT.ordinal(), length);
            t.progressed++;
            if (t.progressed == t.chunks) {
                l.sends.pollFirst();
            }
            work++;
        }
        return work;
    }
}
