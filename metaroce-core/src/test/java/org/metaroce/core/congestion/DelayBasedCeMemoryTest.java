// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.congestion;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * [CC-030]: with ECN negotiated, delay above the target is a queue at a marking switch while a CE
 * mark arrived within CE_MEMORY; only after CE_MEMORY without marks does it earn the fair increase.
 */
class DelayBasedCeMemoryTest {
    private static final int PMTU = 4096;
    private static final long GBPS_100 = 100_000_000_000L;

    /** baseRTT 10 us and SRTT exactly 10 us, then one CE-marked ACK at low delay (hold) at 1 us. */
    private static DelayBasedCongestionControl markedOnce() {
        final DelayBasedCongestionControl cc = new DelayBasedCongestionControl(PMTU, GBPS_100, true);
        cc.onAck(0, 1, 10_000, false, 0);
        cc.onAck(1_000, 1, 10_000, true, 0);
        return cc;
    }

    @Test
    @DisplayName("[CC-030] high delay on an unmarked ACK within CE_MEMORY of a mark decreases")
    void recentMarkMakesHighDelayADecrease() {
        final DelayBasedCongestionControl cc = new DelayBasedCongestionControl(PMTU, GBPS_100, true);
        cc.onAck(0, 1, 10_000, false, 0);
        // A queue builds: a 40 us sample whose ACK carries CE (the standing delay is still 10 us).
        cc.onAck(30_000, 0, 40_000, true, 0);
        final double w = cc.windowBytes();
        assertThat(cc.decreases()).isZero();
        // One window later every sample is still 40 us (q = 30 us >= T); this ACK carries no CE,
        // but the mark is less than CE_MEMORY x SRTT old.
        cc.onAck(60_000, 4, 40_000, false, 0);
        assertThat(cc.decreases()).isEqualTo(1);
        assertThat(cc.windowBytes()).isLessThan(w);
    }

    @Test
    @DisplayName("[CC-030] high delay with no mark for CE_MEMORY x SRTT is a fair increase")
    void noMarkForCeMemoryMakesHighDelayAFairIncrease() {
        final DelayBasedCongestionControl cc = markedOnce();
        // Low-delay ACKs keep SRTT at 10 us and the window growing for 100 us without marks.
        long now = 1_000;
        for (int i = 0; i < 10; i++) {
            cc.onAck(now += 10_000, 1, 10_000, false, 0);
        }
        final double w = cc.windowBytes();
        assertThat(now - 1_000).isGreaterThanOrEqualTo(DelayBasedCongestionControl.CE_MEMORY_SRTTS * 10_000L);
        // A standing 20 us queue: two windows of high samples, still no mark anywhere.
        cc.onAck(now += 10_000, 0, 30_000, false, 0);
        cc.onAck(now += 10_000, 0, 30_000, false, 0);
        cc.onAck(now += 10_000, 0, 30_000, false, 0);
        final double before = cc.windowBytes();
        cc.onAck(now + 500, 4, 30_000, false, 0);
        assertThat(cc.decreases()).isZero();
        assertThat(cc.windowBytes()).isGreaterThan(before);
        assertThat(before).isGreaterThanOrEqualTo(w);
    }
}
