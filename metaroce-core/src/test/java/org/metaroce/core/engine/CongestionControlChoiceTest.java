// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.engine;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.metaroce.core.congestion.CongestionControl;
import org.metaroce.core.congestion.CongestionControlAlgorithm;
import org.metaroce.core.congestion.DcqcnCongestionControl;
import org.metaroce.core.congestion.DelayBasedCongestionControl;
import org.metaroce.core.congestion.FixedWindowCongestionControl;
import org.metaroce.core.verbs.QpAttributes;
import org.metaroce.core.wire.ConnectHeader;

class CongestionControlChoiceTest {
    private final EndpointConfig config = new EndpointConfig();

    @Test
    void beforeRtsAFixedWindowRunsAndNothingWasAskedFor() {
        final CongestionControlChoice choice = new CongestionControlChoice(64);
        assertThat(choice.instance()).isInstanceOf(FixedWindowCongestionControl.class);
        assertThat(choice.algorithm()).isEqualTo(CongestionControlAlgorithm.FIXED);
        assertThat(choice.requested()).isEqualTo(CongestionControlAlgorithm.FIXED);
        assertThat(choice.fallbackReason()).isNull();
    }

    @Test
    void anAlgorithmWithItsCapabilityRunsAsAsked() {
        final CongestionControlChoice choice = new CongestionControlChoice(64);
        assertThat(choice.start(new QpAttributes().ccAlgorithm(CongestionControlAlgorithm.DCQCN),
            ConnectHeader.CAP_ECN, 1024, config)).isFalse();
        assertThat(choice.algorithm()).isEqualTo(CongestionControlAlgorithm.DCQCN);
        assertThat(choice.instance()).isInstanceOf(DcqcnCongestionControl.class);
        assertThat(choice.fallbackReason()).isNull();
    }

    @Test
    void anAlgorithmWithoutItsCapabilityFallsBackToDefault() {
        final CongestionControlChoice choice = new CongestionControlChoice(64);
        assertThat(choice.start(new QpAttributes().ccAlgorithm(CongestionControlAlgorithm.DCQCN), 0, 1024, config))
            .isTrue();
        assertThat(choice.requested()).isEqualTo(CongestionControlAlgorithm.DCQCN);
        assertThat(choice.algorithm()).isEqualTo(CongestionControlAlgorithm.DEFAULT);
        assertThat(choice.instance()).isInstanceOf(DelayBasedCongestionControl.class);
        assertThat(choice.fallbackReason()).startsWith("DCQCN needs the ECN capability").endsWith("[CC-008]");
        assertThat(choice.start(new QpAttributes().ccAlgorithm(CongestionControlAlgorithm.RECEIVER_CREDIT), 0,
            1024, config)).isTrue();
        assertThat(choice.fallbackReason()).startsWith("RECEIVER_CREDIT needs the RECEIVER_CREDIT capability");
    }

    @Test
    void theEndpointDefaultOnDelayAloneRunsFixedUnlessTheHostSaysOtherwise() {
        final CongestionControlChoice choice = new CongestionControlChoice(64);
        assertThat(choice.start(new QpAttributes(), 0, 1024, config)).isTrue();
        assertThat(choice.requested()).isEqualTo(CongestionControlAlgorithm.DEFAULT);
        assertThat(choice.algorithm()).isEqualTo(CongestionControlAlgorithm.FIXED);
        assertThat(choice.instance()).isInstanceOf(FixedWindowCongestionControl.class);
        assertThat(choice.fallbackReason()).endsWith("[CC-034]");
        // ECN negotiated, an allowance for host delay, the fallback turned off, or DEFAULT asked
        // for explicitly: DEFAULT runs, and a fallback reason of an earlier start is gone.
        assertThat(choice.start(new QpAttributes(), ConnectHeader.CAP_ECN, 1024, config)).isFalse();
        assertThat(choice.algorithm()).isEqualTo(CongestionControlAlgorithm.DEFAULT);
        assertThat(choice.fallbackReason()).isNull();
        assertThat(choice.start(new QpAttributes(), 0, 1024, new EndpointConfig().hostDelayAllowanceNs(50_000)))
            .isFalse();
        assertThat(choice.start(new QpAttributes(), 0, 1024, new EndpointConfig().delayOnlyFallback(false)))
            .isFalse();
        assertThat(choice.start(new QpAttributes().ccAlgorithm(CongestionControlAlgorithm.DEFAULT), 0, 1024, config))
            .isFalse();
        assertThat(choice.algorithm()).isEqualTo(CongestionControlAlgorithm.DEFAULT);
    }

    @Test
    void aReplacedInstanceRunsUnderTheRecordedChoice() {
        final CongestionControlChoice choice = new CongestionControlChoice(64);
        choice.start(new QpAttributes().ccAlgorithm(CongestionControlAlgorithm.FIXED), 0, 1024, config);
        final CongestionControl own = new FixedWindowCongestionControl(3);
        choice.replace(own);
        assertThat(choice.instance()).isSameAs(own);
        assertThat(choice.algorithm()).isEqualTo(CongestionControlAlgorithm.FIXED);
    }
}
