// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.reliability;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/** SRTT, RTTVAR, minRTT and the RTO of specification 6.5 and 6.6.3 [REL-021, REL-027, REL-028]. */
class RttEstimatorTest {
    private static final long US = 1_000;

    /** TIMEOUT 1 ms, RTO_MIN 100 us, RTO_MAX 100 ms, ACK_COALESCE_DELAY 10 us: the defaults of 6.13. */
    private static RttEstimator defaults() {
        return new RttEstimator(1_000 * US, 100 * US, 100_000 * US, 10 * US);
    }

    @Test
    void beforeTheFirstSampleTheRtoIsTimeout() {
        final RttEstimator r = defaults();
        assertThat(r.hasSample()).isFalse();
        assertThat(r.rtoNs()).as("RTO = TIMEOUT before the first sample [REL-027]").isEqualTo(1_000 * US);
        assertThat(r.srttNs()).isZero();
        assertThat(r.minRttNs()).isZero();
    }

    /** [REL-021] first sample R: SRTT = R, RTTVAR = R/2. */
    @Test
    void theFirstSampleSetsSrttAndHalfOfItAsRttvar() {
        final RttEstimator r = defaults();
        r.onSample(80 * US);
        assertThat(r.srttNs()).isEqualTo(80 * US);
        assertThat(r.rttVarNs()).isEqualTo(40 * US);
        assertThat(r.minRttNs()).isEqualTo(80 * US);
        assertThat(r.latestRttNs()).isEqualTo(80 * US);
    }

    /** [REL-021] later samples: RTTVAR ← 3/4 RTTVAR + 1/4 |SRTT − R|, then SRTT ← 7/8 SRTT + 1/8 R (RFC 6298). */
    @Test
    void laterSamplesFollowRfc6298() {
        final RttEstimator r = defaults();
        r.onSample(80 * US);
        r.onSample(160 * US);
        // RTTVAR = 3/4 * 40 + 1/4 * |80 - 160| = 30 + 20 = 50 us; SRTT = 7/8 * 80 + 1/8 * 160 = 90 us.
        assertThat(r.rttVarNs()).isEqualTo(50 * US);
        assertThat(r.srttNs()).isEqualTo(90 * US);
        r.onSample(10 * US);
        // RTTVAR = 3/4 * 50 + 1/4 * |90 - 10| = 37.5 + 20 = 57.5 us; SRTT = 7/8 * 90 + 1/8 * 10 = 80 us.
        assertThat(r.rttVarNs()).isEqualTo(57_500);
        assertThat(r.srttNs()).isEqualTo(80 * US);
        assertThat(r.minRttNs()).as("minRTT is the smallest sample").isEqualTo(10 * US);
    }

    @Test
    void nonPositiveSamplesAreIgnored() {
        final RttEstimator r = defaults();
        r.onSample(0);
        r.onSample(-5);
        assertThat(r.hasSample()).isFalse();
        assertThat(r.rtoNs()).isEqualTo(1_000 * US);
    }

    /** [REL-027] RTO = clamp(SRTT + max(1 us, 4 RTTVAR) + ACK_COALESCE_DELAY, RTO_MIN, RTO_MAX). */
    @Test
    void theRtoFollowsTheFormulaWithinItsBounds() {
        final RttEstimator r = defaults();
        r.onSample(200 * US);
        // 200 + 4 * 100 + 10 us.
        assertThat(r.rtoNs()).isEqualTo(610 * US);

        final RttEstimator small = defaults();
        small.onSample(2 * US);
        // 2 + max(1, 4 * 1) + 10 = 16 us, below RTO_MIN.
        assertThat(small.rtoNs()).as("clamped to RTO_MIN").isEqualTo(100 * US);

        final RttEstimator large = defaults();
        large.onSample(60_000 * US);
        assertThat(large.rtoNs()).as("clamped to RTO_MAX").isEqualTo(100_000 * US);

        // The 1 us floor of the variance term: identical samples drive RTTVAR towards 0.
        final RttEstimator steady = new RttEstimator(1_000 * US, 1, 100_000 * US, 0);
        for (int i = 0; i < 200; i++) {
            steady.onSample(50 * US);
        }
        assertThat(steady.rttVarNs()).isZero();
        assertThat(steady.rtoNs()).isEqualTo(50 * US + 1 * US);
    }

    /** [REL-028] each expiry doubles the RTO up to RTO_MAX; a sample (progress) ends the backoff. */
    @Test
    void timeoutsDoubleTheRtoUpToTheMaximumAndASampleResetsIt() {
        final RttEstimator r = defaults();
        r.onSample(200 * US);
        r.onTimeout();
        assertThat(r.rtoNs()).isEqualTo(1_220 * US);
        r.onTimeout();
        assertThat(r.rtoNs()).isEqualTo(2_440 * US);
        for (int i = 0; i < 20; i++) {
            r.onTimeout();
        }
        assertThat(r.rtoNs()).as("never beyond RTO_MAX, even after many doublings").isEqualTo(100_000 * US);
        r.onSample(200 * US);
        assertThat(r.rtoNs()).isLessThan(1_000 * US);
        r.onTimeout();
        r.undoBackoff();
        assertThat(r.rtoNs()).as("a spurious expiry's backoff withdrawn [REL-058]").isLessThan(1_000 * US);
    }

    @Test
    void reconfigureKeepsTheMeasurementsAndChangesTheBounds() {
        final RttEstimator r = defaults();
        r.onSample(20 * US);
        r.reconfigure(5_000 * US, 500 * US, 200_000 * US);
        assertThat(r.srttNs()).isEqualTo(20 * US);
        assertThat(r.rtoNs()).as("the new RTO_MIN").isEqualTo(500 * US);
        assertThatThrownBy(() -> r.reconfigure(10, 100, 1_000)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new RttEstimator(1_000, 0, 2_000)).isInstanceOf(IllegalArgumentException.class);
    }
}
