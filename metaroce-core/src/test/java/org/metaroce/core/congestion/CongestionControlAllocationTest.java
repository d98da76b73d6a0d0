// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.congestion;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.management.ManagementFactory;

import org.junit.jupiter.api.Test;

/** Every algorithm's callbacks run on the data path and must not allocate. */
class CongestionControlAllocationTest {
    private static final com.sun.management.ThreadMXBean BEAN =
        (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();

    private static long allocatedBy(final CongestionControl cc) {
        final long[] now = {1_000_000};
        final Runnable body = () -> {
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
        };
        for (int i = 0; i < 200_000; i++) {
            body.run();
        }
        // Steady state: the fewest bytes of three measured rounds. A round can see the JVM's own
        // transient work on this thread (a deoptimization re-materializes objects that compiled code
        // had eliminated, then recompiles); an allocation in the callbacks shows in every round.
        long fewest = Long.MAX_VALUE;
        final StringBuilder rounds = new StringBuilder();
        for (int round = 0; round < 3; round++) {
            final long before = BEAN.getCurrentThreadAllocatedBytes();
            for (int i = 0; i < 200_000; i++) {
                body.run();
            }
            final long bytes = BEAN.getCurrentThreadAllocatedBytes() - before;
            rounds.append(round == 0 ? "" : ", ").append(bytes);
            fewest = Math.min(fewest, bytes);
        }
        System.out.println(cc.getClass().getSimpleName() + ": bytes allocated per round of 200000 callbacks: "
            + rounds);
        return fewest;
    }

    @Test
    void callbacksDoNotAllocate() {
        final CongestionControl[] all = {
            new DelayBasedCongestionControl(4096, 100_000_000_000L, true),
            new DcqcnCongestionControl(4096, 100_000_000_000L),
            new ReceiverCreditCongestionControl(4096, 100_000_000_000L),
            new FixedWindowCongestionControl(64),
        };
        for (final CongestionControl cc : all) {
            assertThat(allocatedBy(cc)).as(cc.getClass().getSimpleName()).isZero();
        }
    }
}
