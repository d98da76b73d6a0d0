// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.engine;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.metaroce.core.congestion.CongestionControlAlgorithm;
import org.metaroce.core.congestion.DcqcnCongestionControl;
import org.metaroce.core.testwire.LinkProfile;
import org.metaroce.core.wire.ConnectHeader;

/**
 * DCQCN end to end on the in-memory wire: two senders at 40 Gb/s into a 10 Gb/s port that
 * CE-marks above 32 KiB; the responder turns marks into CNPs [CC-020] and the requesters cut their
 * rates [CC-021]. The RoCEv2 baseline (DCQCN with go-back-N) is compared with no congestion
 * control (a fixed window) on the same wire.
 */
class DcqcnEndToEndTest {
    private static final long LINK = 40_000_000_000L;
    private static final long PORT = 10_000_000_000L;
    private static final int MTU = 4096;
    private static final int MESSAGE = 128 * 1024;
    private static final int MESSAGES = 64;

    private static IncastFixture run(final CongestionControlAlgorithm cc, final int caps, final StringBuilder log) {
        final EndpointConfig config = new EndpointConfig().linkRateBitsPerSecond(LINK);
        final IncastFixture f = new IncastFixture(8101, 2, config, caps, cc, MTU, MESSAGE * 4,
            LinkProfile.builder().delayNs(2_000).build());
        f.wire.bottleneck(f.receiverNode, PORT, 64L << 20, 32 * 1024);
        f.postWrites(MESSAGES, MESSAGE);
        assertThat(f.runUntilDone(1_000_000_000L)).as(f.wire.toString()).isTrue();
        assertThat(f.senders).noneMatch(s -> s.failed);
        assertThat(f.dataIntact(MESSAGE * 4)).isTrue();
        final long bytes = 2L * MESSAGES * MESSAGE;
        log.append(cc).append(": max queue ").append(f.wire.stats().maxQueueBytes()).append(" B, CE marks ")
            .append(f.wire.stats().ceMarked()).append(", CNPs ")
            .append(f.receiver.counters().get(EndpointCounter.CNPS_OUT)).append(", goodput ")
            .append(String.format("%.2f", bytes * 8.0 / f.lastCompletionNs())).append(" Gb/s; ");
        return f;
    }

    @Test
    @DisplayName("[CC-020] [CC-021] CE marks become CNPs, DCQCN cuts the rate and keeps the queue short")
    void dcqcnBoundsTheQueueThatAFixedWindowFills() {
        final StringBuilder log = new StringBuilder("seed=8101: ");
        final int baseline = ConnectHeader.CAP_ECN | ConnectHeader.CAP_GO_BACK_N;
        final IncastFixture dcqcn = run(CongestionControlAlgorithm.DCQCN, baseline, log);
        final IncastFixture fixed = run(CongestionControlAlgorithm.FIXED, baseline, log);
        System.out.println(log);

        // Marks turned into CNPs, at most one per QP per CNP_INTERVAL, and the requesters reacted.
        final long cnps = dcqcn.receiver.counters().get(EndpointCounter.CNPS_OUT);
        assertThat(cnps).as(log.toString()).isPositive();
        final long duration = dcqcn.lastCompletionNs();
        assertThat(cnps).isLessThanOrEqualTo(2 * (duration / 50_000 + 1));
        long reacted = 0;
        for (final IncastFixture.Sender s : dcqcn.senders) {
            reacted += s.endpoint.counters().get(EndpointCounter.CNPS_IN);
            assertThat(((DcqcnCongestionControl) s.qp.congestionControl()).cnps()).isPositive();
        }
        assertThat(reacted).isEqualTo(cnps);
        assertThat(fixed.senders.get(0).endpoint.counters().get(EndpointCounter.CNP_IGNORED)).isPositive();
        // The queue stays a fraction of what an uncontrolled window builds, without costing goodput.
        assertThat(dcqcn.wire.stats().maxQueueBytes() * 4).as(log.toString())
            .isLessThan(fixed.wire.stats().maxQueueBytes());
        assertThat(dcqcn.lastCompletionNs()).as(log.toString()).isLessThan(fixed.lastCompletionNs() * 5 / 4);
    }
}
