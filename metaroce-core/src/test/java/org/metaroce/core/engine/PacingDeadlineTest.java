// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.engine;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.metaroce.core.congestion.CongestionControl;
import org.metaroce.core.verbs.SendFlags;
import org.metaroce.core.verbs.SendRequest;
import org.metaroce.core.verbs.WcStatus;
import org.metaroce.core.verbs.WorkCompletion;
import org.metaroce.core.verbs.WrOpcode;

/**
 * A paced requester with nothing in flight has no retransmission or probe timer armed; its
 * endpoint must still report the pacing release time as its next deadline, or a sans-I/O driver
 * (the in-memory wire, the simulator) never polls it again and the QP stalls [CC-002].
 */
class PacingDeadlineTest {
    private static final long GAP_NS = 50_000;

    /** One packet at a time, one every GAP_NS: pacing that outlasts every round trip. */
    private static final class SlowPacer implements CongestionControl {
        private long nextNs = Long.MIN_VALUE;

        @Override
        public int windowPackets() {
            return 1;
        }

        @Override
        public long nextSendTimeNs(final long nowNs) {
            return nextNs;
        }

        @Override
        public void onPacketSent(final long nowNs, final int bytes, final int pathId) {
            nextNs = nowNs + GAP_NS;
        }

        @Override
        public void onAck(final long nowNs, final int packets, final long rttNs, final boolean ecnEcho, final int pathId) {
        }

        @Override
        public void onLoss(final long nowNs, final int pathId, final boolean trimmed) {
        }

        @Override
        public void onRetransmitTimeout(final long nowNs) {
        }
    }

    @Test
    @DisplayName("CC-002: a paced QP with nothing in flight reports its pacing time as a deadline and completes")
    void pacedRequesterWakesUpWithNothingInFlight() {
        final TwoNodeFixture f = new TwoNodeFixture(77).connect(1024);
        f.a.qp.congestionControl(new SlowPacer());
        f.a.qp.postSend(new SendRequest(1).wrId(1).opcode(WrOpcode.RDMA_WRITE).sendFlags(SendFlags.SIGNALED)
            .addSge(f.a.address(0), 4 * 1024, f.a.mr.lkey()).remoteAddr(f.b.address(0)).rkey(f.b.mr.rkey()));
        final long start = f.wire.now();
        // First packet leaves and is acknowledged well within one pacing gap.
        f.wire.runUntil(() -> f.b.endpoint.counters().get(EndpointCounter.ACKS_OUT) >= 1
            && f.a.endpoint.counters().get(EndpointCounter.ACKS_IN) >= 1, GAP_NS / 2);
        assertThat(f.a.endpoint.counters().get(EndpointCounter.REQUEST_PACKETS_OUT)).isEqualTo(1);
        final long deadline = f.a.endpoint.nextDeadlineNs();
        assertThat(deadline).as("deadline of the paced endpoint").isEqualTo(start + GAP_NS);

        assertThat(f.runUntilQuiet()).isTrue();
        assertThat(f.a.sendCompletions).extracting(WorkCompletion::status).containsExactly(WcStatus.SUCCESS);
        assertThat(f.a.endpoint.counters().get(EndpointCounter.REQUEST_PACKETS_OUT)).isEqualTo(4);
        assertThat(f.wire.now() - start).isGreaterThanOrEqualTo(3 * GAP_NS);
    }
}
