// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;

import org.junit.jupiter.api.Test;
import org.metaroce.core.testwire.PacketFilter;
import org.metaroce.core.testwire.PacketMatcher;
import org.metaroce.core.verbs.QpAttributes;
import org.metaroce.core.verbs.QpState;
import org.metaroce.core.verbs.SendFlags;
import org.metaroce.core.verbs.SendRequest;
import org.metaroce.core.verbs.WcStatus;
import org.metaroce.core.verbs.WrOpcode;

/** The endpoint's event trace, and the last events a queue pair keeps when it fails. Virtual time. */
class EventTraceTest {
    private static final long S = 1_000_000_000L;

    @Test
    void aQueuePairThatDiesKeepsTheTimerExpiriesAndRetransmissionsThatLedThere() {
        final TwoNodeFixture f = new TwoNodeFixture(7301).connect(1024);
        f.a.qp.modify(QpState.RTS, new QpAttributes().retryTimeoutNs(2 * S));
        f.wire.filter(PacketFilter.dropMatching(PacketMatcher.from(f.a.node)));
        f.a.qp.postSend(new SendRequest(1).wrId(1).opcode(WrOpcode.RDMA_WRITE).sendFlags(SendFlags.SIGNALED)
            .addSge(f.a.address(0), 2048, f.a.mr.lkey()).remoteAddr(f.b.address(0)).rkey(f.b.mr.rkey()));
        assertThat(f.wire.runUntil(() -> {
            f.a.drain();
            return !f.a.sendCompletions.isEmpty();
        }, 10 * S)).isTrue();
        assertThat(f.a.sendCompletions.get(0).status()).isEqualTo(WcStatus.RETRY_EXC_ERR);

        final List<String> trace = f.a.qp.failureTrace();
        final String qp = String.format("QP 0x%06x ", f.a.qp.qpn());
        assertThat(trace).as("failure trace").isNotEmpty().allSatisfy(line -> assertThat(line).contains(qp));
        assertThat(trace).anySatisfy(l -> assertThat(l).contains("RTO_EXPIRED"));
        assertThat(trace).anySatisfy(l -> assertThat(l).contains("RETRANSMIT").contains("RETRANSMITS_TIMEOUT"));
        assertThat(trace.get(trace.size() - 2)).contains("WR_FAILED").contains("RETRY_EXC_ERR");
        assertThat(trace.get(trace.size() - 1)).contains("STATE ERR (QP_FATAL)").startsWith("+0.000 ms");
        // Times are relative to the failure: all earlier ones negative.
        assertThat(trace.get(0)).startsWith("-");
        // B's QP is healthy: no failure trace.
        assertThat(f.b.qp.failureTrace()).isEmpty();
    }

    @Test
    void aLossyTransferTracesItsRetransmissionsWindowCutsAndPathPenalties() {
        // The window-based algorithm (8.5) on a 1 Gb/s link: its window (one BDP) is below the receive
        // window, so a loss cuts what the QP may send.
        final TwoNodeFixture f = new TwoNodeFixture(7303, org.metaroce.core.testwire.LinkProfile.builder()
            .rateBitsPerSecond(1_000_000_000L).loss(0.02).build(),
            new EndpointConfig().linkRateBitsPerSecond(1_000_000_000L), QueuePairCapabilities.defaults(), 4096)
            .connect(1024, 0, org.metaroce.core.congestion.CongestionControlAlgorithm.DEFAULT);
        for (int i = 0; i < 32; i++) {
            f.a.qp.postSend(new SendRequest(1).wrId(i).opcode(WrOpcode.RDMA_WRITE).sendFlags(SendFlags.SIGNALED)
                .addSge(f.a.address(0), 64 * 1024, f.a.mr.lkey()).remoteAddr(f.b.address(0)).rkey(f.b.mr.rkey()));
        }
        assertThat(f.wire.runUntil(() -> {
            f.a.drain();
            return f.a.sendCompletions.size() == 32;
        }, 10 * S)).isTrue();
        final List<String> events = f.a.endpoint.trace().last(f.a.qp.qpn(), EventTrace.DEFAULT_CAPACITY,
            f.wire.now());
        final long retransmits = events.stream().filter(e -> e.contains(" RETRANSMIT ")).count();
        // Every retransmission of the QP is in the trace (the ring did not wrap in this run).
        assertThat(f.a.endpoint.trace().position()).isLessThan(EventTrace.DEFAULT_CAPACITY);
        assertThat(retransmits).as("retransmissions traced").isPositive().isEqualTo(f.a.qp.retransmits());
        assertThat(events).anySatisfy(e -> assertThat(e).contains("CWND_REDUCED").contains("(loss"));
        assertThat(events).anySatisfy(e -> assertThat(e).contains("PATH_PENALTY path").contains("(loss)"));
    }

    @Test
    void stateChangesAreTracedAndTheRingKeepsTheNewestRecords() {
        final TwoNodeFixture f = new TwoNodeFixture(7302).connect(1024);
        final EventTrace trace = f.a.endpoint.trace();
        final List<String> setup = trace.last(f.a.qp.qpn(), 10, 0);
        assertThat(setup).hasSize(3);
        assertThat(setup.get(0)).contains("STATE INIT");
        assertThat(setup.get(1)).contains("STATE RTR");
        assertThat(setup.get(2)).contains("STATE RTS");

        final EventTrace ring = new EventTrace(4);
        for (int i = 0; i < 10; i++) {
            ring.record(i * 1000L, 7, TraceEvent.TAIL_PROBE, i, i, 0, 0);
        }
        assertThat(ring.position()).isEqualTo(10);
        assertThat(ring.last(7, 10, 9000)).containsExactly(
            "-0.003 ms QP 0x000007 TAIL_PROBE psn 6 (probe 6)",
            "-0.002 ms QP 0x000007 TAIL_PROBE psn 7 (probe 7)",
            "-0.001 ms QP 0x000007 TAIL_PROBE psn 8 (probe 8)",
            "+0.000 ms QP 0x000007 TAIL_PROBE psn 9 (probe 9)");
        assertThat(ring.last(8, 10, 0)).isEmpty();
        ring.record(Long.MIN_VALUE, 9, TraceEvent.STATE, 0, QpState.INIT.ordinal(), -1, 0);
        assertThat(ring.last(9, 1, 5000)).containsExactly("(before traffic) QP 0x000009 STATE INIT");
        assertThatThrownBy(() -> new EventTrace(6)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void copiedRecordsOfInterleavedQueuePairsReadAsTheLinesOfThatQueuePair() {
        // QueuePair keeps copyLast's records at a failure and formats them only when asked: the
        // lines must be those last() gives, also across the ring's wrap and with other QPs between.
        final EventTrace ring = new EventTrace(8);
        for (int i = 0; i < 21; i++) {
            ring.record(i * 1000L, i % 3 == 0 ? 5 : 6, TraceEvent.TAIL_PROBE, i, i, 0, 0);
        }
        for (final int max : new int[] {0, 1, 2, 3, 8}) {
            final byte[] records = ring.copyLast(5, max);
            assertThat(EventTrace.describeAll(new org.agrona.concurrent.UnsafeBuffer(records),
                records.length / EventTrace.RECORD_BYTES, 20_000)).as("max %d", max)
                .isEqualTo(ring.last(5, max, 20_000));
        }
        // Records 13..20 are left in the ring of 8: QP 5 wrote 15 and 18 of them.
        assertThat(ring.last(5, 8, 20_000)).containsExactly(
            "-0.005 ms QP 0x000005 TAIL_PROBE psn 15 (probe 15)",
            "-0.002 ms QP 0x000005 TAIL_PROBE psn 18 (probe 18)");
        assertThat(new EndpointConfig().eventTraceRecords()).isEqualTo(EventTrace.DEFAULT_CAPACITY);
        assertThatThrownBy(() -> new EndpointConfig().eventTraceRecords(48)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new EndpointConfig().eventTraceRecords(16)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void failureDurationsReadAsStringFormatWouldWriteThem() {
        final long[] ns = {0, 1, 49_999_999, 50_000_000, 99_999_999, 100_000_000, 149_999_999, 150_000_000,
            950_000_000, 999_999_999, 1_000_000_000, 15_000_000_000L, 15_049_999_999L, 15_050_000_000L,
            Long.MAX_VALUE, -1, -150_000_000};
        for (final long n : ns) {
            assertThat(Seconds.of(n)).as("%d ns", n).isEqualTo(String.format(java.util.Locale.ROOT, "%.1f s", n / 1e9));
        }
        final java.util.Random random = new java.util.Random(0x5EC);
        for (int i = 0; i < 10_000; i++) {
            final long n = random.nextLong(0, 100_000_000_000L);
            assertThat(Seconds.of(n)).as("%d ns", n).isEqualTo(String.format(java.util.Locale.ROOT, "%.1f s", n / 1e9));
        }
    }
}
