// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.engine;

import org.agrona.DirectBuffer;
import org.metaroce.core.reliability.RttEstimator;
import org.metaroce.core.verbs.SendRequest;
import org.metaroce.core.verbs.WcStatus;
import org.metaroce.core.verbs.WrOpcode;
import org.metaroce.core.wire.ConnectHeader;
import org.metaroce.core.wire.Opcode;

/**
 * The sending half of a queue pair (specification sections 5 and 6): when each request packet
 * leaves, first transmission or retransmission, within the congestion window, pacing, the
 * scoreboard and the responder's credit [CC-001, CC-002, REL-019]; the credit probe; and the
 * facade its queue pair calls. Its parts, each with state of its own:
 * <ul>
 *   <li>{@link SendQueue}: posted work requests, their start (MSN, RSN) and order rules, and
 *       completions in post order;</li>
 *   <li>{@link SendWindow}: sndUna, sndNxt and the credit;</li>
 *   <li>{@link Scoreboard}: the per-PSN state and its transitions, and the in-flight, lost and
 *       RNR-waiting counts;</li>
 *   <li>{@link ResponseHandler}: ACKs, NACKs and READ and atomic responses, RTT samples and
 *       deliveries;</li>
 *   <li>{@link RequesterTimers}: the RTO with its spurious-expiry undo, the tail probe when due,
 *       the RNR resume and the retry budgets; {@link ProbeTimer} the probe's timing;</li>
 *   <li>{@link LossDetector}: time-based loss detection (RACK), whose losses this class attributes
 *       to a path and to congestion control through {@link CongestionSignals};</li>
 *   <li>{@link LossRecovery}: selective repeat or go-back-N, chosen at RTS;</li>
 *   <li>{@link RequestEncoder}: a request packet's bytes, with the responder's ACK when one rides
 *       on it ({@link AckTrailer}, [REL-071]). This class chooses the path, claims and commits the
 *       sink's room and records the transmission.</li>
 * </ul>
 * Data flows one way: this class calls its parts, and they answer by return value or through
 * {@link RequesterContext}; the timers' two questions back ({@link RequesterTimers.Requests}) and
 * the loss detector's losses ({@link LossDetector.Losses}) go through interfaces fixed at
 * construction.
 */
final class Requester implements LossDetector.Losses, RequesterTimers.Requests {
    // The scoreboard's states and slot kinds under short names: the emission reads them.
    private static final byte LOST = Scoreboard.LOST;

    /** Transmissions of one packet without delivery that end the connection [REL-030]. */
    private static final int MAX_TRANSMISSIONS = 16;
    /**
     * Trims one packet may meet before the connection ends [REL-059]: trims do not count towards
     * MAX_TRANSMISSIONS, and each restarts the retransmission timer (REL-036), so without this
     * bound a packet trimmed for ever would keep its QP alive for ever.
     */
    static final int TRIM_LIMIT = 256;

    private static final byte KIND_DATA = Scoreboard.KIND_DATA;
    private static final byte KIND_READ = Scoreboard.KIND_READ;
    private static final byte KIND_ATOMIC = Scoreboard.KIND_ATOMIC;

    /** The queue pair as this side sees it (not the queue pair: no pointer back to it). */
    private final RequesterContext qp;
    private final EndpointCounters counters;
    private final EndpointConfig config;

    private final SendQueue sendQueue;
    private final SendWindow sendWindow = new SendWindow();

    private final Scoreboard scoreboard;
    private final LossDetector lossDetector;
    private final ProbeTimer probeTimer;
    private final AskingProbe asking;
    private final RequestEncoder encoder;
    private final CongestionSignals signals;
    private final RequesterTimers timers;
    private final ResponseHandler responses;
    /** Selective repeat or go-back-N, chosen at each {@link #start} from the negotiated capabilities. */
    private LossRecovery recovery = LossRecovery.SELECTIVE_REPEAT;
    /** The PSN field and Transmit Timestamp of the latest KEEPALIVE this QP sent [WIRE-065]. */
    private int probePsn;
    private int probeTimestamp;
    private boolean probeSent;
    private long txSeq;
    /** Retransmissions of this QP (all causes), for per-QP observability; the endpoint counts them by cause. */
    private long retransmits;

    private RttEstimator rtt;
    /**
     * When the credit began to block every transmission with nothing outstanding (MIN_VALUE while
     * it does not), the time of the next KEEPALIVE probe that asks for a fresh Credit, and the
     * probes sent in this episode (for the backoff) [REL-019], [CM-029].
     */
    private long creditBlockedSinceNs = Long.MIN_VALUE;
    private long creditProbeNs = Long.MAX_VALUE;
    private int creditProbes;
    /**
     * When the latest credit probe left, the latest ACK whose Credit was taken arrived (it passed
     * REL-016 and was not stale under REL-018), and the consecutive probes no such ACK followed: a
     * peer whose answers all acknowledge PSNs never sent, or all lag behind a cumulative point
     * already seen, has diverged from this requester and never grants a usable Credit [REL-067].
     */
    private long creditProbeSentNs = Long.MIN_VALUE;
    private long creditHeardNs = Long.MIN_VALUE;
    private int unansweredCreditProbes;
    /** The time of the latest emit: pacing deadlines are only reported when still ahead of it. */
    private long lastEmitNs = Long.MIN_VALUE;

    /**
     * @param ackTrailer the queue pair's ACK that may ride on a request packet of this side [REL-071]
     */
    Requester(final RequesterContext qp, final int sendQueueDepth, final int maxSge, final EndpointConfig config,
              final EndpointCounters counters, final AckTrailer ackTrailer) {
        this.qp = qp;
        this.config = config;
        this.counters = counters;
        sendQueue = new SendQueue(qp, sendQueueDepth, maxSge, config.maxInlineData(), counters);
        scoreboard = new Scoreboard(config.receiveWindowPackets());
        lossDetector = new LossDetector(scoreboard, config, this);
        probeTimer = new ProbeTimer(config);
        asking = new AskingProbe(scoreboard, this);
        encoder = new RequestEncoder(qp.writer(), ackTrailer, config.ackDeferDelayNs());
        signals = new CongestionSignals(qp);
        timers = new RequesterTimers(qp, counters, scoreboard, probeTimer, signals, this);
        responses = new ResponseHandler(qp, counters, sendWindow, sendQueue, scoreboard, lossDetector, probeTimer,
            asking, timers, signals, config.softwareEndpoint());
    }

    /** Called on RTR→RTS: the first PSN this side sends and the timers' parameters. */
    void start(final int initialPsn, final long initialRtoNs) {
        sendWindow.start(initialPsn);
        final long min = Math.min(config.minRtoNs(), initialRtoNs);
        rtt = new RttEstimator(initialRtoNs, min, Math.max(config.maxRtoNs(), initialRtoNs),
            config.ackCoalesceDelayNs());
        lossDetector.start(rtt, min);
        probeTimer.start(rtt);
        recovery = LossRecovery.of(qp.isGoBackN(), scoreboard, counters);
        timers.start(rtt, recovery);
        responses.start(initialPsn, rtt, recovery);
    }

    /** Applies a new TIMEOUT (initial RTO and floor) from a modify of an RTS or SQD queue pair. */
    void timeout(final long initialRtoNs) {
        final long min = Math.min(config.minRtoNs(), initialRtoNs);
        rtt.reconfigure(initialRtoNs, min, Math.max(config.maxRtoNs(), initialRtoNs));
    }

    int queued() {
        return sendQueue.queued();
    }

    /** @return the storage of the send queue's INLINE payloads (tests read what it holds) */
    InlineArena inlineArena() {
        return sendQueue.inlineArena();
    }

    /** @return send work requests that have started and not yet completed */
    int startedOutstanding() {
        return sendQueue.startedOutstanding();
    }

    int nextPsn() {
        return sendWindow.sndNxt();
    }

    /** @return packets transmitted, first transmissions and retransmissions alike */
    long transmissions() {
        return txSeq;
    }

    /** @return retransmissions, all causes */
    long retransmits() {
        return retransmits;
    }

    int oldestUnackedPsn() {
        return sendWindow.sndUna();
    }

    RttEstimator rtt() {
        return rtt;
    }

    // ------------------------------------------------------------------ posting

    int post(final SendRequest wr, final int pathMtu) {
        return sendQueue.post(wr, pathMtu);
    }

    // ------------------------------------------------------------------ emission

    /**
     * Emits retransmissions first, then new packets within the congestion window.
     *
     * @return packets emitted
     */
    int emit(final long nowNs, final TransmitSink sink, final int budget) {
        lastEmitNs = nowNs;
        int emitted = 0;
        if (scoreboard.lostCount() > 0) {
            emitted += retransmitLost(nowNs, sink, budget);
        }
        emitted += emitNew(nowNs, sink, budget - emitted);
        if (timers.probeWithAsk()) {
            emitted += ask(nowNs, sink, budget - emitted);
        }
        emitted += probeCredit(nowNs, sink, budget - emitted);
        qp.congestionControl().onSendOpportunity(nowNs, scoreboard.inFlight(), hasWork());
        return emitted;
    }

    /**
     * Sends the asking tail probe: a KEEPALIVE with ACK_REQ whose answer shows the responder's state,
     * from which {@link AskingProbe} declares lost what it lacks [REL-069].
     */
    private int ask(final long nowNs, final TransmitSink sink, final int budget) {
        if (budget <= 0 || !qp.sendProbe(nowNs, sink, probeTimer.probes(), nextPsn())) {
            return 0;
        }
        onProbeSent(nowNs);
        asking.sent(nowNs, nextPsn(), timers.onAskSent(nowNs));
        counters.increment(EndpointCounter.TAIL_PROBES_ASKED);
        return 1;
    }

    /** @return whether the credit blocks all transmission with nothing outstanding [REL-019] */
    boolean isCreditBlocked() {
        return scoreboard.inFlight() == 0 && scoreboard.lostCount() == 0 && scoreboard.rnrWaitCount() == 0
            && sendWindow.sndUna() == sendWindow.sndNxt() && sendQueue.hasUnsent() && !qp.isSendQueueDraining()
            && (long) (sendWindow.sndNxt() - sendWindow.creditCumulative()) >= sendWindow.creditLimit();
    }

    /**
     * When the credit has blocked all transmission for one RTO with nothing outstanding, sends a
     * KEEPALIVE with ACK_REQ, whose answer carries the current Credit, and repeats it with the RTO
     * backoff while the credit stays blocked [REL-019]. Without it a requester that got a zero
     * credit (from a faulty peer, or an ACK that a later one would have corrected) and has nothing
     * in flight has no ACK and no timer to wait for, and never sends again.
     */
    private int probeCredit(final long nowNs, final TransmitSink sink, final int budget) {
        if (!isCreditBlocked()) {
            creditBlockedSinceNs = Long.MIN_VALUE;
            creditProbeNs = Long.MAX_VALUE;
            creditProbes = 0;
            return 0;
        }
        return probeBlockedCredit(nowNs, sink, budget);
    }

    /**
     * {@link #probeCredit} once the credit blocks: starts the wait, sends a probe when it is due,
     * or gives up [REL-019] [REL-067]. Apart so that the check every poll makes stays small enough
     * for the JIT to inline into the poll (C2's FreqInlineSize, 325 bytes of bytecode).
     */
    private int probeBlockedCredit(final long nowNs, final TransmitSink sink, final int budget) {
        if (creditBlockedSinceNs == Long.MIN_VALUE) {
            creditBlockedSinceNs = nowNs;
            creditProbeNs = nowNs + rtt.rtoNs();
            unansweredCreditProbes = 0;
            return 0;
        }
        if (nowNs < creditProbeNs || budget <= 0) {
            return 0;
        }
        if (creditProbes > 0) {
            unansweredCreditProbes = creditHeardNs >= creditProbeSentNs ? 0 : unansweredCreditProbes + 1;
            if (unansweredCreditProbes > qp.retryCount()
                && timers.retryTimeoutSpent(nowNs, Math.max(creditBlockedSinceNs, creditHeardNs))) {
                qp.recordFailure("credit blocked for " + Seconds.of(nowNs - creditBlockedSinceNs) + " and "
                    + unansweredCreditProbes + " credit probes without an ACK whose Credit it could take (RETRY_CNT "
                    + qp.retryCount() + ", RETRY_TIMEOUT " + Seconds.of(qp.retryTimeoutNs()) + "; "
                    + counters.get(EndpointCounter.ACK_FOR_UNSENT_PSN) + " ACKs for unsent PSNs dropped on this"
                    + " endpoint; stale ones are not counted): the peer's receive sequence is not this requester's"
                    + " [REL-067]");
                sendQueue.failOldest(WcStatus.RETRY_EXC_ERR);
                qp.enterError(AsyncEventType.QP_FATAL);
                return 0;
            }
        }
        if (!qp.sendProbe(nowNs, sink, creditProbes, nextPsn())) {
            return 0;
        }
        onProbeSent(nowNs);
        creditProbeSentNs = nowNs;
        creditProbes++;
        final long backoff = rtt.rtoNs() << Math.min(creditProbes, 16);
        creditProbeNs = nowNs + Math.min(backoff, Math.max(config.maxRtoNs(), rtt.rtoNs()));
        return 1;
    }

    private int retransmitLost(final long nowNs, final TransmitSink sink, final int budget) {
        int emitted = 0;
        final int window = Math.max(1, qp.congestionControl().windowPackets());
        for (int psn = sendWindow.sndUna(); psn != sendWindow.sndNxt() && emitted < budget && scoreboard.lostCount() > 0; psn++) {
            if (scoreboard.state(psn) != LOST) {
                continue;
            }
            // Retransmissions are in flight like any packet: window and pacing apply, except that
            // one may leave when nothing is in flight, and one per RTO expiry or probe, which
            // neither the window nor the window's pacing holds back [CC-001], [REL-028]: a window
            // paced below one packet with a long SRTT (2 B, 55 ms in a fuzzed run) put the expiry's
            // copy 5.5 s behind it, and a dead peer took RETRY_CNT of those to declare. Pacing at a
            // measured rate still holds it, as it holds tail probes [CC-041]: behind a policer an
            // expiry's copy past the rate is dropped like any excess (in memory, eight senders, with
            // the rate from the start: Jain's index 0.91 and 493 expiries with unpaced copies, 0.97
            // and 463 without a byte lost).
            final boolean granted = timers.fullWindowRetransmitAllowed();
            if (scoreboard.inFlight() > 0 && scoreboard.inFlight() + 1 > window && !granted) {
                break;
            }
            if (granted ? qp.congestionControl().probeNotBeforeNs() > nowNs
                    : qp.congestionControl().nextSendTimeNs(nowNs) > nowNs) {
                break;
            }
            final int trims = scoreboard.trimmedTransmissions(psn);
            if ((scoreboard.transmissions(psn) - scoreboard.rnrRetransmissions(psn) - trims >= MAX_TRANSMISSIONS
                    && timers.retryTimeoutSpent(nowNs, scoreboard.firstSentNs(psn)))
                || trims >= TRIM_LIMIT) {
                qp.recordFailure(trims >= TRIM_LIMIT
                    ? "PSN " + Integer.toUnsignedString(psn) + " was trimmed " + trims
                        + " times: the path towards the peer stays congested [REL-059]"
                    : "PSN " + Integer.toUnsignedString(psn) + " was sent " + scoreboard.transmissions(psn)
                        + " times over " + Seconds.of(nowNs - scoreboard.firstSentNs(psn))
                        + " without being delivered (limit 16, "
                        + "RETRY_TIMEOUT " + Seconds.of(qp.retryTimeoutNs()) + ") [REL-030]");
                // As REL-029: the oldest outstanding WR carries the error, whichever packet ran out
                // (with RETRY_TIMEOUT a later packet can reach the limit first) [REL-030].
                retriesExhausted();
                return emitted;
            }
            int run = 1;
            if (scoreboard.kind(psn) == KIND_READ) {
                // One re-request covers the contiguous run of lost responses of this READ [REL-046].
                while (run < config.readChunkPackets() && psn + run != sendWindow.sndNxt()) {
                    final int r = psn + run;
                    if (scoreboard.state(r) != LOST || scoreboard.kind(r) != KIND_READ
                        || scoreboard.wqe(r) != scoreboard.wqe(psn)) {
                        break;
                    }
                    run++;
                }
            }
            if (!transmit(nowNs, sink, psn, true, false, false, run)) {
                break;
            }
            final EndpointCounter cause = scoreboard.lossCause(psn);
            counters.increment(cause);
            qp.countRetransmit(cause);
            if (cause != EndpointCounter.RETRANSMITS_TAIL_PROBE) {
                probeTimer.onRepair(nowNs);
                if (cause != EndpointCounter.RETRANSMITS_RNR && cause != EndpointCounter.RETRANSMITS_PSN_WINDOW) {
                    probeTimer.onLossRepaired(sendWindow.sndNxt());
                }
            }
            retransmits++;
            qp.trace(nowNs, TraceEvent.RETRANSMIT, psn, cause.ordinal(), scoreboard.transmissions(psn), window);
            timers.onRetransmit();
            if (cause == EndpointCounter.RETRANSMITS_RNR) {
                scoreboard.rnrRetransmitted(psn);
            }
            for (int i = 1; i < run; i++) {
                scoreboard.sentWith(psn + i, psn);
            }
            psn += run - 1;
            emitted++;
        }
        return emitted;
    }

    private int emitNew(final long nowNs, final TransmitSink sink, final int budget) {
        int emitted = 0;
        final int window = Math.max(1, qp.congestionControl().windowPackets());
        while (emitted < budget && sendQueue.hasUnsent()) {
            final SendWqe wqe = sendQueue.nextToStart();
            if (!sendQueue.mayStart(wqe, scoreboard.rnrWaitCount() > 0)) {
                break;
            }
            int need = 1;
            if (wqe.opcode == WrOpcode.RDMA_READ) {
                need = Math.min(config.readChunkPackets(), wqe.psnCount - wqe.psnsAssigned);
                // A READ larger than the credit allows now is requested in a smaller segment
                // [OPS-019, REL-019]: a responder's credit share may never reach the chunk size
                // (CC-018 guarantees one PSN), so waiting for it would block the QP for good. (The
                // window and the scoreboard drain by themselves, so they need no such split.)
                final long room = sendWindow.creditLimit() - (long) (sendWindow.sndNxt() - sendWindow.creditCumulative());
                if (room >= 1 && room < need) {
                    need = (int) room;
                }
            }
            final boolean probe = timers.probeWithNew();
            if (!probe && scoreboard.inFlight() > 0 && scoreboard.inFlight() + need > window) {
                break;
            }
            if ((sendWindow.sndNxt() - sendWindow.sndUna()) + need > scoreboard.capacity()) {
                break;
            }
            if ((long) ((sendWindow.sndNxt() + need - 1) - sendWindow.creditCumulative()) >= sendWindow.creditLimit()) {
                break;
            }
            if (!probe && qp.congestionControl().nextSendTimeNs(nowNs) > nowNs) {
                break;
            }
            sendQueue.start(wqe, sendWindow.sndNxt());
            final int firstNewPsn = sendWindow.sndNxt();
            final byte kind = wqe.opcode == WrOpcode.RDMA_READ ? KIND_READ : wqe.isAtomic() ? KIND_ATOMIC : KIND_DATA;
            for (int i = 0; i < need; i++) {
                scoreboard.assign(sendWindow.sndNxt() + i, sendQueue.nextToStartSeq(), wqe.psnsAssigned + i, kind);
            }
            final boolean wasIdle = scoreboard.inFlight() == 0;
            // Its ACK may be held only while the window, the scoreboard and the credit would let one
            // more packet go without it: a requester that must wait for an ACK asks for it [REL-074].
            final boolean roomAfter = scoreboard.inFlight() + need + 1 <= window
                && (sendWindow.sndNxt() - sendWindow.sndUna()) + need + 1 <= scoreboard.capacity()
                && (long) ((sendWindow.sndNxt() + need) - sendWindow.creditCumulative()) < sendWindow.creditLimit();
            final boolean mayDefer = !probe && roomAfter && (qp.capabilities() & ConnectHeader.CAP_DEFERRED_ACK) != 0;
            if (!transmit(nowNs, sink, firstNewPsn, false, probe, mayDefer, need)) {
                break;
            }
            if (probe) {
                timers.onNewProbeSent();
                scoreboard.sentAsProbe(firstNewPsn);
                counters.increment(EndpointCounter.TAIL_PROBES_NEW);
            }
            if (wasIdle) {
                // The retransmission timer runs from the first packet sent after an idle period.
                timers.onSentAfterIdle(nowNs, scoreboard.lostCount() == 0);
            }
            sendWindow.assigned(need);
            wqe.psnsAssigned += need;
            // A READ chunk's response slots are all outstanding from the moment its request leaves.
            for (int i = 1; i < need; i++) {
                scoreboard.sentWith(firstNewPsn + i, firstNewPsn);
            }
            counters.increment(EndpointCounter.REQUEST_PACKETS_OUT);
            emitted++;
            if (wqe.psnsAssigned == wqe.psnCount) {
                sendQueue.advance();
            }
        }
        return emitted;
    }

    /**
     * Sends the packet for {@code psn} (a first transmission or a retransmission): chooses its path,
     * claims the sink's room, has the {@link RequestEncoder} write it, commits it and records it in
     * the scoreboard.
     *
     * @param readSegments for a READ, the response slots its READ_REQUEST covers: a first request's
     *     whole chunk, or a re-request's contiguous run of lost slots [REL-046]; 1 otherwise
     * @param mayDefer whether a LAST packet of an unsignaled SEND or WRITE may go without ACK_REQ:
     *     DEFERRED_ACK is in effect, and this is a first transmission, not a probe, with room for
     *     more after it [REL-074]
     * @return false when the sink had no room
     */
    private boolean transmit(final long nowNs, final TransmitSink sink, final int psn, final boolean retransmit,
                             final boolean probe, final boolean mayDefer, final int readSegments) {
        final SendWqe wqe = wqeOf(psn);
        final int maxLength = encoder.layout(wqe, scoreboard.index(psn), readSegments, qp.pathMtu());
        final int pathId = retransmit && scoreboard.transmissions(psn) > 0
            ? qp.paths().forRetransmission(nowNs, scoreboard.path(psn)) : qp.paths().next(nowNs);
        final int entropy = qp.paths().entropy(pathId);
        final int offset = sink.claim(maxLength, entropy);
        if (offset == TransmitSink.NO_ROOM) {
            return false;
        }
        final int length = encoder.write(sink, offset, psn, retransmit, probe, mayDefer, pathId, nowNs,
            qp.destQpn(), qp.qpn());
        qp.commit(sink, offset, length, entropy);
        qp.congestionControl().onPacketSent(nowNs, length, pathId);

        timers.onTransmit(nowNs, encoder.ackHoldNs());
        if (retransmit && !requestArrived(psn)) {
            responses.onRepairSent(nowNs, scoreboard.wqe(psn));
        }
        scoreboard.sent(psn, nowNs, txSeq++, pathId, probeSent && psn == probePsn && (int) nowNs == probeTimestamp);
        return true;
    }

    // ------------------------------------------------------------------ feedback

    /**
     * Records a KEEPALIVE just sent with PSN field {@link #nextPsn()} [WIRE-065]: if the packet that
     * gets that PSN leaves in the same clock tick, an ACK answering the KEEPALIVE would look like
     * one proving that packet's arrival (same trigger, same echo), so such a packet is marked.
     */
    void onProbeSent(final long nowNs) {
        probePsn = sendWindow.sndNxt();
        probeTimestamp = (int) nowNs;
        probeSent = true;
        responses.onProbeSent(nowNs, probePsn);
    }

    /** Processes an ACK, the ACK part of a NACK or an attached ACK ({@link ResponseHandler#onAck}). */
    void onAck(final long nowNs, final long arrivalNs, final DirectBuffer buffer, final int ackOffset,
               final int trigger, final boolean nack) {
        if (responses.onAck(nowNs, arrivalNs, buffer, ackOffset, trigger, nack)) {
            creditHeardNs = nowNs;
        }
    }

    /** Processes the NACK header after its ACK header has been applied ({@link ResponseHandler#onNack}). */
    void onNack(final long nowNs, final DirectBuffer buffer, final int offset) {
        responses.onNack(nowNs, buffer, offset);
    }

    /** A READ_RESPONSE ({@link ResponseHandler#onReadResponse}). */
    void onReadResponse(final long nowNs, final long arrivalNs, final DirectBuffer buffer, final int offset,
                        final int payloadLength, final boolean ce) {
        responses.onReadResponse(nowNs, arrivalNs, buffer, offset, payloadLength, ce);
    }

    /** An ATOMIC_RESPONSE ({@link ResponseHandler#onAtomicResponse}). */
    void onAtomicResponse(final long nowNs, final long arrivalNs, final DirectBuffer buffer, final int offset,
                          final boolean ce) {
        responses.onAtomicResponse(nowNs, arrivalNs, buffer, offset, ce);
    }

    /**
     * Whether the responder is known to have received the request for {@code psn}: a response to
     * it or to a later PSN arrived, and responders answer in PSN order [OPS-024]. Re-requesting a
     * READ segment whose answer alone was lost repairs no hold.
     */
    private boolean requestArrived(final int psn) {
        return scoreboard.kind(psn) != KIND_DATA && lossDetector.respondedAtOrAfter(psn);
    }

    private SendWqe wqeOf(final int psn) {
        return sendQueue.at(scoreboard.wqe(psn));
    }

    /** A packet time-based detection just marked lost: its path and congestion control learn of it. */
    @Override
    public void lostByTime(final long nowNs, final int psn) {
        if (scoreboard.kind(psn) != KIND_READ) {
            // READ_RESPONSEs travel on the responder's paths, not ours [MP-008].
            signals.penalise(nowNs, scoreboard.path(psn));
        }
        signals.onLoss(nowNs, scoreboard.path(psn), false, sendWindow.sndUna());
    }

    /** @return the current reorder window of the time-based loss detection (package-private for tests) [REL-024] */
    long reorderWindowNs() {
        return lossDetector.reorderWindowNs(qp.paths());
    }

    // ------------------------------------------------------------------ timers

    void onTimers(final long nowNs) {
        timers.resumeAfterRnr(nowNs, sendWindow.sndUna(), sendWindow.sndNxt());
        if (nowNs >= lossDetector.deadlineNs()) {
            responses.detectLosses(nowNs);
        }
        timers.onExpiries(nowNs, sendWindow.sndUna(), sendWindow.sndNxt());
    }

    /**
     * A one-line account of the send side for a stalled run's error message: work requests
     * outstanding, the PSN scoreboard, credit, timers. Not for the data path (it allocates).
     */
    String describe(final long nowNs) {
        return "send queue: " + sendQueue.describe() + ", PSNs "
            + Integer.toUnsignedString(sendWindow.sndUna()) + ".." + Integer.toUnsignedString(sendWindow.sndNxt()) + " ("
            + scoreboard.inFlight() + " in flight, " + scoreboard.lostCount() + " lost awaiting retransmission, "
            + scoreboard.rnrWaitCount() + " waiting RNR), credit "
            + (sendWindow.creditLimit() == Long.MAX_VALUE ? "unlimited" : (sendWindow.creditLimit() + " from " + Integer.toUnsignedString(sendWindow.creditCumulative())))
            + (creditBlockedSinceNs != Long.MIN_VALUE ? " (blocked " + Seconds.of(nowNs - creditBlockedSinceNs)
                + ", " + creditProbes + " probes)" : "")
            + ", " + timers.describe(nowNs) + ", RTO " + Seconds.of(rtt.rtoNs())
            + ", next timer in " + (nextDeadlineNs() == Long.MAX_VALUE ? "never" : Seconds.of(nextDeadlineNs() - nowNs));
    }

    long nextDeadlineNs() {
        // The RNR delay's end, the RTO expiry and the tail probe.
        long deadline = timers.deadlineNs();
        deadline = Math.min(deadline, lossDetector.deadlineNs());
        if (hasWork()) {
            // Work held back by pacing waits for its send time [CC-002].
            final long paced = qp.congestionControl().nextSendTimeNs(lastEmitNs);
            if (paced > lastEmitNs) {
                deadline = Math.min(deadline, paced);
            }
        }
        if (creditBlockedSinceNs != Long.MIN_VALUE) {
            deadline = Math.min(deadline, creditProbeNs);
        }
        return deadline;
    }

    /**
     * Whether the tail probe due can be the next new packet [REL-026]: one of a WRITE or SEND (the
     * answer to a READ or atomic request would wait behind the outstanding ones, OPS-024) that may
     * leave now but for the congestion window and pacing — not waiting out an RNR delay, not held
     * by a FENCE or by a draining send queue ({@link SendQueue#mayStart}) — within the scoreboard and the credit.
     */
    @Override
    public boolean newPacketCanProbe() {
        if (!sendQueue.hasUnsent()) {
            return false;
        }
        final SendWqe wqe = sendQueue.nextToStart();
        if (wqe.isReadOrAtomic() || !sendQueue.mayStart(wqe, scoreboard.rnrWaitCount() > 0)) {
            return false;
        }
        return (sendWindow.sndNxt() - sendWindow.sndUna()) + 1 <= scoreboard.capacity() && (long) (sendWindow.sndNxt() - sendWindow.creditCumulative()) < sendWindow.creditLimit();
    }

    boolean hasWork() {
        return scoreboard.lostCount() > 0 || sendQueue.hasUnsent();
    }

    // ------------------------------------------------------------------ completion

    /**
     * Marks the oldest outstanding send request failed with {@code status}, for when the peer is
     * declared dead; the caller then moves the QP to ERR, which completes it [CM-030].
     */
    void failOldest(final WcStatus status) {
        sendQueue.failOldest(status);
    }

    /** As REL-029: the oldest outstanding WR carries RETRY_EXC_ERR, whichever packet ran out [REL-030]. */
    @Override
    public void retriesExhausted() {
        sendQueue.fail(wqeOf(sendWindow.sndUna()), WcStatus.RETRY_EXC_ERR, sendWindow.sndUna());
    }

    /**
     * Completes every outstanding request in post order: finished ones with SUCCESS (if
     * signaled), the failed one with its error, everything else with WR_FLUSH_ERR.
     */
    void flush() {
        sendQueue.flush();
        scoreboard.clear();
        lossDetector.cancelDeadline();
        timers.flush();
        asking.reset();
        sendWindow.flush();
    }

    /** Drops every request without completions (modify to RESET). */
    void discard() {
        sendQueue.discard();
        scoreboard.clear();
        lossDetector.reset();
        probeTimer.reset();
        asking.reset();
        timers.reset();
    }

    /** Test hook (the engine tests' TwoNodeFixture.startSequences): the first MSN and RSN instead of 0 [OPS-043]. */
    void startSequences(final int msn, final int rsn) {
        sendQueue.startSequences(msn, rsn);
    }

    /** Used by tests and counters: completions are only ever taken in order. */
    boolean isIdle() {
        return sendQueue.isIdle();
    }
}
