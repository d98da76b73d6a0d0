package org.metaroce.core.engine;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.metaroce.core.reliability.ReceiveWindow;
import org.metaroce.core.verbs.AccessFlags;
import org.metaroce.core.verbs.MemoryAccessResult;
import org.metaroce.core.verbs.MemoryRegion;
import org.metaroce.core.verbs.PostStatus;
import org.metaroce.core.verbs.RecvRequest;
import org.metaroce.core.verbs.ScatterGatherEntry;
import org.metaroce.core.verbs.WcOpcode;
import org.metaroce.core.verbs.WcStatus;
import org.metaroce.core.verbs.WorkCompletion;
import org.metaroce.core.wire.AckHeader;
import org.metaroce.core.wire.AtomicHeader;
import org.metaroce.core.wire.BaseHeader;
import org.metaroce.core.wire.Flags;
import org.metaroce.core.wire.ImmediateHeader;
import org.metaroce.core.wire.MessageHeader;
import org.metaroce.core.wire.NackReason;
import org.metaroce.core.wire.Opcode;
import org.metaroce.core.wire.RdmaHeader;
import org.metaroce.core.wire.WireConstants;

/**
 * The receiving half of a queue pair (specification sections 5, 6 and 10): the selective-repeat
 * receive window, placement of every packet straight into its target memory in whatever order it
 * arrives, receive completions in post order, READ responses, exactly-once atomics, and the
 * ACK/NACK stream back to the requester.
 */
final class Responder {
    private final QueuePair qp;
    private final EndpointCounters counters;
    private final EndpointConfig config;

    private final ReceiveWindow window;
    private final RecvWqe[] recvRing;
    /** RSN of the oldest receive not yet completed; the ring holds RSNs head..head+posted-1. */
    private int recvHeadRsn;
    private int recvPosted;

    // Acknowledgement state.
    private boolean ackPending;
    private boolean ackNow;
    private int unackedPackets;
    private long ackDeadlineNs = Long.MAX_VALUE;
    private int triggerPsn;
    private int triggerTimestamp;
    private int triggerPathId;
    private long triggerArrivalNs;
    private int triggerAckFlags;
    private int ceCount;

    // NACKs waiting to go out (small ring; if it overflows the requester's timers recover).
    private static final int NACK_QUEUE = 16;
    private final int[] nackReason = new int[NACK_QUEUE];
    private final int[] nackPsn = new int[NACK_QUEUE];
    private final int[] nackRnrUnits = new int[NACK_QUEUE];
    private int nackHead;
    private int nackCount;
    /** The NACK that put this QP in ERR; repeated for requests that arrive afterwards. */
    private int fatalReason;
    private int fatalPsn;

    // READ responses in progress.
    private final int readJobs;
    private final int[] readPsn;
    private final MemoryRegion[] readRegion;
    private final long[] readRegionOffset;
    private final long[] readMessageOffset;
    private final long[] readMessageLength;
    private final int[] readMsn;
    private final int[] readCount;
    private final int[] readNext;
    private final long[] readBytes;
    private int readHead;
    private int readQueued;

    // Atomic responses waiting to go out, and the replay cache for retransmitted atomics.
    private final int atomicSlots;
    private final int[] atomicOutPsn;
    private final int[] atomicOutMsn;
    private final long[] atomicOutValue;
    private int atomicOutHead;
    private int atomicOutCount;
    private final int[] cachePsn;
    private final int[] cacheMsn;
    private final long[] cacheValue;
    private final boolean[] cacheValid;
    private int cacheNext;

    Responder(final QueuePair qp, final int recvQueueDepth, final int maxRecvSge, final int maxDestRdAtomic,
              final EndpointConfig config, final EndpointCounters counters) {
        this.qp = qp;
        this.config = config;
        this.counters = counters;
        window = new ReceiveWindow(config.receiveWindowPackets(), 0);
        recvRing = new RecvWqe[recvQueueDepth];
        for (int i = 0; i < recvQueueDepth; i++) {
            recvRing[i] = new RecvWqe(maxRecvSge);
            recvRing[i].reset();
        }
        readJobs = Math.max(4, 2 * maxDestRdAtomic);
        readPsn = new int[readJobs];
        readRegion = new MemoryRegion[readJobs];
        readRegionOffset = new long[readJobs];
        readMessageOffset = new long[readJobs];
        readMessageLength = new long[readJobs];
        readMsn = new int[readJobs];
        readCount = new int[readJobs];
        readNext = new int[readJobs];
        readBytes = new long[readJobs];
        atomicSlots = Math.max(4, 2 * maxDestRdAtomic);
        atomicOutPsn = new int[atomicSlots];
        atomicOutMsn = new int[atomicSlots];
        atomicOutValue = new long[atomicSlots];
        cachePsn = new int[atomicSlots];
        cacheMsn = new int[atomicSlots];
        cacheValue = new long[atomicSlots];
        cacheValid = new boolean[atomicSlots];
    }

    void start(final int expectedPsn) {
        window.reset(expectedPsn);
    }

    ReceiveWindow window() {
        return window;
    }

    int postedReceives() {
        return recvPosted;
    }

    // ------------------------------------------------------------------ posting

    int postRecv(final RecvRequest wr) {
        if (recvPosted >= recvRing.length) {
            return PostStatus.QUEUE_FULL;
        }
        final RecvWqe wqe = recvRing[Integer.remainderUnsigned(recvHeadRsn + recvPosted, recvRing.length)];
        wqe.reset();
        wqe.wrId = wr.wrId();
        final int n = wr.numSge();
        long capacity = 0;
        for (int i = 0; i < n; i++) {
            final ScatterGatherEntry sge = wr.sge(i);
            wqe.sgeAddr[i] = sge.addr();
            wqe.sgeLength[i] = sge.length();
            wqe.sgeRegion[i] = qp.pd().lookupLkey(sge.lkey());
            capacity += sge.length();
        }
        wqe.numSge = n;
        wqe.capacity = capacity;
        recvPosted++;
        return PostStatus.OK;
    }

    private RecvWqe receiveFor(final int rsn) {
        final int d = rsn - recvHeadRsn;
        if (d < 0 || d >= recvPosted) {
            return null;
        }
        return recvRing[Integer.remainderUnsigned(rsn, recvRing.length)];
    }

    // ------------------------------------------------------------------ requests

    /**
     * Handles one validated request packet addressed to this QP.
     */
    void onRequest(final long nowNs, final DirectBuffer buffer, final int offset, final Opcode opcode, final int ecn) {
        final int psn = BaseHeader.psn(buffer, offset);
        final int flags = BaseHeader.flags(buffer, offset);
        final int payloadLength = BaseHeader.payloadLength(buffer, offset);
        final boolean ce = ecn == DatagramEndpoint.ECN_CE;
        if (ce) {
            ceCount++;
        }
        if ((flags & Flags.TRIMMED) != 0) {
            if (window.classify(psn) == ReceiveWindow.NEW) {
                queueNack(NackReason.TRIMMED, psn, 0);
                counters.increment(EndpointCounter.NACKS_OUT_TRIMMED);
            }
            return;
        }
        if (payloadLength > qp.pathMtu()) {
            counters.increment(EndpointCounter.DROP_BAD_LENGTH);
            return;
        }
        if (opcode == Opcode.READ_REQUEST) {
            onReadRequest(nowNs, buffer, offset, psn, flags, ce);
            return;
        }
        final int cls = window.classify(psn);
        if (cls == ReceiveWindow.BEYOND_WINDOW) {
            queueNack(NackReason.PSN_WINDOW, psn, 0);
            counters.increment(EndpointCounter.NACKS_OUT_PSN_WINDOW);
            return;
        }
        if (cls == ReceiveWindow.DUPLICATE) {
            counters.increment(EndpointCounter.DUPLICATE_REQUESTS);
            if (opcode == Opcode.FETCH_ADD || opcode == Opcode.CMP_SWAP) {
                replayAtomic(psn);
            }
            noteTrigger(nowNs, buffer, offset, psn, ce, true);
            ackNow = true;
            return;
        }
        final int msg = offset + opcode.msgOffset();
        final long messageOffset = MessageHeader.messageOffset(buffer, msg);
        final long messageLength = MessageHeader.messageLength(buffer, msg);
        final int payloadOffset = offset + opcode.headerLength();
        switch (opcode) {
            case SEND, SEND_WITH_IMM -> {
                final RecvWqe recv = receiveFor(MessageHeader.rsn(buffer, msg));
                if (recv == null) {
                    rnr(psn);
                    return;
                }
                if (!matchReceive(recv, opcode, buffer, offset, messageLength, psn)) {
                    return;
                }
                recv.scatter(messageOffset, buffer, payloadOffset, payloadLength);
                recv.bytesReceived += payloadLength;
                if ((flags & Flags.SOLICITED) != 0) {
                    recv.solicited = true;
                }
            }
            case WRITE, WRITE_WITH_IMM -> {
                final int reth = offset + opcode.rethOffset();
                final long va = RdmaHeader.virtualAddress(buffer, reth);
                final MemoryRegion mr = checkRemote(RdmaHeader.rkey(buffer, reth), va, messageLength,
                    AccessFlags.REMOTE_WRITE, psn);
                if (mr == null) {
                    return;
                }
                RecvWqe recv = null;
                if (opcode == Opcode.WRITE_WITH_IMM) {
                    recv = receiveFor(MessageHeader.rsn(buffer, msg));
                    if (recv == null) {
                        rnr(psn);
                        return;
                    }
                    if (!matchReceive(recv, opcode, buffer, offset, 0, psn)) {
                        return;
                    }
                }
                if (payloadLength > 0) {
                    mr.buffer().putBytes((int) (mr.offsetOf(va) + messageOffset), buffer, payloadOffset, payloadLength);
                }
                if (recv != null) {
                    recv.bytesReceived += payloadLength;
                    recv.messageLength = messageLength;
                }
            }
            case FETCH_ADD, CMP_SWAP -> {
                if (!executeAtomic(buffer, offset, opcode, psn, messageLength)) {
                    return;
                }
            }
            default -> {
                counters.increment(EndpointCounter.DROP_UNEXPECTED_OPCODE);
                return;
            }
        }
        final boolean gapBefore = window.hasGap() || psn != window.expectedPsn();
        window.markReceived(psn);
        noteTrigger(nowNs, buffer, offset, psn, ce, false);
        if ((flags & Flags.ACK_REQ) != 0 || gapBefore || window.hasGap()
            || unackedPackets >= config.ackCoalescePackets() || config.ackCoalesceDelayNs() == 0) {
            ackNow = true;
        } else if (ackDeadlineNs == Long.MAX_VALUE) {
            ackDeadlineNs = nowNs + config.ackCoalesceDelayNs();
        }
        completeReceivesInOrder();
    }

    private boolean matchReceive(final RecvWqe recv, final Opcode opcode, final DirectBuffer buffer, final int offset,
                                 final long messageLength, final int psn) {
        if (!recv.matched) {
            recv.matched = true;
            recv.messageLength = messageLength;
            recv.opcode = opcode == Opcode.WRITE_WITH_IMM ? WcOpcode.RECV_RDMA_WITH_IMM : WcOpcode.RECV;
            if (opcode.immOffset() != Opcode.ABSENT) {
                recv.hasImm = true;
                recv.immData = ImmediateHeader.immediateData(buffer, offset + opcode.immOffset());
            }
        }
        if (opcode != Opcode.WRITE_WITH_IMM && messageLength > recv.capacity) {
            // The message does not fit the posted buffer: the receive fails with LOC_LEN_ERR and
            // the requester learns REM_OP_ERR [OPS spec]; nothing is placed.
            recv.tooSmall = true;
            fatal(NackReason.REMOTE_OPERATION, psn, EndpointCounter.NACKS_OUT_REMOTE_OPERATION);
            return false;
        }
        return true;
    }

    private void rnr(final int psn) {
        queueNack(NackReason.RNR, psn, (int) Math.min(255, Math.max(1, qp.minRnrTimerNs() / 10_000)));
        counters.increment(EndpointCounter.RNR_NACKS_OUT);
    }

    /**
     * Resolves and checks an rkey for a remote access to [va, va+length). The region must belong to
     * this QP's protection domain and the QP must allow the access.
     *
     * @return the region, or null after queueing a REMOTE_ACCESS NACK
     */
    private MemoryRegion checkRemote(final int rkey, final long va, final long length, final int access,
                                     final int psn) {
        final MemoryRegion mr = qp.pd().lookupRkey(rkey);
        final int result;
        if (mr == null) {
            result = MemoryAccessResult.INVALID_KEY;
        } else if ((qp.accessFlags() & access) == 0) {
            result = MemoryAccessResult.NO_PERMISSION;
        } else {
            result = mr.checkRemote(va, length, access);
        }
        if (result != MemoryAccessResult.OK) {
            fatal(NackReason.REMOTE_ACCESS, psn, EndpointCounter.NACKS_OUT_REMOTE_ACCESS);
            return null;
        }
        return mr;
    }

    private void onReadRequest(final long nowNs, final DirectBuffer buffer, final int offset, final int psn,
                               final int flags, final boolean ce) {
        final Opcode opcode = Opcode.READ_REQUEST;
        final int msg = offset + opcode.msgOffset();
        final int reth = offset + opcode.rethOffset();
        final long messageOffset = MessageHeader.messageOffset(buffer, msg);
        final long messageLength = MessageHeader.messageLength(buffer, msg);
        final long dmaLength = RdmaHeader.dmaLength(buffer, reth);
        final int mtu = qp.pathMtu();
        final int count = (int) Math.max(1, (dmaLength + mtu - 1) / mtu);
        final int lastPsn = psn + count - 1;
        if (window.classify(lastPsn) == ReceiveWindow.BEYOND_WINDOW || count > window.size() / 2) {
            queueNack(NackReason.PSN_WINDOW, psn, 0);
            counters.increment(EndpointCounter.NACKS_OUT_PSN_WINDOW);
            return;
        }
        boolean anyNew = false;
        for (int i = 0; i < count; i++) {
            if (window.classify(psn + i) == ReceiveWindow.NEW) {
                anyNew = true;
                break;
            }
        }
        if (!anyNew) {
            counters.increment(EndpointCounter.DUPLICATE_REQUESTS);
        }
        final long va = RdmaHeader.virtualAddress(buffer, reth);
        final MemoryRegion mr = checkRemote(RdmaHeader.rkey(buffer, reth), va, messageLength, AccessFlags.REMOTE_READ,
            psn);
        if (mr == null) {
            return;
        }
        if (readQueued == readJobs) {
            // Answered later: the requester's timers resend the request. Nothing is marked.
            counters.increment(EndpointCounter.DROP_RESPONDER_BUSY);
            return;
        }
        // READ is idempotent: a repeated request is simply executed again [REL spec].
        final int j = (readHead + readQueued) % readJobs;
        readPsn[j] = psn;
        readRegion[j] = mr;
        readRegionOffset[j] = mr.offsetOf(va);
        readMessageOffset[j] = messageOffset;
        readMessageLength[j] = messageLength;
        readMsn[j] = MessageHeader.msn(buffer, msg);
        readCount[j] = count;
        readNext[j] = 0;
        readBytes[j] = dmaLength;
        readQueued++;
        for (int i = 0; i < count; i++) {
            if (window.classify(psn + i) == ReceiveWindow.NEW) {
                window.markReceived(psn + i);
            }
        }
        noteTrigger(nowNs, buffer, offset, psn, ce, !anyNew);
        if (ackDeadlineNs == Long.MAX_VALUE) {
            ackDeadlineNs = nowNs + config.ackCoalesceDelayNs();
        }
    }

    private boolean executeAtomic(final DirectBuffer buffer, final int offset, final Opcode opcode, final int psn,
                                  final long messageLength) {
        final int a = offset + opcode.atomicOffset();
        final long va = AtomicHeader.virtualAddress(buffer, a);
        if (messageLength != 8) {
            fatal(NackReason.INVALID_REQUEST, psn, EndpointCounter.NACKS_OUT_INVALID_REQUEST);
            return false;
        }
        final MemoryRegion mr = checkRemote(AtomicHeader.rkey(buffer, a), va, 8, AccessFlags.REMOTE_ATOMIC, psn);
        if (mr == null) {
            return false;
        }
        if (mr.checkAtomic(va) != MemoryAccessResult.OK) {
            fatal(NackReason.INVALID_REQUEST, psn, EndpointCounter.NACKS_OUT_INVALID_REQUEST);
            return false;
        }
        if (atomicOutCount == atomicSlots) {
            counters.increment(EndpointCounter.DROP_RESPONDER_BUSY);
            return false;
        }
        final UnsafeBuffer target = mr.buffer();
        final int index = (int) mr.offsetOf(va);
        final long original;
        if (opcode == Opcode.FETCH_ADD) {
            original = target.getAndAddLong(index, AtomicHeader.swapOrAdd(buffer, a));
        } else {
            final long compare = AtomicHeader.compare(buffer, a);
            final long swap = AtomicHeader.swapOrAdd(buffer, a);
            long seen;
            do {
                seen = target.getLongVolatile(index);
            } while (seen == compare && !target.compareAndSetLong(index, compare, swap));
            original = seen;
        }
        final int msn = MessageHeader.msn(buffer, offset + opcode.msgOffset());
        cachePsn[cacheNext] = psn;
        cacheMsn[cacheNext] = msn;
        cacheValue[cacheNext] = original;
        cacheValid[cacheNext] = true;
        cacheNext = (cacheNext + 1) % atomicSlots;
        queueAtomicResponse(psn, msn, original);
        return true;
    }

    /** A retransmitted atomic is answered from the cache, never executed twice [REL spec]. */
    private void replayAtomic(final int psn) {
        for (int i = 0; i < atomicSlots; i++) {
            if (cacheValid[i] && cachePsn[i] == psn) {
                if (atomicOutCount < atomicSlots) {
                    queueAtomicResponse(psn, cacheMsn[i], cacheValue[i]);
                    counters.increment(EndpointCounter.ATOMIC_REPLAYS);
                }
                return;
            }
        }
    }

    private void queueAtomicResponse(final int psn, final int msn, final long value) {
        final int j = (atomicOutHead + atomicOutCount) % atomicSlots;
        atomicOutPsn[j] = psn;
        atomicOutMsn[j] = msn;
        atomicOutValue[j] = value;
        atomicOutCount++;
    }

    private void noteTrigger(final long nowNs, final DirectBuffer buffer, final int offset, final int psn,
                             final boolean ce, final boolean duplicate) {
        ackPending = true;
        unackedPackets++;
        triggerPsn = psn;
        triggerTimestamp = BaseHeader.timestamp(buffer, offset);
        triggerPathId = BaseHeader.pathId(buffer, offset);
        triggerArrivalNs = nowNs;
        triggerAckFlags = (ce ? AckHeader.FLAG_ECN_ECHO : 0) | (duplicate ? AckHeader.FLAG_DUPLICATE : 0);
    }

    private void queueNack(final NackReason reason, final int psn, final int rnrUnits) {
        if (nackCount == NACK_QUEUE) {
            nackHead = (nackHead + 1) % NACK_QUEUE;
            nackCount--;
        }
        final int j = (nackHead + nackCount) % NACK_QUEUE;
        nackReason[j] = reason.code();
        nackPsn[j] = psn;
        nackRnrUnits[j] = rnrUnits;
        nackCount++;
    }

    /** Sends {@code reason} for {@code psn} and moves the QP to ERR (verbs RC responder semantics). */
    private void fatal(final NackReason reason, final int psn, final EndpointCounter counter) {
        counters.increment(counter);
        queueNack(reason, psn, 0);
        fatalReason = reason.code();
        fatalPsn = psn;
        qp.enterError();
    }

    /**
     * In ERR, a responder that failed a request answers any further request with the same NACK, so
     * that a lost NACK still reaches the requester.
     */
    void onRequestInError(final DirectBuffer buffer, final int offset) {
        if (fatalReason != 0) {
            final int psn = BaseHeader.psn(buffer, offset);
            queueNack(NackReason.of(fatalReason), psn == fatalPsn ? psn : fatalPsn, 0);
        }
    }

    // ------------------------------------------------------------------ completion

    private void completeReceivesInOrder() {
        while (recvPosted > 0) {
            final RecvWqe recv = recvRing[Integer.remainderUnsigned(recvHeadRsn, recvRing.length)];
            if (!recv.isComplete()) {
                return;
            }
            final boolean pushed = push(recv, WcStatus.SUCCESS);
            recv.reset();
            recvHeadRsn++;
            recvPosted--;
            if (!pushed) {
                qp.onCompletionQueueOverflow();
                return;
            }
        }
    }

    private boolean push(final RecvWqe recv, final WcStatus status) {
        final boolean ok = qp.recvCq().push(recv.wrId, status, recv.opcode, (int) recv.messageLength,
            recv.immData, recv.hasImm ? WorkCompletion.WC_WITH_IMM : 0, qp.qpn(), qp.destQpnOrZero());
        if (!ok) {
            counters.increment(EndpointCounter.CQ_OVERFLOWS);
        }
        return ok;
    }

    /** Completes every posted receive in order: finished ones succeed, a too-small one fails, the rest flush. */
    void flush() {
        while (recvPosted > 0) {
            final RecvWqe recv = recvRing[Integer.remainderUnsigned(recvHeadRsn, recvRing.length)];
            final WcStatus status = recv.tooSmall ? WcStatus.LOC_LEN_ERR
                : recv.isComplete() ? WcStatus.SUCCESS : WcStatus.WR_FLUSH_ERR;
            if (status != WcStatus.SUCCESS) {
                recv.opcode = WcOpcode.RECV;
                recv.messageLength = recv.tooSmall ? recv.messageLength : 0;
            }
            push(recv, status);
            recv.reset();
            recvHeadRsn++;
            recvPosted--;
        }
        readQueued = 0;
        atomicOutCount = 0;
        ackPending = false;
        ackNow = false;
        ackDeadlineNs = Long.MAX_VALUE;
    }

    /** Drops all receives without completions (modify to RESET). */
    void discard() {
        for (int i = 0; i < recvPosted; i++) {
            recvRing[Integer.remainderUnsigned(recvHeadRsn + i, recvRing.length)].reset();
        }
        recvPosted = 0;
        recvHeadRsn = 0;
        readQueued = 0;
        atomicOutCount = 0;
        nackCount = 0;
        ackPending = false;
        ackNow = false;
        ackDeadlineNs = Long.MAX_VALUE;
        fatalReason = 0;
        java.util.Arrays.fill(cacheValid, false);
    }

    // ------------------------------------------------------------------ emission

    int emit(final long nowNs, final TransmitSink sink, final int budget) {
        int emitted = 0;
        while (nackCount > 0 && emitted < budget) {
            if (!emitAckOrNack(nowNs, sink, true)) {
                return emitted;
            }
            nackHead = (nackHead + 1) % NACK_QUEUE;
            nackCount--;
            emitted++;
        }
        if (ackPending && (ackNow || nowNs >= ackDeadlineNs) && emitted < budget) {
            if (!emitAckOrNack(nowNs, sink, false)) {
                return emitted;
            }
            emitted++;
        }
        while (atomicOutCount > 0 && emitted < budget) {
            if (!emitAtomicResponse(nowNs, sink)) {
                return emitted;
            }
            emitted++;
        }
        while (readQueued > 0 && emitted < budget) {
            if (!emitReadResponse(nowNs, sink)) {
                return emitted;
            }
            emitted++;
        }
        return emitted;
    }

    private boolean emitAckOrNack(final long nowNs, final TransmitSink sink, final boolean nack) {
        final Opcode opcode = nack ? Opcode.NACK : Opcode.ACK;
        final int offset = sink.claim(opcode.headerLength() + WireConstants.INTEGRITY_CHECK_LENGTH);
        if (offset == TransmitSink.NO_ROOM) {
            return false;
        }
        final MutableDirectBuffer buffer = sink.buffer();
        final PacketWriter w = qp.writer();
        final int pathId = qp.paths().next();
        final int psn = nack ? nackPsn[nackHead] : triggerPsn;
        w.header(buffer, offset, opcode, 0, qp.destQpn(), psn, 0, pathId, nowNs, qp.qpn());
        w.ack(buffer, offset, opcode).cumulativePsn(window.expectedPsn()).sackBitmap(window.sackBitmap())
            .echoedTimestamp(triggerTimestamp).ackDelay(Math.max(0, nowNs - triggerArrivalNs)).ceCount(ceCount)
            .echoedPathId(triggerPathId).ackFlags(triggerAckFlags);
        if (nack) {
            w.nack(buffer, offset, opcode).reason(nackReason[nackHead]).rnrTimer(nackRnrUnits[nackHead])
                .nackPsn(nackPsn[nackHead]);
            counters.increment(EndpointCounter.NACKS_OUT);
        } else {
            counters.increment(EndpointCounter.ACKS_OUT);
        }
        final int length = w.seal(buffer, offset, opcode, 0);
        qp.commit(sink, offset, length, qp.paths().entropy(pathId));
        ackPending = false;
        ackNow = false;
        unackedPackets = 0;
        ackDeadlineNs = Long.MAX_VALUE;
        return true;
    }

    private boolean emitAtomicResponse(final long nowNs, final TransmitSink sink) {
        final Opcode opcode = Opcode.ATOMIC_RESPONSE;
        final int offset = sink.claim(opcode.headerLength() + WireConstants.INTEGRITY_CHECK_LENGTH);
        if (offset == TransmitSink.NO_ROOM) {
            return false;
        }
        final MutableDirectBuffer buffer = sink.buffer();
        final PacketWriter w = qp.writer();
        final int pathId = qp.paths().next();
        final int j = atomicOutHead;
        w.header(buffer, offset, opcode, Flags.LAST, qp.destQpn(), atomicOutPsn[j], 0, pathId, nowNs, qp.qpn());
        w.msg(buffer, offset, opcode).msn(atomicOutMsn[j]).messageOffset(0).messageLength(8).rsn(0);
        w.aack(buffer, offset, opcode).originalData(atomicOutValue[j]);
        final int length = w.seal(buffer, offset, opcode, 0);
        qp.commit(sink, offset, length, qp.paths().entropy(pathId));
        counters.increment(EndpointCounter.ATOMIC_RESPONSES_OUT);
        atomicOutHead = (atomicOutHead + 1) % atomicSlots;
        atomicOutCount--;
        return true;
    }

    private boolean emitReadResponse(final long nowNs, final TransmitSink sink) {
        final int j = readHead;
        final int mtu = qp.pathMtu();
        final int k = readNext[j];
        final long within = (long) k * mtu;
        final int payload = (int) Math.min(mtu, readBytes[j] - within);
        final Opcode opcode = Opcode.READ_RESPONSE;
        final MemoryRegion mr = readRegion[j];
        if (!mr.isValid()) {
            // Deregistered while the READ was being answered: the requester gets REM_ACCESS_ERR.
            readHead = (readHead + 1) % readJobs;
            readQueued--;
            readRegion[j] = null;
            fatal(NackReason.REMOTE_ACCESS, readPsn[j] + k, EndpointCounter.NACKS_OUT_REMOTE_ACCESS);
            return true;
        }
        final int offset = sink.claim(opcode.headerLength() + payload + WireConstants.INTEGRITY_CHECK_LENGTH);
        if (offset == TransmitSink.NO_ROOM) {
            return false;
        }
        final MutableDirectBuffer buffer = sink.buffer();
        final PacketWriter w = qp.writer();
        final int pathId = qp.paths().next();
        final long messageOffset = readMessageOffset[j] + within;
        final int flags = messageOffset + payload == readMessageLength[j] ? Flags.LAST : 0;
        w.header(buffer, offset, opcode, flags, qp.destQpn(), readPsn[j] + k, payload, pathId, nowNs, qp.qpn());
        w.msg(buffer, offset, opcode).msn(readMsn[j]).messageOffset(messageOffset)
            .messageLength(readMessageLength[j]).rsn(0);
        if (payload > 0) {
            buffer.putBytes(offset + opcode.headerLength(), mr.buffer(), (int) (readRegionOffset[j] + messageOffset),
                payload);
        }
        final int length = w.seal(buffer, offset, opcode, payload);
        qp.commit(sink, offset, length, qp.paths().entropy(pathId));
        counters.increment(EndpointCounter.READ_RESPONSES_OUT);
        if (++readNext[j] == readCount[j]) {
            readRegion[j] = null;
            readHead = (readHead + 1) % readJobs;
            readQueued--;
        }
        return true;
    }

    long nextDeadlineNs() {
        if (nackCount > 0 || atomicOutCount > 0 || readQueued > 0 || (ackPending && ackNow)) {
            return Long.MIN_VALUE;
        }
        return ackPending ? ackDeadlineNs : Long.MAX_VALUE;
    }
}
