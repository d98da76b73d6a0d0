// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.engine;

import org.agrona.DirectBuffer;
import org.metaroce.core.reliability.Psn;
import org.metaroce.core.reliability.RttEstimator;
import org.metaroce.core.verbs.MemoryRegion;
import org.metaroce.core.verbs.WcStatus;
import org.metaroce.core.wire.AckHeader;
import org.metaroce.core.wire.AtomicAckHeader;
import org.metaroce.core.wire.BaseHeader;
import org.metaroce.core.wire.ConnectHeader;
import org.metaroce.core.wire.Flags;
import org.metaroce.core.wire.MessageHeader;
import org.metaroce.core.wire.NackHeader;
import org.metaroce.core.wire.NackReason;
import org.metaroce.core.wire.Opcode;

/**
 * What the requester does with the responder's answers (specification 6.4 to 6.8): ACKs with
 * their Cumulative PSN, SACK bitmap, echo and Credit [REL-017..REL-020], NACKs by reason (trim,
 * PSN window, RNR, the fatal ones, go-back-N's sequence gap) [REL-007, REL-036, REL-039,
 * REL-054, REL-061], READ and atomic responses [OPS-007, REL-043..REL-047]; from them the RTT
 * samples [REL-020, REL-063, REL-064], deliveries, spurious retransmissions and expiries
 * [REL-025, REL-058], and the losses time-based detection then finds [REL-023]. It alone owns:
 * <ul>
 *   <li>while an ACK is applied, the PSN whose latest transmission it proves arrived;</li>
 *   <li>the latest repair of a request that may hold others, and the work request of the latest
 *       spurious-retransmission sample, which decide which response times are RTT samples;</li>
 *   <li>the CE Count of the latest non-stale ACK and the RNR episodes in a row.</li>
 * </ul>
 * It moves the start of the {@link SendWindow} and records the credit there; each delivery goes
 * to the {@link Scoreboard}, the {@link SendQueue} (which completes in post order), the
 * {@link LossDetector} and the {@link RequesterTimers}; congestion and path signals go through
 * {@link CongestionSignals}. The {@link Requester}'s emission reads what it leaves behind.
 */
final class ResponseHandler {
    private static final byte IN_FLIGHT = Scoreboard.IN_FLIGHT;
    private static final byte DELIVERED = Scoreboard.DELIVERED;
    private static final byte LOST = Scoreboard.LOST;
    private static final byte KIND_DATA = Scoreboard.KIND_DATA;
    private static final byte KIND_READ = Scoreboard.KIND_READ;
    private static final byte KIND_ATOMIC = Scoreboard.KIND_ATOMIC;

    private final RequesterContext qp;
    private final EndpointCounters counters;
    private final SendWindow sendWindow;
    private final SendQueue sendQueue;
    private final Scoreboard scoreboard;
    private final LossDetector lossDetector;
    private final ProbeTimer probeTimer;
    private final AskingProbe asking;
    private final RequesterTimers timers;
    private final CongestionSignals signals;
    /** Whether the endpoint's timestamps include its host's delay [CC-034]: the timers then take the loop [REL-072]. */
    private final boolean softwareEndpoint;
    /** The requester's estimator and recovery mode, replaced at each {@link #start}. */
    private RttEstimator rtt;
    private LossRecovery recovery = LossRecovery.SELECTIVE_REPEAT;
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
    /** CE Count of the latest non-stale ACK [REL-018]; an increase is a CE signal even when coalesced [CC-012]. */
    private int lastCeCount;
    private int consecutiveRnr;
    /** Whether an ACK contradicts a delivery already taken [REL-068]. */
    private final DeliveryContradiction contradiction;

    ResponseHandler(final RequesterContext qp, final EndpointCounters counters, final SendWindow sendWindow,
                    final SendQueue sendQueue, final Scoreboard scoreboard, final LossDetector lossDetector,
                    final ProbeTimer probeTimer, final AskingProbe asking, final RequesterTimers timers,
                    final CongestionSignals signals, final boolean softwareEndpoint) {
        this.qp = qp;
        this.softwareEndpoint = softwareEndpoint;
        this.counters = counters;
        this.sendWindow = sendWindow;
        this.sendQueue = sendQueue;
        this.scoreboard = scoreboard;
        this.lossDetector = lossDetector;
        this.probeTimer = probeTimer;
        this.asking = asking;
        this.timers = timers;
        this.signals = signals;
        this.contradiction = new DeliveryContradiction(sendWindow, scoreboard);
    }

    /** Called on RTR→RTS, after the send window started at {@code initialPsn}. */
    void start(final int initialPsn, final RttEstimator estimator, final LossRecovery lossRecovery) {
        provenPsn = initialPsn - 1;
        contradiction.start();
        lastCeCount = 0;
        rtt = estimator;
        recovery = lossRecovery;
    }

    /**
     * A retransmission that may repair a lost request left at {@code nowNs}, for work request
     * {@code wqe}: answers to other requests sent before it give no RTT sample [REL-063].
     */
    void onRepairSent(final long nowNs, final long wqe) {
        holdRepairNs = nowNs;
        holdRepairWqe = wqe;
    }

    /** A KEEPALIVE with PSN field {@code psn} left at {@code nowNs}; an answer echoes that time [REL-068]. */
    void onProbeSent(final long nowNs, final int psn) {
        contradiction.onProbeSent(nowNs, psn);
    }

    /**
     * Processes an ACK, the ACK part of a NACK, or an ACK attached to a request packet [REL-070]:
     * all the same from the ACK header on.
     *
     * @param nowNs the current time
     * @param arrivalNs when the ACK reached the host: the RTT sample ends there [REL-020, REL-066]
     * @param ackOffset where the ACK header starts in {@code buffer}
     * @param trigger the triggering PSN: the Base Header PSN of an ACK or NACK, the Triggering PSN of
     *     an attached ACK's trailer [WIRE-071]
     * @param nack whether this is a NACK's ACK header, whose trigger is not taken as received [REL-017]
     * @return whether the requester took this ACK's Credit: false when it was dropped for
     *     acknowledging a PSN never sent [REL-016] or is stale [REL-018]; what answers a credit
     *     probe [REL-067]
     */
    boolean onAck(final long nowNs, final long arrivalNs, final DirectBuffer buffer, final int ackOffset,
                  final int trigger, final boolean nack) {
        final int cumulative = AckHeader.cumulativePsn(buffer, ackOffset);
        final long bitmap = AckHeader.sackBitmap(buffer, ackOffset);
        if (Psn.before(sendWindow.sndNxt(), cumulative)) {
            counters.increment(EndpointCounter.ACK_FOR_UNSENT_PSN);
            return false;
        }
        if (bitmap != 0) {
            final int highest = cumulative + 1 + (63 - Long.numberOfLeadingZeros(bitmap));
            if (!Psn.before(highest, sendWindow.sndNxt())) {
                counters.increment(EndpointCounter.ACK_FOR_UNSENT_PSN);
                return false;
            }
        }
        final int echoedTimestamp = AckHeader.echoedTimestamp(buffer, ackOffset);
        // Before anything of it is applied: an ACK that contradicts an earlier report ends the
        // connection [REL-068].
        if (contradiction.contradicts(cumulative, trigger, echoedTimestamp)) {
            endOnContradiction(cumulative);
            return false;
        }
        if ((qp.capabilities() & ConnectHeader.CAP_SENDER_COUNT) != 0) {
            final int senders = AckHeader.senderCount(buffer, ackOffset);
            if (senders > 0) {
                qp.congestionControl().onSenderCount(nowNs, senders);
            }
        }
        final int echoedPath = AckHeader.echoedPathId(buffer, ackOffset);
        final int ackFlags = AckHeader.ackFlags(buffer, ackOffset);
        final boolean ecnEcho = (ackFlags & AckHeader.FLAG_ECN_ECHO) != 0;
        // The echo must match the trigger's latest transmission, else it proves nothing [REL-017].
        final boolean echoMatches = sendWindow.contains(trigger)
            && (int) scoreboard.sentNs(trigger) == echoedTimestamp && !scoreboard.isProbeTwin(trigger);
        long sample = 0;
        if (echoMatches && scoreboard.transmissions(trigger) == 1) {
            final long measured = echoSample(arrivalNs, echoedTimestamp, buffer, ackOffset);
            if (measured > 0) {
                // On a software endpoint the timers take the loop as the requester lived it, from
                // transmission to this ACK's processing, when longer: the echo leaves the hosts'
                // waits out, and an RTO or a RACK window shorter than the loop expires early [REL-072].
                timerSample(softwareEndpoint ? Math.max(measured, nowNs - scoreboard.sentNs(trigger)) : measured);
                // A probe past the window left because the answers had stopped: its round trip may
                // be a peer's pause, which congestion control and path feedback must not take for
                // a queue. The timers need it: once the round trip outgrows twice SRTT nearly
                // every packet leaves as such a probe, and SRTT would never learn (v1.0.8).
                if (!scoreboard.isSentAsProbe(trigger)) {
                    sample = measured;
                }
            }
        }
        boolean ceSeen = ecnEcho;
        final boolean creditTaken = !Psn.before(cumulative, sendWindow.creditCumulative());
        if (creditTaken) {
            final boolean advanced = cumulative != sendWindow.creditCumulative();
            sendWindow.credit(cumulative, AckHeader.credit(buffer, ackOffset) & 0xFFFF_FFFFL);
            qp.congestionControl().onCredit(nowNs, sendWindow.creditLimit());
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
        if ((ackFlags & AckHeader.FLAG_DUPLICATE) != 0 && contradiction.recorded(trigger)
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
        provenPsn = !nack && echoMatches ? trigger : sendWindow.sndUna() - 1;
        if (timers.echoPrecedesExpiry(echoedTimestamp) && !echoMatches && sendWindow.contains(trigger)
            && scoreboard.isOutstanding(trigger) && !scoreboard.isProbeTwin(trigger) && Psn.before(trigger, cumulative)) {
            // The ACK that delivers the trigger echoes a transmission from before the expiry, not
            // the retransmission the expiry made: that transmission arrived, late, not lost
            // (Eifel, RFC 3522). Without this, the oldest packet, the one the expiry resent, is
            // the first an ACK after a host's pause delivers, and its latest transmission is the
            // retransmission, so the episode ended as a real loss [REL-058].
            // The echo names the transmission that arrived, so its round trip is a sample for the
            // timers although the PSN was sent twice: without it a window of one packet whose
            // round trip grew past the RTO resent every packet and never learnt why (v1.0.8).
            final long eifel = echoSample(arrivalNs, echoedTimestamp, buffer, ackOffset);
            if (eifel > 0) {
                timerSample(eifel);
            }
            timers.timeoutProvedSpurious(nowNs);
        }
        int delivered = 0;
        for (int psn = sendWindow.sndUna(); Psn.before(psn, cumulative); psn++) {
            if (scoreboard.kind(psn) == KIND_DATA && deliver(nowNs, psn)) {
                delivered++;
            }
        }
        long bits = bitmap;
        while (bits != 0) {
            final int i = Long.numberOfTrailingZeros(bits);
            bits &= bits - 1;
            final int psn = cumulative + 1 + i;
            if (sendWindow.contains(psn) && scoreboard.kind(psn) == KIND_DATA && deliver(nowNs, psn)) {
                counters.increment(EndpointCounter.SACKED_PACKETS);
                delivered++;
            }
        }
        if (!nack && echoMatches && scoreboard.kind(trigger) == KIND_DATA && deliver(nowNs, trigger)) {
            delivered++;
        }
        provenPsn = sendWindow.sndUna() - 1;
        if (!nack && asking.answeredBy(trigger, echoedTimestamp)) {
            // The answer to an asking tail probe: what it lacks of what was sent well before the
            // question was lost [REL-069].
            probeTimer.onAskAnswered();
            if (asking.declareLosses(nowNs, sendWindow.sndUna(), sendWindow.sndNxt(), cumulative, bitmap,
                lossDetector.reorderWindowNs(qp.paths())) > 0) {
                // The path does lose packets: the next probes resend, which repairs sooner.
                probeTimer.onLossRepaired(sendWindow.sndNxt());
            } else if (asking.awaitingResponses() == 0) {
                // Nothing was missing: the question was needless, and the wait it revealed sets
                // PROBE_WAIT as a needless copy's would [REL-065]. (A READ whose request arrived
                // and whose responses have not may yet have lost them: that proves nothing.)
                probeTimer.onSpuriousProbe(arrivalNs, asking.tailSentNs());
            }
        }
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
            signals.traceWindow(nowNs, sendWindow.sndUna(), window, TraceEvent.CAUSE_ECN);
        }
        afterDelivery(nowNs, delivered);
        return creditTaken;
    }

    /**
     * Ends the connection on an ACK that contradicts an earlier report [REL-068]: the packet the
     * responder lacks may belong to a work request already completed, whose buffer the application
     * may have reused, so it cannot be sent again; waiting would stall the QP for ever while its
     * probes are answered.
     */
    private void endOnContradiction(final int cumulative) {
        qp.recordFailure("the peer's acknowledgement contradicts an earlier one: it lacks PSN "
            + Integer.toUnsignedString(cumulative) + ", which it had reported received (a corrupted or forged "
            + "acknowledgement passed the Integrity Check, or the peer lost state) [REL-068]");
        sendQueue.failOldest(WcStatus.BAD_RESP_ERR);
        qp.trace(TraceEvent.WR_FAILED, cumulative, WcStatus.BAD_RESP_ERR.ordinal(), 0, 0);
        qp.enterError(AsyncEventType.QP_FATAL);
    }

    /** An ACK's RTT sample for SRTT, RTTVAR, the RTO [REL-027] and time-based loss detection [REL-023]. */
    private void timerSample(final long sampleNs) {
        rtt.onSample(sampleNs);
        lossDetector.onRttSample(sampleNs);
    }

    /**
     * The round trip an ACK's echo measures, {@code (now − Echoed Timestamp − ACK Delay) mod 2^32}
     * on the low 32 bits of this side's clock, as a sample [REL-020]: 0 when it is none.
     */
    private static long echoSample(final long arrivalNs, final int echoedTimestamp, final DirectBuffer buffer,
                                   final int ackOffset) {
        return RttEstimator.sampleOf(
            ((int) arrivalNs - echoedTimestamp - AckHeader.ackDelay(buffer, ackOffset)) & 0xFFFF_FFFFL);
    }

    /** Processes the NACK header after its ACK header has been applied. */
    void onNack(final long nowNs, final DirectBuffer buffer, final int offset) {
        final int nackOffset = offset + Opcode.NACK.nackOffset();
        final int psn = NackHeader.nackPsn(buffer, nackOffset);
        final NackReason reason = NackReason.of(NackHeader.reason(buffer, nackOffset));
        if (reason == null || !sendWindow.contains(psn)) {
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
                    signals.onLoss(nowNs, path, true, sendWindow.sndUna());
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
                    scoreboard.windowNacked(psn, sendWindow.creditCumulative());
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
                for (int p = psn; p != sendWindow.sndNxt(); p++) {
                    if (scoreboard.state(p) == IN_FLIGHT) {
                        scoreboard.lost(p, EndpointCounter.RETRANSMITS_GO_BACK_N);
                        any = true;
                    }
                }
                if (any) {
                    signals.onLoss(nowNs, scoreboard.path(psn), false, sendWindow.sndUna());
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
                        final int payloadLength, final boolean ce) {
        final int psn = BaseHeader.psn(buffer, offset);
        final boolean trimmed = (BaseHeader.flags(buffer, offset) & Flags.TRIMMED) != 0;
        if (trimmed) {
            // A trimmed response is a loss signal only: re-request that part at once [REL-037].
            if (sendWindow.contains(psn) && scoreboard.kind(psn) == KIND_READ
                && scoreboard.state(psn) == IN_FLIGHT) {
                scoreboard.lost(psn, EndpointCounter.RETRANSMITS_TRIMMED);
                scoreboard.trimmed(psn);
            } else {
                counters.increment(EndpointCounter.TRIMMED_IGNORED);
            }
            return;
        }
        if (!sendWindow.contains(psn) || scoreboard.kind(psn) != KIND_READ) {
            countStrayResponse(arrivalNs, psn, KIND_READ);
            return;
        }
        if (recovery.dropsResponse(psn, sendWindow.sndUna(), sendWindow.sndNxt())) {
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
        final long sample = sampleResponse(arrivalNs, psn);
        final int path = scoreboard.path(psn);
        deliver(nowNs, psn);
        responseToCongestionControl(nowNs, sample, ce, path);
        afterDelivery(nowNs, 1);
    }

    /**
     * A response that delivers a slot is the READ's (or atomic's) acknowledgement for congestion
     * control [CC-040]: one packet, with its RTT sample attributed to the path the request took,
     * and CE when the response arrived marked. READ traffic is controlled by its requester (8.1),
     * and no ACK ever delivers a READ slot: without this a QP that only reads heard only losses,
     * never grew its window, and after a retransmission timeout (cwnd = PMTU) kept one packet for
     * ever (read_bw at 20 % loss of responses on real sockets: 6 READs per second).
     */
    private void responseToCongestionControl(final long nowNs, final long sample, final boolean ce, final int path) {
        if (ce) {
            counters.increment(EndpointCounter.ECN_ECHOES_IN);
        }
        final int window = qp.congestionControl().windowPackets();
        qp.congestionControl().onAck(nowNs, 1, sample, ce, path);
        signals.traceWindow(nowNs, sendWindow.sndUna(), window, TraceEvent.CAUSE_ECN);
    }

    /**
     * A READ or atomic response answers a request the requester timed itself: when that request
     * was sent once, the time to its answer is an RTT sample [REL-063]. It is what the timers of a
     * QP that only reads must wait for, the responder's answers to earlier requests included,
     * which no ACK shows.
     */
    private long sampleResponse(final long nowNs, final int psn) {
        return scoreboard.transmissions(psn) == 1 ? responseSample(nowNs, psn) : 0;
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
    private long responseSample(final long nowNs, final int psn) {
        if (holdRepairNs >= scoreboard.firstSentNs(psn) && holdRepairWqe != scoreboard.wqe(psn)) {
            return 0;
        }
        final long sample = RttEstimator.sampleOf(nowNs - scoreboard.firstSentNs(psn));
        if (sample > 0) {
            rtt.onSample(sample);
            return sample;
        }
        return 0;
    }

    /** See {@link #onReadResponse}. */
    void onAtomicResponse(final long nowNs, final long arrivalNs, final DirectBuffer buffer, final int offset,
                          final boolean ce) {
        final int psn = BaseHeader.psn(buffer, offset);
        if (!sendWindow.contains(psn) || scoreboard.kind(psn) != KIND_ATOMIC) {
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
        final long sample = sampleResponse(arrivalNs, psn);
        final int path = scoreboard.path(psn);
        deliver(nowNs, psn);
        responseToCongestionControl(nowNs, sample, ce, path);
        afterDelivery(nowNs, 1);
    }

    /**
     * A response outside the scoreboard: one for a PSN already resolved (its READ or atomic has
     * completed) is a duplicate; anything else answers nothing outstanding [REL-043].
     */
    private void countStrayResponse(final long nowNs, final int psn, final byte kind) {
        final boolean resolved = Psn.before(psn, sendWindow.sndUna());
        counters.increment(resolved ? EndpointCounter.DUPLICATE_RESPONSE : EndpointCounter.UNEXPECTED_RESPONSE);
        // A resolved slot keeps its record until its PSN one window later reuses it.
        if (resolved && sendWindow.sndNxt() - psn <= scoreboard.capacity() && scoreboard.kind(psn) == kind) {
            onSecondAnswer(nowNs, psn);
        }
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
        scoreboard.delivered(psn, nowNs);
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
        while (sendWindow.sndUna() != sendWindow.sndNxt() && scoreboard.state(sendWindow.sndUna()) == DELIVERED) {
            scoreboard.free(sendWindow.sndUna());
            sendWindow.passOldest();
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
    void detectLosses(final long nowNs) {
        if (recovery.rack() && lossDetector.detectLosses(nowNs, sendWindow.sndUna(), sendWindow.sndNxt(), qp.paths())) {
            probeTimer.onLossEpisodes();
        }
    }

    /**
     * After an ACK moved the Cumulative PSN forward: every packet a PSN_WINDOW NACK answered while
     * the cumulative point was before the new one, and that the new Credit admits, is sent again
     * [REL-061]. Each such resend needs the cumulative point to move, so NACKs cannot make it
     * repeat within one instant.
     */
    private void resendAdmittedWindowNacks() {
        for (int psn = sendWindow.sndUna(); psn != sendWindow.sndNxt() && scoreboard.windowNacked() > 0; psn++) {
            if (scoreboard.isWindowNacked(psn) && Psn.before(scoreboard.windowNackCumulative(psn), sendWindow.creditCumulative())
                && (long) (psn - sendWindow.creditCumulative()) < sendWindow.creditLimit()) {
                scoreboard.lostWithRequest(psn, EndpointCounter.RETRANSMITS_PSN_WINDOW, sendWindow.sndNxt());
            }
        }
    }

    /** Ends the QP with {@code status} on {@code wqe} ({@link SendQueue#fail}). */
    private void fail(final SendWqe wqe, final WcStatus status) {
        sendQueue.fail(wqe, status, sendWindow.sndUna());
    }
}
