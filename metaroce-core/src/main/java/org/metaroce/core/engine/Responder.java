// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.engine;

import org.agrona.DirectBuffer;
import org.metaroce.core.reliability.ReceiveWindow;
import org.metaroce.core.verbs.AccessFlags;
import org.metaroce.core.verbs.MemoryRegion;
import org.metaroce.core.verbs.RecvRequest;
import org.metaroce.core.wire.AtomicHeader;
import org.metaroce.core.wire.BaseHeader;
import org.metaroce.core.wire.ConnectHeader;
import org.metaroce.core.wire.Flags;
import org.metaroce.core.wire.MessageHeader;
import org.metaroce.core.wire.NackReason;
import org.metaroce.core.wire.Opcode;
import org.metaroce.core.wire.RdmaHeader;

/**
 * The receiving half of a queue pair (specification sections 5, 6 and 10): the selective-repeat
 * receive window, placement of every packet straight into its target memory in whatever order it
 * arrives, receive completions once the cumulative PSN has passed the message [OPS-030], READs and
 * atomics executed in PSN order once everything before them has arrived [OPS-029], exactly-once
 * atomics with a replay cache [REL-047], and the ACK/NACK stream back to the requester, whose
 * timing and triggering packets the {@link AckScheduler} decides [REL-008..REL-011].
 *
 * <p>This class checks each request (window, access, and through {@link RequestChecks}
 * segmentation, rkey and receive: the steps of 6.3 that every opcode shares), has
 * {@link RequestAnswers} queue the ACK or NACK of its own a packet earns, and hands a checked READ to its {@link ReadResponder} and a checked atomic to
 * its {@link AtomicExecutor}, which hold them and write their responses. The order between the two
 * kinds [OPS-029] is {@link ExecutionOrder}'s; what is then due leaves through
 * {@link ResponderOutput} at each poll.
 */
final class Responder {
    /** The queue pair as this side sees it (not the queue pair: no pointer back to it). */
    private final ResponderContext qp;
    private final EndpointCounters counters;
    private final EndpointConfig config;

    private final ReceiveWindow window;
    /** Posted receives in post order, found by RSN [OPS-043]; completed here in that order [OPS-030]. */
    private final ReceiveQueue receives;
    /** Turns finished receives into completions, in post order [OPS-030]. */
    private final ReceiveCompletions completions;

    /** When and with which trigger each ACK or NACK goes out [REL-008..REL-011]. */
    private final AckScheduler acks;
    /** When a CNP goes out for a CE-marked request [CC-020]. */
    private final CnpSchedule cnps = new CnpSchedule();

    /** Time of the latest request packet accepted or classified, for the receiver-credit share [CC-018]. */
    private long lastRequestNs = Long.MIN_VALUE;

    /** The NACK that put this QP in ERR; repeated for retransmissions of the offending packet [REL-052]. */
    private final FatalNack fatalNack = new FatalNack();
    /** The ACKs and NACKs a request earns of its own, fatal ones included. */
    private final RequestAnswers answers;
    private boolean accepted;
    /** Segmentation, rkey and receive checks of 6.3; the NACKs they answer are sent through {@link #answers}. */
    private final RequestChecks checks = new RequestChecks();

    /** Held READs and their READ_RESPONSEs [OPS-029, REL-044]. */
    private final ReadResponder reads;
    /** Held atomics, their execution and responses, and the replay cache [OPS-029, REL-047]. */
    private final AtomicExecutor atomics;
    /** How the READ and atomic parts, and this class, send a packet: the QP's path and addresses. */
    private final ResponseOut out;
    /** Writes ACKs, NACKs and CNPs with the current state, and remembers what was advertised [REL-019]. */
    private final AckWriter ackWriter;
    /** The order between held READs and atomics [OPS-029]. */
    private final ExecutionOrder order;
    /** What this side sends at a poll, in order. */
    private final ResponderOutput output;
    /** The coalesced ACK when it rides on the queue pair's own request packet [REL-071]. */
    private final AckTrailer trailer;

    Responder(final ResponderContext qp, final int recvQueueDepth, final int maxRecvSge, final int maxDestRdAtomic,
              final EndpointConfig config, final EndpointCounters counters) {
        this.qp = qp;
        this.config = config;
        this.counters = counters;
        out = new ResponderPeerOut(qp);
        window = new ReceiveWindow(config.receiveWindowPackets(), 0);
        acks = new AckScheduler(config);
        receives = new ReceiveQueue(recvQueueDepth, maxRecvSge);
        completions = new ReceiveCompletions(receives, qp, counters);
        reads = new ReadResponder(Math.max(4, 2 * maxDestRdAtomic));
        atomics = new AtomicExecutor(Math.max(4, 2 * maxDestRdAtomic));
        ackWriter = new AckWriter(window, out, qp::creditToGrant, qp::senderCountToAdvertise, counters);
        order = new ExecutionOrder(window, reads, atomics);
        answers = new RequestAnswers(qp, acks, fatalNack, counters);
        output = new ResponderOutput(qp, window, acks, ackWriter, cnps, reads, atomics, order, fatalNack, out, counters);
        trailer = new AckTrailer(acks, ackWriter);
    }

    /** @return the ACK that may ride on the queue pair's request packets, for its requester [REL-071] */
    AckTrailer ackTrailer() {
        return trailer;
    }

    /**
     * The queue pair's requests of this poll are about to leave: the coalesced ACK, when due and
     * ATTACHED_ACK is in effect, rides on the first of them that has room [REL-071].
     */
    void attachToRequests(final long nowNs) {
        trailer.arm(nowNs, qp.capabilities());
    }

    /** The poll's requests have left: an ACK none of them took leaves bare. */
    void requestsSent() {
        trailer.disarm();
    }

    void start(final int expectedPsn) {
        window.reset(expectedPsn);
        ackWriter.start(expectedPsn);
    }

    /**
     * Whether accepting {@code psn} used up the credit last advertised, so that the requester can
     * send nothing more until it hears from us: then the ACK must not wait for coalescing [REL-014].
     */
    private boolean usesLastCredit(final int psn) {
        return (qp.capabilities() & ConnectHeader.CAP_RECEIVER_CREDIT) != 0 && ackWriter.usesLastCredit(psn);
    }

    /**
     * Test hook (the engine tests' TwoNodeFixture.startSequences): the RSN of the first receive WR posted
     * instead of 0 [OPS-043]. Only with no receive posted.
     */
    void startRsn(final int rsn) {
        receives.startRsn(rsn);
    }

    ReceiveWindow window() {
        return window;
    }

    int postedReceives() {
        return receives.posted();
    }

    // ------------------------------------------------------------------ posting

    int postRecv(final RecvRequest wr) {
        return receives.post(wr, qp.pd());
    }

    // ------------------------------------------------------------------ requests

    /**
     * Handles one validated request packet addressed to this QP, in the order of specification 6.3.
     */
    void onRequest(final long nowNs, final long arrivalNs, final DirectBuffer buffer, final int offset,
                   final Opcode opcode, final int ecn) {
        answers.arrived(arrivalNs);
        final int psn = BaseHeader.psn(buffer, offset);
        final int flags = BaseHeader.flags(buffer, offset);
        final int payloadLength = BaseHeader.payloadLength(buffer, offset);
        final boolean ce = ecn == DatagramEndpoint.ECN_CE;
        if (ce) {
            ackWriter.ceMarked();
        }
        if (payloadLength > qp.pathMtu()) {
            counters.increment(EndpointCounter.OVERSIZE);
            return;
        }
        final int cls = window.classify(psn);
        if (cls == ReceiveWindow.OUT_OF_RANGE) {
            counters.increment(EndpointCounter.PSN_OUT_OF_RANGE);
            return;
        }
        lastRequestNs = nowNs;
        if (ce && (qp.capabilities() & ConnectHeader.CAP_ECN) != 0) {
            counters.increment(EndpointCounter.CE_MARKED_IN);
            noteCongestion(nowNs, psn);
        }
        if (cls == ReceiveWindow.NEW && psn != window.expectedPsn() && qp.isGoBackN()) {
            answers.sequenceGap(window.expectedPsn(), buffer, offset, ce);
            return;
        }
        if ((flags & Flags.TRIMMED) != 0) {
            if (cls == ReceiveWindow.NEW) {
                answers.own(NackReason.TRIMMED.code(), psn, 0, buffer, offset, ce, false);
                counters.increment(EndpointCounter.NACKS_OUT_TRIMMED);
            } else {
                counters.increment(EndpointCounter.TRIMMED_IGNORED);
            }
            return;
        }
        if (opcode == Opcode.READ_REQUEST) {
            onReadRequest(nowNs, buffer, offset, psn, flags, ce);
            return;
        }
        if (cls == ReceiveWindow.BEYOND_WINDOW) {
            answers.own(NackReason.PSN_WINDOW.code(), psn, 0, buffer, offset, ce, false);
            counters.increment(EndpointCounter.NACKS_OUT_PSN_WINDOW);
            return;
        }
        if (cls == ReceiveWindow.DUPLICATE) {
            counters.increment(EndpointCounter.DUPLICATE_REQUESTS);
            if ((opcode == Opcode.FETCH_ADD || opcode == Opcode.CMP_SWAP) && atomics.replay(psn)) {
                counters.increment(EndpointCounter.ATOMIC_REPLAYS);
            }
            // Every duplicate gets an ACK of its own with the DUPLICATE flag [REL-042]: coalesced
            // into another packet's ACK the flag would be lost, and it is how the requester learns
            // that a retransmission was spurious and widens its reorder window [REL-025].
            answers.own(0, 0, 0, buffer, offset, ce, true);
            return;
        }
        final int msg = offset + opcode.msgOffset();
        final long messageOffset = MessageHeader.messageOffset(buffer, msg);
        final long messageLength = MessageHeader.messageLength(buffer, msg);
        final int payloadOffset = offset + opcode.headerLength();
        if (opcode.maxPayload() > 0
            && !RequestChecks.segmentedAsSpecified(qp.pathMtu(), messageOffset, messageLength, payloadLength, flags)) {
            // Step 3 of 6.3: a packet that cannot be part of a correctly segmented message [OPS-005].
            answers.fatal(NackReason.INVALID_REQUEST, psn, buffer, offset, ce);
            return;
        }
        switch (opcode) {
            case SEND, SEND_WITH_IMM -> {
                final RecvWqe recv = receives.forRsn(MessageHeader.rsn(buffer, msg));
                if (recv == null) {
                    answers.rnr(psn, buffer, offset, ce);
                    return;
                }
                if (!matchReceive(nowNs, recv, opcode, buffer, offset, psn, messageOffset, messageLength, ce)) {
                    return;
                }
                recv.scatter(messageOffset, buffer, payloadOffset, payloadLength);
                recv.bytesReceived += payloadLength;
                if ((flags & Flags.SOLICITED) != 0) {
                    recv.solicited = true;
                }
            }
            case WRITE, WRITE_WITH_IMM -> {
                if ((qp.accessFlags() & AccessFlags.REMOTE_WRITE) == 0) {
                    answers.fatal(NackReason.INVALID_REQUEST, psn, buffer, offset, ce);
                    return;
                }
                final int reth = offset + opcode.rethOffset();
                final long va = RdmaHeader.virtualAddress(buffer, reth);
                // A zero-length WRITE needs no valid key and touches no memory [OPS-017, MEM-012].
                final MemoryRegion mr = messageLength == 0 ? null : checkRemote(RdmaHeader.rkey(buffer, reth), va,
                    messageLength, AccessFlags.REMOTE_WRITE, psn, nowNs, buffer, offset, ce);
                if (mr == null && messageLength != 0) {
                    return;
                }
                RecvWqe recv = null;
                if (opcode == Opcode.WRITE_WITH_IMM) {
                    recv = receives.forRsn(MessageHeader.rsn(buffer, msg));
                    if (recv == null) {
                        answers.rnr(psn, buffer, offset, ce);
                        return;
                    }
                    if (!matchReceive(nowNs, recv, opcode, buffer, offset, psn, messageOffset, messageLength, ce)) {
                        return;
                    }
                    if ((flags & Flags.SOLICITED) != 0) {
                        // WRITE_WITH_IMM can be solicited too [OPS-040].
                        recv.solicited = true;
                    }
                }
                if (payloadLength > 0 && mr != null) {
                    mr.buffer().putBytes((int) (mr.offsetOf(va) + messageOffset), buffer, payloadOffset, payloadLength);
                }
                if (recv != null) {
                    recv.bytesReceived += payloadLength;
                }
            }
            case FETCH_ADD, CMP_SWAP -> {
                if (!holdAtomic(nowNs, buffer, offset, opcode, psn, messageLength, ce)) {
                    return;
                }
            }
            default -> {
                counters.increment(EndpointCounter.UNEXPECTED_RESPONSE);
                return;
            }
        }
        accept(nowNs, buffer, offset, psn, flags, ce);
    }

    /** A CE-marked packet of a QP with ECN: a CNP, unless one left within CNP_INTERVAL [CC-020]. */
    private void noteCongestion(final long nowNs, final int psn) {
        cnps.marked(nowNs, psn, config.cnpIntervalNs());
    }

    /** @return time of the latest request packet classified, MIN_VALUE before any */
    long lastRequestNs() {
        return lastRequestNs;
    }

    /** Step 7 of 6.3: mark, acknowledge, complete and execute what became possible. */
    private void accept(final long nowNs, final DirectBuffer buffer, final int offset, final int psn, final int flags,
                        final boolean ce) {
        accepted = true;
        final boolean hadGap = window.hasGap();
        final int d = psn - window.expectedPsn();
        window.markReceived(psn);
        if (d > 0) {
            counters.increment(EndpointCounter.OUT_OF_ORDER_REQUESTS);
        }
        if (d > 64) {
            // Outside the SACK bitmap: this packet gets an ACK of its own [REL-010].
            answers.own(0, 0, 0, buffer, offset, ce, false);
        }
        acks.accepted(nowNs, psn, flags, BaseHeader.timestamp(buffer, offset), BaseHeader.pathId(buffer, offset),
            answers.arrivalNs(), ce, d, hadGap, usesLastCredit(psn),
            (qp.capabilities() & ConnectHeader.CAP_DEFERRED_ACK) != 0);
        afterAdvance();
    }

    /** Runs everything that waits for the cumulative PSN: atomics, then receive completions. */
    private void afterAdvance() {
        order.executeReadyAtomics();
        completions.completeInOrder(window.expectedPsn());
    }

    /** Matches a SEND or WRITE_WITH_IMM packet to its receive, or refuses it with a fatal NACK. */
    private boolean matchReceive(final long nowNs, final RecvWqe recv, final Opcode opcode, final DirectBuffer buffer,
                                 final int offset, final int psn, final long messageOffset, final long messageLength,
                                 final boolean ce) {
        final NackReason refused = RequestChecks.matchReceive(recv, opcode, buffer, offset, psn, messageOffset,
            messageLength, qp.pathMtu());
        if (refused != null) {
            answers.fatal(refused, psn, buffer, offset, ce);
            return false;
        }
        return true;
    }

    /**
     * Resolves and checks an rkey for a remote access to [va, va+length): the region must be live,
     * belong to this QP's protection domain, allow the access and contain the whole range [MEM-009].
     *
     * @return the region, or null after sending a REMOTE_ACCESS NACK
     */
    private MemoryRegion checkRemote(final int rkey, final long va, final long length, final int access,
                                     final int psn, final long nowNs, final DirectBuffer buffer, final int offset,
                                     final boolean ce) {
        final MemoryRegion mr = checks.remote(qp.pd(), rkey, va, length, access);
        if (mr == null) {
            answers.fatal(NackReason.REMOTE_ACCESS, psn, buffer, offset, ce);
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
        final int count = ReadResponder.responseCount(dmaLength, mtu);
        final int lastPsn = psn + count - 1;
        final int lastClass = window.classify(lastPsn);
        if (lastClass == ReceiveWindow.BEYOND_WINDOW || lastClass == ReceiveWindow.OUT_OF_RANGE) {
            answers.own(NackReason.PSN_WINDOW.code(), psn, 0, buffer, offset, ce, false);
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
            if (reads.isHeld(psn)) {
                // Already held or being answered: the answer is on its way [REL-044].
                acks.duplicateOfHeld(psn, flags, BaseHeader.timestamp(buffer, offset),
                    BaseHeader.pathId(buffer, offset), answers.arrivalNs(), ce);
                return;
            }
        }
        if ((qp.accessFlags() & AccessFlags.REMOTE_READ) == 0) {
            answers.fatal(NackReason.INVALID_REQUEST, psn, buffer, offset, ce);
            return;
        }
        final long va = RdmaHeader.virtualAddress(buffer, reth);
        // A zero-length READ needs no valid key and reads nothing [OPS-023, MEM-012].
        final MemoryRegion mr = messageLength == 0 ? null : checkRemote(RdmaHeader.rkey(buffer, reth), va,
            messageLength, AccessFlags.REMOTE_READ, psn, nowNs, buffer, offset, ce);
        if (mr == null && messageLength != 0) {
            return;
        }
        if (reads.isFull()) {
            // Answered later: the requester's timers resend the request. Nothing is marked [REL-006].
            counters.increment(EndpointCounter.RESPONDER_BUSY);
            return;
        }
        // Held in PSN order so they execute in PSN order [OPS-029]. A repeated request is simply
        // executed again: READ is idempotent [REL-044].
        reads.hold(psn, mr, mr == null ? 0 : mr.offsetOf(va), messageOffset, messageLength,
            MessageHeader.msn(buffer, msg), count, dmaLength, !anyNew);
        accepted = true;
        final boolean hadGap = window.hasGap();
        final int d = psn - window.expectedPsn();
        for (int i = 0; i < count; i++) {
            if (window.classify(psn + i) == ReceiveWindow.NEW) {
                window.markReceived(psn + i);
            }
        }
        acks.acceptedRead(nowNs, psn, flags, BaseHeader.timestamp(buffer, offset), BaseHeader.pathId(buffer, offset),
            answers.arrivalNs(), ce, !anyNew, d, hadGap);
        afterAdvance();
    }

    /** Checks an atomic and holds it until every earlier PSN has arrived [OPS-029]. */
    private boolean holdAtomic(final long nowNs, final DirectBuffer buffer, final int offset, final Opcode opcode,
                               final int psn, final long messageLength, final boolean ce) {
        final int a = offset + opcode.atomicOffset();
        final long va = AtomicHeader.virtualAddress(buffer, a);
        if (messageLength != 8 || (qp.accessFlags() & AccessFlags.REMOTE_ATOMIC) == 0 || (va & 7) != 0) {
            answers.fatal(NackReason.INVALID_REQUEST, psn, buffer, offset, ce);
            return false;
        }
        final MemoryRegion mr = checkRemote(AtomicHeader.rkey(buffer, a), va, 8, AccessFlags.REMOTE_ATOMIC, psn,
            nowNs, buffer, offset, ce);
        if (mr == null) {
            return false;
        }
        if (atomics.isFull()) {
            counters.increment(EndpointCounter.RESPONDER_BUSY);
            return false;
        }
        atomics.hold(psn, MessageHeader.msn(buffer, offset + opcode.msgOffset()), opcode == Opcode.CMP_SWAP, mr,
            (int) mr.offsetOf(va), AtomicHeader.swapOrAdd(buffer, a), AtomicHeader.compare(buffer, a));
        return true;
    }

    /**
     * In ERR, a responder that failed a request answers retransmissions of the offending packet with
     * the same NACK, at most 8 times, so that a lost NACK still reaches the requester [REL-052].
     */
    void onRequestInError(final long nowNs, final long arrivalNs, final DirectBuffer buffer, final int offset) {
        answers.arrived(arrivalNs);
        answers.inError(buffer, offset);
    }

    /** @return whether a request received in ERR is answered again with the fatal NACK [REL-052] */
    boolean repeatsFatalNack(final DirectBuffer buffer, final int offset) {
        return answers.repeatsFatalNack(buffer, offset);
    }

    /** @return whether any request has been accepted (the window moved or something is held) */
    boolean hasAccepted() {
        return accepted;
    }

    /** An ACK with the current Sender Count is to be sent, once however often this is called before it leaves [CC-038]. */
    void announceSenderCount() {
        output.announceSenderCount();
    }

    /** A KEEPALIVE is answered at once with an ACK carrying the current state [CM-028], [WIRE-065]. */
    void onKeepalive(final long nowNs, final long arrivalNs, final DirectBuffer buffer, final int offset) {
        answers.arrived(arrivalNs);
        answers.keepalive(buffer, offset);
    }

    /** Completes every posted receive in order and drops what else is held; only a fatal NACK may still leave. */
    void flush() {
        completions.flush(window.expectedPsn());
        dropHeldRequests();
        atomics.dropResponses();
        acks.cancelAck();
        cnps.done();
        output.cancelSenderCount();
        // Only the fatal NACK (if any) may still leave [REL-052].
        if (!fatalNack.isSet()) {
            acks.clearOwn();
        } else {
            acks.keepOnlyLatest(fatalNack.reason());
        }
    }

    /** Forgets the held READs and atomics, and the regions they hold on to. */
    private void dropHeldRequests() {
        reads.clear();
        atomics.dropHeld();
    }

    /** Drops all receives without completions (modify to RESET). */
    void discard() {
        receives.clear();
        dropHeldRequests();
        atomics.dropResponses();
        acks.clearOwn();
        acks.cancelAck();
        fatalNack.clear();
        accepted = false;
        answers.reset();
        ackWriter.resetCeCount();
        cnps.reset();
        output.cancelSenderCount();
        lastRequestNs = Long.MIN_VALUE;
        checks.forget();
        atomics.forgetResults();
    }

    // ------------------------------------------------------------------ emission

    /** Writes what is due, at most {@code budget} packets ({@link ResponderOutput#emit}). */
    int emit(final long nowNs, final TransmitSink sink, final int budget) {
        return output.emit(nowNs, sink, budget);
    }

    /** @return whether ACKs or NACKs of its own wait to be emitted (the only packets it sends in ERR) */
    boolean hasOwnPackets() {
        return acks.hasOwn();
    }

    /** @return whether the only thing to send is the coalesced ACK, which may follow the QP's requests [REL-008] */
    boolean onlyCoalescedAckPending() {
        return output.onlyCoalescedAckPending();
    }

    long nextDeadlineNs() {
        return output.nextDeadlineNs();
    }
}
