// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.metaroce.core.engine.EngineModelProperties.Fault;
import org.metaroce.core.engine.EngineModelProperties.Kind;
import org.metaroce.core.engine.EngineModelProperties.OpSpec;
import org.metaroce.core.engine.EngineModelProperties.PlannedOp;
import org.metaroce.core.engine.EngineModelProperties.Run;
import org.metaroce.core.engine.EngineModelProperties.Scenario;
import org.metaroce.core.testwire.LinkProfile;
import org.metaroce.core.testwire.PacketFate;
import org.metaroce.core.testwire.PacketFilter;
import org.metaroce.core.testwire.PacketMatcher;
import org.metaroce.core.testwire.TraceEvent;
import org.metaroce.core.testwire.WireStats;
import org.metaroce.core.verbs.SendFlags;
import org.metaroce.core.verbs.SendRequest;
import org.metaroce.core.verbs.WcStatus;
import org.metaroce.core.verbs.WrOpcode;
import org.metaroce.core.wire.Opcode;

/**
 * Long runs of mixed operations over a bad link, with fixed seeds: every operation must succeed,
 * memory and completions must match the fault-free model of {@link EngineModelProperties} (which
 * also checks completion order = post order and what each polled completion implies), and the
 * counters must tell a consistent story of the recovery. Prints the seed and the counters.
 */
class LossySoakTest {
    /** 5% loss, 10% reordering, 1% duplication, 0.5% corruption and up to 2 µs of jitter, both ways. */
    private static final LinkProfile LOSSY = LinkProfile.builder().loss(0.05).reorder(0.10).duplicate(0.01)
        .corrupt(0.005).jitterNs(2_000).build();

    /**
     * The same model-checked mix of operations under each congestion-control configuration: the
     * RoCEv2 baseline (go-back-N with DCQCN, every reordering a retransmission), the default
     * algorithm under the receiver's credit with ECN, and receiver credit alone [REL-053]..[REL-057],
     * [CC-008], [CC-018]..[CC-021].
     */
    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"GO_BACK_N+DCQCN", "DEFAULT+CREDIT+ECN", "RECEIVER_CREDIT"})
    void mixedOperationsSurviveALossyLinkUnderEveryAlgorithm(final String config) {
        final long seed = 777;
        final SplittableRandom r = new SplittableRandom(seed);
        final List<OpSpec> ops = new ArrayList<>();
        for (int i = 0; i < 120; i++) {
            final Kind kind = Kind.values()[r.nextInt(Kind.values().length)];
            final int length = r.nextInt(4) == 0 ? r.nextInt(4097, 64 * 1024) : r.nextInt(0, 4097);
            ops.add(new OpSpec(r.nextInt(2), r.nextInt(5) != 0, kind, length, r.nextInt(10) < 7, r.nextInt(10) < 3,
                0, r.nextLong()));
        }
        final LinkProfile profile = LOSSY.toBuilder().ceMark(0.02).build();
        final Run run = new Run(new Scenario(seed, 1024, new Fault("soak", profile), 2, false, ops), false);
        final int ecn = org.metaroce.core.wire.ConnectHeader.CAP_ECN;
        final int credit = org.metaroce.core.wire.ConnectHeader.CAP_RECEIVER_CREDIT;
        switch (config) {
            case "GO_BACK_N+DCQCN" -> {
                run.capabilities = org.metaroce.core.wire.ConnectHeader.CAP_GO_BACK_N | ecn;
                run.cc = org.metaroce.core.congestion.CongestionControlAlgorithm.DCQCN;
            }
            case "DEFAULT+CREDIT+ECN" -> {
                run.capabilities = credit | ecn;
                run.cc = org.metaroce.core.congestion.CongestionControlAlgorithm.DEFAULT;
            }
            default -> {
                run.capabilities = credit;
                run.cc = org.metaroce.core.congestion.CongestionControlAlgorithm.RECEIVER_CREDIT;
            }
        }
        run.execute();
        final EndpointCounters a = run.f.a.endpoint.counters();
        final EndpointCounters b = run.f.b.endpoint.counters();
        final String story = config + " seed=" + seed + " A " + a + " B " + b + " " + run.f.wire.stats();
        System.out.println("LossySoakTest " + story);
        assertThat(a.retransmits() + b.retransmits()).as(story).isPositive();
        if (config.startsWith("GO_BACK_N")) {
            assertThat(a.get(EndpointCounter.RETRANSMITS_GO_BACK_N) + b.get(EndpointCounter.RETRANSMITS_GO_BACK_N))
                .as(story).isPositive();
            assertThat(a.get(EndpointCounter.SACKED_PACKETS) + b.get(EndpointCounter.SACKED_PACKETS)).as(story).isZero();
            assertThat(a.get(EndpointCounter.CNPS_IN) + b.get(EndpointCounter.CNPS_IN)).as(story).isPositive();
        }
    }

    @ParameterizedTest(name = "seed {0}")
    @ValueSource(longs = {1, 42, 4242, 90_210, 0xC0FFEE})
    void threeHundredMixedOperationsSurviveALossyLink(final long seed) {
        final SplittableRandom r = new SplittableRandom(seed);
        final int mtu = new int[] {256, 512, 1024, 2048, 4096}[r.nextInt(5)];
        final List<OpSpec> ops = new ArrayList<>();
        for (int i = 0; i < 300; i++) {
            final Kind kind = Kind.values()[r.nextInt(Kind.values().length)];
            final int bucket = r.nextInt(20);
            final int length = bucket < 8 ? r.nextInt(0, 65) : bucket < 15 ? r.nextInt(65, 4097)
                : bucket < 19 ? r.nextInt(4097, 32 * 1024 + 1) : r.nextInt(32 * 1024 + 1, 128 * 1024 + 1);
            ops.add(new OpSpec(0, r.nextInt(5) != 0, kind, length, r.nextInt(10) < 7, r.nextInt(10) < 3,
                r.nextInt(10) == 0 ? r.nextInt(1, 20_001) : 0, r.nextLong()));
        }
        final Run run = new Run(new Scenario(seed, mtu, new Fault("soak", LOSSY), 1, false, ops), false);
        run.execute();

        final EndpointCounters a = run.f.a.endpoint.counters();
        final EndpointCounters b = run.f.b.endpoint.counters();
        final WireStats wire = run.f.wire.stats();
        System.out.println("LossySoakTest seed=" + seed + " mtu=" + mtu + " virtual=" + run.f.wire.now() + "ns\n  A "
            + a + "\n  B " + b + "\n  " + wire);
        final String story = "seed=" + seed + " A " + a + " B " + b + " " + wire;

        // Every first transmission of a request packet is counted once: what the operations need
        // (a READ takes one request per segment, at most 64 response packets each [OPS-019]).
        assertThat(a.get(EndpointCounter.REQUEST_PACKETS_OUT)).as(story)
            .isBetween(requestPackets(run, true, false), requestPackets(run, true, true));
        assertThat(b.get(EndpointCounter.REQUEST_PACKETS_OUT)).as(story)
            .isBetween(requestPackets(run, false, false), requestPackets(run, false, true));
        // The faults happened, and were repaired.
        assertThat(wire.droppedLoss()).as(story).isPositive();
        assertThat(wire.duplicated()).as(story).isPositive();
        assertThat(wire.corrupted()).as(story).isPositive();
        assertThat(a.retransmits()).as(story).isPositive();
        assertThat(b.get(EndpointCounter.DUPLICATE_REQUESTS)).as(story).isPositive();
        // Every corrupted copy was delivered (the run ends long after the last send) and caught.
        assertThat(a.get(EndpointCounter.MALFORMED) + b.get(EndpointCounter.MALFORMED)).as(story)
            .isEqualTo(wire.corrupted());
        // A duplicate at a responder is a retransmission or a wire duplicate, never anything else.
        assertThat(a.get(EndpointCounter.DUPLICATE_REQUESTS) + b.get(EndpointCounter.DUPLICATE_REQUESTS)).as(story)
            .isLessThanOrEqualTo(a.retransmits() + b.retransmits() + wire.duplicated());
        assertThat(a.get(EndpointCounter.SPURIOUS_RETRANSMITS)).as(story).isLessThanOrEqualTo(a.retransmits());
        // Nothing failed: no error completion (checked against the model too), no QP error, no overflow.
        for (final EndpointCounters c : new EndpointCounters[] {a, b}) {
            assertThat(c.get(EndpointCounter.QP_ERRORS)).as(story).isZero();
            assertThat(c.get(EndpointCounter.CQ_OVERFLOWS)).as(story).isZero();
            assertThat(c.get(EndpointCounter.NACKS_OUT_REMOTE_ACCESS) + c.get(EndpointCounter.NACKS_OUT_INVALID_REQUEST)
                + c.get(EndpointCounter.NACKS_OUT_REMOTE_OPERATION)).as(story).isZero();
        }
        assertThat(run.f.a.qps.get(0).sendCompletions).extracting(wc -> wc.status()).containsOnly(WcStatus.SUCCESS);
        assertThat(run.f.b.qps.get(0).recvCompletions).extracting(wc -> wc.status()).containsOnly(WcStatus.SUCCESS);
    }

    /**
     * Both directions go dark for 2 ms in the middle of a 10 Gb/s transfer of about 3 MB. With
     * retry count 7 the backed-off retransmission timer (100 µs doubling) rides it out after a few
     * timeouts: no RETRY_EXC_ERR, and everything completes as the model says.
     */
    @Test
    void twoMillisecondBlackholeInTheMiddleOfATransferIsRiddenOut() {
        final long seed = 2024;
        final SplittableRandom r = new SplittableRandom(seed);
        final List<OpSpec> ops = new ArrayList<>();
        for (int i = 0; i < 40; i++) {
            final Kind kind = Kind.values()[r.nextInt(Kind.values().length)];
            ops.add(new OpSpec(0, r.nextInt(4) != 0, kind, r.nextInt(64 * 1024, 128 * 1024), r.nextBoolean(),
                r.nextBoolean(), 0, r.nextLong()));
        }
        final long blackholeStart = 1_000_000;
        final long blackholeEnd = 3_000_000;
        final LinkProfile profile = LinkProfile.builder().rateBitsPerSecond(10_000_000_000L).jitterNs(500)
            .blackhole(blackholeStart, blackholeEnd).build();
        final Run run = new Run(new Scenario(seed, 4096, new Fault("blackhole", profile), 1, false, ops), false);
        run.retryCount = 7;
        run.execute();

        final EndpointCounters a = run.f.a.endpoint.counters();
        final EndpointCounters b = run.f.b.endpoint.counters();
        final WireStats wire = run.f.wire.stats();
        System.out.println("LossySoakTest blackhole seed=" + seed + " virtual=" + run.f.wire.now() + "ns\n  A " + a
            + "\n  B " + b + "\n  " + wire);
        final String story = "seed=" + seed + " A " + a + " B " + b + " " + wire;
        // The blackhole really cut through the transfer, and the timers fired but did not give up.
        assertThat(wire.droppedBlackhole()).as(story).isPositive();
        assertThat(a.get(EndpointCounter.TIMEOUTS)).as(story).isPositive();
        assertThat(run.f.wire.trace().count(e -> e.sentNs() >= blackholeEnd)).as("traffic after the blackhole")
            .isPositive();
        assertThat(a.get(EndpointCounter.QP_ERRORS) + b.get(EndpointCounter.QP_ERRORS)).as(story).isZero();
        assertThat(run.f.a.qps.get(0).sendCompletions).extracting(wc -> wc.status())
            .doesNotContain(WcStatus.RETRY_EXC_ERR).containsOnly(WcStatus.SUCCESS);
    }

    /**
     * Two first transmissions of a 300-packet WRITE are lost, PSN index 0 and 99. On this
     * unlimited-rate link all packets the credit allows arrive in one batch, before the responder
     * is polled, and most lie beyond the 64-bit SACK bitmap: the responder must acknowledge each of
     * them with an ACK of its own [REL-010] (however many arrive in one batch) and the requester
     * count the triggering PSN of an ACK as received [REL-017], so exactly the two lost packets are
     * retransmitted and the responder sees no duplicate.
     */
    @Test
    void packetsBeyondTheSackBitmapAreNotRetransmittedSpuriously() {
        final TwoNodeFixture f = new TwoNodeFixture(3001).connect(1024);
        f.wire.filter(PacketFilter.dropNth(1, PacketMatcher.opcode(Opcode.WRITE.value()))
            .or(PacketFilter.dropNth(100, PacketMatcher.opcode(Opcode.WRITE.value()))));
        for (int i = 0; i < 300 * 1024; i++) {
            f.a.mr.buffer().putByte(i, (byte) (i * 13 + 5));
        }
        f.a.qp.postSend(new SendRequest(1).wrId(1).opcode(WrOpcode.RDMA_WRITE).sendFlags(SendFlags.SIGNALED)
            .addSge(f.a.address(0), 300 * 1024, f.a.mr.lkey()).remoteAddr(f.b.address(0)).rkey(f.b.mr.rkey()));
        assertThat(f.runUntilQuiet()).isTrue();
        assertThat(f.a.sendCompletions).extracting(wc -> wc.status()).containsExactly(WcStatus.SUCCESS);
        final String story = "A " + f.a.endpoint.counters() + " B " + f.b.endpoint.counters();
        assertThat(f.b.endpoint.counters().get(EndpointCounter.DUPLICATE_REQUESTS)).as(story).isZero();
        assertThat(f.a.endpoint.counters().retransmits()).as(story).isEqualTo(2);
        for (int i = 0; i < 300 * 1024; i++) {
            if (f.a.mr.buffer().getByte(i) != f.b.mr.buffer().getByte(i)) {
                throw new AssertionError("byte " + i + " differs");
            }
        }
    }

    /**
     * A 300-packet WRITE whose first packet (PSN p) is lost three times, so the cumulative PSN
     * stays at p for three RTOs; the first ACK triggered by each packet beyond p + 64 is lost too,
     * so the requester resends those packets once. Each resent copy is a duplicate beyond the SACK
     * bitmap: the responder must answer each with an ACK of its own [REL-042, REL-010], so that each
     * such packet is transmitted exactly twice. Coalescing the duplicates' ACKs into one (only the
     * last trigger is reported) makes the requester resend them at every RTO, and with more RTOs
     * reach 16 transmissions and RETRY_EXC_ERR [REL-030]. (Also needs every own ACK of one batch
     * to be sent, see {@link #packetsBeyondTheSackBitmapAreNotRetransmittedSpuriously}.)
     */
    @Test
    void duplicatesBeyondTheSackBitmapAreEachAcknowledged() {
        final TwoNodeFixture f = new TwoNodeFixture(3101).connect(1024);
        final int first = f.a.qp.nextSendPsn();
        final Set<Integer> acknowledgedOnce = new HashSet<>();
        f.wire.filter(PacketFilter.dropFirst(3, PacketMatcher.opcodePsn(Opcode.WRITE.value(), first))
            .or((from, to, buf, off, len, now) -> {
                if (PacketMatcher.opcodeOf(buf, off, len) != Opcode.ACK.value()) {
                    return false;
                }
                final int d = PacketMatcher.psnOf(buf, off, len) - first;
                return d > 64 && d < 300 && acknowledgedOnce.add(d);
            }));
        f.a.qp.postSend(new SendRequest(1).wrId(1).opcode(WrOpcode.RDMA_WRITE).sendFlags(SendFlags.SIGNALED)
            .addSge(f.a.address(0), 300 * 1024, f.a.mr.lkey()).remoteAddr(f.b.address(0)).rkey(f.b.mr.rkey()));
        assertThat(f.runUntilQuiet()).isTrue();
        final String story = "A " + f.a.endpoint.counters() + " B " + f.b.endpoint.counters();
        assertThat(f.a.sendCompletions).as(story).extracting(wc -> wc.status()).containsExactly(WcStatus.SUCCESS);
        final int[] transmissions = new int[300];
        for (final TraceEvent e : f.wire.trace().events()) {
            if (e.from() == f.a.node && e.opcode() == Opcode.WRITE.value()
                && (e.fate() == PacketFate.DELIVERED || e.fate() == PacketFate.DROPPED_FILTER)) {
                transmissions[e.psn() - first]++;
            }
        }
        for (int i = 65; i < 300; i++) {
            assertThat(transmissions[i]).as("transmissions of PSN p+%d; %s", i, story).isLessThanOrEqualTo(2);
        }
    }

    /**
     * A 128-packet READ (two 64-packet segments) on a perfect link whose first READ_REQUEST (PSN
     * p) is lost twice: the first time, segment 2 is held waiting for PSN p; at the RTO every
     * response slot is re-requested on its own and the re-request for p is the one lost, so 31
     * re-requests p+1..p+31 are held behind it too and the responder's 32 READ resources are full.
     * From then on every retransmission of p is dropped as RESPONDER_BUSY while everything held
     * waits for p [OPS-024, OPS-029]: the READ must still complete.
     */
    @Test
    void readRequestAtTheCumulativePointIsNeverStarvedByLaterHeldReads() {
        final TwoNodeFixture f = new TwoNodeFixture(5001).connect(1024);
        final int first = f.a.qp.nextSendPsn();
        f.wire.filter(PacketFilter.dropFirst(2, PacketMatcher.opcodePsn(Opcode.READ_REQUEST.value(), first)));
        for (int i = 0; i < 128 * 1024; i++) {
            f.b.mr.buffer().putByte(i, (byte) (i * 7 + 1));
        }
        f.a.qp.postSend(new SendRequest(1).wrId(1).opcode(WrOpcode.RDMA_READ).sendFlags(SendFlags.SIGNALED)
            .addSge(f.a.address(0), 128 * 1024, f.a.mr.lkey()).remoteAddr(f.b.address(0)).rkey(f.b.mr.rkey()));
        assertThat(f.runUntilQuiet()).isTrue();
        final String story = "A " + f.a.endpoint.counters() + " B " + f.b.endpoint.counters();
        assertThat(f.a.sendCompletions).as(story).extracting(wc -> wc.status()).containsExactly(WcStatus.SUCCESS);
        for (int i = 0; i < 128 * 1024; i++) {
            if (f.a.mr.buffer().getByte(i) != f.b.mr.buffer().getByte(i)) {
                throw new AssertionError("byte " + i + " differs; " + story);
            }
        }
    }

    /**
     * [REL-051] WR 1's only packet is black-holed, WR 2's is acknowledged (selectively). When WR 1
     * exhausts its retries, it completes with RETRY_EXC_ERR and the later WR 2 with WR_FLUSH_ERR,
     * although its packet was delivered: later WRs of a failed one are flushed.
     */
    @Test
    void workRequestsAfterTheFailedOneAreFlushedEvenIfTheirPacketsWereAcknowledged() {
        final TwoNodeFixture f = TwoNodeFixture.countingRetriesOnly(6001);
        f.connect(1024, 3, 7, 200_000);
        final int first = f.a.qp.nextSendPsn();
        f.wire.filter(PacketFilter.dropOpcodePsn(Opcode.WRITE.value(), first));
        for (int i = 0; i < 2; i++) {
            f.a.qp.postSend(new SendRequest(1).wrId(1 + i).opcode(WrOpcode.RDMA_WRITE).sendFlags(SendFlags.SIGNALED)
                .addSge(f.a.address(0), 100, f.a.mr.lkey()).remoteAddr(f.b.address(4096L * i)).rkey(f.b.mr.rkey()));
        }
        assertThat(f.wire.runUntil(() -> {
            f.a.drain();
            return f.a.sendCompletions.size() == 2;
        }, 10_000_000_000L)).isTrue();
        assertThat(f.a.endpoint.counters().get(EndpointCounter.SACKED_PACKETS)).as("WR 2 was acknowledged").isOne();
        assertThat(f.a.sendCompletions).extracting(wc -> wc.wrId()).containsExactly(1L, 2L);
        assertThat(f.a.sendCompletions).extracting(wc -> wc.status())
            .containsExactly(WcStatus.RETRY_EXC_ERR, WcStatus.WR_FLUSH_ERR);
    }

    /**
     * A 64-packet READ, then a 400-packet WRITE, on a perfect 10 Gb/s link; the first READ_RESPONSE
     * is lost once. Once it is re-requested, the WRITE's ACKs keep arriving before the
     * re-request's answer can: none of them is a response to a request sent after the
     * re-request, so none may declare the re-requested response lost again [REL-045]. Exactly one
     * re-request, and both WRs succeed.
     */
    @Test
    void reRequestedReadResponseIsNotDeclaredLostAgainByUnrelatedAcks() {
        final TwoNodeFixture f = new TwoNodeFixture(9001,
            LinkProfile.builder().rateBitsPerSecond(10_000_000_000L).build()).connect(1024);
        f.wire.filter(PacketFilter.dropNth(1, PacketMatcher.opcode(Opcode.READ_RESPONSE.value())));
        f.a.qp.postSend(new SendRequest(1).wrId(1).opcode(WrOpcode.RDMA_READ).sendFlags(SendFlags.SIGNALED)
            .addSge(f.a.address(0), 64 * 1024, f.a.mr.lkey()).remoteAddr(f.b.address(0)).rkey(f.b.mr.rkey()));
        f.a.qp.postSend(new SendRequest(1).wrId(2).opcode(WrOpcode.RDMA_WRITE).sendFlags(SendFlags.SIGNALED)
            .addSge(f.a.address(100_000), 400 * 1024, f.a.mr.lkey()).remoteAddr(f.b.address(100_000))
            .rkey(f.b.mr.rkey()));
        assertThat(f.runUntilQuiet()).isTrue();
        final String story = "A " + f.a.endpoint.counters() + " B " + f.b.endpoint.counters();
        assertThat(f.a.sendCompletions).as(story).extracting(wc -> wc.status())
            .containsExactly(WcStatus.SUCCESS, WcStatus.SUCCESS);
        assertThat(f.a.endpoint.counters().retransmits()).as(story).isEqualTo(1);
    }

    /**
     * A 20-packet READ, then a 64-packet READ; the only ACK (the one for the first READ_REQUEST)
     * is lost. The first READ completes through its responses; the second needs PSNs beyond the
     * initial credit of 64, and nothing is outstanding that could bring a new ACK. The requester
     * must probe with a KEEPALIVE after one RTO [REL-019] and complete the second READ too,
     * instead of waiting forever.
     */
    @Test
    void requesterBlockedByCreditWithNothingOutstandingProbesForCredit() {
        final TwoNodeFixture f = new TwoNodeFixture(8001).connect(1024);
        f.wire.filter(PacketFilter.dropNth(1, PacketMatcher.opcode(Opcode.ACK.value())));
        f.a.qp.postSend(new SendRequest(1).wrId(1).opcode(WrOpcode.RDMA_READ).sendFlags(SendFlags.SIGNALED)
            .addSge(f.a.address(0), 20 * 1024, f.a.mr.lkey()).remoteAddr(f.b.address(0)).rkey(f.b.mr.rkey()));
        f.a.qp.postSend(new SendRequest(1).wrId(2).opcode(WrOpcode.RDMA_READ).sendFlags(SendFlags.SIGNALED)
            .addSge(f.a.address(100_000), 64 * 1024, f.a.mr.lkey()).remoteAddr(f.b.address(100_000))
            .rkey(f.b.mr.rkey()));
        final boolean quiet = f.runUntilQuiet();
        final String story = "A " + f.a.endpoint.counters() + " B " + f.b.endpoint.counters() + " " + f.wire.stats();
        assertThat(quiet).as("both READs complete; %s", story).isTrue();
        assertThat(f.a.sendCompletions).as(story).extracting(wc -> wc.status())
            .containsExactly(WcStatus.SUCCESS, WcStatus.SUCCESS);
    }

    /**
     * First transmissions of request packets the operations of one requester need: one per PSN,
     * except that a READ takes between one request per 64-packet segment and one per packet.
     */
    private static long requestPackets(final Run run, final boolean fromA, final boolean most) {
        final int mtu = run.scenario.mtu();
        final int chunk = run.f.a.endpoint.config().readChunkPackets();
        long packets = 0;
        for (final PlannedOp op : run.ops) {
            if (op.fromA != fromA) {
                continue;
            }
            final long psns = op.kind.isAtomic() ? 1 : Math.max(1, (op.length + mtu - 1) / mtu);
            packets += op.kind.wr == WrOpcode.RDMA_READ && !most ? (psns + chunk - 1) / chunk : psns;
        }
        return packets;
    }
}
