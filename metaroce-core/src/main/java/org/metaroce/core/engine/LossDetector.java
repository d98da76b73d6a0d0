// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.engine;

import org.metaroce.core.multipath.PathSelector;
import org.metaroce.core.reliability.Psn;
import org.metaroce.core.reliability.RttEstimator;

/**
 * The requester's time-based loss detection (specification 6.6.1), in the manner of RACK (RFC
 * 8985): a packet is lost when a packet sent after it has been delivered and it has been
 * outstanding longer than the latest RTT plus a reordering window [REL-023]; a READ_RESPONSE slot
 * is lost when a response with a later PSN arrived more than the reordering window ago [REL-045].
 * Spraying reorders packets across paths, so counting duplicate ACKs would cry wolf; time does
 * not. It alone owns:
 * <ul>
 *   <li>the <em>RACK record</em>: the delivered transmission with the highest transmit sequence
 *       (its sequence, its PSN, whether it was a retransmission) and the latest RTT sample;</li>
 *   <li>the <em>latest response</em>: its PSN, arrival time and the transmit sequence of the
 *       request it answered [REL-045];</li>
 *   <li>the <em>reorder window</em> reoWnd and its adaptation: widened by each spurious
 *       retransmission, back to its floor after {@link #EPISODES_TO_SHRINK} loss episodes without
 *       one, kept within [floor, ceiling] and at least the paths' SRTT spread [REL-024];</li>
 *   <li>the <em>loss-check deadline</em>: the earliest time a packet would become lost by the
 *       rule, for the requester's timer [REL-023].</li>
 * </ul>
 * The {@link Requester} tells it what happened (an RTT sample, a delivery, a response, a spurious
 * retransmission, a reset) and asks it to scan. The scan reads the {@link Scoreboard}, marks what
 * it finds lost there and hands each such PSN to a {@link Losses} sink, in PSN order, so that the
 * requester attributes it to a path and to congestion control at once; the requester's send
 * window and path selector come in as arguments, since only the requester and its queue pair know
 * them. Under go-back-N the requester never asks it to scan ({@link LossRecovery#rack}, [REL-054]).
 * The requester's tail-loss probe (PROBE_WAIT, [REL-065]) shrinks with the reorder window: the
 * scan reports when it shrank, and the requester halves its probe wait.
 *
 * <p>Primitive fields only, and the sink is fixed at construction, so that nothing is allocated
 * per ACK or per timer.
 */
final class LossDetector {
    /** Loss episodes without a spurious retransmission that shrink reoWnd and PROBE_WAIT [REL-024, REL-065]. */
    static final int EPISODES_TO_SHRINK = 16;

    /** What the requester does with a packet the scan found lost. */
    interface Losses {
        /**
         * The packet at {@code psn} was just marked lost by time-based detection (cause
         * {@link EndpointCounter#RETRANSMITS_LOSS_DETECTED}); called once per packet, in PSN order,
         * before the scan looks at the next one.
         */
        void lostByTime(long nowNs, int psn);
    }

    private final Scoreboard scoreboard;
    private final EndpointConfig config;
    private final Losses losses;
    /** The requester's estimator, replaced at each {@link #start}. */
    private RttEstimator rtt;

    private long rackTxSeq = -1;
    /** PSN of the delivered transmission with the highest transmit sequence. */
    private int rackPsn;
    private long rackRttNs;
    /** Whether the latest-sent delivered transmission (the RACK packet) was a retransmission. */
    private boolean rackRetransmission;

    /** Latest response PSN seen and when: responders answer in PSN order, so earlier gaps are losses [REL-045]. */
    private int latestResponsePsn;
    private long latestResponseNs = Long.MIN_VALUE;
    /** Transmit sequence of the request that the latest response answered. */
    private long latestResponseTxSeq = -1;
    private boolean anyResponse;

    private long reorderWindowNs;
    private int lossEpisodesSinceSpurious;
    private long lossCheckDeadlineNs = Long.MAX_VALUE;

    LossDetector(final Scoreboard scoreboard, final EndpointConfig config, final Losses losses) {
        this.scoreboard = scoreboard;
        this.config = config;
        this.losses = losses;
    }

    /**
     * Called when the requester starts (RTR→RTS) with its new RTT estimator: reoWnd starts at
     * {@code RTO_MIN / 4} (the smaller of the configured and the QP's RTO floor), at least the
     * configured minimum [REL-024].
     */
    void start(final RttEstimator rtt, final long minRtoNs) {
        this.rtt = rtt;
        reorderWindowNs = Math.max(config.minReorderWindowNs(), minRtoNs / 4);
    }

    /** An RTT sample from an ACK proving a first transmission's arrival: the RTT the rule allows for. */
    void onRttSample(final long sampleNs) {
        rackRttNs = sampleNs;
    }

    /**
     * A spurious retransmission was detected [REL-025]: reoWnd grows by minRTT / 4 (at least 1 µs),
     * up to its ceiling, and the count of loss episodes without one starts again [REL-024].
     */
    void onSpuriousRetransmission() {
        lossEpisodesSinceSpurious = 0;
        reorderWindowNs = Math.min(reorderWindowNs + Math.max(1_000, rtt.minRttNs() / 4), reorderCeilingNs());
    }

    /**
     * The packet at {@code psn} was newly delivered; {@code proven} when the ACK being applied
     * proves its latest transmission arrived (its trigger, echo matching) [REL-017].
     */
    void onDelivered(final int psn, final boolean proven) {
        // A packet sent more than once moves the time-based rule only when the ACK proves which copy
        // arrived [REL-023] (RFC 8985 6.2 step 2): had the original arrived, taking the latest copy's
        // send time would declare lost every packet sent in between whose ACK is merely behind.
        if (scoreboard.txSeq(psn) > rackTxSeq && (scoreboard.transmissions(psn) == 1 || proven)) {
            rackTxSeq = scoreboard.txSeq(psn);
            rackPsn = psn;
            rackRetransmission = scoreboard.transmissions(psn) > 1;
        }
    }

    /** A READ or atomic response for {@code psn} arrived at {@code nowNs} [REL-045]. */
    void onResponse(final long nowNs, final int psn) {
        if (!anyResponse || Psn.before(latestResponsePsn, psn)) {
            latestResponsePsn = psn;
            latestResponseNs = nowNs;
            latestResponseTxSeq = scoreboard.txSeq(psn);
            anyResponse = true;
        }
    }

    /** @return whether a response to {@code psn} or to a later PSN has arrived */
    boolean respondedAtOrAfter(final int psn) {
        return anyResponse && !Psn.before(latestResponsePsn, psn);
    }

    /** @return the earliest time a packet would become lost by the rule, MAX_VALUE when none waits [REL-023] */
    long deadlineNs() {
        return lossCheckDeadlineNs;
    }

    /** The scoreboard was cleared (flush): no loss check is due. */
    void cancelDeadline() {
        lossCheckDeadlineNs = Long.MAX_VALUE;
    }

    /**
     * The queue pair was reset: no loss check is due, and nothing of the previous connection counts,
     * neither its deliveries and responses nor its latest RTT or its loss episodes ({@link #start}
     * sets reoWnd again). The RTT was kept before: a reused QP judged loss with the old
     * connection's round trip until its first sample.
     */
    void reset() {
        anyResponse = false;
        latestResponsePsn = 0;
        latestResponseNs = Long.MIN_VALUE;
        latestResponseTxSeq = -1;
        lossCheckDeadlineNs = Long.MAX_VALUE;
        rackTxSeq = -1;
        rackPsn = 0;
        rackRttNs = 0;
        rackRetransmission = false;
        lossEpisodesSinceSpurious = 0;
    }

    /**
     * Reordering-tolerant loss detection in the manner of RACK over the outstanding PSNs
     * {@code [sndUna, sndNxt)}: marks lost, and hands to the sink, every packet the rules of
     * [REL-023] and [REL-045] declare lost now, and arms the deadline for the earliest one that
     * would become lost later.
     *
     * @param paths the queue pair's paths, whose SRTT spread bounds reoWnd from below [REL-024]
     * @return whether this scan ended the {@link #EPISODES_TO_SHRINK}th loss episode without a
     *     spurious retransmission, so that reoWnd returned to its floor and the requester is to halve
     *     its probe wait [REL-065]
     */
    boolean detectLosses(final long nowNs, final int sndUna, final int sndNxt, final PathSelector paths) {
        lossCheckDeadlineNs = Long.MAX_VALUE;
        if (rackTxSeq < 0 || scoreboard.inFlight() == 0) {
            return false;
        }
        final long reorderWindow = reorderWindowNs(paths);
        final long rttForLoss = rackRttNs > 0 ? rackRttNs : rtt.srttNs();
        boolean episode = false;
        // Without retransmissions outstanding, transmit order is PSN order: only PSNs before the
        // latest delivered one (or the latest response) can have been overtaken, so the scan stops
        // there instead of walking the whole window on every ACK.
        // A delivered retransmission was sent after packets with higher PSNs: scan them all.
        int end = sndNxt;
        if (scoreboard.retransmittedOutstanding() == 0 && !rackRetransmission) {
            int bound = Psn.before(sndUna, rackPsn + 1) ? rackPsn + 1 : sndUna;
            if (anyResponse && Psn.before(bound, latestResponsePsn)) {
                bound = latestResponsePsn;
            }
            if (Psn.before(bound, sndNxt)) {
                end = bound;
            }
        }
        for (int psn = sndUna; psn != end; psn++) {
            if (scoreboard.state(psn) != Scoreboard.IN_FLIGHT) {
                continue;
            }
            final long lostAt;
            if (scoreboard.kind(psn) != Scoreboard.KIND_DATA && anyResponse && Psn.before(psn, latestResponsePsn)
                && scoreboard.txSeq(psn) <= latestResponseTxSeq) {
                // Only responses to requests sent no later than this slot's own request count: a
                // slot that was re-requested since waits for answers to the re-request.
                // A later response arrived: responses come in PSN order, so this one is lost once
                // the reorder window has passed [REL-045].
                lostAt = latestResponseNs + reorderWindow;
            } else if (scoreboard.txSeq(psn) < rackTxSeq) {
                lostAt = scoreboard.sentNs(psn) + rttForLoss + reorderWindow;
            } else {
                continue;
            }
            if (nowNs >= lostAt) {
                scoreboard.lost(psn, EndpointCounter.RETRANSMITS_LOSS_DETECTED);
                losses.lostByTime(nowNs, psn);
                episode = true;
            } else if (lostAt < lossCheckDeadlineNs) {
                lossCheckDeadlineNs = lostAt;
            }
        }
        // One detection pass that finds losses is one loss episode, however many packets it
        // declares lost; 16 episodes without a spurious retransmission shrink the window and the
        // probe wait: the path loses packets, so probes that come soon pay [REL-024, REL-065].
        if (episode && ++lossEpisodesSinceSpurious >= EPISODES_TO_SHRINK) {
            reorderWindowNs = reorderFloorNs();
            lossEpisodesSinceSpurious = 0;
            return true;
        }
        return false;
    }

    /** @return the current reorder window of the time-based loss detection [REL-024] */
    long reorderWindowNs(final PathSelector paths) {
        final long floor = reorderFloorNs();
        final long window = Math.max(floor, Math.min(reorderWindowNs, reorderCeilingNs()));
        // Ordinary skew between paths is not loss [REL-024].
        return Math.max(window, paths.srttSpreadNs());
    }

    /** max(minRTT / 4, 1 µs), or RTO_MIN / 4 before the first sample [REL-024]. */
    private long reorderFloorNs() {
        final long base = rtt.hasSample() ? rtt.minRttNs() / 4 : config.minRtoNs() / 4;
        return Math.max(config.minReorderWindowNs(), base);
    }

    private long reorderCeilingNs() {
        return Math.max(reorderFloorNs(), Math.max(rtt.srttNs(), 1_000));
    }
}
