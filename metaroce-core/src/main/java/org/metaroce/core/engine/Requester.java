// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.engine;

import org.agrona.DirectBuffer;
import org.metaroce.core.reliability.Psn;
import org.metaroce.core.reliability.RttEstimator;
import org.metaroce.core.verbs.MemoryRegion;
import org.metaroce.core.verbs.PostStatus;
import org.metaroce.core.verbs.ScatterGatherEntry;
import org.metaroce.core.verbs.SendFlags;
import org.metaroce.core.verbs.SendRequest;
import org.metaroce.core.verbs.WcOpcode;
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
final class Requester implements LossDetector.Losses {
    // The scoreboard's states and slot kinds under short names: the ACK and timer paths read them.
    private static final byte IN_FLIGHT = Scoreboard.IN_FLIGHT;
    private static final byte DELIVERED = Scoreboard.DELIVERED;
    private static final byte LOST = Scoreboard.LOST;
    private static final byte RNR_WAIT = Scoreboard.RNR_WAIT;

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

    private final SendWqe[] ring;
    private long head;
    private long nextToStart;
    private long tail;

    private final Scoreboard scoreboard;
    private final LossDetector lossDetector;
    private final ProbeTimer probeTimer;
    private final RequestEncoder encoder;
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
    private int nextMsn;
    private int nextRsn;
    private int outstandingReadAtomic;

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
    private long progressNs;
    /**
     * Since when the requester has had work outstanding without progress: the last delivery, or the
     * first transmission after an idle period. RETRY_TIMEOUT runs from here [REL-060]; unlike
     * {@link #progressNs} it is not moved by timer expiries.
     */
    private long stalledSinceNs;
    private long lastTransmitNs;
    /**
     * An RTO expiry or a tail probe has granted one retransmission that may leave although the
     * window is full [CC-001]. Without it a window cut to one packet by the RTO [CC-003] stays
     * full of packets lost in a black hole, and the QP spends its retries without sending.
     */
    private boolean fullWindowRetransmitAllowed;
    /**
     * A tail probe is due and is the next new packet, which leaves although the window is full or
     * pacing would hold it [REL-026], as RACK-TLP sends new data (RFC 8985, 7.3).
     */
    private boolean probeWithNew;
    private int consecutiveTimeouts;
    /** Time of the retransmission-timer expiry whose outcome is still unknown, or {@link #NO_EXPIRY}. */
    private long timeoutEpisodeNs = NO_EXPIRY;
    private static final long NO_EXPIRY = Long.MIN_VALUE;
    private int consecutiveRnr;
    private long rnrResumeNs = Long.MAX_VALUE;
    /** The time of the latest emit: pacing deadlines are only reported when still ahead of it. */
    private long lastEmitNs = Long.MIN_VALUE;

    Requester(final RequesterContext qp, final int sendQueueDepth, final int maxSge, final EndpointConfig config,
              final EndpointCounters counters) {
        this.qp = qp;
        this.config = config;
        this.counters = counters;
        ring = new SendWqe[sendQueueDepth];
        for (int i = 0; i < sendQueueDepth; i++) {
            ring[i] = new SendWqe(maxSge, config.maxInlineData());
        }
        scoreboard = new Scoreboard(config.receiveWindowPackets());
        lossDetector = new LossDetector(scoreboard, config, this);
        probeTimer = new ProbeTimer(config);
        encoder = new RequestEncoder(qp.writer());
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
    }

    /** Applies a new TIMEOUT (initial RTO and floor) from a modify of an RTS or SQD queue pair. */
    void timeout(final long initialRtoNs) {
        final long min = Math.min(config.minRtoNs(), initialRtoNs);
        rtt.reconfigure(initialRtoNs, min, Math.max(config.maxRtoNs(), initialRtoNs));
    }

    int queued() {
        return (int) (tail - head);
    }

    /** @return send work requests that have started and not yet completed */
    int startedOutstanding() {
        return (int) (nextToStart - head) + (nextToStart != tail && ring[(int) (nextToStart % ring.length)].started ? 1 : 0);
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
        long inlineOffset = 0;
        for (int i = 0; i < n; i++) {
            final ScatterGatherEntry sge = wr.sge(i);
            final MemoryRegion mr = qp.pd().lookupLkey(sge.lkey());
            wqe.sgeAddr[i] = sge.addr();
            wqe.sgeLength[i] = sge.length();
            wqe.sgeRegion[i] = mr;
            if (inline) {
                wqe.inline.putBytes((int) inlineOffset, mr.buffer(), (int) mr.offsetOf(sge.addr()), sge.length());
                inlineOffset += sge.length();
            }
        }
        wqe.numSge = n;
        wqe.isInline = inline;
        switch (wqe.opcode) {
            case RDMA_READ, SEND, SEND_WITH_IMM, RDMA_WRITE, RDMA_WRITE_WITH_IMM ->
                wqe.psnCount = (int) Math.max(1, (wqe.length + pathMtu - 1) / pathMtu);
            default -> wqe.psnCount = 1;
        }
        tail++;
        return PostStatus.OK;
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
            && sndUna == sndNxt && nextToStart != tail && !qp.isSendQueueDraining()
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
            if (scoreboard.inFlight() > 0 && scoreboard.inFlight() + 1 > window && !fullWindowRetransmitAllowed) {
                break;
            }
            if (qp.congestionControl().nextSendTimeNs(nowNs) > nowNs) {
                break;
            }
            final int trims = scoreboard.trimmedTransmissions(psn);
            if ((scoreboard.transmissions(psn) - scoreboard.rnrRetransmissions(psn) - trims >= MAX_TRANSMISSIONS
                    && retryTimeoutSpent(nowNs, scoreboard.firstSentNs(psn)))
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
                fail(ring[(int) (scoreboard.wqe(sndUna) % ring.length)], WcStatus.RETRY_EXC_ERR);
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
            fullWindowRetransmitAllowed = false;
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
        while (emitted < budget && nextToStart != tail) {
            final SendWqe wqe = ring[(int) (nextToStart % ring.length)];
            if (scoreboard.rnrWaitCount() > 0 && wqe.consumesReceive()) {
                // The responder has no receive posted: later receive-consuming messages wait out
                // the RNR delay too instead of collecting RNR NACKs of their own [REL-039].
                break;
            }
            if (!wqe.started) {
                if (qp.isSendQueueDraining()) {
                    break;
                }
                if ((wqe.sendFlags & SendFlags.FENCE) != 0 && outstandingReadAtomic > 0) {
                    break;
                }
                if (wqe.isReadOrAtomic() && outstandingReadAtomic >= qp.maxRdAtomic()) {
                    break;
                }
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
            final boolean probe = probeWithNew;
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
            if (!wqe.started) {
                wqe.started = true;
                wqe.firstPsn = sndNxt;
                wqe.msn = nextMsn++;
                if (wqe.consumesReceive()) {
                    wqe.rsn = nextRsn++;
                }
                if (wqe.isReadOrAtomic()) {
                    outstandingReadAtomic++;
                }
            }
            final int firstNewPsn = sndNxt;
            final byte kind = wqe.opcode == WrOpcode.RDMA_READ ? KIND_READ : wqe.isAtomic() ? KIND_ATOMIC : KIND_DATA;
            for (int i = 0; i < need; i++) {
                scoreboard.assign(sndNxt + i, nextToStart, wqe.psnsAssigned + i, kind);
            }
            final boolean wasIdle = scoreboard.inFlight() == 0;
            if (!transmit(nowNs, sink, firstNewPsn, false, probe, need)) {
                break;
            }
            if (probe) {
                probeWithNew = false;
                scoreboard.sentAsProbe(firstNewPsn);
                counters.increment(EndpointCounter.TAIL_PROBES_NEW);
            }
            if (wasIdle) {
                // The retransmission timer runs from the first packet sent after an idle period.
                progressNs = nowNs;
                if (scoreboard.lostCount() == 0) {
                    stalledSinceNs = nowNs;
                }
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
                nextToStart++;
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

        lastTransmitNs = nowNs;
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
            sample = RttEstimator.sampleOf(
                ((int) arrivalNs - echoedTimestamp - AckHeader.ackDelay(buffer, ackOffset)) & 0xFFFF_FFFFL);
            if (sample > 0) {
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
        if (timeoutEpisodeNs != NO_EXPIRY && !echoMatches && inScoreboard(trigger) && scoreboard.isOutstanding(trigger)
            && !scoreboard.isProbeTwin(trigger) && Psn.before(trigger, cumulative)
            && echoedTimestamp - (int) timeoutEpisodeNs < 0) {
            // The ACK that delivers the trigger echoes a transmission from before the expiry, not
            // the retransmission the expiry made: that transmission arrived, late, not lost
            // (Eifel, RFC 3522). Without this, the oldest packet, the one the expiry resent, is
            // the first an ACK after a host's pause delivers, and its latest transmission is the
            // retransmission, so the episode ended as a real loss [REL-058].
            timeoutProvedSpurious(nowNs);
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
            final double weight = weightOf(echoedPath);
            qp.paths().onFeedback(nowNs, echoedPath, sample, ecnEcho);
            tracePenalty(nowNs, echoedPath, weight, TraceEvent.CAUSE_FEEDBACK);
        }
        if (ceSeen) {
            counters.increment(EndpointCounter.ECN_ECHOES_IN);
        }
        if (delivered > 0 || ceSeen) {
            final int window = qp.congestionControl().windowPackets();
            qp.congestionControl().onAck(nowNs, delivered, sample, ceSeen, echoedPath);
            traceWindow(nowNs, window, TraceEvent.CAUSE_ECN);
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
                    final double weight = weightOf(path);
                    qp.paths().onTrim(nowNs, path);
                    tracePenalty(nowNs, path, weight, TraceEvent.CAUSE_TRIM);
                    onLoss(nowNs, path, true);
                    // The responder is reachable and the packet goes out again at once: the
                    // retransmission timer restarts, but the retry count is not reset [REL-036].
                    progressNs = nowNs;
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
                rnrResumeNs = Math.min(rnrResumeNs, nowNs + delay);
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
                    onLoss(nowNs, scoreboard.path(psn), false);
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
        final long sample = RttEstimator.sampleOf(nowNs - scoreboard.firstSentNs(psn));
        if (sample > 0) {
            rtt.onSample(sample);
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
        return ring[(int) (scoreboard.wqe(psn) % ring.length)];
    }

    /** @return whether the PSN was newly delivered */
    private boolean deliver(final long nowNs, final int psn) {
        if (!scoreboard.isOutstanding(psn)) {
            // Already delivered, or not sent: nothing new.
            return false;
        }
        scoreboard.delivered(psn);
        if (timeoutEpisodeNs != NO_EXPIRY && scoreboard.sentNs(psn) < timeoutEpisodeNs) {
            // A transmission from before the timer expired was delivered: it was late, not lost.
            timeoutProvedSpurious(nowNs);
        }
        lossDetector.onDelivered(psn, psn == provenPsn);
        final SendWqe wqe = wqeOf(psn);
        wqe.psnsDelivered++;
        if (wqe.psnsDelivered == wqe.psnCount && wqe.isReadOrAtomic()) {
            outstandingReadAtomic--;
        }
        return true;
    }

    /**
     * The current timeout episode was spurious: its backoff is withdrawn [REL-058], and the
     * congestion control may give back the window the expiry took, unless something confirms
     * congestion [CC-036].
     */
    private void timeoutProvedSpurious(final long nowNs) {
        timeoutEpisodeNs = NO_EXPIRY;
        counters.increment(EndpointCounter.SPURIOUS_TIMEOUTS);
        rtt.undoBackoff();
        qp.congestionControl().onSpuriousTimeout(nowNs);
    }

    private void afterDelivery(final long nowNs, final int delivered) {
        if (delivered > 0) {
            progressNs = nowNs;
            stalledSinceNs = nowNs;
            // Whatever was delivered decided the expiry's outcome (spurious, or its retransmission
            // arrived and time-based detection now finds the rest lost).
            timeoutEpisodeNs = NO_EXPIRY;
            recovery.endEpisode();
            probeTimer.endEpisode();
            probeWithNew = false;
            consecutiveTimeouts = 0;
            // Progress proves the path works again: the next expiry waits the plain RTO [REL-028].
            rtt.undoBackoff();
            consecutiveRnr = 0;
        }
        while (sndUna != sndNxt && scoreboard.state(sndUna) == DELIVERED) {
            scoreboard.free(sndUna);
            sndUna++;
        }
        detectLosses(nowNs);
        completeInOrder();
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
            penalise(nowNs, scoreboard.path(psn));
        }
        onLoss(nowNs, scoreboard.path(psn), false);
    }

    /** @return the current reorder window of the time-based loss detection (package-private for tests) [REL-024] */
    long reorderWindowNs() {
        return lossDetector.reorderWindowNs(qp.paths());
    }

    /**
     * Marks the packet at {@code psn} lost; for a READ, with it every later response slot that the
     * same request transmission covers and that is still unanswered, so that the request goes out
     * again whole (one re-request, [REL-046]) rather than one segment per timer expiry, while the
     * responder holds everything behind the rest of the range.
     */
    private void markRequestLost(final int psn, final EndpointCounter cause) {
        scoreboard.lost(psn, cause);
        if (scoreboard.kind(psn) != KIND_READ) {
            return;
        }
        for (int p = psn + 1; p != sndNxt; p++) {
            if (scoreboard.kind(p) != KIND_READ || scoreboard.wqe(p) != scoreboard.wqe(psn)
                || scoreboard.txSeq(p) != scoreboard.txSeq(psn) || scoreboard.state(p) != IN_FLIGHT) {
                break;
            }
            scoreboard.lost(p, cause);
        }
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
                markRequestLost(psn, EndpointCounter.RETRANSMITS_PSN_WINDOW);
            }
        }
    }

    // ------------------------------------------------------------------ timers

    void onTimers(final long nowNs) {
        if (scoreboard.rnrWaitCount() > 0 && nowNs >= rnrResumeNs) {
            rnrResumeNs = Long.MAX_VALUE;
            for (int psn = sndUna; psn != sndNxt; psn++) {
                if (scoreboard.state(psn) == RNR_WAIT) {
                    scoreboard.lost(psn, EndpointCounter.RETRANSMITS_RNR);
                }
            }
        }
        if (nowNs >= lossDetector.deadlineNs()) {
            detectLosses(nowNs);
        }
        if (scoreboard.inFlight() == 0) {
            return;
        }
        final long rto = rtt.rtoNs();
        if (nowNs >= progressNs + rto) {
            counters.increment(EndpointCounter.TIMEOUTS);
            // The timer had to repair what the probes did not: PROBE_WAIT halves [REL-065].
            probeTimer.onRetransmitTimeout();
            consecutiveTimeouts++;
            if (consecutiveTimeouts > qp.retryCount() && retryTimeoutSpent(nowNs, stalledSinceNs)) {
                qp.recordFailure("nothing delivered for " + Seconds.of(nowNs - stalledSinceNs) + " and "
                    + consecutiveTimeouts + " retransmission timeouts (RETRY_CNT " + qp.retryCount() + ", RETRY_TIMEOUT "
                    + Seconds.of(qp.retryTimeoutNs()) + "): the peer stopped answering [REL-029]");
                fail(ring[(int) (scoreboard.wqe(sndUna) % ring.length)], WcStatus.RETRY_EXC_ERR);
                return;
            }
            rtt.onTimeout();
            final int window = qp.congestionControl().windowPackets();
            qp.congestionControl().onRetransmitTimeout(nowNs);
            traceWindow(nowNs, window, TraceEvent.CAUSE_RTO);
            qp.trace(nowNs, TraceEvent.RTO_EXPIRED, sndUna, consecutiveTimeouts, scoreboard.inFlight(), rtt.rtoNs());
            // Only the oldest outstanding packet is retransmitted [REL-028]. On a host that was
            // descheduled the others are usually late, not lost: their ACKs then show the expiry
            // was spurious [REL-058]; if instead the retransmission is acknowledged first, the
            // time-based rule (REL-023) declares every older transmission lost at once. Go-back-N
            // resends everything from the oldest undelivered PSN instead [REL-054]: its responder
            // discarded whatever followed a gap.
            final boolean resendAll = recovery.timeoutResendsAll();
            for (int psn = sndUna; psn != sndNxt; psn++) {
                if (scoreboard.state(psn) == IN_FLIGHT) {
                    markRequestLost(psn, EndpointCounter.RETRANSMITS_TIMEOUT);
                    if (scoreboard.kind(psn) != KIND_READ) {
                        penalise(nowNs, scoreboard.path(psn));
                    }
                    if (!resendAll) {
                        break;
                    }
                }
            }
            // A later delivery of an earlier transmission shows an expiry that resent the oldest
            // packet alone spurious [REL-058]; go-back-N's resent everything and keeps its backoff.
            timeoutEpisodeNs = resendAll ? NO_EXPIRY : nowNs;
            progressNs = nowNs;
            recovery.endEpisode();
            probeTimer.endEpisode();
            probeWithNew = false;
            fullWindowRetransmitAllowed = true;
            return;
        }
        final long probeDue = probeDueNs();
        if (probeDue != Long.MAX_VALUE && nowNs >= probeDue) {
            final int probes = probeTimer.onProbe();
            qp.trace(nowNs, TraceEvent.TAIL_PROBE, sndUna, probes, 0, 0);
            if (scoreboard.kind(sndUna) == KIND_READ && scoreboard.state(sndUna) == IN_FLIGHT) {
                // The oldest outstanding READ has no response: its request is the likely loss, and
                // the responder holds every later READ behind it (OPS-024), so a probe of the newest
                // would only be held too [REL-026].
                markRequestLost(sndUna, EndpointCounter.RETRANSMITS_TAIL_PROBE);
                fullWindowRetransmitAllowed = true;
                return;
            }
            if (newPacketCanProbe()) {
                // A new packet's ACK reveals a lost tail as a copy of the newest would (its SACK
                // shows the hole, 6.6.1), and when the peer has only paused it costs no copy.
                probeWithNew = true;
                return;
            }
            // Probe with the newest outstanding packet: its ACK reveals what is missing.
            for (int psn = sndNxt - 1; Psn.beforeOrEqual(sndUna, psn); psn--) {
                if (scoreboard.state(psn) == IN_FLIGHT) {
                    scoreboard.lost(psn, EndpointCounter.RETRANSMITS_TAIL_PROBE);
                    fullWindowRetransmitAllowed = true;
                    break;
                }
            }
        }
    }

    /**
     * Whether RETRY_TIMEOUT has passed since {@code sinceNs} [REL-060]: with a budget, neither the
     * retry count nor the transmission limit ends a connection before it is spent, so a peer that
     * stops answering for a few seconds (descheduled, a JVM pause, a link flap) is waited for. At
     * least RETRY_CNT expiries are still required, so a short budget never fails faster than verbs.
     */
    private boolean retryTimeoutSpent(final long nowNs, final long sinceNs) {
        final long budget = qp.retryTimeoutNs();
        return budget == 0 || nowNs - sinceNs >= budget;
    }

    /**
     * A one-line account of the send side for a stalled run's error message: work requests
     * outstanding, the PSN scoreboard, credit, timers. Not for the data path (it allocates).
     */
    String describe(final long nowNs) {
        final long posted = tail - head;
        return "send queue: " + posted + " WRs outstanding (" + (tail - nextToStart) + " not started), PSNs "
            + Integer.toUnsignedString(sndUna) + ".." + Integer.toUnsignedString(sndNxt) + " ("
            + scoreboard.inFlight() + " in flight, " + scoreboard.lostCount() + " lost awaiting retransmission, "
            + scoreboard.rnrWaitCount() + " waiting RNR), credit "
            + (creditLimit == Long.MAX_VALUE ? "unlimited" : (creditLimit + " from " + Integer.toUnsignedString(creditCumulative)))
            + (creditBlockedSinceNs != Long.MIN_VALUE ? " (blocked " + Seconds.of(nowNs - creditBlockedSinceNs)
                + ", " + creditProbes + " probes)" : "")
            + ", no progress for " + Seconds.of(nowNs - stalledSinceNs) + " (" + consecutiveTimeouts
            + " timeouts, " + probeTimer.probes() + " tail probes since the last), RTO " + Seconds.of(rtt.rtoNs())
            + ", next timer in " + (nextDeadlineNs() == Long.MAX_VALUE ? "never" : Seconds.of(nextDeadlineNs() - nowNs));
    }

    long nextDeadlineNs() {
        long deadline = Long.MAX_VALUE;
        if (scoreboard.rnrWaitCount() > 0) {
            deadline = rnrResumeNs;
        }
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
        if (scoreboard.inFlight() > 0) {
            deadline = Math.min(deadline, progressNs + rtt.rtoNs());
            deadline = Math.min(deadline, probeDueNs());
        }
        return deadline;
    }

    /**
     * Whether the tail probe due can be the next new packet [REL-026]: one of a WRITE or SEND (the
     * answer to a READ or atomic request would wait behind the outstanding ones, OPS-024) that may
     * leave now but for the congestion window and pacing — not waiting out an RNR delay, not held
     * by a FENCE or by a draining send queue — within the scoreboard and the credit.
     */
    private boolean newPacketCanProbe() {
        if (nextToStart == tail) {
            return false;
        }
        final SendWqe wqe = ring[(int) (nextToStart % ring.length)];
        if (wqe.isReadOrAtomic() || (scoreboard.rnrWaitCount() > 0 && wqe.consumesReceive())) {
            return false;
        }
        if (!wqe.started && (qp.isSendQueueDraining()
            || ((wqe.sendFlags & SendFlags.FENCE) != 0 && outstandingReadAtomic > 0))) {
            return false;
        }
        return (sndNxt - sndUna) + 1 <= scoreboard.capacity() && (long) (sndNxt - creditCumulative) < creditLimit;
    }

    /** @return when the next tail probe is due, MAX_VALUE when none is ({@link ProbeTimer#dueNs}) [REL-026] */
    private long probeDueNs() {
        return recovery.tailProbe()
            ? probeTimer.dueNs(progressNs, lastTransmitNs, rtt.rtoNs(), scoreboard.rnrWaitCount() > 0) : Long.MAX_VALUE;
    }

    boolean hasWork() {
        return scoreboard.lostCount() > 0 || nextToStart != tail;
    }

    // ------------------------------------------------------------------ completion

    private void completeInOrder() {
        while (head != nextToStart) {
            final SendWqe wqe = ring[(int) (head % ring.length)];
            if (!wqe.isComplete()) {
                return;
            }
            final boolean pushed = (wqe.sendFlags & SendFlags.SIGNALED) == 0 || push(wqe, WcStatus.SUCCESS);
            wqe.reset();
            head++;
            if (!pushed) {
                // The CQ latched its error: this completion is counted as overflow, and the QP fails.
                qp.onCompletionQueueOverflow(qp.sendCq());
                return;
            }
        }
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

    /** A loss to the congestion control; a window it shrinks goes to the trace. */
    private void onLoss(final long nowNs, final int pathId, final boolean trimmed) {
        final int window = qp.congestionControl().windowPackets();
        qp.congestionControl().onLoss(nowNs, pathId, trimmed);
        traceWindow(nowNs, window, trimmed ? TraceEvent.CAUSE_TRIM : TraceEvent.CAUSE_LOSS);
    }

    /** A loss attributed to a path; the penalty goes to the trace. */
    private void penalise(final long nowNs, final int pathId) {
        final double weight = weightOf(pathId);
        qp.paths().onLoss(nowNs, pathId);
        tracePenalty(nowNs, pathId, weight, TraceEvent.CAUSE_LOSS);
    }

    /** Traces a window a congestion signal shrank (growth on ACKs is not traced: it would flood the ring). */
    private void traceWindow(final long nowNs, final int before, final int cause) {
        final int after = qp.congestionControl().windowPackets();
        if (after < before) {
            qp.trace(nowNs, TraceEvent.CWND_REDUCED, sndUna, before, after, cause);
        }
    }

    /** Traces a path whose weight a signal lowered. */
    private void tracePenalty(final long nowNs, final int pathId, final double before, final int cause) {
        final double after = weightOf(pathId);
        if (after < before) {
            qp.trace(nowNs, TraceEvent.PATH_PENALTY, 0, pathId, (int) Math.round(after * 1000), cause);
        }
    }

    /** @return a path's weight, 1 for an id the selector does not know (it ignores signals about those) */
    private double weightOf(final int pathId) {
        return pathId >= 0 && pathId < qp.paths().pathCount() ? qp.paths().weight(pathId) : 1.0;
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
            wqe.reset();
            head++;
        }
        nextToStart = tail;
        scoreboard.clear();
        outstandingReadAtomic = 0;
        lossDetector.cancelDeadline();
        rnrResumeNs = Long.MAX_VALUE;
        sndUna = sndNxt;
    }

    /** Drops every request without completions (modify to RESET). */
    void discard() {
        for (long i = head; i != tail; i++) {
            ring[(int) (i % ring.length)].reset();
        }
        head = tail;
        nextToStart = tail;
        scoreboard.clear();
        outstandingReadAtomic = 0;
        nextMsn = 0;
        nextRsn = 0;
        lossDetector.reset();
        probeTimer.reset();
        probeWithNew = false;
        rnrResumeNs = Long.MAX_VALUE;
        timeoutEpisodeNs = NO_EXPIRY;
    }

    /** Test hook ({@link QueuePair#startSequencesForTesting}): the first MSN and RSN instead of 0 [OPS-043]. */
    void startSequences(final int msn, final int rsn) {
        nextMsn = msn;
        nextRsn = rsn;
    }

    /** Used by tests and counters: completions are only ever taken in order. */
    boolean isIdle() {
        return head == tail;
    }
}
