// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.conformance.cases;

import static org.metaroce.conformance.cases.Steps.must;
import static org.metaroce.conformance.cases.Steps.setup;
import static org.metaroce.conformance.suite.CaseContext.check;
import static org.metaroce.conformance.suite.CaseContext.checkEq;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import org.metaroce.conformance.cases.Steps.Setup;
import org.metaroce.conformance.suite.CaseContext;
import org.metaroce.conformance.suite.ConformanceCase;
import org.metaroce.conformance.suite.Level;
import org.metaroce.conformance.suite.QpOptions;
import org.metaroce.conformance.tester.Packet;
import org.metaroce.conformance.tester.TesterQp;

/**
 * Section 8, congestion reaction judged from the wire: the IUT is the requester of a long WRITE
 * and the tester, as its responder, counts what the IUT keeps outstanding while it withholds or
 * delays acknowledgements. Cases choose the algorithm with the QP options of the agent extension
 * {@code cc} (12.4.2); every bound is one the requirement states, with the IUT's own first
 * window as the reference where the specification leaves the size to the implementation.
 */
final class CongestionCases {
    static final String S = RobustnessCases.CC;
    private static final int PMTU = 256;
    /** At most this many rounds of 100 ms for cc.ecn-echo-reaction to find one it can judge. */
    private static final int JUDGED_ROUNDS = 5;
    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(CongestionCases.class);

    private CongestionCases() {
    }

    private static ConformanceCase mustFeature(final String id, final String title, final String feature,
                                               final org.metaroce.conformance.suite.CaseBody body,
                                               final String... reqs) {
        return new ConformanceCase(id, S, Level.MUST, List.of(reqs), title, feature, body);
    }

    /** Posts a WRITE of {@code packets} packets of the connection's PMTU on the IUT. */
    static void longWrite(final CaseContext ctx, final Setup s, final int packets) {
        final int bytes = packets * s.t().pmtu;
        final org.metaroce.conformance.suite.Mr local = ctx.regMr(bytes, 0x5A, "LOCAL_WRITE");
        ctx.postSend(s.c(), 1, "RDMA_WRITE", local, 0, bytes, o -> {
            o.put("remote_addr", 1 << 20);
            o.put("rkey", 0x1234);
        });
    }

    /**
     * @return the PSN offsets (from the IUT's initial PSN) of the first transmissions among the
     *     request packets that arrive within {@code ms}
     */
    static Set<Integer> newOffsets(final CaseContext ctx, final TesterQp t, final int base, final long ms,
                                   final List<Packet> into) {
        final List<Packet> got = ctx.tester().collect(t::isRequest, ms);
        into.addAll(got);
        final Set<Integer> s = new HashSet<>();
        for (final Packet p : got) {
            s.add(p.psn() - base);
        }
        return s;
    }

    private static int max(final Set<Integer> s) {
        return s.stream().mapToInt(Integer::intValue).max().orElse(-1);
    }

    /**
     * Before the first ACK the IUT may send CONGESTION_WINDOW packets, and no more: the tester
     * withholds every ACK (the initial RTO of 100 ms exceeds the observation window, so nothing is
     * retransmitted either) and counts the PSNs.
     */
    private static void initialWindow(final CaseContext ctx, final String algorithm, final int window,
                                      final String reqs) {
        initialWindow(ctx, algorithm, window, reqs, false);
    }

    private static void initialWindow(final CaseContext ctx, final String algorithm, final int window,
                                      final String reqs, final boolean thenConstant) {
        final Setup s = setup(ctx, QpOptions.defaults().pmtu(PMTU).timeoutUs(100_000).ccAlgorithm(algorithm)
            .congestionWindow(window));
        final TesterQp t = s.t();
        longWrite(ctx, s, 64);
        final List<Packet> seen = new ArrayList<>();
        final Set<Integer> first = newOffsets(ctx, t, t.iutInitialPsn, 60, seen);
        check(!first.isEmpty(), "the IUT starts the WRITE", "nothing within 60 ms");
        check(max(first) < window, algorithm + ": no PSN at or beyond initial PSN + CONGESTION_WINDOW (" + window
            + ") before the first ACK [" + reqs + "]", "highest offset " + max(first) + " of " + first.size()
            + " PSNs");
        if (thenConstant) {
            // Everything acknowledged at once: the window is free again, and no larger [CC-022].
            final int top = max(first);
            final Packet trigger = seen.stream().filter(p -> p.psn() - t.iutInitialPsn == top).findFirst()
                .orElseThrow();
            ctx.tester().inject(t.ack(trigger, t.iutInitialPsn + top + 1).build());
            final Set<Integer> next = newOffsets(ctx, t, t.iutInitialPsn, 150, seen);
            next.removeAll(first);
            check(max(next) < top + 1 + window, algorithm + ": after an ACK of all " + (top + 1) + " PSNs, no new "
                + "PSN beyond the constant window of " + window + " [" + reqs + "]", "new offsets " + brief(next));
        }
    }

    /** @return up to ten members of {@code s}, sorted, for failure messages */
    static String brief(final Set<Integer> s) {
        final List<Integer> l = s.stream().sorted().toList();
        return l.size() <= 10 ? l.toString() : l.subList(0, 10) + "... (" + l.size() + ")";
    }

    static List<ConformanceCase> cases() {
        final List<ConformanceCase> l = new ArrayList<>();

        l.add(must("cc.initial-window", S, "DEFAULT with CONGESTION_WINDOW 6 sends at most 6 packets before the "
            + "first ACK", ctx -> {
                ctx.requireExtension("cc");
                initialWindow(ctx, "DEFAULT", 6, "CC-010, CC-001");
            }, "CC-010", "CC-001", "CC-008"));

        // The default algorithm with default options: no agent extension, so every IUT runs these
        // (v1.0.1; before, the default algorithm was judged only with the optional cc extension,
        // and an IUT without any congestion window passed).
        l.add(must("cc.default-initial-window", S, "a QP with default options (DEFAULT, LINK_RATE 100 Gb/s) sends "
            + "about one BDP before the first ACK, well under the first Credit of 64", ctx -> {
                // PMTU 8192: one BDP at the defaults, 100 Gb/s x BASE_RTT_INIT 10 us = 125,000 bytes,
                // is 15 packets [CC-010], while the Credit before the first ACK admits 64 [REL-019].
                final int pmtu = 8192;
                final Setup s = setup(ctx, QpOptions.defaults().pmtu(pmtu).timeoutUs(100_000));
                final TesterQp t = s.t();
                longWrite(ctx, s, 64);
                final List<Packet> seen = new ArrayList<>();
                final Set<Integer> first = newOffsets(ctx, t, t.iutInitialPsn, 60, seen);
                check(!first.isEmpty(), "the IUT starts the WRITE", "nothing within 60 ms");
                // Bound: twice the default BDP, so that an IUT configured for a link of up to
                // 200 Gb/s passes too; one without a congestion window sends all 64.
                final int bound = 2 * (125_000 / pmtu);
                check(first.size() <= bound, "at most " + bound + " packets (twice one default BDP of "
                    + (125_000 / pmtu) + ") before the first ACK [CC-010, CC-001, CC-008]", first.size()
                    + " PSNs, highest offset " + max(first));
            }, "CC-010", "CC-001", "CC-008"));

        l.add(must("cc.default-delay-reaction", S, "a QP with default options shrinks its window when ACKs report a "
            + "round trip grown by 8 ms", ctx -> {
                // As cc.delay-reaction, without the cc extension: the QP runs its default CC_ALGORITHM
                // (DEFAULT, CC-008) from its default initial window (one BDP, 30 packets of 4096
                // bytes, CC-010). Credit 32 lets a window of that size show in the control phase.
                final Setup s = setup(ctx, QpOptions.defaults().pmtu(4096).timeoutUs(100_000).retryCnt(7));
                delayReaction(ctx, s, 2048, 400, "CC-013, CC-003, CC-001, CC-008");
            }, "CC-013", "CC-003", "CC-001", "CC-008"));

        l.add(mustFeature("cc.fixed-window", "FIXED keeps the window at CONGESTION_WINDOW, before and after ACKs",
            "FIXED", ctx -> {
                ctx.requireExtension("cc");
                initialWindow(ctx, "FIXED", 5, "CC-022, CC-001", true);
            }, "CC-022", "CC-001", "CC-008"));

        l.add(must("cc.delay-reaction", S, "DEFAULT shrinks its window when ACKs report a round trip grown by 8 ms",
            ctx -> {
                ctx.requireExtension("cc");
                // The first window is the control: 16 packets, all outstanding before the first ACK.
                final int initial = 16;
                final Setup s = setup(ctx, QpOptions.defaults().pmtu(PMTU).timeoutUs(100_000).retryCnt(7)
                    .ccAlgorithm("DEFAULT").congestionWindow(initial));
                delayReaction(ctx, s, 4096, 600, "CC-013, CC-003, CC-001");
            }, "CC-013", "CC-003", "CC-001", "CC-008"));

        l.add(mustFeature("cc.ecn-echo-reaction", "DEFAULT with ECN negotiated shrinks its window when every ACK "
            + "carries ECN_ECHO and reports 8 ms of queueing", "ECN", ctx -> {
                ctx.requireExtension("cc");
                final int initial = 16;
                final Setup s = setup(ctx, QpOptions.defaults().pmtu(PMTU).timeoutUs(100_000).retryCnt(7)
                    .capabilities(QpOptions.CAP_ECN).ccAlgorithm("DEFAULT").congestionWindow(initial));
                final TesterQp t = s.t();
                // Without ECN the delay alone must shrink the window (CC-013, cc.delay-reaction); with
                // ECN negotiated, delay without marks earns the fair increase (CC-012, CC-030), so
                // only the echo can make the window fall below.
                check((t.capabilities & QpOptions.CAP_ECN) != 0, "ECN negotiated when both offer it [CM-019, CC-024]",
                    String.format("capabilities 0x%04x", t.capabilities));
                final int total = 4096;
                longWrite(ctx, s, total);
                final AckClock clock = new AckClock(ctx, t, t.iutInitialPsn).credit(32);
                // Phase A (control): prompt ACKs without ECN_ECHO, ACK Delay reporting the tester's
                // hold: q < T and no mark, the fast-increase quadrant; no ACK with q >= T is unmarked
                // later, so no host-delay estimate can absorb phase B's queue [CC-031].
                check(clock.awaitNew(2_000), "the IUT starts the WRITE", "no request packet in 2 s");
                final int controlMax = clock.run(30, 600);
                final int controlRepeats = clock.repeats();
                check(controlMax >= 2, "the IUT sends a window of packets in the control phase [CC-010]",
                    "at most " + controlMax + " outstanding");
                // Phase B: every ACK carries ECN_ECHO and is held, unreported, for a time that grows
                // by 50 us per ACK up to 8 ms: q soon far above any T (8.5.1) with a mark, the
                // decrease quadrant [CC-012, CC-030]. The ramp lets the IUT's RTT estimate follow the
                // queue (a step to 8 ms would fire every RTO armed on the old RTT, and the collapse
                // to one PMTU [CC-015] would hide whether the IUT reacts to the marks). The hold
                // stays under the 25.5 ms an IUT may retry for (CONF-014). A decrease may come only
                // once per SRTT [CC-014] and may take as little as 25 % [CC-003]: even an SRTT of
                // 15 ms (8 ms of hold plus a loaded host) leaves 12 decreases in the 190 ms before
                // the judged part, 0.75^12 = 0.03 < 1/4 (with 90 ms, loaded hosts failed to get there). An IUT that ignores the echo earns the fair
                // increase instead (q >= T unmarked, CC-012) and keeps or grows its window.
                clock.rampHold(8_000_000L, 50_000L, false).ecnEcho(true);
                clock.run(90, total);
                // The judged 100 ms must carry new data, and neither it nor the 100 ms before it may
                // hold a retransmission: a loss reaction (an RTO or probe on a loaded host, CC-015)
                // also shrinks the window, and a round in which the IUT sent nothing shows nothing,
                // so either would let an IUT that ignores the echo pass. A window that a loss
                // collapsed regrows by the fair increase (a packet per 8 ms round trip) in the clean
                // round before the judged one when the echo is ignored, and falls further when not.
                int round = 0;
                int before;
                int markedMax;
                int repeats;
                int previousRepeats = clock.repeats();
                clock.run(100, total);
                do {
                    before = clock.newPackets();
                    repeats = clock.repeats();
                    markedMax = clock.run(100, total);
                    round++;
                    final boolean judged = clock.repeats() == previousRepeats && clock.newPackets() > before;
                    previousRepeats = repeats;
                    if (judged) {
                        break;
                    }
                } while (round < JUDGED_ROUNDS);
                check(clock.newPackets() < total, "the WRITE still has data to send (the IUT is not "
                    + "application-limited)", clock.newPackets() + " of " + total + " PSNs sent");
                // One packet in flight is what a window below one packet still sends [CC-002].
                final int bound = Math.max(1, controlMax / 4);
                LOG.info("cc.ecn-echo-reaction: {} outstanding in the control phase, {} with ECN_ECHO (judged "
                    + "round {}); {} repeated PSNs in the control phase, {} in the judged round", controlMax,
                    markedMax, round, controlRepeats, clock.repeats() - repeats);
                check(clock.newPackets() > before, "the IUT sends new data while every ACK carries ECN_ECHO "
                    + "[CC-002]", "no new PSN in " + round + " rounds of 100 ms");
                check(markedMax <= bound, "outstanding packets with ECN_ECHO on every ACK (q >= T) at most a "
                    + "quarter of the control phase's " + controlMax + " (at least 1) [CC-012, CC-030, CC-003, "
                    + "CC-014, CC-001]", markedMax + " outstanding (" + (clock.newPackets() - before)
                    + " new PSNs and " + (clock.repeats() - repeats) + " repeated in the judged 100 ms, round "
                    + round + ")");
            }, "CC-012", "CC-030", "CC-003", "CC-014", "CC-001", "CC-024"));

        l.add(mustFeature("cc.receiver-credit-window", "RECEIVER_CREDIT: at most 64 packets before the first ACK, "
            + "then never beyond the granted Credit", "RECEIVER_CREDIT", ctx -> {
                ctx.requireExtension("cc");
                final Setup s = setup(ctx, QpOptions.defaults().pmtu(PMTU).timeoutUs(100_000)
                    .capabilities(QpOptions.CAP_RECEIVER_CREDIT).ccAlgorithm("RECEIVER_CREDIT"));
                final TesterQp t = s.t();
                check((t.capabilities & QpOptions.CAP_RECEIVER_CREDIT) != 0, "RECEIVER_CREDIT negotiated when both "
                    + "offer it [CM-019]", String.format("capabilities 0x%04x", t.capabilities));
                // 80 packets: 64 before the first ACK, 16 more that only the credit holds back.
                longWrite(ctx, s, 80);
                final List<Packet> seen = new ArrayList<>();
                final Set<Integer> first = newOffsets(ctx, t, t.iutInitialPsn, 60, seen);
                check(!first.isEmpty(), "the IUT starts the WRITE", "nothing");
                check(max(first) < 64, "before the first ACK at most one BDP, at most 64 packets [CC-019, REL-019]",
                    "highest offset " + max(first));
                // Everything so far delivered, then grants of 3 and 7 from a Cumulative PSN that
                // advances by one each time: the window is the credit [CC-019].
                int cum = max(first) + 1;
                final Set<Integer> sent = new HashSet<>(first);
                for (final int grant : new int[] {3, 7}) {
                    final int top = max(sent);
                    final Packet trigger = seen.stream().filter(p -> p.psn() - t.iutInitialPsn == top).findFirst()
                        .orElseThrow();
                    ctx.tester().inject(t.ack(trigger, t.iutInitialPsn + cum).credit(grant).build());
                    // 150 ms: a loaded host may take a while to act on the ACK; late is still caught.
                    final Set<Integer> after = newOffsets(ctx, t, t.iutInitialPsn, 150, seen);
                    after.removeAll(sent);
                    final int limit = cum + grant;
                    check(after.stream().allMatch(k -> k < limit), "no new PSN at or beyond Cumulative PSN + "
                        + "Credit = offset " + limit + " [REL-019, CC-019]", "new offsets " + brief(after));
                    sent.addAll(after);
                    cum = Math.min(cum + 1, max(sent) + 1);
                }
            }, "CC-019", "REL-019", "CM-019", "CC-024"));

        l.add(mustFeature("cc.sender-count", "with SENDER_COUNT the responder announces its count of requesters to "
            + "QPs connected ahead of traffic and carries it in every ACK; without it the byte stays 0", "SENDER_COUNT",
            ctx -> {
                ctx.requireExtension("cc");
                final QpOptions counted = QpOptions.defaults().capabilities(QpOptions.CAP_SENDER_COUNT);
                // A connection without the capability: its ACKs keep the byte reserved (0) [CC-038].
                final Setup plain = setup(ctx);
                final TesterQp p = plain.t();
                ctx.tester().inject(Steps.write(plain, 0, CaseContext.pattern(8, 3)).build());
                final Packet plainAck = ctx.expect(Steps.ackWithCum(p, p.sendPsn + 1), CaseContext.EXPECT_MS,
                    "an ACK of the WRITE on the QP without SENDER_COUNT");
                checkEq(0, plainAck.senderCount(), "Sender Count byte without SENDER_COUNT negotiated [CC-038]");
                // Two QPs with the capability, connected before any traffic: once the second is in
                // RTS both wait for their first request, so each peer is told n = 2 in an ACK that
                // no packet triggered (PSN = Cumulative PSN - 1) [CC-038].
                final Setup a = setup(ctx, counted);
                final Setup b = setup(ctx, counted);
                checkEq(QpOptions.CAP_SENDER_COUNT, a.t().capabilities & QpOptions.CAP_SENDER_COUNT,
                    "SENDER_COUNT in the IUT's CONNECT_REPLY when the tester proposed it [CM-019]");
                for (final Setup s : List.of(a, b)) {
                    final TesterQp t = s.t();
                    final Packet ann = ctx.expect(q -> t.fromIut(q) && q.opcode() == org.metaroce.core.wire.Opcode.ACK
                        && q.cumulativePsn() == t.sendPsn && q.senderCount() == 2, CaseContext.EXPECT_MS,
                        "an ACK announcing Sender Count 2 to QP " + t.qpn + " before any traffic [CC-038]");
                    checkEq(t.sendPsn - 1, ann.psn(), "the announcement's PSN = Cumulative PSN - 1 [CC-038]");
                }
                // A request on the first: the second still waits, and the first counts while its
                // request is within 2 x baseRTT (20 us before a sample), which a loaded IUT may
                // outlast before its ACK leaves: 1 or 2, never 0 [CC-038].
                ctx.tester().inject(Steps.write(a, 0, CaseContext.pattern(8, 4)).build());
                final Packet ack = ctx.expect(Steps.ackWithCum(a.t(), a.t().sendPsn + 1), CaseContext.EXPECT_MS,
                    "an ACK of the WRITE on the first counted QP");
                check(ack.senderCount() == 1 || ack.senderCount() == 2, "Sender Count in every ACK: the waiting QP "
                    + "and perhaps the recent sender [CC-038]", String.valueOf(ack.senderCount()));
            }, "CC-038", "CM-019"));
        return l;
    }

    /**
     * The delay-reaction judgement of cc.delay-reaction and cc.default-delay-reaction: a long WRITE
     * clocked by ACKs with Credit 32 (which keeps the tester ahead of the IUT whatever its window
     * grows to [REL-019]); a control phase of 30 ms with ACKs at once, ACK Delay reporting the
     * tester's own hold, so the IUT measures its base RTT; then every ACK 8 ms late and saying it
     * was not held: a queue of 8 ms, far above any target delay T (8.5.1), yet under the 25.5 ms an
     * IUT may retry for (CONF-014). Decreases (at least 25 % once per SRTT, CC-003/CC-013) bring
     * the window down well within the 90 ms before the judged 70 ms.
     */
    private static void delayReaction(final CaseContext ctx, final Setup s, final int total, final int controlLimit,
                                      final String ids) {
        final TesterQp t = s.t();
        longWrite(ctx, s, total);
        final AckClock clock = new AckClock(ctx, t, t.iutInitialPsn).credit(32);
        check(clock.awaitNew(2_000), "the IUT starts the WRITE", "no request packet in 2 s");
        final int controlMax = clock.run(30, controlLimit);
        check(controlMax >= 2, "the IUT sends a window of packets in the control phase [CC-010]",
            "at most " + controlMax + " outstanding");
        clock.hold(8_000_000L, false);
        clock.run(90, total);
        final int before = clock.newPackets();
        final int lateMax = clock.run(70, total);
        check(clock.newPackets() < total, "the WRITE still has data to send (the IUT is not application-limited)",
            clock.newPackets() + " of " + total + " PSNs sent");
        check(lateMax <= controlMax / 2, "outstanding packets under 8 ms of added delay at most half the control "
            + "phase's " + controlMax + " [" + ids + "]", lateMax + " outstanding ("
            + (clock.newPackets() - before) + " new PSNs in the last 70 ms)");
    }
}
