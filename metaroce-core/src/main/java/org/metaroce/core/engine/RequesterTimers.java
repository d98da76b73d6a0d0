// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.engine;

import org.metaroce.core.reliability.Psn;
import org.metaroce.core.reliability.RttEstimator;

/**
 * The requester's timers (specification 6.6.2, 6.7, 6.8): the retransmission timeout [REL-028]
 * with its backoff and the undo of a spurious expiry [REL-058], the tail-loss probe as it acts
 * when due [REL-026] (its timing is a {@link ProbeTimer}), the end of an RNR delay [REL-039], and
 * the budgets that end a connection, RETRY_CNT and RETRY_TIMEOUT [REL-029, REL-060]. It alone
 * owns:
 * <ul>
 *   <li>the time of the last progress, from which the RTO runs, and of the start of the current
 *       stall, from which RETRY_TIMEOUT runs; the expiries since the last delivery;</li>
 *   <li>the timeout episode: the time of the expiry whose outcome is still unknown;</li>
 *   <li>the two grants an expiry or a probe gives the emission: one retransmission past a full
 *       window [CC-001], and a new packet as the tail probe [REL-026];</li>
 *   <li>when the RNR delay ends.</li>
 * </ul>
 * The {@link Requester} tells it what happened (a transmission, a delivery, a trim, an RNR NACK, a
 * transmission from before the expiry delivered) and runs it at each timer call with its send
 * window, [sndUna, sndNxt), as arguments. An expiry marks packets lost in the {@link Scoreboard}
 * and signals the path and congestion control ({@link CongestionSignals}); the two things only
 * the requester can do, end the connection and tell whether a new packet may be the probe, are
 * asked of it through {@link Requests}, fixed at construction.
 */
final class RequesterTimers {
    private static final long NO_EXPIRY = Long.MIN_VALUE;

    /** What the timers ask of the requester. */
    interface Requests {
        /**
         * Retries are spent (RETRY_CNT and RETRY_TIMEOUT, or the transmission limit) [REL-029]: the
         * oldest outstanding work request fails with RETRY_EXC_ERR and the QP goes to ERR.
         */
        void retriesExhausted();

        /** @return whether the tail probe due can be the next new packet [REL-026] */
        boolean newPacketCanProbe();
    }

    private final RequesterContext qp;
    private final EndpointCounters counters;
    private final Scoreboard scoreboard;
    private final ProbeTimer probeTimer;
    private final CongestionSignals signals;
    private final Requests requests;
    /** The requester's estimator and recovery mode, replaced at each {@link #start}. */
    private RttEstimator rtt;
    private LossRecovery recovery = LossRecovery.SELECTIVE_REPEAT;

    private long progressNs;
    /**
     * Since when the requester has had work outstanding without progress: the last delivery, or the
     * first transmission after an idle period. RETRY_TIMEOUT runs from here [REL-060]; unlike
     * {@link #progressNs} it is not moved by timer expiries.
     */
    private long stalledSinceNs;
    private long lastTransmitNs;
    /**
     * ACK_DEFER_DELAY while the newest packet sent went without ACK_REQ under DEFERRED_ACK (its ACK
     * may be held that long), else 0: both timers wait that much longer [REL-074].
     */
    private long deferAllowanceNs;
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
    /**
     * A tail probe is due and asks: a KEEPALIVE with ACK_REQ whose answer shows what arrived
     * [REL-069], sent by the requester's next emission.
     */
    private boolean probeWithAsk;
    private int consecutiveTimeouts;
    /** Time of the retransmission-timer expiry whose outcome is still unknown, or {@link #NO_EXPIRY}. */
    private long timeoutEpisodeNs = NO_EXPIRY;
    private long rnrResumeNs = Long.MAX_VALUE;

    RequesterTimers(final RequesterContext qp, final EndpointCounters counters, final Scoreboard scoreboard,
                    final ProbeTimer probeTimer, final CongestionSignals signals, final Requests requests) {
        this.qp = qp;
        this.counters = counters;
        this.scoreboard = scoreboard;
        this.probeTimer = probeTimer;
        this.signals = signals;
        this.requests = requests;
    }

    /** Called on RTR→RTS with the requester's new estimator and recovery mode. */
    void start(final RttEstimator estimator, final LossRecovery lossRecovery) {
        rtt = estimator;
        recovery = lossRecovery;
    }

    // ------------------------------------------------------------------ what happened

    /**
     * Records a transmission, first or repeated: the tail probe's timing runs from the latest.
     *
     * @param deferAllowanceNs how long the responder may hold this packet's ACK: ACK_DEFER_DELAY for
     *     a LAST packet sent without ACK_REQ [REL-074], else 0
     */
    void onTransmit(final long nowNs, final long deferAllowanceNs) {
        lastTransmitNs = nowNs;
        this.deferAllowanceNs = deferAllowanceNs;
    }

    /** @return the RTO, plus the hold a deferred ACK may take [REL-074] */
    private long rtoNs() {
        return rtt.rtoNs() + deferAllowanceNs;
    }

    /**
     * A first transmission after an idle period: the retransmission timer runs from it, and, when
     * nothing is lost either, so does RETRY_TIMEOUT [REL-060].
     */
    void onSentAfterIdle(final long nowNs, final boolean nothingLost) {
        progressNs = nowNs;
        if (nothingLost) {
            stalledSinceNs = nowNs;
        }
    }

    /**
     * A trim: the responder is reachable and the packet goes out again at once, so the
     * retransmission timer restarts, but the retry count is not reset [REL-036].
     */
    void restart(final long nowNs) {
        progressNs = nowNs;
    }

    /** An RNR NACK asked to wait until {@code resumeNs} [REL-039]; the earliest such time wins. */
    void onRnrDelay(final long resumeNs) {
        rnrResumeNs = Math.min(rnrResumeNs, resumeNs);
    }

    /**
     * A packet whose latest transmission left at {@code sentNs} was delivered: when that was before
     * the timer expired, it was late, not lost, and the expiry was spurious [REL-058].
     */
    void onDelivered(final long nowNs, final long sentNs) {
        if (timeoutEpisodeNs != NO_EXPIRY && sentNs < timeoutEpisodeNs) {
            timeoutProvedSpurious(nowNs);
        }
    }

    /**
     * @return whether an expiry's outcome is open and {@code echoedTimestamp}, an ACK's Echoed
     *     Timestamp, is of a transmission from before it [REL-058]
     */
    boolean echoPrecedesExpiry(final int echoedTimestamp) {
        return timeoutEpisodeNs != NO_EXPIRY && echoedTimestamp - (int) timeoutEpisodeNs < 0;
    }

    /**
     * The current timeout episode was spurious: its backoff is withdrawn [REL-058], and the
     * congestion control may give back the window the expiry took, unless something confirms
     * congestion [CC-036].
     */
    void timeoutProvedSpurious(final long nowNs) {
        timeoutEpisodeNs = NO_EXPIRY;
        counters.increment(EndpointCounter.SPURIOUS_TIMEOUTS);
        rtt.undoBackoff();
        qp.congestionControl().onSpuriousTimeout(nowNs);
    }

    /** Something was delivered: the episodes end, the retry count and the backoff start again. */
    void onProgress(final long nowNs) {
        progressNs = nowNs;
        stalledSinceNs = nowNs;
        // Whatever was delivered decided the expiry's outcome (spurious, or its retransmission
        // arrived and time-based detection now finds the rest lost).
        timeoutEpisodeNs = NO_EXPIRY;
        recovery.endEpisode();
        probeTimer.endEpisode();
        probeWithNew = false;
        probeWithAsk = false;
        consecutiveTimeouts = 0;
        // Progress proves the path works again: the next expiry waits the plain RTO [REL-028].
        rtt.undoBackoff();
    }

    /** @return whether one retransmission may leave although the window is full [CC-001] */
    boolean fullWindowRetransmitAllowed() {
        return fullWindowRetransmitAllowed;
    }

    /** A retransmission left: it used the grant past a full window, if there was one. */
    void onRetransmit() {
        fullWindowRetransmitAllowed = false;
    }

    /** @return whether the next new packet is the tail probe [REL-026] */
    boolean probeWithNew() {
        return probeWithNew;
    }

    /** The new packet that is the tail probe left. */
    void onNewProbeSent() {
        probeWithNew = false;
    }

    /** @return whether the tail probe due is a KEEPALIVE that asks for an ACK [REL-069] */
    boolean probeWithAsk() {
        return probeWithAsk;
    }

    /**
     * The asking probe left at {@code nowNs}: the next probe of the episode is timed from it.
     *
     * @return the requester's latest transmission before it
     */
    long onAskSent(final long nowNs) {
        final long before = lastTransmitNs;
        probeWithAsk = false;
        lastTransmitNs = nowNs;
        return before;
    }

    /** The QP flushed: no RNR delay is waited out any more. */
    void flush() {
        rnrResumeNs = Long.MAX_VALUE;
    }

    /** The QP was reset: no grant, no RNR delay, no open expiry. */
    void reset() {
        probeWithNew = false;
        probeWithAsk = false;
        rnrResumeNs = Long.MAX_VALUE;
        timeoutEpisodeNs = NO_EXPIRY;
    }

    // ------------------------------------------------------------------ timer calls

    /** When the RNR delay has ended, the packets waiting it out are resent [REL-039]. */
    void resumeAfterRnr(final long nowNs, final int sndUna, final int sndNxt) {
        if (scoreboard.rnrWaitCount() > 0 && nowNs >= rnrResumeNs) {
            rnrResumeNs = Long.MAX_VALUE;
            for (int psn = sndUna; psn != sndNxt; psn++) {
                if (scoreboard.state(psn) == Scoreboard.RNR_WAIT) {
                    scoreboard.lost(psn, EndpointCounter.RETRANSMITS_RNR);
                }
            }
        }
    }

    /** Runs the retransmission timer and, when it has not expired, the tail probe [REL-026, REL-028]. */
    void onExpiries(final long nowNs, final int sndUna, final int sndNxt) {
        if (scoreboard.inFlight() == 0) {
            return;
        }
        final long rto = rtoNs();
        if (nowNs >= progressNs + rto) {
            counters.increment(EndpointCounter.TIMEOUTS);
            // The timer had to repair what the probes did not: PROBE_WAIT halves [REL-065].
            probeTimer.onRetransmitTimeout();
            consecutiveTimeouts++;
            if (consecutiveTimeouts > qp.retryCount() && retryTimeoutSpent(nowNs, stalledSinceNs)) {
                qp.recordFailure("nothing delivered for " + Seconds.of(nowNs - stalledSinceNs) + " and "
                    + consecutiveTimeouts + " retransmission timeouts (RETRY_CNT " + qp.retryCount() + ", RETRY_TIMEOUT "
                    + Seconds.of(qp.retryTimeoutNs()) + "): the peer stopped answering [REL-029]");
                requests.retriesExhausted();
                return;
            }
            rtt.onTimeout();
            final int window = qp.congestionControl().windowPackets();
            qp.congestionControl().onRetransmitTimeout(nowNs);
            signals.traceWindow(nowNs, sndUna, window, TraceEvent.CAUSE_RTO);
            qp.trace(nowNs, TraceEvent.RTO_EXPIRED, sndUna, consecutiveTimeouts, scoreboard.inFlight(), rtt.rtoNs());
            // Only the oldest outstanding packet is retransmitted [REL-028]. On a host that was
            // descheduled the others are usually late, not lost: their ACKs then show the expiry
            // was spurious [REL-058]; if instead the retransmission is acknowledged first, the
            // time-based rule (REL-023) declares every older transmission lost at once. Go-back-N
            // resends everything from the oldest undelivered PSN instead [REL-054]: its responder
            // discarded whatever followed a gap.
            final boolean resendAll = recovery.timeoutResendsAll();
            for (int psn = sndUna; psn != sndNxt; psn++) {
                if (scoreboard.state(psn) == Scoreboard.IN_FLIGHT) {
                    scoreboard.lostWithRequest(psn, EndpointCounter.RETRANSMITS_TIMEOUT, sndNxt);
                    if (scoreboard.kind(psn) != Scoreboard.KIND_READ) {
                        signals.penalise(nowNs, scoreboard.path(psn));
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
            probeWithAsk = false;
            fullWindowRetransmitAllowed = true;
            return;
        }
        final long probeDue = probeDueNs();
        if (probeDue != Long.MAX_VALUE && nowNs >= probeDue) {
            final int probes = probeTimer.onProbe();
            qp.trace(nowNs, TraceEvent.TAIL_PROBE, sndUna, probes, 0, 0);
            final boolean readHeld = scoreboard.kind(sndUna) == Scoreboard.KIND_READ
                && scoreboard.state(sndUna) == Scoreboard.IN_FLIGHT;
            final boolean newPacketProbes = !readHeld && requests.newPacketCanProbe();
            if (!newPacketProbes && probeTimer.asks(sndNxt)) {
                // Nothing new can probe, and this queue pair has lost nothing lately: the answers
                // more likely stopped because the peer paused than because the tail was lost, so
                // the probe asks what arrived instead of sending a copy [REL-069].
                probeWithAsk = true;
                return;
            }
            if (readHeld) {
                // The oldest outstanding READ has no response: its request is the likely loss, and
                // the responder holds every later READ behind it (OPS-024), so a probe of the newest
                // would only be held too [REL-026].
                scoreboard.lostWithRequest(sndUna, EndpointCounter.RETRANSMITS_TAIL_PROBE, sndNxt);
                fullWindowRetransmitAllowed = true;
                return;
            }
            if (newPacketProbes) {
                // A new packet's ACK reveals a lost tail as a copy of the newest would (its SACK
                // shows the hole, 6.6.1), and when the peer has only paused it costs no copy.
                probeWithNew = true;
                return;
            }
            // Probe with the newest outstanding packet: its ACK reveals what is missing.
            for (int psn = sndNxt - 1; Psn.beforeOrEqual(sndUna, psn); psn--) {
                if (scoreboard.state(psn) == Scoreboard.IN_FLIGHT) {
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
    boolean retryTimeoutSpent(final long nowNs, final long sinceNs) {
        final long budget = qp.retryTimeoutNs();
        return budget == 0 || nowNs - sinceNs >= budget;
    }

    /** @return the earliest of the RNR delay's end, the RTO expiry and the tail probe, MAX_VALUE for none */
    long deadlineNs() {
        long deadline = Long.MAX_VALUE;
        if (scoreboard.rnrWaitCount() > 0) {
            deadline = rnrResumeNs;
        }
        if (scoreboard.inFlight() > 0) {
            deadline = Math.min(deadline, progressNs + rtoNs());
            deadline = Math.min(deadline, probeDueNs());
        }
        return deadline;
    }

    /** @return when the next tail probe is due, MAX_VALUE when none is ({@link ProbeTimer#dueNs}) [REL-026] */
    private long probeDueNs() {
        if (!recovery.tailProbe()) {
            return Long.MAX_VALUE;
        }
        final long due = probeTimer.dueNs(progressNs, lastTransmitNs + deferAllowanceNs, rtoNs(),
            scoreboard.rnrWaitCount() > 0);
        // A probe, new packet or copy, waits for the pacing of an algorithm that paces at a measured
        // rate: behind a policer, probes past the pacing were dropped as any excess is [CC-041].
        return due == Long.MAX_VALUE ? due : Math.max(due, qp.congestionControl().probeNotBeforeNs());
    }

    /** For a stalled run's error message: how long without progress, the expiries and probes since. */
    String describe(final long nowNs) {
        return "no progress for " + Seconds.of(nowNs - stalledSinceNs) + " (" + consecutiveTimeouts
            + " timeouts, " + probeTimer.probes() + " tail probes since the last)";
    }
}
