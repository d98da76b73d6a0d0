// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.congestion;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.metaroce.core.AllocationMeter;

/** Every algorithm's callbacks run on the data path and must not allocate. */
class CongestionControlAllocationTest {
    private static long allocatedBy(final CongestionControl cc) {
        final long[] now = {1_000_000};
        final AllocationMeter.Measurement m = AllocationMeter.fewestBytes(200_000, i -> {
            final long t = now[0] += 1_000;
            cc.nextSendTimeNs(t);
            cc.windowPackets();
            cc.onPacketSent(t, 4_200, (int) (t & 3));
            cc.onAck(t, 2, 10_000 + (t & 4095), (t & 7) == 0, (int) (t & 3));
            cc.onCredit(t, 16);
            if ((t & 1023) == 0) {
                cc.onCongestionNotification(t);
                cc.onLoss(t, 1, (t & 2048) == 0);
            }
            if ((t & 65535) == 0) {
                cc.onRetransmitTimeout(t);
            }
            if ((t & 65535) == 1_000) {
                cc.onSpuriousTimeout(t);
            }
        });
        System.out.println(cc + ": bytes allocated per round of 200000 callbacks: " + m.rounds());
        return m.fewest();
    }

    @Test
    void callbacksDoNotAllocate() {
        final CongestionControl[] all = {
            new DelayBasedCongestionControl(4096, 100_000_000_000L, true),
            // A software endpoint's marks-only form keeps its marked fraction per round trip [CC-037].
            new DelayBasedCongestionControl(4096, 100_000_000_000L, true).softwareEndpoint(true),
            new DcqcnCongestionControl(4096, 100_000_000_000L),
            new ReceiverCreditCongestionControl(4096, 100_000_000_000L),
            new FixedWindowCongestionControl(64),
        };
        for (final CongestionControl cc : all) {
            assertThat(allocatedBy(cc)).as(cc.getClass().getSimpleName()).isZero();
        }
    }
}
