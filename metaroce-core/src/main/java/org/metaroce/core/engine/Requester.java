// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.engine;

import org.agrona.DirectBuffer;
import org.metaroce.core.reliability.Psn;
import org.metaroce.core.reliability.RttEstimator;
import org.metaroce.core.verbs.MemoryRegion;
import org.metaroce.core.verbs.SendRequest;
import org.metaroce.core.verbs.WcStatus;
import org.metaroce.core.verbs.WrOpcode;
import org.metaroce.core.wire.AckHeader;
import org.metaroce.core.wire.AtomicAckHeader;
import org.metaroce.core.wire.BaseHeader;
import org.metaroce.core.wire.Flags;
import org.metaroce.core.wire.MessageHeader;
import org.metaroce.core.wire.NackHeader;
import org.metaroce.core.wire.NackReason;
import org.metaroce.core.wire.Opcode;

/**
 * The sending half of a queue pair (specification sections 5 and 6): the send queue, PSN
 * assignment, reordering-tolerant loss detection, tail-loss probe, retransmission timeout, RNR
 * handling, and completions in post order.
 *
 * <p>The per-PSN scoreboard of selective repeat (one slot per outstanding PSN, its state and its
 * transmissions, and the in-flight, lost and RNR-waiting counts) is a {@link Scoreboard}: this
 * class decides when a PSN is sent, lost, delivered or held, the scoreboard keeps the record.
 * Time-based loss detection (the RACK record, the reorder window and the loss-check deadline) is
 * a {@link LossDetector}: this class tells it about deliveries, responses and spurious
 * retransmissions, and penalises the path and tells congestion control of each loss it finds.
 * The tail-loss probe's timing (the probe timeout, its backoff within an episode and PROBE_WAIT)
 * is a {@link ProbeTimer}: this class asks it when a probe is due, chooses the packet the probe
 * resends, and tells it of progress, repairs, probes, RTO expiries and spurious probes.
 * Selective repeat or go-back-N is a {@link LossRecovery}, chosen at RTS: this class asks it
 * whether RACK and the tail-loss probe run, what an RTO expiry marks lost and whether a READ
 * response out of PSN order is dropped. A request packet's bytes (opcode, offsets, flags and
 * headers) come from a {@link RequestEncoder}: this class chooses the path, claims and commits the
 * sink's room and records the transmission.
 */
final class Requester implements LossDetector.Losses, RequesterTimers.Requests {
    // The scoreboard's states and slot kinds under short names: the ACK and timer paths read them.
    private static final byte IN_FLIGHT = Scoreboard.IN_FLIGHT;
    private static final byte DELIVERED = Scoreboard.DELIVERED;
    private static final byte LOST = Scoreboard.LOST;

    /** Credit assumed before the first ACK [REL-019]. */
    private static final long INITIAL_CREDIT = 64;
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

    private final Scoreboard scoreboard;
    private final LossDetector lossDetector;
    private final ProbeTimer probeTimer;
    private final RequestEncoder encoder;
    private final CongestionSignals signals;
    private final RequesterTimers timers;
    /** Selective repeat or go-back-N, chosen at each {@link #start} from the negotiated capabilities. */
    private LossRecovery recovery = LossRecovery.SELECTIVE_REPEAT;
    /** The PSN field and Transmit Timestamp of the latest KEEPALIVE this QP sent [WIRE-065]. */
    private int probePsn;
    private int probeTimestamp;
    private boolean probeSent;
    private int sndUna;
    private int sndNxt;
    private long txSeq;
    /** Retransmissions of this QP (all causes), for per-QP observability; the endpoint counts them by cause. */
    private long retransmits;

    private RttEstimator rtt;
    /**
     * While an ACK is applied: the PSN whose latest transmission it proves arrived (its trigger,
     * echo matching), else a PSN outside the scoreboard.
     */
    private int provenPsn;
    /**
     * When the latest retransmission that may repair a lost request left (MIN_VALUE before any),
     * and the work request it belongs to: the responder holds the READs and atomics behind a
     * missing request [OPS-024], so the answer to another request sent before it gives no RTT
     * sample [REL-063].
     */
    private long holdRepairNs = Long.MIN_VALUE;
    private long holdRepairWqe = -1;
    /** The work request whose spurious retransmission last gave an RTT sample (one per request) [REL-064]. */
    private long spuriousSampleWqe = -1;
    /** Latest non-stale Cumulative PSN and Credit: the responder's admission limit [REL-019]. */
    private int creditCumulative;
    private long creditLimit = INITIAL_CREDIT;
    /**
     * When the credit began to block every transmission with nothing outstanding (MIN_VALUE while
     * it does not), the time of the next KEEPALIVE probe that asks for a fresh Credit, and the
     * probes sent in this episode (for the backoff) [REL-019], [CM-029].
     */
    private long creditBlockedSinceNs = Long.MIN_VALUE;
    private long creditProbeNs = Long.MAX_VALUE;
    private int creditProbes;
    /** CE Count of the latest non-stale ACK [REL-018]; an increase is a CE signal even when coalesced [CC-012]. */
    private int lastCeCount;
    private int consecutiveRnr;
    /** The time of the latest emit: pacing deadlines are only reported when still ahead of it. */
    private long lastEmitNs = Long.MIN_VALUE;

    Requester(final RequesterContext qp, final int sendQueueDepth, final int maxSge, final EndpointConfig config,
              final EndpointCounters counters) {
        this.qp = qp;
        this.config = config;
        this.counters = counters;
        sendQueue = new SendQueue(qp, sendQueueDepth, maxSge, config.maxInlineData(), counters);
        scoreboard = new Scoreboard(config.receiveWindowPackets());
        lossDetector = new LossDetector(scoreboard, config, this);
        probeTimer = new ProbeTimer(config);
        encoder = new RequestEncoder(qp.writer());
        signals = new CongestionSignals(qp);
        timers = new RequesterTimers(qp, counters, scoreboard, probeTimer, signals, this);
    }

    /** Called on RTR→RTS: the first PSN this side sends and the timers' parameters. */
    void start(final int initialPsn, final long initialRtoNs) {
        sndUna = initialPsn;
        sndNxt = initialPsn;
        creditCumulative = initialPsn;
        provenPsn = initialPsn - 1;
        creditLimit = INITIAL_CREDIT;
        lastCeCount = 0;
        final long min = Math.min(config.minRtoNs(), initialRtoNs);
        rtt = new RttEstimator(initialRtoNs, min, Math.max(config.maxRtoNs(), initialRtoNs),
            config.ackCoalesceDelayNs());
        lossDetector.start(rtt, min);
        probeTimer.start(rtt);
        recovery = LossRecovery.of(qp.isGoBackN(), scoreboard, counters);
        timers.start(rtt, recovery);
    }

    /** Applies a new TIMEOUT (initial RTO and floor) from a modify of an RTS or SQD queue pair. */
    void timeout(final long initialRtoNs) {
        final long min = Math.min(config.minRtoNs(), initialRtoNs);
        rtt.reconfigure(initialRtoNs, min, Math.max(config.maxRtoNs(), initialRtoNs));
    }

    int queued() {
        return sendQueue.queued();
    }

    /** @return send work requests that have started and not yet completed */
    int startedOutstanding() {
        return sendQueue.startedOutstanding();
    }

    int nextPsn() {
        return sndNxt;
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
        return sndUna;
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
        emitted += probeCredit(nowNs, sink, budget - emitted);
        qp.congestionControl().onSendOpportunity(nowNs, scoreboard.inFlight(), hasWork());
        return emitted;
    }

    /** @return whether the credit blocks all transmission with nothing outstanding [REL-019] */
    boolean isCreditBlocked() {
        return scoreboard.inFlight() == 0 && scoreboard.lostCount() == 0 && scoreboard.rnrWaitCount() == 0
            && sndUna == sndNxt && sendQueue.hasUnsent() && !qp.isSendQueueDraining()
            && (long) (sndNxt - creditCumulative) >= creditLimit;
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
        if (creditBlockedSinceNs == Long.MIN_VALUE) {
            creditBlockedSinceNs = nowNs;
            creditProbeNs = nowNs + rtt.rtoNs();
            return 0;
        }
        if (nowNs < creditProbeNs || budget <= 0 || !qp.sendProbe(nowNs, sink, creditProbes)) {
            return 0;
        }
        creditProbes++;
        final long backoff = rtt.rtoNs() << Math.min(creditProbes, 16);
        creditProbeNs = nowNs + Math.min(backoff, Math.max(config.maxRtoNs(), rtt.rtoNs()));
        return 1;
    }

    private int retransmitLost(final long nowNs, final TransmitSink sink, final int budget) {
        int emitted = 0;
        final int window = Math.max(1, qp.congestionControl().windowPackets());
        for (int psn = sndUna; psn != sndNxt && emitted < budget && scoreboard.lostCount() > 0; psn++) {
            if (scoreboard.state(psn) != LOST) {
                continue;
            }
            // Retransmissions are in flight like any packet: window and pacing apply, except that
            // one may leave when nothing is in flight, and one per RTO expiry or probe [CC-001].
            if (scoreboard.inFlight() > 0 && scoreboard.inFlight() + 1 > window && !timers.fullWindowRetransmitAllowed()) {
                break;
            }
            if (qp.congestionControl().nextSendTimeNs(nowNs) > nowNs) {
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
                while (run < config.readChunkPackets() && psn + run != sndNxt) {
                    final int r = psn + run;
                    if (scoreboard.state(r) != LOST || scoreboard.kind(r) != KIND_READ
                        || scoreboard.wqe(r) != scoreboard.wqe(psn)) {
                        break;
                    }
                    run++;
                }
            }
            if (!transmit(nowNs, sink, psn, true, false, run)) {
                break;
            }
            final EndpointCounter cause = scoreboard.lossCause(psn);
            counters.increment(cause);
            qp.countRetransmit(cause);
            if (cause != EndpointCounter.RETRANSMITS_TAIL_PROBE) {
                probeTimer.onRepair(nowNs);
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
                final long room = creditLimit - (long) (sndNxt - creditCumulative);
                if (room >= 1 && room < need) {
                    need = (int) room;
                }
            }
            final boolean probe = timers.probeWithNew();
            if (!probe && scoreboard.inFlight() > 0 && scoreboard.inFlight() + need > window) {
                break;
            }
            if ((sndNxt - sndUna) + need > scoreboard.capacity()) {
                break;
            }
            if ((long) ((sndNxt + need - 1) - creditCumulative) >= creditLimit) {
                break;
            }
            if (!probe && qp.congestionControl().nextSendTimeNs(nowNs) > nowNs) {
                break;
            }
            sendQueue.start(wqe, sndNxt);
            final int firstNewPsn = sndNxt;
            final byte kind = wqe.opcode == WrOpcode.RDMA_READ ? KIND_READ : wqe.isAtomic() ? KIND_ATOMIC : KIND_DATA;
            for (int i = 0; i < need; i++) {
                scoreboard.assign(sndNxt + i, sendQueue.nextToStartSeq(), wqe.psnsAssigned + i, kind);
            }
            final boolean wasIdle = scoreboard.inFlight() == 0;
            if (!transmit(nowNs, sink, firstNewPsn, false, probe, need)) {
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
            sndNxt += need;
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
     * @return false when the sink had no room
     */
    private boolean transmit(final long nowNs, final TransmitSink sink, final int psn, final boolean retransmit,
                             final boolean probe, final int readSegments) {
        final SendWqe wqe = wqeOf(psn);
        final int maxLength = encoder.layout(wqe, scoreboard.index(psn), readSegments, qp.pathMtu());
        final int pathId = retransmit && scoreboard.transmissions(psn) > 0
            ? qp.paths().forRetransmission(nowNs, scoreboard.path(psn)) : qp.paths().next(nowNs);
        final int entropy = qp.paths().entropy(pathId);
        final int offset = sink.claim(maxLength, entropy);
        if (offset == TransmitSink.NO_ROOM) {
            return false;
        }
        final int length = encoder.write(sink.buffer(), offset, psn, retransmit, probe, pathId, nowNs, qp.destQpn(),
            qp.qpn());
        qp.commit(sink, offset, length, entropy);
        qp.congestionControl().onPacketSent(nowNs, length, pathId);

        timers.onTransmit(nowNs);
        if (retransmit && !requestArrived(psn)) {
            holdRepairNs = nowNs;
            holdRepairWqe = scoreboard.wqe(psn);
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
        probePsn = sndNxt;
        probeTimestamp = (int) nowNs;
        probeSent = true;
    }

    /** Processes an ACK or the ACK part of a NACK. */
    /**
     * @param nowNs the current time
     * @param arrivalNs when the ACK reached the host: the RTT sample ends there [REL-020, REL-066]
     */
    void onAck(final long nowNs, final long arrivalNs, final DirectBuffer buffer, final int offset,
               final Opcode opcode) {
        final int ackOffset = offset + opcode.ackOffset();
        final int cumulative = AckHeader.cumulativePsn(buffer, ackOffset);
        final long bitmap = AckHeader.sackBitmap(buffer, ackOffset);
        if (Psn.before(sndNxt, cumulative)) {
            counters.increment(EndpointCounter.ACK_FOR_UNSENT_PSN);
            return;
        }
        if (bitmap != 0) {
            final int highest = cumulative + 1 + (63 - Long.numberOfLeadingZeros(bitmap));
            if (!Psn.before(highest, sndNxt)) {
                counters.increment(EndpointCounter.ACK_FOR_UNSENT_PSN);
                return;
            }
        }
        final int trigger = BaseHeader.psn(buffer, offset);
        final int echoedTimestamp = AckHeader.echoedTimestamp(buffer, ackOffset);
        final int echoedPath = AckHeader.echoedPathId(buffer, ackOffset);
        final int ackFlags = AckHeader.ackFlags(buffer, ackOffset);
        final boolean ecnEcho = (ackFlags & AckHeader.FLAG_ECN_ECHO) != 0;
        // The echo must match the trigger's latest transmission, else it proves nothing [REL-017].
        final boolean echoMatches = inScoreboard(trigger)
            && (int) scoreboard.sentNs(trigger) == echoedTimestamp && !scoreboard.isProbeTwin(trigger);
        long sample = 0;
        if (echoMatches && scoreboard.transmissions(trigger) == 1 && !scoreboard.isSentAsProbe(trigger)) {
            final long rttNs = ((int) arrivalNs - echoedTimestamp - AckHeader.ackDelay(buffer, ackOffset))
                & 0xFFFF_FFFFL;
            if (rttNs > 0 && rttNs < 1_000_000_000L) {
                sample = rttNs;
                rtt.onSample(sample);
                lossDetector.onRttSample(sample);
            }
        }
        boolean ceSeen = ecnEcho;
        if (!Psn.before(cumulative, creditCumulative)) {
            final boolean advanced = cumulative != creditCumulative;
            creditCumulative = cumulative;
            creditLimit = AckHeader.credit(buffer, ackOffset) & 0xFFFF_FFFFL;
            qp.congestionControl().onCredit(nowNs, creditLimit);
            // Marks on packets that did not trigger this (coalesced) ACK show only in the count.
            final int ceCount = AckHeader.ceCount(buffer, ackOffset);
            ceSeen |= ceCount - lastCeCount > 0;
            lastCeCount = ceCount;
            if (advanced && scoreboard.windowNacked() > 0) {
                resendAdmittedWindowNacks();
            }
        }
        // The slot of an already delivered PSN keeps its record until the PSN one window later
        // reuses it, so a late DUPLICATE report can still be judged.
        final boolean recorded = Psn.before(trigger, sndNxt) && sndNxt - trigger <= scoreboard.capacity();
        if ((ackFlags & AckHeader.FLAG_DUPLICATE) != 0 && recorded
            && scoreboard.transmissions(trigger) > 1
            && ((int) scoreboard.sentNs(trigger) != echoedTimestamp
                || scoreboard.transmissions(trigger) == 2)) {
            // Two copies arrived: the earlier one after all (echo of an earlier transmission), or
            // the single retransmission after the original: the retransmission was spurious [REL-025].
            counters.increment(EndpointCounter.SPURIOUS_RETRANSMITS);
            if (scoreboard.kind(trigger) == KIND_DATA) {
                // For a READ or atomic a duplicate request proves only that the request arrived;
                // a second answer shows the re-request was needless (onSecondAnswer) [REL-064].
                onSpuriousRetransmission(arrivalNs, trigger);
            }
            lossDetector.onSpuriousRetransmission();
        }
        // The one PSN whose latest transmission this ACK proves arrived: its trigger, when the echo
        // matches that transmission [REL-017], [REL-023].
        provenPsn = opcode == Opcode.ACK && echoMatches ? trigger : sndUna - 1;
        if (timers.echoPrecedesExpiry(echoedTimestamp) && !echoMatches && inScoreboard(trigger)
            && scoreboard.isOutstanding(trigger) && !scoreboard.isProbeTwin(trigger) && Psn.before(trigger, cumulative)) {
            // The ACK that delivers the trigger echoes a transmission from before the expiry, not
            // the retransmission the expiry made: that transmission arrived, late, not lost
            // (Eifel, RFC 3522). Without this, the oldest packet, the one the expiry resent, is
            // the first an ACK after a host's pause delivers, and its latest transmission is the
            // retransmission, so the episode ended as a real loss [REL-058].
            timers.timeoutProvedSpurious(nowNs);
        }
        int delivered = 0;
        for (int psn = sndUna; Psn.before(psn, cumulative); psn++) {
            if (scoreboard.kind(psn) == KIND_DATA && deliver(nowNs, psn)) {
                delivered++;
            }
        }
        long bits = bitmap;
        while (bits != 0) {
            final int i = Long.numberOfTrailingZeros(bits);
            bits &= bits - 1;
            final int psn = cumulative + 1 + i;
            if (inScoreboard(psn) && scoreboard.kind(psn) == KIND_DATA && deliver(nowNs, psn)) {
                counters.increment(EndpointCounter.SACKED_PACKETS);
                delivered++;
            }
        }
        if (opcode == Opcode.ACK && echoMatches && scoreboard.kind(trigger) == KIND_DATA && deliver(nowNs, trigger)) {
            delivered++;
        }
        provenPsn = sndUna - 1;
        if (echoMatches && echoedPath == scoreboard.path(trigger)) {
            // Only feedback about the transmission it came from is attributed to a path [MP-005].
            final double weight = signals.weightOf(echoedPath);
            qp.paths().onFeedback(nowNs, echoedPath, sample, ecnEcho);
            signals.tracePenalty(nowNs, echoedPath, weight, TraceEvent.CAUSE_FEEDBACK);
        }
        if (ceSeen) {
            counters.increment(EndpointCounter.ECN_ECHOES_IN);
        }
        if (delivered > 0 || ceSeen) {
            final int window = qp.congestionControl().windowPackets();
            qp.congestionControl().onAck(nowNs, delivered, sample, ceSeen, echoedPath);
            signals.traceWindow(nowNs, sndUna, window, TraceEvent.CAUSE_ECN);
        }
        afterDelivery(nowNs, delivered);
    }

    /** Processes the NACK header after its ACK header has been applied. */
    void onNack(final long nowNs, final DirectBuffer buffer, final int offset) {
        final int nackOffset = offset + Opcode.NACK.nackOffset();
        final int psn = NackHeader.nackPsn(buffer, nackOffset);
        final NackReason reason = NackReason.of(NackHeader.reason(buffer, nackOffset));
        if (reason == null || !inScoreboard(psn)) {
            return;
        }
        final byte state = scoreboard.state(psn);
        switch (reason) {
            case TRIMMED -> {
                if (state == IN_FLIGHT) {
                    scoreboard.lost(psn, EndpointCounter.RETRANSMITS_TRIMMED);
                    scoreboard.trimmed(psn);
                    final short path = scoreboard.path(psn);
                    final double weight = signals.weightOf(path);
                    qp.paths().onTrim(nowNs, path);
                    signals.tracePenalty(nowNs, path, weight, TraceEvent.CAUSE_TRIM);
                    signals.onLoss(nowNs, path, true, sndUna);
                    // The responder is reachable and the packet goes out again at once: the
                    // retransmission timer restarts, but the retry count is not reset [REL-036].
                    timers.restart(nowNs);
                }
            }
            case PSN_WINDOW -> {
                // Not resent now [REL-061]: it waits, outstanding, for an ACK that admits it or for
                // the probe, RACK or retransmission timer. Retransmissions are exempt from the
                // credit [REL-019], so an immediate resend would meet the same full window again.
                if (state == IN_FLIGHT) {
                    scoreboard.windowNacked(psn, creditCumulative);
                }
            }
            case RNR -> {
                counters.increment(EndpointCounter.RNR_NACKS_IN);
                final int retry = qp.rnrRetry();
                if (scoreboard.rnrWaitCount() == 0) {
                    // One episode per RNR delay, however many RNR NACKs arrive in it [REL-040].
                    consecutiveRnr++;
                }
                if (retry != 7 && consecutiveRnr > retry) {
                    qp.recordFailure("the peer had no receive posted " + consecutiveRnr + " times in a row "
                        + "(RNR_RETRY " + retry + ") [REL-040]");
                    fail(wqeOf(psn), WcStatus.RNR_RETRY_EXC_ERR);
                    return;
                }
                if (state == IN_FLIGHT || state == LOST) {
                    scoreboard.heldForRnr(psn);
                }
                final int units = NackHeader.rnrTimer(buffer, nackOffset);
                final long delay = units == 0 ? qp.minRnrTimerNs() : units * 10_000L;
                timers.onRnrDelay(nowNs + delay);
                qp.trace(nowNs, TraceEvent.RNR_NACK, psn, consecutiveRnr, 0, delay);
            }
            case REMOTE_ACCESS, INVALID_REQUEST, REMOTE_OPERATION -> {
                qp.recordFailure("the peer refused the request at PSN " + Integer.toUnsignedString(psn) + " with NACK "
                    + reason + " [REL-007]");
                fail(wqeOf(psn), reason == NackReason.REMOTE_ACCESS ? WcStatus.REM_ACCESS_ERR
                    : reason == NackReason.INVALID_REQUEST ? WcStatus.REM_INV_REQ_ERR : WcStatus.REM_OP_ERR);
            }
            case SEQUENCE_GAP -> {
                // Go-back-N baseline: everything from the NACK PSN up to the last sent is resent, in
                // PSN order [REL-054].
                boolean any = false;
                for (int p = psn; p != sndNxt; p++) {
                    if (scoreboard.state(p) == IN_FLIGHT) {
                        scoreboard.lost(p, EndpointCounter.RETRANSMITS_GO_BACK_N);
                        any = true;
                    }
                }
                if (any) {
                    signals.onLoss(nowNs, scoreboard.path(psn), false, sndUna);
                }
            }
            default -> {
                // Unknown reasons were filtered above [WIRE-064].
            }
        }
    }

    /**
     * @param nowNs the current time
     * @param arrivalNs when the response reached the host: RTT samples end there [REL-063, REL-066]
     */
    void onReadResponse(final long nowNs, final long arrivalNs, final DirectBuffer buffer, final int offset,
                        final int payloadLength) {
        final int psn = BaseHeader.psn(buffer, offset);
        final boolean trimmed = (BaseHeader.flags(buffer, offset) & Flags.TRIMMED) != 0;
        if (trimmed) {
            // A trimmed response is a loss signal only: re-request that part at once [REL-037].
            if (inScoreboard(psn) && scoreboard.kind(psn) == KIND_READ
                && scoreboard.state(psn) == IN_FLIGHT) {
                scoreboard.lost(psn, EndpointCounter.RETRANSMITS_TRIMMED);
                scoreboard.trimmed(psn);
            } else {
                counters.increment(EndpointCounter.TRIMMED_IGNORED);
            }
            return;
        }
        if (!inScoreboard(psn) || scoreboard.kind(psn) != KIND_READ) {
            countStrayResponse(arrivalNs, psn, KIND_READ);
            return;
        }
        if (recovery.dropsResponse(psn, sndUna, sndNxt)) {
            return;
        }
        lossDetector.onResponse(nowNs, psn);
        if (scoreboard.state(psn) == DELIVERED) {
            counters.increment(EndpointCounter.DUPLICATE_RESPONSE);
            onSecondAnswer(arrivalNs, psn);
            return;
        }
        final SendWqe wqe = wqeOf(psn);
        final int msgOffset = offset + Opcode.READ_RESPONSE.msgOffset();
        final long messageOffset = MessageHeader.messageOffset(buffer, msgOffset);
        final long expectedOffset = (long) scoreboard.index(psn) * qp.pathMtu();
        final long expectedLength = Math.min(qp.pathMtu(), wqe.length - expectedOffset);
        if (messageOffset != expectedOffset || payloadLength != expectedLength
            || MessageHeader.messageLength(buffer, msgOffset) != wqe.length) {
            counters.increment(EndpointCounter.BAD_RESPONSE);
            return;
        }
        if (!wqe.destinationsValid()) {
            // The destination was deregistered after the post: nothing is written [MEM-014, REL-050].
            qp.recordFailure("the destination of a READ or atomic at PSN " + Integer.toUnsignedString(psn)
                + " was deregistered after the post [MEM-014]");
            fail(wqe, WcStatus.LOC_PROT_ERR);
            return;
        }
        wqe.scatter(messageOffset, buffer, offset + Opcode.READ_RESPONSE.headerLength(), payloadLength);
        sampleResponse(arrivalNs, psn);
        deliver(nowNs, psn);
        afterDelivery(nowNs, 1);
    }

    /**
     * A READ or atomic response answers a request the requester timed itself: when that request
     * was sent once, the time to its answer is an RTT sample [REL-063]. It is what the timers of a
     * QP that only reads must wait for, the responder's answers to earlier requests included,
     * which no ACK shows.
     */
    private void sampleResponse(final long nowNs, final int psn) {
        if (scoreboard.transmissions(psn) == 1) {
            responseSample(nowNs, psn);
        }
    }

    /**
     * A second answer to a delivered READ or atomic slot that was requested again: the re-request
     * was needless, the first answer was only late [REL-064]. Its wait, first request to this
     * answer, bounds from above how late: an RTT sample (Eifel, RFC 4015), one per work request,
     * without which a QP that only reads, whose answers give samples only while nothing is
     * retransmitted, would keep timers that misfire for ever [REL-064].
     */
    private void onSecondAnswer(final long nowNs, final int psn) {
        if (scoreboard.transmissions(psn) < 2) {
            return;
        }
        onSpuriousRetransmission(nowNs, psn);
        if (scoreboard.wqe(psn) != spuriousSampleWqe) {
            spuriousSampleWqe = scoreboard.wqe(psn);
            responseSample(nowNs, psn);
        }
    }

    /**
     * A retransmission of this PSN proved needless at {@code nowNs}: when it was a tail probe, the
     * probe timer learns PROBE_WAIT from the wait it revealed ({@link ProbeTimer#onSpuriousProbe})
     * [REL-065].
     */
    private void onSpuriousRetransmission(final long nowNs, final int psn) {
        if (scoreboard.lossCause(psn) == EndpointCounter.RETRANSMITS_TAIL_PROBE) {
            probeTimer.onSpuriousProbe(nowNs, scoreboard.firstSentNs(psn));
        }
    }

    /**
     * Feeds {@code now − first transmission} of a READ or atomic slot as an RTT sample, unless a
     * request of another work request may have been repaired since that transmission: the
     * responder may have held this one behind it [OPS-024], and the wait would be the repair's,
     * not the path's [REL-063].
     */
    private void responseSample(final long nowNs, final int psn) {
        if (holdRepairNs >= scoreboard.firstSentNs(psn) && holdRepairWqe != scoreboard.wqe(psn)) {
            return;
        }
        final long rttNs = nowNs - scoreboard.firstSentNs(psn);
        if (rttNs > 0 && rttNs < 1_000_000_000L) {
            rtt.onSample(rttNs);
        }
    }

    /** See {@link #onReadResponse}. */
    void onAtomicResponse(final long nowNs, final long arrivalNs, final DirectBuffer buffer, final int offset) {
        final int psn = BaseHeader.psn(buffer, offset);
        if (!inScoreboard(psn) || scoreboard.kind(psn) != KIND_ATOMIC) {
            countStrayResponse(arrivalNs, psn, KIND_ATOMIC);
            return;
        }
        if (scoreboard.state(psn) == DELIVERED) {
            counters.increment(EndpointCounter.DUPLICATE_RESPONSE);
            onSecondAnswer(arrivalNs, psn);
            return;
        }
        lossDetector.onResponse(nowNs, psn);
        final SendWqe wqe = wqeOf(psn);
        final long original = AtomicAckHeader.originalData(buffer, offset + Opcode.ATOMIC_RESPONSE.aackOffset());
        if (!wqe.destinationsValid()) {
            qp.recordFailure("the destination of a READ or atomic at PSN " + Integer.toUnsignedString(psn)
                + " was deregistered after the post [MEM-014]");
            fail(wqe, WcStatus.LOC_PROT_ERR);
            return;
        }
        // The original value lands in the local buffer in host order, as verbs atomics do.
        final MemoryRegion mr = wqe.sgeRegion[0];
        mr.buffer().putLong((int) mr.offsetOf(wqe.sgeAddr[0]), original);
        sampleResponse(arrivalNs, psn);
        deliver(nowNs, psn);
        afterDelivery(nowNs, 1);
    }

    /**
     * A response outside the scoreboard: one for a PSN already resolved (its READ or atomic has
     * completed) is a duplicate; anything else answers nothing outstanding [REL-043].
     */
    private void countStrayResponse(final long nowNs, final int psn, final byte kind) {
        final boolean resolved = Psn.before(psn, sndUna);
        counters.increment(resolved ? EndpointCounter.DUPLICATE_RESPONSE : EndpointCounter.UNEXPECTED_RESPONSE);
        // A resolved slot keeps its record until its PSN one window later reuses it.
        if (resolved && sndNxt - psn <= scoreboard.capacity() && scoreboard.kind(psn) == kind) {
            onSecondAnswer(nowNs, psn);
        }
    }

    /**
     * Whether the responder is known to have received the request for {@code psn}: a response to
     * it or to a later PSN arrived, and responders answer in PSN order [OPS-024]. Re-requesting a
     * READ segment whose answer alone was lost repairs no hold.
     */
    private boolean requestArrived(final int psn) {
        return scoreboard.kind(psn) != KIND_DATA && lossDetector.respondedAtOrAfter(psn);
    }

    private boolean inScoreboard(final int psn) {
        return Psn.beforeOrEqual(sndUna, psn) && Psn.before(psn, sndNxt);
    }

    private SendWqe wqeOf(final int psn) {
        return sendQueue.at(scoreboard.wqe(psn));
    }

    /** @return whether the PSN was newly delivered */
    private boolean deliver(final long nowNs, final int psn) {
        if (!scoreboard.isOutstanding(psn)) {
            // Already delivered, or not sent: nothing new.
            return false;
        }
        scoreboard.delivered(psn);
        // A transmission from before the timer expired delivered shows it late, not lost.
        timers.onDelivered(nowNs, scoreboard.sentNs(psn));
        lossDetector.onDelivered(psn, psn == provenPsn);
        sendQueue.delivered(wqeOf(psn));
        return true;
    }

    private void afterDelivery(final long nowNs, final int delivered) {
        if (delivered > 0) {
            timers.onProgress(nowNs);
            consecutiveRnr = 0;
        }
        while (sndUna != sndNxt && scoreboard.state(sndUna) == DELIVERED) {
            scoreboard.free(sndUna);
            sndUna++;
        }
        detectLosses(nowNs);
        sendQueue.completeInOrder();
    }

    /**
     * Time-based loss detection over the outstanding PSNs ({@link LossDetector#detectLosses});
     * after its {@link LossDetector#EPISODES_TO_SHRINK}th loss episode without a spurious
     * retransmission the probe wait halves with the reorder window: the path loses packets, so
     * probes that come soon pay [REL-024, REL-065].
     */
    private void detectLosses(final long nowNs) {
        if (recovery.rack() && lossDetector.detectLosses(nowNs, sndUna, sndNxt, qp.paths())) {
            probeTimer.onLossEpisodes();
        }
    }

    /** A packet time-based detection just marked lost: its path and congestion control learn of it. */
    @Override
    public void lostByTime(final long nowNs, final int psn) {
        if (scoreboard.kind(psn) != KIND_READ) {
            // READ_RESPONSEs travel on the responder's paths, not ours [MP-008].
            signals.penalise(nowNs, scoreboard.path(psn));
        }
        signals.onLoss(nowNs, scoreboard.path(psn), false, sndUna);
    }

    /** @return the current reorder window of the time-based loss detection (package-private for tests) [REL-024] */
    long reorderWindowNs() {
        return lossDetector.reorderWindowNs(qp.paths());
    }

    /**
     * After an ACK moved the Cumulative PSN forward: every packet a PSN_WINDOW NACK answered while
     * the cumulative point was before the new one, and that the new Credit admits, is sent again
     * [REL-061]. Each such resend needs the cumulative point to move, so NACKs cannot make it
     * repeat within one instant.
     */
    private void resendAdmittedWindowNacks() {
        for (int psn = sndUna; psn != sndNxt && scoreboard.windowNacked() > 0; psn++) {
            if (scoreboard.isWindowNacked(psn) && Psn.before(scoreboard.windowNackCumulative(psn), creditCumulative)
                && (long) (psn - creditCumulative) < creditLimit) {
                scoreboard.lostWithRequest(psn, EndpointCounter.RETRANSMITS_PSN_WINDOW, sndNxt);
            }
        }
    }

    // ------------------------------------------------------------------ timers

    void onTimers(final long nowNs) {
        timers.resumeAfterRnr(nowNs, sndUna, sndNxt);
        if (nowNs >= lossDetector.deadlineNs()) {
            detectLosses(nowNs);
        }
        timers.onExpiries(nowNs, sndUna, sndNxt);
    }

    /**
     * A one-line account of the send side for a stalled run's error message: work requests
     * outstanding, the PSN scoreboard, credit, timers. Not for the data path (it allocates).
     */
    String describe(final long nowNs) {
        return "send queue: " + sendQueue.describe() + ", PSNs "
            + Integer.toUnsignedString(sndUna) + ".." + Integer.toUnsignedString(sndNxt) + " ("
            + scoreboard.inFlight() + " in flight, " + scoreboard.lostCount() + " lost awaiting retransmission, "
            + scoreboard.rnrWaitCount() + " waiting RNR), credit "
            + (creditLimit == Long.MAX_VALUE ? "unlimited" : (creditLimit + " from " + Integer.toUnsignedString(creditCumulative)))
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
        return (sndNxt - sndUna) + 1 <= scoreboard.capacity() && (long) (sndNxt - creditCumulative) < creditLimit;
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
        fail(wqeOf(sndUna), WcStatus.RETRY_EXC_ERR);
    }

    /** Ends the QP with {@code status} on {@code wqe}: the QP goes to ERR, which flushes the rest. */
    private void fail(final SendWqe wqe, final WcStatus status) {
        if (wqe.error == null) {
            wqe.error = status;
        }
        qp.trace(TraceEvent.WR_FAILED, sndUna, status.ordinal(), 0, 0);
        qp.enterError(AsyncEventType.QP_FATAL);
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
        sndUna = sndNxt;
    }

    /** Drops every request without completions (modify to RESET). */
    void discard() {
        sendQueue.discard();
        scoreboard.clear();
        lossDetector.reset();
        probeTimer.reset();
        timers.reset();
    }

    /** Test hook ({@link QueuePair#startSequencesForTesting}): the first MSN and RSN instead of 0 [OPS-043]. */
    void startSequences(final int msn, final int rsn) {
        sendQueue.startSequences(msn, rsn);
    }

    /** Used by tests and counters: completions are only ever taken in order. */
    boolean isIdle() {
        return sendQueue.isIdle();
    }
}
