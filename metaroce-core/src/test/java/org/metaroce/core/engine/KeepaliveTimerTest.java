// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.engine;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.metaroce.core.engine.KeepaliveTimer.Due;

/**
 * The keepalive decision on its own [CM-027, CM-030, REL-060]: probe k due at IDLE + k × INTERVAL,
 * each probe an interval apart, death only after PROBES probes that each had an interval, a
 * RETRY_TIMEOUT that keeps probing, a stalled driver that probes before it buries, and the
 * deadline the endpoint polls at.
 */
class KeepaliveTimerTest {
    private static final long MS = 1_000_000L;
    private final EndpointConfig config = new EndpointConfig().keepaliveIdleNs(1_000 * MS)
        .keepaliveIntervalNs(200 * MS).keepaliveProbes(3);
    private final KeepaliveTimer timer = new KeepaliveTimer();

    private Due due(final long ms) {
        return timer.due(ms * MS, config, 0);
    }

    @Test
    void probesFollowIdleThenIntervalsAndTheUnansweredPeerDiesAfterTheLast() {
        assertThat(timer.deadlineNs(config)).as("before the first poll: poll at once").isEqualTo(Long.MIN_VALUE);
        assertThat(due(0)).as("the first poll starts the idle time").isEqualTo(Due.NOTHING);
        assertThat(timer.deadlineNs(config)).isEqualTo(1_000 * MS);
        assertThat(due(999)).isEqualTo(Due.NOTHING);
        assertThat(due(1_000)).isEqualTo(Due.PROBE);
        timer.probed(1_000 * MS);
        assertThat(timer.deadlineNs(config)).isEqualTo(1_200 * MS);
        assertThat(due(1_199)).isEqualTo(Due.NOTHING);
        assertThat(due(1_200)).isEqualTo(Due.PROBE);
        timer.probed(1_200 * MS);
        assertThat(due(1_400)).isEqualTo(Due.PROBE);
        timer.probed(1_400 * MS);
        assertThat(timer.probesSent()).isEqualTo(3);

        assertThat(due(1_599)).as("the last probe still has time").isEqualTo(Due.NOTHING);
        assertThat(due(1_600)).isEqualTo(Due.PEER_DEAD);
        assertThat(timer.silentForNs(1_600 * MS)).isEqualTo(1_600 * MS);
    }

    @Test
    void hearingThePeerStartsTheIdleTimeAgain() {
        due(0);
        due(1_000);
        timer.probed(1_000 * MS);

        timer.heard(1_100 * MS);

        assertThat(timer.probesSent()).isZero();
        assertThat(due(2_099)).isEqualTo(Due.NOTHING);
        assertThat(due(2_100)).isEqualTo(Due.PROBE);
    }

    @Test
    void aLongerRetryTimeoutKeepsProbingEveryInterval() {
        final long retryTimeout = 2_000 * MS;
        timer.due(0, config, retryTimeout);
        for (long t = 1_000; t <= 1_800; t += 200) {
            assertThat(timer.due(t * MS, config, retryTimeout)).as("at %d ms", t).isEqualTo(Due.PROBE);
            timer.probed(t * MS);
        }
        assertThat(timer.due(1_999 * MS, config, retryTimeout)).isEqualTo(Due.NOTHING);
        assertThat(timer.due(2_000 * MS, config, retryTimeout)).isEqualTo(Due.PEER_DEAD);
    }

    @Test
    void aDriverNotPolledForSecondsProbesBeforeItBuriesThePeer() {
        due(0);
        assertThat(due(10_000)).as("silent long enough, but no probe left yet").isEqualTo(Due.PROBE);
        timer.probed(10_000 * MS);
        assertThat(due(10_199)).isEqualTo(Due.NOTHING);
        assertThat(due(10_200)).isEqualTo(Due.PROBE);
        timer.probed(10_200 * MS);
        assertThat(due(10_400)).isEqualTo(Due.PROBE);
        timer.probed(10_400 * MS);
        assertThat(due(10_599)).isEqualTo(Due.NOTHING);
        assertThat(due(10_600)).isEqualTo(Due.PEER_DEAD);
    }

    @Test
    void disabledKeepaliveNeverProbesAndRestartWaitsForTheNextPoll() {
        final EndpointConfig off = new EndpointConfig().keepaliveIdleNs(0);
        assertThat(timer.due(0, off, 0)).isEqualTo(Due.NOTHING);
        assertThat(timer.due(1_000_000 * MS, off, 0)).isEqualTo(Due.NOTHING);

        due(0);
        due(1_000);
        timer.probed(1_000 * MS);
        timer.restart();
        assertThat(timer.probesSent()).isZero();
        assertThat(timer.deadlineNs(config)).isEqualTo(Long.MIN_VALUE);
        assertThat(due(5_000)).as("starts the idle time").isEqualTo(Due.NOTHING);
        assertThat(due(6_000)).isEqualTo(Due.PROBE);
    }
}
