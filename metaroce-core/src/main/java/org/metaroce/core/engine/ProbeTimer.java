// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.engine;

import org.metaroce.core.reliability.RttEstimator;

/**
 * The timing of the requester's tail-loss probe (specification 6.6.2): when the next probe of an
 * episode is due [REL-026], and PROBE_WAIT, the floor of the probe timeout learned from spurious
 * probes [REL-065]. A tail loss leaves no later delivery for time-based detection to act on
 * ({@link LossDetector}), and the retransmission timer's floor may be tens of milliseconds; a
 * probe a few round trips after the last progress makes the responder's ACK reveal what is
 * missing. It alone owns:
 * <ul>
 *   <li>the probes sent in the current episode, which back the probe timeout off
 *       exponentially;</li>
 *   <li>PROBE_WAIT and its adaptation: raised by each spurious probe to twice the wait it
 *       revealed, halved at every RTO expiry and after {@link LossDetector#EPISODES_TO_SHRINK}
 *       loss episodes without a spurious retransmission;</li>
 *   <li>the time of the latest repair (a retransmission for any reason but a probe), which
 *       bounds the wait a spurious probe reveals.</li>
 * </ul>
 * It answers <em>when</em>; the {@link Requester} decides which packet a due probe resends, marks
 * it lost, and tells it what happened (progress, a repair, a probe, an RTO expiry, a spurious
 * probe). The requester's retransmission-timer state (the last progress and the last
 * transmission), the RTO and whether RNR waits are outstanding come in as arguments, since the
 * requester owns them. Under go-back-N the requester never asks when a probe is due
 * ({@link LossRecovery#tailProbe}, [REL-054]).
 *
 * <p>Primitive fields only, so that nothing is allocated per ACK or per timer.
 */
final class ProbeTimer {
    /** Probes of one episode after which the doubled PTO is no longer computed (it would overflow). */
    private static final int MAX_BACKOFFS = 30;
    /**
     * PSNs sent since the latest loss repaired after which tail probes ask instead of resending
     * [REL-069]: about one full window of the tools, so that at 0.1% loss a third of the probes ask
     * and at 1% almost none.
     */
    static final int ASK_AFTER_PSNS = 1024;

    private final EndpointConfig config;
    /** The requester's estimator, replaced at each {@link #start}. */
    private RttEstimator rtt;
    /**
     * Tail probes sent in this episode (since the last progress or RTO expiry): the next waits
     * twice as long as the last [REL-026].
     */
    private int probes;
    /**
     * PROBE_WAIT [REL-065]: the PTO is at least this long. 0 until a tail probe is found spurious,
     * then twice the longest wait a spurious probe revealed (its packet's first transmission to
     * the proof); halved at every RTO expiry and after {@link LossDetector#EPISODES_TO_SHRINK} loss episodes
     * without a spurious retransmission. A host that pauses (a busy CPU, a collector) answers late, not never; a
     * probe timed on an RTT measured between its pauses resends what is already on its way, every
     * pause. Doubling the probe timeout per spurious probe learned the same, but every few
     * thousand packets delivered undid it, so a bulk stream probed at every pause.
     */
    private long probeWaitNs;
    /**
     * The latest retransmission for any reason but a tail probe (loss detection, NACK, RTO, RNR):
     * what a packet sent before it waited for may be that repair, not a pause [REL-065].
     */
    private long lastRepairNs = Long.MIN_VALUE;
    /** The next PSN to send at the latest repair, valid when {@link #repaired} [REL-069]. */
    private int repairSndNxt;
    private boolean repaired;
    /**
     * An asking probe of this episode was answered and the episode goes on: what is outstanding
     * arrived but is not answered (a READ's responses), so the next probe resends [REL-069].
     */
    private boolean askAnswered;

    ProbeTimer(final EndpointConfig config) {
        this.config = config;
    }

    /** Called when the requester starts (RTR→RTS) with its new RTT estimator. */
    void start(final RttEstimator rtt) {
        this.rtt = rtt;
    }

    /**
     * The queue pair was reset: nothing the previous connection learnt counts. PROBE_WAIT was kept
     * before, so a reused QP probed on the old peer's pauses until an RTO or 16 loss episodes
     * halved it away [REL-065: 0 until a probe of this connection proves spurious].
     */
    void reset() {
        probes = 0;
        probeWaitNs = 0;
        lastRepairNs = Long.MIN_VALUE;
        repaired = false;
        askAnswered = false;
    }

    /** Progress (a delivery) or an RTO expiry ends the probe episode: the next probe waits the plain PTO [REL-026]. */
    void endEpisode() {
        probes = 0;
        askAnswered = false;
    }

    /** An asking probe of this episode was answered [REL-069]. */
    void onAskAnswered() {
        askAnswered = true;
    }

    /**
     * A tail probe is being sent (its packet marked lost for retransmission): the next one of this
     * episode waits twice as long [REL-026].
     *
     * @return the probes sent in this episode, this one included
     */
    int onProbe() {
        return ++probes;
    }

    /** A retransmission for any reason but a tail probe left at {@code nowNs} [REL-065]. */
    void onRepair(final long nowNs) {
        lastRepairNs = nowNs;
    }

    /**
     * A packet declared lost (by time, a NACK, a trim, the retransmission timer or an asking probe's
     * answer; not a packet held for an RNR delay or refused by the responder's PSN window) was
     * resent, or is about to be, when the next PSN to send was {@code sndNxt} [REL-069].
     */
    void onLossRepaired(final int sndNxt) {
        repairSndNxt = sndNxt;
        repaired = true;
    }

    /**
     * Whether a tail probe asks for an ACK (a KEEPALIVE) instead of resending a packet [REL-069]:
     * when this queue pair has repaired no loss in its last {@link #ASK_AFTER_PSNS} PSNs and no
     * question of this episode has been answered yet. Where packets are lost, a copy repairs a lost
     * tail one round trip sooner than a question; where none are, the answers stopped because the
     * peer paused, and a copy would arrive twice. Once a question is answered and the episode goes
     * on, what is outstanding arrived and still has no answer (a READ whose responses were lost):
     * asking again would only hear the same.
     *
     * @param sndNxt the next PSN to send
     */
    boolean asks(final int sndNxt) {
        return !askAnswered && (!repaired || Integer.toUnsignedLong(sndNxt - repairSndNxt) >= ASK_AFTER_PSNS);
    }

    /**
     * The retransmission timer expired: PROBE_WAIT halves. The timer had to repair what the probes
     * did not: a long probe wait only delayed them. At 20% loss the waits spurious probes revealed
     * were repairs, and a probe wait they had raised to RTO_MAX left every loss to the RTO
     * [REL-065].
     */
    void onRetransmitTimeout() {
        probeWaitNs /= 2;
    }

    /**
     * Time-based loss detection ended its {@link LossDetector#EPISODES_TO_SHRINK}th loss episode
     * without a spurious retransmission: the probe wait halves with the reorder window, since the
     * path loses packets and probes that come soon pay [REL-024, REL-065].
     */
    void onLossEpisodes() {
        probeWaitNs /= 2;
    }

    /**
     * A tail probe proved needless at {@code nowNs}, for a packet first sent at
     * {@code firstSentNs}: the PTO covers twice the wait it revealed, from the packet's first
     * transmission or the latest repair since then, whichever came later [REL-065]. A wait across
     * repairs measures the repairs: a READ held behind a re-requested one, RTO expiries at 20%
     * loss (hundreds of milliseconds that would stop probing altogether on the path that needs it
     * most). Taking the maximum makes a second proof for the same episode (another PSN of the same
     * READ) harmless.
     */
    void onSpuriousProbe(final long nowNs, final long firstSentNs) {
        final long waitedNs = nowNs - Math.max(firstSentNs, lastRepairNs);
        if (waitedNs > 0) {
            probeWaitNs = Math.max(probeWaitNs, Math.min(2 * waitedNs, config.maxRtoNs()));
        }
    }

    /**
     * When the next tail probe of this episode is due, or {@code Long.MAX_VALUE} when none is due
     * before the retransmission timer. The probe timer runs from the later of the last progress
     * and the last transmission.
     *
     * @param progressNs the requester's last progress (its retransmission timer's start)
     * @param lastTransmitNs the requester's last transmission
     * @param rtoNs the current RTO
     * @param rnrWaiting whether packets wait out an RNR delay
     */
    long dueNs(final long progressNs, final long lastTransmitNs, final long rtoNs, final boolean rnrWaiting) {
        final long probe = nextProbeNs(rtoNs, rnrWaiting);
        return probe > 0 ? Math.max(progressNs, lastTransmitNs) + probe : Long.MAX_VALUE;
    }

    /** @return the tail probes sent in this episode */
    int probes() {
        return probes;
    }

    /** @return PROBE_WAIT, the floor of the probe timeout [REL-065] */
    long probeWaitNs() {
        return probeWaitNs;
    }

    /**
     * The wait before the next tail probe of this episode: PTO doubled for each probe already
     * sent, or 0 when no probe is due before the retransmission timer (RNR waits, no RTT sample,
     * or the doubled PTO has reached the RTO) [REL-026]. A lost probe, or a lost answer
     * to it, is then retried within round trips instead of waiting for the timer, whose floor may
     * be tens of milliseconds (a perftest-style QP timeout).
     */
    long nextProbeNs(final long rtoNs, final boolean rnrWaiting) {
        final long probe = timeoutNs();
        if (rnrWaiting || probe <= 0 || probes >= MAX_BACKOFFS) {
            return 0;
        }
        final long backedOff = probe << probes;
        return backedOff > 0 && backedOff < rtoNs ? backedOff : 0;
    }

    /**
     * The probe timeout PTO: max(2 × SRTT, PROBE_WAIT) plus the ACK coalescing delay, within
     * [minimum probe time, RTO]; 0 when the tail-loss probe is off or before the first RTT sample
     * [REL-026, REL-065].
     */
    long timeoutNs() {
        if (config.minTailProbeNs() == 0 || !rtt.hasSample()) {
            // Without an RTT sample a probe would only guess; the retransmission timer covers it.
            return 0;
        }
        final long pto = Math.max(2 * rtt.srttNs(), probeWaitNs) + config.ackCoalesceDelayNs();
        return Math.max(config.minTailProbeNs(), Math.min(rtt.rtoNs(), pto));
    }
}
