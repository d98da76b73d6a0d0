// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.conformance.cases;

import static org.metaroce.conformance.cases.Steps.anyAnswer;
import static org.metaroce.conformance.cases.Steps.liveness;
import static org.metaroce.conformance.cases.Steps.must;
import static org.metaroce.conformance.cases.Steps.setup;
import static org.metaroce.conformance.cases.Steps.write;
import static org.metaroce.conformance.suite.CaseContext.EXPECT_MS;
import static org.metaroce.conformance.suite.CaseContext.check;
import static org.metaroce.conformance.suite.CaseContext.checkEq;
import static org.metaroce.conformance.suite.CaseContext.pattern;

import java.util.ArrayList;
import java.util.List;

import com.fasterxml.jackson.databind.JsonNode;
import org.metaroce.conformance.cases.Steps.Setup;
import org.metaroce.conformance.suite.CaseContext;
import org.metaroce.conformance.suite.ConformanceCase;
import org.metaroce.conformance.tester.LowerTester;
import org.metaroce.conformance.tester.Packet;
import org.metaroce.conformance.tester.PacketBuilder;
import org.metaroce.conformance.tester.TesterQp;
import org.metaroce.core.wire.Opcode;

/** Robustness and security (sections 1.7, 8 and 11): hostile input, floods, spoofing. */
final class RobustnessCases {
    static final String S = "11 Security and robustness";
    static final String CC = "8 Congestion control";

    private RobustnessCases() {
    }

    static List<ConformanceCase> cases() {
        final List<ConformanceCase> l = new ArrayList<>();
        l.add(must("robust.fuzz-then-live", S, "500 seeded mutations of valid packets leave the IUT serving its QPs",
            ctx -> {
                final Setup victim = setup(ctx);
                final Setup other = setup(ctx);
                final byte[] base = write(victim, 0, pattern(64, 1)).build();
                for (int i = 0; i < 500; i++) {
                    final byte[] m = base.clone();
                    final int flips = 1 + ctx.random().nextInt(4);
                    for (int f = 0; f < flips; f++) {
                        // Header bytes only: the payload is opaque and would be accepted unchanged.
                        m[ctx.random().nextInt(Opcode.WRITE.headerLength())] ^= (byte) (1 << ctx.random().nextInt(8));
                    }
                    if (ctx.random().nextBoolean()) {
                        PacketBuilder.reseal(m);
                    }
                    ctx.tester().inject(ctx.random().nextInt(8) == 0 ? java.util.Arrays.copyOf(m,
                        ctx.random().nextInt(m.length)) : m);
                }
                LowerTester.sleep(50);
                liveness(ctx, other, "on an unrelated QP after the fuzzing [GEN-006, SEC-010]");
                checkEq("RTS", ctx.qpState(other.c()), "the unrelated QP's state [SEC-010]");
            }, "GEN-006", "SEC-010", "WIRE-050"));

        l.add(must("robust.unknown-qpn-flood", S, "5000 packets to unknown QPNs get no answer at all", ctx -> {
            final Setup s = setup(ctx);
            for (int i = 0; i < 5000; i++) {
                final int qpn = 1 + ctx.random().nextInt(0xFF_FFFE);
                if (qpn == s.t().iutQpn) {
                    continue;
                }
                ctx.tester().inject(write(s, 0, pattern(8, i)).destQpn(qpn).build());
            }
            // Any data-path packet at all: the flood must not provoke a single one.
            final List<Packet> answers = ctx.tester().collect(p -> p.opcode() == null
                || !p.opcode().isConnectionManagement() && p.opcode() != Opcode.KEEPALIVE, 300);
            checkEq(0, answers.size(), "answers to packets for unknown QPNs [QP-024, SEC-006]");
            liveness(ctx, s, "after the flood [GEN-006]");
        }, "QP-024", "SEC-006", "GEN-006"));

        l.add(must("robust.window-flood", S, "a flood beyond the receive window is answered at most once per packet",
            ctx -> {
                final Setup s = setup(ctx);
                final int n = 2000;
                for (int i = 0; i < n; i++) {
                    ctx.tester().inject(write(s, 0, pattern(16, i)).psn(s.t().sendPsn + (1 << 29) + i).build());
                }
                final List<Packet> answers = ctx.tester().collect(anyAnswer(s.t()), 300);
                check(answers.size() <= n, "at most one NACK PSN_WINDOW per packet [REL-003, SEC-007]",
                    answers.size() + " answers to " + n + " packets");
                Steps.checkUntouched(ctx, s.mr(), 0, 64, 0, "[REL-006]");
                liveness(ctx, s, "after the flood [GEN-006]");
            }, "REL-003", "SEC-007", "GEN-006"));

        l.add(must("robust.bogus-sack", S, "a SACK bitmap acknowledging unsent PSNs is ignored", ctx -> {
            final Setup s = setup(ctx);
            final TesterQp t = s.t();
            ReliabilityCases.iutWrite(ctx, s, 1, 2 * t.pmtu);
            final Packet a = ctx.expect(q -> t.isRequest(q) && q.psn() == t.iutInitialPsn, EXPECT_MS, "packet 0");
            ctx.expect(q -> t.isRequest(q) && q.psn() == t.iutInitialPsn + 1, EXPECT_MS, "packet 1");
            ctx.tester().inject(t.ack(a, t.iutInitialPsn).sack(1L | (1L << 40)).build());
            // Packet 0 stays unacknowledged meanwhile: less than the retry budget [CONF-014].
            final List<JsonNode> early = ctx.poll(s.c(), "send", 1, CaseContext.RETRYING_QUIET_MS);
            check(early.isEmpty(), "no completion from a bogus SACK [WIRE-062]", early.toString());
            ctx.tester().inject(t.ack(a, t.iutInitialPsn + 2).build());
            final List<JsonNode> wc = ctx.poll(s.c(), "send", 1, EXPECT_MS);
            check(!wc.isEmpty() && wc.get(0).get("status").asText().equals("SUCCESS"),
                "SUCCESS after a valid ACK [WIRE-062]", wc.toString());
        }, "WIRE-062", "REL-016"));

        l.add(must("sec.spoofed-handshakes", S, "200 spoofed first requests and forged cookies allocate nothing",
            ctx -> {
                final long service = ctx.newServiceId();
                ctx.listen(service, org.metaroce.conformance.suite.QpOptions.defaults());
                int challenges = 0;
                final java.util.Set<Long> tids = new java.util.HashSet<>();
                for (int i = 0; i < 200; i++) {
                    final long tid = ctx.random().nextLong();
                    tids.add(tid);
                    final byte[] cookie = new byte[20];
                    if (i % 2 == 1) {
                        for (int k = 0; k < 20; k++) {
                            cookie[k] = (byte) ctx.random().nextInt(256);
                        }
                    }
                    ctx.tester().inject(ctx.connectRequest(service, tid, ctx.newQpn(), i, 1024).cookie(cookie)
                        .build());
                }
                final List<Packet> answers = ctx.tester().collect(p -> p.wellFormed() && p.opcode() != null
                    && p.opcode().isConnectionManagement() && tids.contains(p.transactionId()), 300);
                for (final Packet p : answers) {
                    check(p.opcode() == Opcode.CONNECT_CHALLENGE, "only CONNECT_CHALLENGE answers [CM-011, SEC-005]",
                        p.toString());
                    challenges++;
                }
                check(challenges <= 200, "at most one answer per request [SEC-005]", challenges + " answers");
                ConnectionCases.noAcceptedConnection(ctx, service, "from unverified handshakes [CM-011, SEC-008]");
            }, "CM-011", "SEC-005", "SEC-008"));

        l.add(must("cc.cnp-ignored", CC, "a requester not running DCQCN ignores CNPs", ctx -> {
            final Setup s = setup(ctx);
            final TesterQp t = s.t();
            final long before = Steps.counterOrMissing(ctx, "CNP_IGNORED");
            ctx.tester().inject(PacketBuilder.of(Opcode.CNP).destQpn(t.iutQpn).srcQpn(t.qpn).psn(t.sendPsn).build());
            Steps.checkCounter(ctx, "CNP_IGNORED", before, 1);
            ReliabilityCases.iutWrite(ctx, s, 1, 64);
            final Packet p = ctx.expect(t::isRequest, EXPECT_MS, "the WRITE after the CNP [CC-007]");
            ctx.tester().inject(t.ack(p, p.psn() + 1).build());
            checkEq("SUCCESS", ReliabilityCases.sendCompletion(ctx, s, EXPECT_MS).get("status").asText(),
                "status [CC-007]");
        }, "CC-007"));

        l.add(must("cc.initial-credit", CC, "before the first ACK the requester sends at most 64 new PSNs", ctx -> {
            final Setup s = setup(ctx, org.metaroce.conformance.suite.QpOptions.defaults().pmtu(256)
                .timeoutUs(100_000));
            final TesterQp t = s.t();
            ReliabilityCases.iutWrite(ctx, s, 1, 100 * 256);
            final List<Packet> sent = ctx.tester().collect(t::isRequest, 50);
            final java.util.Set<Integer> distinct = new java.util.HashSet<>();
            for (final Packet p : sent) {
                distinct.add(p.psn() - t.iutInitialPsn);
            }
            final int max = distinct.stream().mapToInt(Integer::intValue).max().orElse(-1);
            check(max < 64, "no PSN at or beyond initial PSN + 64 before the first ACK [REL-019, CC-001]",
                "highest offset " + max + " of " + distinct.size() + " PSNs");
            check(!distinct.isEmpty(), "some packets sent", "none");
        }, "REL-019", "CC-001"));

        l.add(must("cc.credit-honoured", CC, "after an ACK granting Credit 2 the requester keeps within it", ctx -> {
            final Setup s = setup(ctx, org.metaroce.conformance.suite.QpOptions.defaults().pmtu(256)
                .timeoutUs(100_000));
            final TesterQp t = s.t();
            ReliabilityCases.iutWrite(ctx, s, 1, 64 * 256);
            final List<Packet> first = ctx.tester().collect(t::isRequest, 50);
            check(!first.isEmpty(), "packets of the WRITE", "none");
            final Packet p0 = first.stream().filter(p -> p.psn() == t.iutInitialPsn).findFirst().orElseThrow();
            ctx.tester().inject(t.ack(p0, t.iutInitialPsn + 1).credit(2).build());
            ReliabilityCases.iutWrite(ctx, s, 2, 8 * 256);
            final List<Packet> later = ctx.tester().collect(q -> t.isRequest(q) && !q.has(
                org.metaroce.core.wire.Flags.RETRANSMIT), 50);
            for (final Packet p : later) {
                final int off = p.psn() - t.iutInitialPsn;
                // Cumulative PSN + Credit = initial + 3: the second WRITE (offsets 64..) must wait.
                check(off < 64, "no new PSN beyond Cumulative PSN + Credit [REL-019]", "new PSN at offset " + off);
            }
        }, "REL-019"));

        l.add(must("rel.credit-probes-unanswered", ReliabilityCases.S, "a requester blocked by credit whose probes "
            + "are answered only for PSNs it never sent ends the connection with RETRY_EXC_ERR", ctx -> {
                // RETRY_TIMEOUT 0: RETRY_CNT alone decides [REL-060]; TIMEOUT 10 ms: with the RTO
                // backoff capped at RTO_MAX the ninth probe is due about 650 ms into the block.
                final Setup s = setup(ctx, org.metaroce.conformance.suite.QpOptions.defaults().timeoutUs(10_000)
                    .retryTimeoutMs(0));
                final TesterQp t = s.t();
                ReliabilityCases.iutWrite(ctx, s, 1, 64);
                final Packet p0 = ctx.expect(t::isRequest, EXPECT_MS, "the first WRITE");
                // Everything acknowledged, and no room for more [REL-019].
                ctx.tester().inject(t.ack(p0, p0.psn() + 1).credit(0).build());
                checkEq("SUCCESS", ReliabilityCases.sendCompletion(ctx, s, EXPECT_MS).get("status").asText(),
                    "status of the first WRITE [OPS-034]");
                ReliabilityCases.iutWrite(ctx, s, 2, 64);
                int probes = 0;
                int requests = 0;
                final long end = System.nanoTime() + 5_000_000_000L;
                List<JsonNode> wc = List.of();
                while (System.nanoTime() < end && wc.isEmpty()) {
                    final Packet p = ctx.tester().poll(q -> t.fromIut(q)
                        && (q.opcode() == Opcode.KEEPALIVE || t.isRequest(q)), 20);
                    if (p != null && p.opcode() == Opcode.KEEPALIVE) {
                        probes++;
                        // The answer a responder whose expected PSN ran ahead would send: it
                        // acknowledges PSNs the requester never sent, which it must drop [REL-016].
                        ctx.tester().inject(t.ack(p, p.psn() + 5).build());
                    } else if (p != null) {
                        requests++;
                    }
                    wc = ctx.poll(s.c(), "send", 1, 0);
                }
                checkEq(0, requests, "request packets past Cumulative PSN + Credit 0 [REL-019]");
                check(!wc.isEmpty(), "the blocked WR ends within 5 s [REL-067]",
                    probes + " credit probes answered for unsent PSNs, no completion");
                checkEq("RETRY_EXC_ERR", wc.get(0).get("status").asText(), "status, as REL-029 [REL-067]");
                check(probes >= 8, "at least RETRY_CNT + 1 = 8 unanswered probes before the end [REL-067]",
                    probes + " probes");
                checkEq("ERR", ctx.awaitQpState(s.c(), "ERR", EXPECT_MS), "QP state [REL-067]");
            }, "REL-067", "REL-019", "REL-016"));

        l.add(must("rel.ack-contradicts-earlier-sack", ReliabilityCases.S, "an ACK that lacks a PSN the responder "
            + "had reported received, triggered by a later request, ends the connection with BAD_RESP_ERR", ctx -> {
                // TIMEOUT 100 ms: with the 1 ms default an RTO could fire while the agent posts the
                // later WRs and leave a conforming window at one packet [CC-015, CC-001].
                final Setup s = setup(ctx, org.metaroce.conformance.suite.QpOptions.defaults().timeoutUs(100_000));
                final TesterQp t = s.t();
                final org.metaroce.conformance.suite.Mr local = ctx.regMr(64, 1, "LOCAL_WRITE");
                for (int i = 1; i <= 3; i++) {
                    ctx.postSend(s.c(), i, "RDMA_WRITE", local, 0, 16, o -> {
                        o.put("remote_addr", 4096);
                        o.put("rkey", 99);
                    });
                }
                final Packet p0 = ctx.expect(t::isRequest, EXPECT_MS, "the first WRITE");
                final Packet p2 = ctx.expect(q -> t.isRequest(q) && q.psn() == p0.psn() + 2, EXPECT_MS,
                    "the third WRITE");
                // Answered 40 ms late, the ACK gives the IUT its one RTT sample, SRTT about 40 ms,
                // so its tail probes wait PTO = 2 x SRTT, about 80 ms, and still go out below its RTO
                // (RTO_MAX) [REL-026, REL-027]. With the sample of a prompt answer (well under a
                // millisecond) a probe resent the fourth WRITE before the ACK below reached the IUT
                // whenever the tester was 3 ms slow: its echo then named a copy that was not the
                // latest, which proves nothing, and the IUT rightly applied it (a CI failure).
                LowerTester.sleep(40);
                // The first received, the second missing, the third reported received by SACK [REL-017].
                ctx.tester().inject(t.ack(p2, p0.psn() + 1).sack(1L).build());
                // The first WRITE's completion shows the IUT has taken the third's PSN as received.
                final JsonNode first = ReliabilityCases.sendCompletion(ctx, s, EXPECT_MS);
                checkEq("SUCCESS", first.get("status").asText(), "status of the first WRITE [OPS-034]");
                // A request posted now leaves after that: the ACK it triggers carries the responder's
                // state from after its report, and lacking the third's PSN contradicts it [REL-068].
                ctx.postSend(s.c(), 4, "RDMA_WRITE", local, 0, 16, o -> {
                    o.put("remote_addr", 4096);
                    o.put("rkey", 99);
                });
                final Packet p3 = ctx.expect(q -> t.isRequest(q) && q.psn() == p0.psn() + 3, EXPECT_MS,
                    "the fourth WRITE (copies of the second are not answered)");
                ctx.tester().inject(t.ack(p3, p0.psn() + 2).sack(1L).build());
                final List<JsonNode> wc = ctx.poll(s.c(), "send", 3, EXPECT_MS);
                check(!wc.isEmpty(), "the outstanding WRs complete [REL-068]", "no completion");
                checkEq("BAD_RESP_ERR", wc.get(0).get("status").asText(),
                    "status of the oldest outstanding WR, the second WRITE [REL-068]");
                checkEq("ERR", ctx.awaitQpState(s.c(), "ERR", EXPECT_MS), "QP state [REL-068]");
            }, "REL-068", "REL-017", "REL-051"));
        return l;
    }
}
