// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.sim;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.metaroce.core.congestion.CongestionControlAlgorithm;
import org.metaroce.core.wire.ConnectHeader;
import org.metaroce.sim.scenario.RunResult;
import org.metaroce.sim.scenario.Scenario;
import org.metaroce.sim.scenario.ScenarioConfig;
import org.metaroce.sim.scenario.ScenarioRunner;
import org.metaroce.sim.transport.TransportProfile;

/**
 * The receiver-credit profile (8.6) in the fabric: RECEIVER_CREDIT negotiated and selected, so
 * the receiver shares one receive BDP among the senders [CC-018] and each sender's window is its
 * share [CC-019]. After the first round trip (every sender starts with one BDP at BASE_RTT_INIT)
 * the receiver's downlink holds about one BDP, not the megabytes of 32 delay-based windows.
 */
class ReceiverCreditIncastTest {
    @Test
    @DisplayName("[CC-018] [CC-019] [CC-024] 32:1 incast under receiver credit: no loss, and the receiver's queue drains to about one BDP")
    void creditHoldsTheIncastQueueNearOneBdp() {
        final ScenarioConfig c = new ScenarioConfig();
        c.scenario = Scenario.INCAST;
        c.hosts = 33;
        c.seed = 1;
        c.profile = TransportProfile.metaroce()
            .withCongestionControl("RECEIVER_CREDIT (8.6)", CongestionControlAlgorithm.RECEIVER_CREDIT, 0);
        assertThat(c.profile.capabilities() & ConnectHeader.CAP_RECEIVER_CREDIT).isNotZero();
        System.out.println("seed=" + c.seed);
        final RunResult r = ScenarioRunner.run(c);
        final RunResult delay = run(TransportProfile.metaroce(), c);
        long creditLate = 0;
        long delayLate = 0;
        // The first ~300 us drain the first round trip's 32 initial windows; compare what follows.
        for (int i = 0; i < r.queues.count(); i++) {
            if (r.queues.time(i) >= 400_000) {
                creditLate = Math.max(creditLate, r.queues.watchedQueue(i));
            }
        }
        for (int i = 0; i < delay.queues.count(); i++) {
            if (delay.queues.time(i) >= 400_000) {
                delayLate = Math.max(delayLate, delay.queues.watchedQueue(i));
            }
        }
        System.out.println("credit: completion " + r.completionNs + " ns, goodput " + r.goodputGbps()
            + " Gb/s, receiver queue after 400 us <= " + creditLate + " B; delay-based: completion "
            + delay.completionNs + " ns, " + delay.goodputGbps() + " Gb/s, queue after 400 us <= " + delayLate
            + " B; counters " + r.counters);
        assertThat(r.completed).as(String.join("\n", r.incomplete)).isTrue();
        assertThat(r.counters.get("qp_errors")).isZero();
        assertThat(r.counters.get("tail_drops")).isZero();
        // One receive BDP at 100 Gb/s and a ~5 us RTT is ~60 KB; allow twice that.
        assertThat(creditLate).isLessThan(128 * 1024).isLessThan(delayLate);
        assertThat(r.goodputGbps()).isGreaterThan(90);
    }

    @Test
    @DisplayName("[CC-024] DEFAULT under receiver credit: the delay-based window capped by the credit share holds the incast queue near one BDP too")
    void delayBasedUnderCreditHoldsTheQueue() {
        final ScenarioConfig c = new ScenarioConfig();
        c.scenario = Scenario.INCAST;
        c.hosts = 33;
        c.seed = 2;
        c.profile = TransportProfile.metaroce().withReceiverCredit(true);
        assertThat(c.profile.capabilities() & ConnectHeader.CAP_RECEIVER_CREDIT).isNotZero();
        // Every later copy keeps the capability.
        assertThat(c.profile.withName("x").withTrimming(false).capabilities() & ConnectHeader.CAP_RECEIVER_CREDIT)
            .isNotZero();
        System.out.println("seed=" + c.seed);
        final RunResult r = ScenarioRunner.run(c);
        long late = 0;
        for (int i = 0; i < r.queues.count(); i++) {
            if (r.queues.time(i) >= 400_000) {
                late = Math.max(late, r.queues.watchedQueue(i));
            }
        }
        System.out.println("delay+credit: completion " + r.completionNs + " ns, goodput " + r.goodputGbps()
            + " Gb/s, receiver queue after 400 us <= " + late + " B");
        assertThat(r.completed).as(String.join("\n", r.incomplete)).isTrue();
        assertThat(r.counters.get("tail_drops")).isZero();
        assertThat(late).isLessThan(128 * 1024);
    }

    private static RunResult run(final TransportProfile profile, final ScenarioConfig base) {
        final ScenarioConfig c = base.copy();
        c.profile = profile;
        return ScenarioRunner.run(c);
    }
}
