// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.engine;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.metaroce.core.reliability.RttEstimator;

/**
 * The tail-loss probe's timing on its own: the PTO formula and its backoff within an episode,
 * stopping at the RTO [REL-026], and PROBE_WAIT, learned from spurious probes and halved by RTO
 * expiries and loss episodes [REL-065].
 */
class ProbeTimerTest {
    /** Default configuration: ACK coalescing 10 µs, minimum probe 20 µs, RTO_MAX 100 ms. */
    private final EndpointConfig config = new EndpointConfig();
    /** RTO floor 10 ms, well above the PTO, so that PROBE_WAIT shows in it. */
    private final RttEstimator rtt = new RttEstimator(10_000_000, 10_000_000, 100_000_000);
    private final ProbeTimer timer = new ProbeTimer(config);

    @BeforeEach
    void start() {
        timer.start(rtt);
    }

    private long due() {
        return timer.dueNs(1_000, 5_000, rtt.rtoNs(), false);
    }

    @Test
    void noProbeBeforeTheFirstRttSampleNorWhileRnrWaits() {
        assertThat(timer.timeoutNs()).isZero();
        assertThat(due()).isEqualTo(Long.MAX_VALUE);
        rtt.onSample(100_000);
        assertThat(timer.dueNs(1_000, 5_000, rtt.rtoNs(), true)).isEqualTo(Long.MAX_VALUE);
    }

    @Test
    void noProbeWhenTheMinimumProbeTimeIsZero() {
        config.minTailProbeNs(0);
        rtt.onSample(100_000);
        assertThat(timer.timeoutNs()).isZero();
        assertThat(due()).isEqualTo(Long.MAX_VALUE);
    }

    @Test
    void ptoIsTwiceSrttPlusCoalescingWithinTheMinimumAndTheRto() {
        rtt.onSample(100_000);
        assertThat(timer.timeoutNs()).isEqualTo(2 * 100_000 + 10_000);
        // Runs from the later of the last progress and the last transmission.
        assertThat(due()).isEqualTo(5_000 + 210_000);
        assertThat(timer.dueNs(9_000, 5_000, rtt.rtoNs(), false)).isEqualTo(9_000 + 210_000);

        final RttEstimator fast = new RttEstimator(10_000_000, 10_000_000, 100_000_000);
        fast.onSample(2_000);
        timer.start(fast);
        assertThat(timer.timeoutNs()).as("floor").isEqualTo(20_000);

        final RttEstimator slow = new RttEstimator(1_000_000, 100_000, 100_000_000);
        for (int i = 0; i < 50; i++) {
            // A steady RTT: RTTVAR decays, so the RTO comes below twice SRTT.
            slow.onSample(8_000_000);
        }
        assertThat(slow.rtoNs()).isLessThan(2 * slow.srttNs());
        timer.start(slow);
        assertThat(timer.timeoutNs()).as("capped by the RTO").isEqualTo(slow.rtoNs());
    }

    @Test
    void eachProbeOfAnEpisodeWaitsTwiceAsLongUntilTheRtoAndTheEpisodeEndsAtProgress() {
        rtt.onSample(100_000);
        final long pto = 210_000;
        for (int k = 0; pto << k < rtt.rtoNs(); k++) {
            assertThat(timer.probes()).isEqualTo(k);
            assertThat(due()).as("probe %d", k + 1).isEqualTo(5_000 + (pto << k));
            assertThat(timer.onProbe()).isEqualTo(k + 1);
        }
        // 210 µs × 2^6 = 13.44 ms is past the 10 ms RTO: the timer covers the rest.
        assertThat(timer.probes()).isEqualTo(6);
        assertThat(due()).isEqualTo(Long.MAX_VALUE);
        timer.endEpisode();
        assertThat(timer.probes()).isZero();
        assertThat(due()).isEqualTo(5_000 + pto);
    }

    @Test
    void aSpuriousProbeRaisesProbeWaitToTwiceTheWaitItRevealed() {
        rtt.onSample(100_000);
        timer.onSpuriousProbe(1_000_000, 600_000);
        assertThat(timer.probeWaitNs()).isEqualTo(800_000);
        assertThat(timer.timeoutNs()).isEqualTo(800_000 + 10_000);
        // A second, shorter proof of the same episode changes nothing.
        timer.onSpuriousProbe(1_000_000, 900_000);
        assertThat(timer.probeWaitNs()).isEqualTo(800_000);
        // Capped at RTO_MAX.
        timer.onSpuriousProbe(10_000_000_000L, 0);
        assertThat(timer.probeWaitNs()).isEqualTo(config.maxRtoNs());
    }

    @Test
    void theWaitRunsFromTheLatestRepairWhenThatCameLater() {
        timer.onRepair(700_000);
        timer.onSpuriousProbe(1_000_000, 600_000);
        assertThat(timer.probeWaitNs()).isEqualTo(600_000);
        // A repair after the proof leaves nothing to learn.
        timer.onRepair(2_000_000);
        timer.onSpuriousProbe(1_500_000, 600_000);
        assertThat(timer.probeWaitNs()).isEqualTo(600_000);
    }

    @Test
    void aResetForgetsTheOldConnectionsProbeWait() {
        rtt.onSample(100_000);
        timer.onSpuriousProbe(1_000_000, 600_000);
        timer.onProbe();
        timer.reset();
        assertThat(timer.probeWaitNs()).isZero();
        assertThat(timer.probes()).isZero();
        // The wait a new spurious probe reveals is not cut by a repair of the old connection.
        timer.onSpuriousProbe(3_000_000, 2_900_000);
        assertThat(timer.probeWaitNs()).isEqualTo(200_000);
    }

    @Test
    void rtoExpiriesAndLossEpisodesHalveProbeWait() {
        timer.onSpuriousProbe(1_000_000, 600_000);
        timer.onRetransmitTimeout();
        assertThat(timer.probeWaitNs()).isEqualTo(400_000);
        timer.onLossEpisodes();
        assertThat(timer.probeWaitNs()).isEqualTo(200_000);
    }
}
