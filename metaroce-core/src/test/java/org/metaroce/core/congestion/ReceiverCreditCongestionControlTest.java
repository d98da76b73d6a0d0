// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.congestion;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** The requester side of receiver credit [CC-019]. */
class ReceiverCreditCongestionControlTest {
    @Test
    @DisplayName("[CC-019] the window is the credit; one BDP at BASE_RTT_INIT before the first credit")
    void windowIsTheCredit() {
        // 100 Gb/s x 10 us = 125,000 bytes = 30 packets of 4096.
        assertThat(new ReceiverCreditCongestionControl(4096, 100_000_000_000L).windowPackets()).isEqualTo(30);
        assertThat(new ReceiverCreditCongestionControl(256, 400_000_000_000L).windowPackets()).as("never above 64")
            .isEqualTo(64);
        assertThat(new ReceiverCreditCongestionControl(4096, 1_000_000_000L).windowPackets()).isEqualTo(1);
        final ReceiverCreditCongestionControl cc = new ReceiverCreditCongestionControl(4096, 100_000_000_000L);
        cc.onCredit(1_000, 7);
        assertThat(cc.windowPackets()).isEqualTo(7);
        cc.onCredit(2_000, 0);
        assertThat(cc.windowPackets()).as("at least one packet").isEqualTo(1);
        assertThat(cc.nextSendTimeNs(3_000)).isEqualTo(3_000);
    }

    @Test
    @DisplayName("[CC-019] after a loss or trim the window is half the credit for one SRTT")
    void lossHalvesForOneSrtt() {
        final ReceiverCreditCongestionControl cc = new ReceiverCreditCongestionControl(4096, 100_000_000_000L);
        cc.onAck(0, 1, 20_000, false, 0); // SRTT 20 us
        cc.onCredit(0, 16);
        cc.onLoss(100_000, 0, true);
        assertThat(cc.windowPackets()).isEqualTo(8);
        cc.onAck(119_000, 1, 0, false, 0);
        assertThat(cc.windowPackets()).isEqualTo(8);
        cc.onAck(120_000, 1, 0, false, 0);
        assertThat(cc.windowPackets()).isEqualTo(16);
    }

    @Test
    @DisplayName("[CC-019] [CC-003] after an RTO the window is one packet until the next progress")
    void timeoutHoldsOnePacketUntilProgress() {
        final ReceiverCreditCongestionControl cc = new ReceiverCreditCongestionControl(4096, 100_000_000_000L);
        cc.onCredit(0, 16);
        cc.onRetransmitTimeout(1_000_000);
        assertThat(cc.windowPackets()).isEqualTo(1);
        cc.onAck(5_000_000, 0, 0, true, 0);
        assertThat(cc.windowPackets()).as("an ACK without progress").isEqualTo(1);
        cc.onAck(5_000_001, 1, 0, false, 0);
        assertThat(cc.windowPackets()).isEqualTo(16);
    }
}
