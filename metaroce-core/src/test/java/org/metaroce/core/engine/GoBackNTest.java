// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.SplittableRandom;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.metaroce.core.testwire.PacketFilter;
import org.metaroce.core.testwire.PacketFate;
import org.metaroce.core.testwire.PacketMatcher;
import org.metaroce.core.verbs.SendFlags;
import org.metaroce.core.verbs.SendRequest;
import org.metaroce.core.verbs.WcStatus;
import org.metaroce.core.verbs.WorkCompletion;
import org.metaroce.core.verbs.WrOpcode;
import org.metaroce.core.wire.BaseHeader;
import org.metaroce.core.wire.ConnectHeader;
import org.metaroce.core.wire.Flags;
import org.metaroce.core.wire.Opcode;

/** The go-back-N baseline mode of specification 6.11 [REL-053]..[REL-056]. */
class GoBackNTest {
    private static final int GBN = ConnectHeader.CAP_GO_BACK_N;

    private static void fill(final UnsafeBuffer b, final int offset, final int length, final int seed) {
        for (int i = 0; i < length; i++) {
            b.putByte(offset + i, (byte) (i * 131 + seed));
        }
    }

    private static void assertSameBytes(final UnsafeBuffer x, final int xo, final UnsafeBuffer y, final int yo,
                                        final int length) {
        for (int i = 0; i < length; i++) {
            if (y.getByte(yo + i) != x.getByte(xo + i)) {
                throw new AssertionError("byte " + i + " differs");
            }
        }
    }

    private static SendRequest write(final TwoNodeFixture f, final long wrId, final int srcOffset, final int length,
                                     final int dstOffset) {
        return new SendRequest(1).wrId(wrId).opcode(WrOpcode.RDMA_WRITE).sendFlags(SendFlags.SIGNALED)
            .addSge(f.a.address(srcOffset), length, f.a.mr.lkey()).remoteAddr(f.b.address(dstOffset))
            .rkey(f.b.mr.rkey());
    }

    @Test
    @DisplayName("[REL-053] [REL-054] one lost packet: later ones are dropped, one NACK, the whole tail is resent")
    void oneLossResendsTheWindowTail() {
        final TwoNodeFixture f = new TwoNodeFixture(5001).connect(1024, GBN, null);
        assertThat(f.a.qp.isGoBackN()).isTrue();
        f.wire.filter(PacketFilter.dropNth(3, PacketMatcher.opcode(Opcode.WRITE.value())));
        fill(f.a.mr.buffer(), 0, 8192, 1);
        f.a.qp.postSend(write(f, 1, 0, 8192, 100_000));
        assertThat(f.runUntilQuiet()).isTrue();
        assertThat(f.a.sendCompletions).extracting(WorkCompletion::status).containsExactly(WcStatus.SUCCESS);
        final EndpointCounters a = f.a.endpoint.counters();
        final EndpointCounters b = f.b.endpoint.counters();
        // Packets 4..8 arrived after the gap: dropped unaccepted, and only the first was NACKed.
        assertThat(b.get(EndpointCounter.SEQUENCE_GAP)).as(b.toString()).isEqualTo(5);
        assertThat(b.get(EndpointCounter.NACKS_OUT_SEQUENCE_GAP)).isEqualTo(1);
        // The requester went back to PSN 3 and resent 3..8; nothing was selectively acknowledged.
        assertThat(a.get(EndpointCounter.RETRANSMITS_GO_BACK_N)).as(a.toString()).isEqualTo(6);
        assertThat(a.retransmits()).isEqualTo(6);
        assertThat(a.get(EndpointCounter.SACKED_PACKETS)).isZero();
        assertThat(b.get(EndpointCounter.DUPLICATE_REQUESTS)).isZero();
        assertSameBytes(f.a.mr.buffer(), 0, f.b.mr.buffer(), 100_000, 8192);
    }

    /**
     * Drops the first transmission of a seeded set of PSNs: the same original packets are lost in
     * both modes, whatever each mode retransmits.
     */
    private static PacketFilter seededFirstTransmissionLoss(final long seed, final double p) {
        final SplittableRandom random = new SplittableRandom(seed);
        final java.util.Map<Integer, Boolean> decided = new java.util.HashMap<>();
        return (from, to, buf, off, len, now) -> {
            if (from != 0 || PacketMatcher.opcodeOf(buf, off, len) != Opcode.WRITE.value()
                || (BaseHeader.flags(buf, off) & Flags.RETRANSMIT) != 0) {
                return false;
            }
            return decided.computeIfAbsent(BaseHeader.psn(buf, off), k -> random.nextDouble() < p);
        };
    }

    private static long runLossyTransfer(final long seed, final int capabilities, final StringBuilder log) {
        final TwoNodeFixture f = new TwoNodeFixture(seed).connect(1024, capabilities, null);
        f.wire.filter(seededFirstTransmissionLoss(seed, 0.02));
        final int length = 512 * 1024;
        fill(f.a.mr.buffer(), 0, length, 7);
        f.a.qp.postSend(write(f, 1, 0, length, 0));
        assertThat(f.runUntilQuiet()).as(f.wire.toString()).isTrue();
        assertThat(f.a.sendCompletions).extracting(WorkCompletion::status).containsExactly(WcStatus.SUCCESS);
        assertSameBytes(f.a.mr.buffer(), 0, f.b.mr.buffer(), 0, length);
        final long lost = f.wire.trace().count(PacketFate.DROPPED_FILTER);
        final long retransmits = f.a.endpoint.counters().retransmits();
        log.append(capabilities == GBN ? "go-back-N" : "selective repeat").append(": originals lost ").append(lost)
            .append(", retransmissions ").append(retransmits).append(", finished at ").append(f.wire.now())
            .append(" ns; ");
        return retransmits;
    }

    @Test
    @DisplayName("[REL-054] under the same seeded loss, go-back-N resends far more than selective repeat")
    void goBackNMultipliesLossesSelectiveRepeatDoesNot() {
        final long seed = 5002;
        final StringBuilder log = new StringBuilder("seed=" + seed + ": ");
        final long selective = runLossyTransfer(seed, 0, log);
        final long goBackN = runLossyTransfer(seed, GBN, log);
        System.out.println(log);
        assertThat(goBackN).as(log.toString()).isGreaterThan(4 * selective);
    }

    @Test
    @DisplayName("[REL-056] a go-back-N QP sends everything on one path (Path ID 0)")
    void goBackNUsesOnePath() {
        final TwoNodeFixture f = new TwoNodeFixture(5003).connect(1024, GBN, null);
        fill(f.a.mr.buffer(), 0, 64 * 1024, 3);
        f.a.qp.postSend(write(f, 1, 0, 64 * 1024, 0));
        assertThat(f.runUntilQuiet()).isTrue();
        assertThat(f.a.qp.paths().pathCount()).isEqualTo(1);
        assertThat(f.wire.trace().count(e -> e.fate() == PacketFate.DELIVERED
            && e.entropy() != TwoNodeFixture.PATHS[0])).isZero();
        assertThat(f.wire.trace().count(e -> e.fate() == PacketFate.DELIVERED)).isGreaterThan(64);
    }

    @Test
    @DisplayName("[REL-054] go-back-N has no tail-loss probe: a lost last packet waits for the RTO")
    void tailLossWaitsForTheTimeout() {
        final TwoNodeFixture f = new TwoNodeFixture(5004).connect(1024, GBN, null);
        f.wire.filter(PacketFilter.dropNth(4, PacketMatcher.opcode(Opcode.WRITE.value())));
        fill(f.a.mr.buffer(), 0, 4096, 4);
        f.a.qp.postSend(write(f, 1, 0, 4096, 0));
        assertThat(f.runUntilQuiet()).isTrue();
        final EndpointCounters c = f.a.endpoint.counters();
        assertThat(c.get(EndpointCounter.RETRANSMITS_TAIL_PROBE)).as(c.toString()).isZero();
        assertThat(c.get(EndpointCounter.TIMEOUTS)).isEqualTo(1);
        assertThat(c.get(EndpointCounter.RETRANSMITS_TIMEOUT)).isEqualTo(1);
        assertSameBytes(f.a.mr.buffer(), 0, f.b.mr.buffer(), 0, 4096);
    }

    @Test
    @DisplayName("[REL-055] a READ response after a lost one is dropped and the READ re-requested from the gap")
    void readResponsesAreTakenInOrderOnly() {
        final TwoNodeFixture f = new TwoNodeFixture(5005).connect(1024, GBN, null);
        f.wire.filter(PacketFilter.dropNth(2, PacketMatcher.opcode(Opcode.READ_RESPONSE.value())));
        fill(f.b.mr.buffer(), 0, 16 * 1024, 5);
        f.a.qp.postSend(new SendRequest(1).wrId(9).opcode(WrOpcode.RDMA_READ).sendFlags(SendFlags.SIGNALED)
            .addSge(f.a.address(200_000), 16 * 1024, f.a.mr.lkey()).remoteAddr(f.b.address(0))
            .rkey(f.b.mr.rkey()));
        assertThat(f.runUntilQuiet()).isTrue();
        assertThat(f.a.sendCompletions).extracting(WorkCompletion::status).containsExactly(WcStatus.SUCCESS);
        final EndpointCounters c = f.a.endpoint.counters();
        assertThat(c.get(EndpointCounter.SEQUENCE_GAP)).as(c.toString()).isEqualTo(14);
        assertThat(c.get(EndpointCounter.RETRANSMITS_GO_BACK_N)).isEqualTo(1);
        assertThat(c.get(EndpointCounter.TIMEOUTS)).isZero();
        assertSameBytes(f.b.mr.buffer(), 0, f.a.mr.buffer(), 200_000, 16 * 1024);
    }

    @Test
    @DisplayName("[REL-053] without the capability, out-of-order packets are accepted (selective repeat)")
    void withoutTheCapabilitySelectiveRepeatRuns() {
        final TwoNodeFixture f = new TwoNodeFixture(5006).connect(1024, 0, null);
        f.wire.filter(PacketFilter.dropNth(3, PacketMatcher.opcode(Opcode.WRITE.value())));
        fill(f.a.mr.buffer(), 0, 8192, 6);
        f.a.qp.postSend(write(f, 1, 0, 8192, 0));
        assertThat(f.runUntilQuiet()).isTrue();
        assertThat(f.b.endpoint.counters().get(EndpointCounter.SEQUENCE_GAP)).isZero();
        assertThat(f.a.endpoint.counters().retransmits()).isEqualTo(1);
    }

    @Test
    @DisplayName("[REL-053]..[REL-057] [CC-021] the RoCEv2 baseline (go-back-N + DCQCN) delivers every operation exactly once under loss, duplication and CE marks")
    void baselineSurvivesALossyLink() {
        long wentBack = 0;
        long cnps = 0;
        for (final long seed : new long[] {5101, 5102, 5103}) {
            final TwoNodeFixture f = new TwoNodeFixture(seed, org.metaroce.core.testwire.LinkProfile.builder()
                .loss(0.01).duplicate(0.01).ceMark(0.02).rateBitsPerSecond(25_000_000_000L).build())
                .connect(1024, GBN | ConnectHeader.CAP_ECN, org.metaroce.core.congestion.CongestionControlAlgorithm.DCQCN);
            fill(f.a.mr.buffer(), 0, 256 * 1024, 11);
            fill(f.b.mr.buffer(), 512 * 1024, 64 * 1024, 12);
            f.b.mr.buffer().putLong(1000_000, 7);
            f.b.qp.postRecv(new org.metaroce.core.verbs.RecvRequest(1).wrId(50)
                .addSge(f.b.address(900_000), 16 * 1024, f.b.mr.lkey()));
            f.a.qp.postSend(write(f, 1, 0, 256 * 1024, 0));
            f.a.qp.postSend(new SendRequest(1).wrId(2).opcode(WrOpcode.RDMA_READ).sendFlags(SendFlags.SIGNALED)
                .addSge(f.a.address(300_000), 64 * 1024, f.a.mr.lkey()).remoteAddr(f.b.address(512 * 1024))
                .rkey(f.b.mr.rkey()));
            f.a.qp.postSend(new SendRequest(1).wrId(3).opcode(WrOpcode.SEND).sendFlags(SendFlags.SIGNALED)
                .addSge(f.a.address(0), 16 * 1024, f.a.mr.lkey()));
            for (int i = 0; i < 4; i++) {
                f.a.qp.postSend(new SendRequest(1).wrId(10 + i).opcode(WrOpcode.ATOMIC_FETCH_ADD)
                    .sendFlags(SendFlags.SIGNALED).addSge(f.a.address(400_000 + 8 * i), 8, f.a.mr.lkey())
                    .remoteAddr(f.b.address(1000_000)).rkey(f.b.mr.rkey()).compareAdd(1));
            }
            assertThat(f.runUntilCompletions(7, 1)).as(f.wire.toString()).isTrue();
            final String where = "seed " + seed + " " + f.a.endpoint.counters() + " " + f.wire;
            assertThat(f.a.sendCompletions).as(where).extracting(WorkCompletion::status).containsOnly(WcStatus.SUCCESS);
            assertThat(f.a.sendCompletions).extracting(WorkCompletion::wrId)
                .containsExactly(1L, 2L, 3L, 10L, 11L, 12L, 13L);
            assertThat(f.b.recvCompletions).extracting(WorkCompletion::status).containsExactly(WcStatus.SUCCESS);
            assertSameBytes(f.a.mr.buffer(), 0, f.b.mr.buffer(), 0, 256 * 1024);
            assertSameBytes(f.b.mr.buffer(), 512 * 1024, f.a.mr.buffer(), 300_000, 64 * 1024);
            assertSameBytes(f.a.mr.buffer(), 0, f.b.mr.buffer(), 900_000, 16 * 1024);
            assertThat(f.b.mr.buffer().getLong(1000_000)).as("each atomic executed exactly once").isEqualTo(11);
            assertThat(f.b.endpoint.counters().get(EndpointCounter.SACKED_PACKETS)).isZero();
            assertThat(f.a.endpoint.counters().get(EndpointCounter.SACKED_PACKETS)).isZero();
            wentBack += f.a.endpoint.counters().get(EndpointCounter.RETRANSMITS_GO_BACK_N)
                + f.b.endpoint.counters().get(EndpointCounter.RETRANSMITS_GO_BACK_N);
            cnps += f.a.endpoint.counters().get(EndpointCounter.CNPS_IN);
        }
        System.out.println("baseline under loss: go-back-N retransmissions " + wentBack + ", CNPs taken " + cnps);
        assertThat(wentBack).isPositive();
        assertThat(cnps).isPositive();
    }
}
