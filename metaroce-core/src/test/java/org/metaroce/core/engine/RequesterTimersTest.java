// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.metaroce.core.engine.Scoreboard.IN_FLIGHT;
import static org.metaroce.core.engine.Scoreboard.KIND_DATA;
import static org.metaroce.core.engine.Scoreboard.LOST;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.metaroce.core.congestion.CongestionControl;
import org.metaroce.core.congestion.FixedWindowCongestionControl;
import org.metaroce.core.multipath.PathSelector;
import org.metaroce.core.reliability.RttEstimator;
import org.metaroce.core.verbs.CompletionQueue;
import org.metaroce.core.verbs.ProtectionDomain;

/**
 * The requester's timers on their own, over a scoreboard filled by hand: an RTO expiry resends the
 * oldest packet alone and a delivery from before it undoes its backoff [REL-028, REL-058]; the
 * retry budget ends the connection through the requester [REL-029]; an RNR delay's end resends
 * the held packets [REL-039]; and the deadline is the earliest of the three.
 */
class RequesterTimersTest {
    private static final long RTO = 1_000_000;
    private static final int BASE = 0xFFFF_FFFE; // across the PSN wrap

    private final Scoreboard scoreboard = new Scoreboard(64);
    private final EndpointCounters counters = new EndpointCounters();
    private final Context qp = new Context();
    private final List<String> asked = new ArrayList<>();
    private final RttEstimator rtt = new RttEstimator(RTO, RTO, 64 * RTO);
    private final ProbeTimer probeTimer = new ProbeTimer(new EndpointConfig());
    private final RequesterTimers timers = new RequesterTimers(qp, counters, scoreboard, probeTimer,
        new CongestionSignals(qp), new RequesterTimers.Requests() {
            @Override
            public void retriesExhausted() {
                asked.add("retriesExhausted");
            }

            @Override
            public boolean newPacketCanProbe() {
                asked.add("newPacketCanProbe");
                return false;
            }
        });

    RequesterTimersTest() {
        // As the requester starts its parts at RTS.
        probeTimer.start(rtt);
        timers.start(rtt, LossRecovery.of(false, scoreboard, counters));
    }

    /** Sends PSNs BASE..BASE+n-1 at time {@code sentNs}, after an idle period. */
    private void send(final int n, final long sentNs) {
        for (int i = 0; i < n; i++) {
            scoreboard.assign(BASE + i, i, 0, KIND_DATA);
            scoreboard.sent(BASE + i, sentNs, i, 0, false);
            timers.onTransmit(sentNs, 0);
        }
        timers.onSentAfterIdle(sentNs, true);
    }

    @Test
    void anExpiryResendsTheOldestAloneAndALateDeliveryUndoesIt() {
        send(3, 0);
        timers.onExpiries(RTO, BASE, BASE + 3);
        assertThat(counters.get(EndpointCounter.TIMEOUTS)).isEqualTo(1);
        assertThat(scoreboard.state(BASE)).isEqualTo(LOST);
        assertThat(scoreboard.lossCause(BASE)).isEqualTo(EndpointCounter.RETRANSMITS_TIMEOUT);
        assertThat(scoreboard.state(BASE + 1)).isEqualTo(IN_FLIGHT);
        assertThat(timers.fullWindowRetransmitAllowed()).isTrue();
        assertThat(rtt.rtoNs()).isEqualTo(2 * RTO);
        // The ACK of a transmission from before the expiry: late, not lost [REL-058].
        assertThat(timers.echoPrecedesExpiry((int) (RTO - 5))).isTrue();
        assertThat(timers.echoPrecedesExpiry((int) (RTO + 5))).isFalse();
        timers.onRetransmit();
        assertThat(timers.fullWindowRetransmitAllowed()).isFalse();

        timers.onDelivered(RTO + 10, 0);
        assertThat(counters.get(EndpointCounter.SPURIOUS_TIMEOUTS)).isEqualTo(1);
        assertThat(rtt.rtoNs()).isEqualTo(RTO);
        // Undone once: the episode is closed.
        timers.onDelivered(RTO + 20, 0);
        assertThat(counters.get(EndpointCounter.SPURIOUS_TIMEOUTS)).isEqualTo(1);
        assertThat(asked).isEmpty();
    }

    @Test
    void theRetryBudgetEndsTheConnectionThroughTheRequester() {
        qp.retryCount = 1;
        send(1, 0);
        timers.onExpiries(RTO, BASE, BASE + 1);
        assertThat(asked).isEmpty();
        assertThat(scoreboard.state(BASE)).isEqualTo(LOST);
        // Resent, and the second expiry (backed off) is the one past RETRY_CNT.
        scoreboard.sent(BASE, RTO, 1, 0, false);
        timers.onExpiries(RTO + 2 * RTO, BASE, BASE + 1);
        assertThat(asked).containsExactly("retriesExhausted");
        assertThat(qp.failures).singleElement().asString().contains("[REL-029]");
    }

    @Test
    void progressResetsTheRetryCount() {
        qp.retryCount = 1;
        send(2, 0);
        timers.onExpiries(RTO, BASE, BASE + 2);
        scoreboard.sent(BASE, RTO, 2, 0, false);
        scoreboard.delivered(BASE, 0L);
        timers.onProgress(RTO + 1);
        assertThat(rtt.rtoNs()).isEqualTo(RTO);
        timers.onExpiries(RTO + 1 + RTO, BASE + 1, BASE + 2);
        assertThat(asked).isEmpty();
        assertThat(scoreboard.state(BASE + 1)).isEqualTo(LOST);
    }

    @Test
    void aTailProbeDueBeforeTheRtoResendsTheNewestUnlessANewPacketCanProbe() {
        rtt.onSample(10_000); // no probe before an RTT sample
        // A loss repaired just before: the probe resends rather than asks [REL-069].
        probeTimer.onLossRepaired(BASE);
        send(3, 0);
        final long due = timers.deadlineNs();
        assertThat(due).isBetween(1L, RTO - 1);
        timers.onExpiries(due - 1, BASE, BASE + 3);
        assertThat(asked).isEmpty();
        timers.onExpiries(due, BASE, BASE + 3);
        assertThat(asked).containsExactly("newPacketCanProbe");
        assertThat(scoreboard.state(BASE + 2)).isEqualTo(LOST);
        assertThat(scoreboard.lossCause(BASE + 2)).isEqualTo(EndpointCounter.RETRANSMITS_TAIL_PROBE);
        assertThat(scoreboard.state(BASE)).isEqualTo(IN_FLIGHT);
        assertThat(timers.fullWindowRetransmitAllowed()).isTrue();
        assertThat(timers.probeWithNew()).isFalse();
        assertThat(counters.get(EndpointCounter.TIMEOUTS)).isZero();
    }

    /**
     * With no loss repaired in the last {@link ProbeTimer#ASK_AFTER_PSNS} PSNs, a probe that no new
     * packet can be asks with a KEEPALIVE and marks nothing lost; every probe of the episode asks
     * [REL-069]. One loss repaired within that many PSNs makes the next probe a copy again.
     */
    @Test
    void aTailProbeOnAPathThatLostNothingLatelyAsksInsteadOfResending() {
        rtt.onSample(10_000);
        send(3, 0);
        final long due = timers.deadlineNs();
        timers.onExpiries(due, BASE, BASE + 3);
        assertThat(timers.probeWithAsk()).isTrue();
        assertThat(scoreboard.lostCount()).isZero();
        assertThat(timers.fullWindowRetransmitAllowed()).isFalse();
        assertThat(timers.onAskSent(due)).isZero();
        assertThat(timers.probeWithAsk()).isFalse();
        // The second probe of the episode, timed from the question and backed off, asks again.
        final long second = timers.deadlineNs();
        assertThat(second).isGreaterThan(due);
        timers.onExpiries(second, BASE, BASE + 3);
        assertThat(timers.probeWithAsk()).isTrue();
        assertThat(scoreboard.lostCount()).isZero();
        timers.onAskSent(second);
        // A loss repaired 1,023 PSNs ago: the third probe resends the newest packet.
        probeTimer.onLossRepaired(BASE + 3 - (ProbeTimer.ASK_AFTER_PSNS - 1));
        timers.onExpiries(timers.deadlineNs(), BASE, BASE + 3);
        assertThat(timers.probeWithAsk()).isFalse();
        assertThat(scoreboard.state(BASE + 2)).isEqualTo(LOST);
        assertThat(scoreboard.lossCause(BASE + 2)).isEqualTo(EndpointCounter.RETRANSMITS_TAIL_PROBE);
        // ... and 1,024 PSNs ago it would have asked.
        probeTimer.onLossRepaired(BASE + 3 - ProbeTimer.ASK_AFTER_PSNS);
        assertThat(probeTimer.asks(BASE + 3)).isTrue();
        assertThat(counters.get(EndpointCounter.TIMEOUTS)).isZero();
    }

    @Test
    void theEndOfAnRnrDelayResendsTheHeldPackets() {
        send(2, 0);
        scoreboard.heldForRnr(BASE);
        scoreboard.heldForRnr(BASE + 1);
        timers.onRnrDelay(500);
        timers.onRnrDelay(700); // the earliest wins
        assertThat(timers.deadlineNs()).isEqualTo(500);
        timers.resumeAfterRnr(499, BASE, BASE + 2);
        assertThat(scoreboard.rnrWaitCount()).isEqualTo(2);
        timers.resumeAfterRnr(500, BASE, BASE + 2);
        assertThat(scoreboard.rnrWaitCount()).isZero();
        assertThat(scoreboard.lossCause(BASE + 1)).isEqualTo(EndpointCounter.RETRANSMITS_RNR);
        assertThat(timers.deadlineNs()).isEqualTo(Long.MAX_VALUE);
    }

    /** The queue pair as the timers see it: only what they use answers; the rest is not reached. */
    private static final class Context implements RequesterContext {
        private final CongestionControl cc = new FixedWindowCongestionControl(16);
        private final PathSelector paths = new PathSelector(new int[] {1, 2});
        int retryCount = 7;
        final List<String> failures = new ArrayList<>();

        @Override
        public int qpn() {
            return 1;
        }

        @Override
        public int destQpn() {
            return 2;
        }

        @Override
        public int destQpnOrZero() {
            return 2;
        }

        @Override
        public int pathMtu() {
            return 1024;
        }

        @Override
        public ProtectionDomain pd() {
            throw new AssertionError("not used by the timers");
        }

        @Override
        public CompletionQueue sendCq() {
            throw new AssertionError("not used by the timers");
        }

        @Override
        public boolean isGoBackN() {
            return false;
        }

        @Override
        public int capabilities() {
            return 0;
        }

        @Override
        public int retryCount() {
            return retryCount;
        }

        @Override
        public long retryTimeoutNs() {
            return 0;
        }

        @Override
        public int rnrRetry() {
            return 7;
        }

        @Override
        public long minRnrTimerNs() {
            return 0;
        }

        @Override
        public int maxRdAtomic() {
            return 1;
        }

        @Override
        public boolean isSendQueueDraining() {
            return false;
        }

        @Override
        public CongestionControl congestionControl() {
            return cc;
        }

        @Override
        public PathSelector paths() {
            return paths;
        }

        @Override
        public PacketWriter writer() {
            throw new AssertionError("not used by the timers");
        }

        @Override
        public void commit(final TransmitSink sink, final int offset, final int length, final int entropy) {
            throw new AssertionError("not used by the timers");
        }

        @Override
        public boolean sendProbe(final long nowNs, final TransmitSink sink, final int attempt, final int psn) {
            throw new AssertionError("not used by the timers");
        }

        @Override
        public void countRetransmit(final EndpointCounter cause) {
            throw new AssertionError("not used by the timers");
        }

        @Override
        public void trace(final long nowNs, final TraceEvent event, final int psn, final int a, final int b,
                          final long c) {
        }

        @Override
        public void trace(final TraceEvent event, final int psn, final int a, final int b, final long c) {
        }

        @Override
        public void recordFailure(final String reason) {
            failures.add(reason);
        }

        @Override
        public void enterError(final AsyncEventType cause) {
            throw new AssertionError("the requester, not the timers, ends the connection");
        }

        @Override
        public void onCompletionQueueOverflow(final CompletionQueue cq) {
            throw new AssertionError("not used by the timers");
        }
    }
}
