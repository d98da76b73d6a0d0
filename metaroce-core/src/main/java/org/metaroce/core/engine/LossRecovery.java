// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.engine;

/**
 * How the requester recovers from loss, chosen once per connection when it starts (RTR→RTS) from
 * the negotiated Capability Flags: {@link #SELECTIVE_REPEAT}, the protocol's own mode, or
 * {@link GoBackN}, the baseline of specification 6.11 that reproduces RoCEv2 for comparison
 * [REL-053]. The {@link Requester} asks it wherever the two modes differ:
 * <ul>
 *   <li>whether time-based loss detection ({@link LossDetector}, [REL-023]) and the tail-loss
 *       probe ({@link ProbeTimer}, [REL-026]) run: not under go-back-N [REL-054];</li>
 *   <li>what a retransmission-timer expiry marks lost: the oldest outstanding packet [REL-028], or
 *       every outstanding one under go-back-N [REL-054];</li>
 *   <li>whether a READ_RESPONSE that arrives out of PSN order is dropped and the READ requested
 *       again from its first missing response: only under go-back-N, at most once per missing PSN
 *       until progress or an RTO expiry, which end the requester's recovery episode [REL-055].</li>
 * </ul>
 * Everything else is common to both modes, NACK SEQUENCE_GAP included: the requester resends from
 * its NACK PSN whichever mode it runs [REL-054], and only a go-back-N responder sends one [REL-053].
 * The single path of go-back-N [REL-056] is the queue pair's, which builds its path selector with
 * one path.
 */
abstract class LossRecovery {
    /** Selective repeat: stateless, so one instance serves every queue pair. */
    static final LossRecovery SELECTIVE_REPEAT = new SelectiveRepeat();

    private LossRecovery() {
    }

    /**
     * @param goBackN whether the connection negotiated GO_BACK_N
     * @return the recovery of a connection that starts now
     */
    static LossRecovery of(final boolean goBackN, final Scoreboard scoreboard, final EndpointCounters counters) {
        return goBackN ? new GoBackN(scoreboard, counters) : SELECTIVE_REPEAT;
    }

    /** @return whether time-based loss detection runs [REL-023], [REL-054] */
    abstract boolean rack();

    /** @return whether tail-loss probes are sent [REL-026], [REL-054] */
    abstract boolean tailProbe();

    /**
     * @return whether a retransmission-timer expiry marks every outstanding packet lost (go-back-N,
     *     [REL-054]) rather than only the oldest one ([REL-028]); only an expiry that resent the
     *     oldest alone is later judged spurious by a late delivery [REL-058]
     */
    abstract boolean timeoutResendsAll();

    /**
     * A READ_RESPONSE for the outstanding READ slot {@code psn} arrived, the requester's
     * outstanding PSNs being {@code [sndUna, sndNxt)}.
     *
     * @return whether it is dropped unaccepted [REL-055]
     */
    abstract boolean dropsResponse(int psn, int sndUna, int sndNxt);

    /** Progress or an RTO expiry ended the recovery episode [REL-055]. */
    abstract void endEpisode();

    /** Selective repeat: every loss detector runs, an expiry resends the oldest, responses land in any order. */
    private static final class SelectiveRepeat extends LossRecovery {
        @Override
        boolean rack() {
            return true;
        }

        @Override
        boolean tailProbe() {
            return true;
        }

        @Override
        boolean timeoutResendsAll() {
            return false;
        }

        @Override
        boolean dropsResponse(final int psn, final int sndUna, final int sndNxt) {
            // Placed by Message Offset, in any order [OPS-022].
            return false;
        }

        @Override
        void endEpisode() {
            // Nothing to forget.
        }
    }

    /**
     * Go-back-N [REL-053]..[REL-057]: no RACK and no tail-loss probe, an expiry resends everything
     * outstanding, READ_RESPONSEs are accepted in PSN order only. It remembers the missing
     * READ_RESPONSE PSN it last requested again, until the episode ends.
     */
    static final class GoBackN extends LossRecovery {
        private final Scoreboard scoreboard;
        private final EndpointCounters counters;
        /** The missing READ_RESPONSE PSN already requested again in this episode [REL-055]. */
        private boolean reRequested;
        private int reRequestedPsn;

        GoBackN(final Scoreboard scoreboard, final EndpointCounters counters) {
            this.scoreboard = scoreboard;
            this.counters = counters;
        }

        @Override
        boolean rack() {
            // RACK and the tail-loss probe are not used [REL-054].
            return false;
        }

        @Override
        boolean tailProbe() {
            return false;
        }

        @Override
        boolean timeoutResendsAll() {
            // The responder discarded whatever followed a gap [REL-053, REL-054].
            return true;
        }

        /**
         * A READ_RESPONSE is accepted only in PSN order [REL-055]. One after a missing response is
         * dropped (counted SEQUENCE_GAP), and the READ is requested again from the first missing
         * response: every response slot of that READ still in flight is marked lost, once per
         * missing PSN until progress or an RTO expiry. A second answer to a delivered slot is not
         * out of order: the requester counts it as a duplicate.
         */
        @Override
        boolean dropsResponse(final int psn, final int sndUna, final int sndNxt) {
            if (scoreboard.state(psn) == Scoreboard.DELIVERED) {
                return false;
            }
            for (int p = sndUna; p != psn; p++) {
                if (scoreboard.kind(p) == Scoreboard.KIND_READ && scoreboard.state(p) != Scoreboard.DELIVERED) {
                    counters.increment(EndpointCounter.SEQUENCE_GAP);
                    if (scoreboard.state(p) == Scoreboard.IN_FLIGHT && !(reRequested && reRequestedPsn == p)) {
                        reRequested = true;
                        reRequestedPsn = p;
                        final long wqe = scoreboard.wqe(p);
                        for (int q = p; q != sndNxt && scoreboard.wqe(q) == wqe
                            && scoreboard.kind(q) == Scoreboard.KIND_READ; q++) {
                            if (scoreboard.state(q) == Scoreboard.IN_FLIGHT) {
                                scoreboard.lost(q, EndpointCounter.RETRANSMITS_GO_BACK_N);
                            }
                        }
                    }
                    return true;
                }
            }
            return false;
        }

        @Override
        void endEpisode() {
            reRequested = false;
        }
    }
}
