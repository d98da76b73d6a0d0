// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.congestion;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** The marked fraction of the default algorithm's marks-only form [CC-037]: DCTCP's estimator per round trip. */
class MarkedFractionTest {
    private static final long RTT = 1_000_000;

    @Test
    @DisplayName("[CC-037] a round trip closes after one SRTT; only a marked one shrinks, by alpha/2, with alpha smoothed by g = 1/16")
    void shrinksOncePerMarkedRoundTripByHalfTheSmoothedFraction() {
        final MarkedFraction f = new MarkedFraction();
        assertThat(f.alpha()).as("alpha starts at 1").isEqualTo(1.0);
        // Round trip 1: ten ACKs, none marked, the eleventh (one SRTT after the first) closes it.
        long now = 0;
        for (int i = 0; i < 10; i++) {
            assertThat(f.onAck(now, RTT, false)).isEqualTo(1.0);
            now += RTT / 10 - 1;
        }
        assertThat(f.onAck(now += 10, RTT, false)).as("an unmarked round trip does not shrink").isEqualTo(1.0);
        final double afterClean = 1 - MarkedFraction.GAIN;
        assertThat(f.alpha()).isCloseTo(afterClean, within(1e-12));
        // Round trip 2: one ACK in four marked.
        for (int i = 0; i < 3; i++) {
            assertThat(f.onAck(now += RTT / 4, RTT, i == 0)).isEqualTo(1.0);
        }
        final double factor = f.onAck(now += RTT / 4, RTT, false);
        final double alpha = afterClean + MarkedFraction.GAIN * (0.25 - afterClean);
        assertThat(f.alpha()).isCloseTo(alpha, within(1e-12));
        assertThat(factor).as("1 - alpha / 2 once for the marked round trip").isCloseTo(1 - alpha / 2, within(1e-12));
        // A steady 10 % marked: alpha converges to 0.1 and each round trip takes 5 %.
        double last = 1;
        for (int rt = 0; rt < 300; rt++) {
            for (int i = 0; i < 9; i++) {
                f.onAck(now += RTT / 10, RTT, i == 0);
            }
            last = f.onAck(now += RTT / 10, RTT, false);
        }
        System.out.println("alpha after 300 round trips at 10 % marked: " + f.alpha() + ", factor " + last);
        assertThat(f.alpha()).isCloseTo(0.1, within(0.005));
        assertThat(last).isCloseTo(0.95, within(0.003));
    }
}
