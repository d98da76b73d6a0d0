// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.sim;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.metaroce.sim.scenario.RunResult;
import org.metaroce.sim.scenario.Scenario;
import org.metaroce.sim.scenario.ScenarioConfig;
import org.metaroce.sim.scenario.ScenarioRunner;
import org.metaroce.sim.transport.TransportProfile;

/**
 * The 32:1 incast of docs/simulation.md under the metaroce profile (DEFAULT with SENDER_COUNT,
 * the QPs connected ahead of the burst): the count sizes the first windows and, as senders
 * finish, hands their shares to the senders that stay, so the receiver's link does not idle at
 * the end of the burst while the last flows regrow [CC-039].
 */
class SenderCountIncastTest {
    /** The fabric's BDP at BASE_RTT_MAX (100 Gb/s x 7.396 us), docs/simulation.md. */
    private static final long BDP_BYTES = 92_450;

    @Test
    @DisplayName("[CC-038] [CC-039] 32:1 incast, seed 2: the leavers' shares go to the stayers; goodput >= 96 Gb/s, peak <= 2 x BDP")
    void stayersTakeTheLeaversShares() {
        final ScenarioConfig c = new ScenarioConfig();
        c.scenario = Scenario.INCAST;
        c.hosts = 33;
        c.seed = 2;
        c.profile = TransportProfile.metaroce();
        System.out.println("seed=" + c.seed);
        final RunResult r = ScenarioRunner.run(c);
        System.out.println("completion " + r.completionNs + " ns, goodput " + r.goodputGbps() + " Gb/s, peak "
            + r.counters.get("max_port_queue_bytes") + " B");
        assertThat(r.completed).as(String.join("\n", r.incomplete)).isTrue();
        assertThat(r.counters.get("tail_drops")).isZero();
        // Before the rule 94.8 Gb/s: the last 12 flows regrew by FAST_AI / n and the link idled
        // for 12.2 us of the burst's last 47 (rocev2 with PFC: 96.5 Gb/s, no idle).
        assertThat(r.goodputGbps()).isGreaterThanOrEqualTo(96.0);
        assertThat(r.counters.get("max_port_queue_bytes")).isLessThanOrEqualTo(2 * BDP_BYTES);
    }
}
