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
 * [REL-059] [REL-036] with the real engine: a 32:1 incast on a leaf-spine whose switches trim
 * into only 64 KB of buffer per port. Packets are trimmed again and again; before REL-059 the
 * first QP ended with RETRY_EXC_ERR after 52 µs (16 transmissions, REL-030). The senders start
 * with one BDP each (SENDER_COUNT not negotiated): told the count, they start with one packet
 * each and nothing is trimmed at all (the second test), which would leave REL-059 untested.
 */
class TrimmedIncastTest {
    private static ScenarioConfig trimmedIncast(final boolean senderCount) {
        final ScenarioConfig c = new ScenarioConfig();
        c.scenario = Scenario.INCAST;
        c.hosts = 33;
        c.seed = 1;
        c.bufferBytesPerPort = 64 * 1000;
        c.profile = TransportProfile.metaroce().withTrimming(true).withSenderCount(senderCount);
        return c;
    }

    /** Runs {@code c}, printing its seed and outcome, and checks every flow completed and no QP ended. */
    private static RunResult completesWithoutEndingAQp(final ScenarioConfig c) {
        System.out.println("seed=" + c.seed);
        final RunResult r = ScenarioRunner.run(c);
        System.out.println("completed " + r.completed + ", " + r.completedFlows() + "/" + r.flows.size()
            + " flows, completion " + r.completionNs + " ns, counters " + r.counters);
        assertThat(r.completed).as(String.join("\n", r.incomplete)).isTrue();
        assertThat(r.counters.get("qp_errors")).isZero();
        return r;
    }

    @Test
    @DisplayName("[CC-038] [CC-039] told the count before the burst, the same incast trims nothing and ends no QP")
    void senderCountKeepsTheIncastInsideTheBuffer() {
        final RunResult r = completesWithoutEndingAQp(trimmedIncast(true));
        assertThat(r.counters.get("trims")).isZero();
        assertThat(r.counters.get("retransmits")).isZero();
    }

    @Test
    @DisplayName("[REL-059] 32:1 incast with trimming and 64 KB per port completes without ending a QP")
    void trimmedIncastCompletes() {
        final RunResult r = completesWithoutEndingAQp(trimmedIncast(false));
        assertThat(r.counters.get("trims")).isGreaterThan(1000);
        assertThat(r.counters.get("retransmits_trimmed")).isGreaterThan(1000);
    }
}
