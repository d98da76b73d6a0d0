// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.engine;

import static org.assertj.core.api.Assertions.assertThat;

import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.metaroce.core.testwire.LinkProfile;
import org.metaroce.core.verbs.RecvRequest;
import org.metaroce.core.verbs.SendFlags;
import org.metaroce.core.verbs.SendRequest;
import org.metaroce.core.verbs.WrOpcode;

/**
 * The endpoint's poll visits only the queue pairs that have something to do, and its next
 * deadline is still the minimum over all of them (PollSchedule). Checked against the definition:
 * after every settled instant, no queue pair the schedule skipped would send anything if polled,
 * and the endpoint's deadline equals the minimum of every queue pair's own.
 */
class PollScheduleTest {
    private static final int QPS = 48;

    /** A sink that never has room and counts how often anyone asked for some. */
    private static final class ProbeSink implements TransmitSink {
        private final UnsafeBuffer buffer = new UnsafeBuffer(new byte[16]);
        int claims;

        @Override
        public MutableDirectBuffer buffer() {
            return buffer;
        }

        @Override
        public int claim(final int maxLength) {
            claims++;
            return NO_ROOM;
        }

        @Override
        public void commit(final int offset, final int length, final int peerId, final int entropy) {
            throw new AssertionError("nothing can be claimed");
        }
    }

    @Test
    @DisplayName("skipped queue pairs have nothing to send and the deadline is the minimum over all QPs (lossy, reordering wire, QPs destroyed mid-run)")
    void scheduleAgreesWithPollingEveryQueuePair() {
        final long seed = 4242;
        final LinkProfile lossy = LinkProfile.builder().loss(0.03).reorder(0.05).duplicate(0.01).build();
        final MultiQpFixture f = new MultiQpFixture(seed, lossy, QPS, 1024, 1 << 20);
        final java.util.SplittableRandom random = new java.util.SplittableRandom(seed);
        // Traffic on a third of the QPs, in both directions, some of it READs (responder work).
        for (int i = 0; i < QPS; i += 3) {
            for (int k = 0; k < 8; k++) {
                final boolean fromA = random.nextBoolean();
                final MultiQpFixture.Node from = f.node(fromA);
                final MultiQpFixture.Node to = f.node(!fromA);
                final int length = 1 + random.nextInt(20_000);
                final WrOpcode op = random.nextInt(4) == 0 ? WrOpcode.RDMA_READ : WrOpcode.RDMA_WRITE_WITH_IMM;
                if (op == WrOpcode.RDMA_WRITE_WITH_IMM) {
                    assertThat(to.qps.get(i).qp.postRecv(new RecvRequest(1).wrId(k))).isZero();
                }
                assertThat(from.qps.get(i).qp.postSend(new SendRequest(1).wrId(k).opcode(op).immData(k)
                    .sendFlags(SendFlags.SIGNALED).addSge(from.address(0), length, from.mr.lkey())
                    .remoteAddr(to.address(200_000)).rkey(to.mr.rkey()))).isZero();
            }
        }
        final int[] checks = {0};
        final boolean quiet = f.runUntilQuiet(5_000_000_000L, () -> {
            checkAgainstDefinition(f.a, f.wire.now());
            checkAgainstDefinition(f.b, f.wire.now());
            if (++checks[0] == 20) {
                // Destroying idle QPs mid-run moves every later QP's position in the poll order.
                for (int i = 2; i < QPS; i += 3) {
                    f.a.endpoint.destroyQueuePair(f.a.qps.get(i).qp);
                    f.b.endpoint.destroyQueuePair(f.b.qps.get(i).qp);
                }
            }
        });
        assertThat(quiet).as(f.describe()).isTrue();
        assertThat(checks[0]).isGreaterThan(100);
        System.out.println("PollScheduleTest seed=" + seed + " instants checked=" + checks[0] + " " + f.describe());
    }

    private static void checkAgainstDefinition(final MultiQpFixture.Node node, final long nowNs) {
        long min = Long.MAX_VALUE;
        final ProbeSink probe = new ProbeSink();
        for (final MultiQpFixture.QpEnd end : node.qps) {
            final QueuePair qp = end.qp;
            if (qp.isDestroyed()) {
                continue;
            }
            min = Math.min(min, qp.nextDeadlineNs());
            if (qp.nextDeadlineNs() > nowNs) {
                final int before = probe.claims;
                qp.poll(nowNs, probe, 64);
                assertThat(probe.claims - before).as("%s at %d ns: a skipped QP had something to send", qp, nowNs)
                    .isZero();
            }
        }
        final long endpointDeadline = node.endpoint.nextDeadlineNs();
        if (min == Long.MIN_VALUE) {
            assertThat(endpointDeadline).isLessThanOrEqualTo(nowNs);
        } else {
            assertThat(endpointDeadline).as("%s at %d ns", node.name, nowNs).isEqualTo(min);
        }
    }

    @Test
    @DisplayName("a poll visits the active queue pairs, not all of them")
    void pollCostFollowsActiveQueuePairs() {
        final long seed = 77;
        final MultiQpFixture f = new MultiQpFixture(seed, LinkProfile.perfect(), 200, 1024, 1 << 20);
        for (int k = 0; k < 8; k++) {
            assertThat(f.b.qps.get(7).qp.postRecv(new RecvRequest(1).wrId(k))).isZero();
            assertThat(f.a.qps.get(7).qp.postSend(new SendRequest(1).wrId(k).opcode(WrOpcode.RDMA_WRITE_WITH_IMM)
                .sendFlags(SendFlags.SIGNALED).addSge(f.a.address(0), 64 * 1024, f.a.mr.lkey())
                .remoteAddr(f.b.address(0)).rkey(f.b.mr.rkey()))).isZero();
        }
        final long before = f.a.endpoint.queuePairPolls() + f.b.endpoint.queuePairPolls();
        final long packetsBefore = f.a.endpoint.counters().get(EndpointCounter.PACKETS_OUT)
            + f.b.endpoint.counters().get(EndpointCounter.PACKETS_OUT);
        assertThat(f.runUntilQuiet(1_000_000_000L)).as(f.describe()).isTrue();
        final long visits = f.a.endpoint.queuePairPolls() + f.b.endpoint.queuePairPolls() - before;
        final long packets = f.a.endpoint.counters().get(EndpointCounter.PACKETS_OUT)
            + f.b.endpoint.counters().get(EndpointCounter.PACKETS_OUT) - packetsBefore;
        System.out.println("PollScheduleTest seed=" + seed + " QP polls=" + visits + " packets=" + packets);
        // Polling every QP would be 200 visits per endpoint poll; one busy pair costs a few per packet.
        assertThat(packets).isGreaterThan(500);
        assertThat(visits).isLessThan(4 * packets);
    }
}
