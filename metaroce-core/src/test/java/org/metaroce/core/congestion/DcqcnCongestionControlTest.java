// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.congestion;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** Reactions of DCQCN as specification 8.7 defines them [CC-021]. */
class DcqcnCongestionControlTest {
    private static final int PMTU = 4096;
    private static final long LINK = 100_000_000_000L;
    private static final double R_AI = DcqcnCongestionControl.R_AI_AT_40G * 2.5;
    private static final double R_HAI = DcqcnCongestionControl.R_HAI_AT_40G * 2.5;
    private static final long T = DcqcnCongestionControl.RATE_TIMER_NS;

    @Test
    @DisplayName("[CC-021] starts at line rate with alpha 1 and paces packets at Rc")
    void pacesAtTheCurrentRate() {
        final DcqcnCongestionControl cc = new DcqcnCongestionControl(PMTU, LINK);
        assertThat(cc.currentRate()).isEqualTo(LINK);
        assertThat(cc.alpha()).isEqualTo(1.0);
        assertThat(cc.nextSendTimeNs(0)).isLessThanOrEqualTo(0);
        cc.onPacketSent(1_000, 5_000, 0);
        // 5000 bytes at 100 Gb/s = 400 ns.
        assertThat(cc.nextSendTimeNs(1_000)).isEqualTo(1_400);
        cc.onPacketSent(1_400, 5_000, 0);
        assertThat(cc.nextSendTimeNs(1_400)).isEqualTo(1_800);
        // An idle sender earns no burst credit.
        cc.onPacketSent(10_000, 5_000, 0);
        assertThat(cc.nextSendTimeNs(10_000)).isEqualTo(10_400);
    }

    @Test
    @DisplayName("[CC-021] a CNP sets Rt = Rc, cuts Rc by alpha/2 and raises alpha")
    void cnpCutsTheRate() {
        final DcqcnCongestionControl cc = new DcqcnCongestionControl(PMTU, LINK);
        assertThat(cc.onCongestionNotification(0)).isTrue();
        assertThat(cc.targetRate()).isEqualTo(LINK);
        assertThat(cc.currentRate()).isEqualTo(LINK / 2.0);
        assertThat(cc.alpha()).isEqualTo(1.0);
        // Pacing follows the new rate: 5000 bytes at 50 Gb/s = 800 ns.
        cc.onPacketSent(1, 5_000, 0);
        assertThat(cc.nextSendTimeNs(1)).isEqualTo(801);
    }

    @Test
    @DisplayName("[CC-021] alpha decays by (1 - g) every ALPHA_TIMER without a CNP")
    void alphaDecays() {
        final DcqcnCongestionControl cc = new DcqcnCongestionControl(PMTU, LINK);
        cc.onCongestionNotification(0);
        cc.onAck(DcqcnCongestionControl.ALPHA_TIMER_NS * 10, 0, 0, false, 0);
        assertThat(cc.alpha()).isCloseTo(Math.pow(1 - DcqcnCongestionControl.G, 10), within(1e-12));
        // The next CNP cuts by the smaller alpha.
        final double rc = cc.currentRate();
        final double a = cc.alpha();
        cc.onCongestionNotification(DcqcnCongestionControl.ALPHA_TIMER_NS * 10 + 1);
        assertThat(cc.currentRate()).isCloseTo(rc * (1 - a / 2), within(1.0));
        assertThat(cc.alpha()).isCloseTo((1 - DcqcnCongestionControl.G) * a + DcqcnCongestionControl.G, within(1e-12));
    }

    @Test
    @DisplayName("[CC-021] fast recovery halves the distance to Rt for F stages, then additive increase raises Rt")
    void fastRecoveryThenAdditiveIncrease() {
        final DcqcnCongestionControl cc = new DcqcnCongestionControl(PMTU, LINK);
        cc.onCongestionNotification(0);
        cc.onCongestionNotification(0); // Rt = 50 G, Rc = 25 G
        assertThat(cc.targetRate()).isEqualTo(LINK / 2.0);
        double rc = cc.currentRate();
        final double rt = cc.targetRate();
        for (int stage = 1; stage <= DcqcnCongestionControl.F; stage++) {
            cc.onAck(stage * T, 0, 0, false, 0);
            rc = (rt + rc) / 2;
            assertThat(cc.targetRate()).as("fast recovery keeps Rt").isEqualTo(rt);
            assertThat(cc.currentRate()).isCloseTo(rc, within(1.0));
        }
        cc.onAck((DcqcnCongestionControl.F + 1) * T, 0, 0, false, 0);
        assertThat(cc.targetRate()).as("additive increase").isCloseTo(rt + R_AI, within(1.0));
        assertThat(cc.currentRate()).isCloseTo((rt + R_AI + rc) / 2, within(1.0));
    }

    @Test
    @DisplayName("[CC-021] with both the timer and the byte counter past F, hyper increase adds i x R_HAI")
    void hyperIncrease() {
        final DcqcnCongestionControl cc = new DcqcnCongestionControl(PMTU, LINK);
        cc.onCongestionNotification(0);
        cc.onCongestionNotification(0);
        cc.onCongestionNotification(0); // Rt = 25 G
        // F + 1 byte-counter stages (each a BYTE_COUNTER of bytes) and F + 1 timer stages.
        for (int i = 0; i <= DcqcnCongestionControl.F; i++) {
            cc.onPacketSent(1 + i, (int) DcqcnCongestionControl.BYTE_COUNTER, 0);
        }
        final double rtBefore = cc.targetRate();
        cc.onAck((DcqcnCongestionControl.F + 1) * T, 0, 0, false, 0);
        // Timer stages 1..5 are additive (only the byte counter is past F); at the 6th both are: hyper
        // with i = min(6, 6) - F = 1.
        assertThat(cc.targetRate()).isCloseTo(rtBefore + 5 * R_AI + R_HAI, within(1.0));
        cc.onAck((DcqcnCongestionControl.F + 2) * T, 0, 0, false, 0);
        assertThat(cc.targetRate()).isCloseTo(rtBefore + 5 * R_AI + 2 * R_HAI, within(1.0));
    }

    @Test
    @DisplayName("[CC-021] the rate recovers to line rate after congestion clears and never leaves [MIN_RATE, LINK_RATE]")
    void recoversAndStaysInRange() {
        final DcqcnCongestionControl cc = new DcqcnCongestionControl(PMTU, LINK);
        for (int i = 0; i < 100; i++) {
            cc.onCongestionNotification(i);
        }
        assertThat(cc.currentRate()).isEqualTo(DcqcnCongestionControl.MIN_RATE);
        cc.onAck(1_000 * T, 0, 0, false, 0);
        assertThat(cc.currentRate()).isLessThanOrEqualTo(LINK).isGreaterThan(0.99 * LINK);
    }

    @Test
    @DisplayName("[CC-003] loss halves Rc at most once per SRTT; an RTO sets one PMTU per SRTT")
    void lossAndTimeout() {
        final DcqcnCongestionControl cc = new DcqcnCongestionControl(PMTU, LINK);
        cc.onAck(0, 1, 20_000, false, 0); // SRTT 20 us
        cc.onLoss(1_000, 0, false);
        assertThat(cc.currentRate()).isEqualTo(LINK / 2.0);
        cc.onLoss(2_000, 0, false);
        assertThat(cc.currentRate()).isEqualTo(LINK / 2.0);
        cc.onRetransmitTimeout(3_000);
        assertThat(cc.currentRate()).isCloseTo(PMTU * 8e9 / 20_000, within(1.0));
    }

    @Test
    @DisplayName("timers replay in time order: one late call equals many small ones")
    void timerReplayIsIndependentOfCallFrequency() {
        final DcqcnCongestionControl fine = new DcqcnCongestionControl(PMTU, LINK);
        final DcqcnCongestionControl coarse = new DcqcnCongestionControl(PMTU, LINK);
        fine.onCongestionNotification(0);
        coarse.onCongestionNotification(0);
        for (long t = 1_000; t <= 2_000_000; t += 1_000) {
            fine.onAck(t, 0, 0, false, 0);
        }
        coarse.onAck(2_000_000, 0, 0, false, 0);
        assertThat(coarse.currentRate()).isEqualTo(fine.currentRate());
        assertThat(coarse.targetRate()).isEqualTo(fine.targetRate());
        assertThat(coarse.alpha()).isEqualTo(fine.alpha());
    }
}
