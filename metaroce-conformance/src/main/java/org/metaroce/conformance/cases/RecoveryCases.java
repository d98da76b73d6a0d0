// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.conformance.cases;

import static org.metaroce.conformance.cases.Steps.ackWithCum;
import static org.metaroce.conformance.cases.Steps.advance;
import static org.metaroce.conformance.cases.Steps.checkCounter;
import static org.metaroce.conformance.cases.Steps.checkMemory;
import static org.metaroce.conformance.cases.Steps.checkUntouched;
import static org.metaroce.conformance.cases.Steps.counterOrMissing;
import static org.metaroce.conformance.cases.Steps.must;
import static org.metaroce.conformance.cases.Steps.nack;
import static org.metaroce.conformance.cases.Steps.setup;
import static org.metaroce.conformance.cases.Steps.write;
import static org.metaroce.conformance.suite.CaseContext.EXPECT_MS;
import static org.metaroce.conformance.suite.CaseContext.QUIET_MS;
import static org.metaroce.conformance.suite.CaseContext.check;
import static org.metaroce.conformance.suite.CaseContext.checkEq;
import static org.metaroce.conformance.suite.CaseContext.pattern;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.metaroce.conformance.cases.Steps.Setup;
import org.metaroce.conformance.suite.ConformanceCase;
import org.metaroce.conformance.suite.Mr;
import org.metaroce.conformance.tester.Packet;
import org.metaroce.conformance.tester.TesterQp;
import org.metaroce.core.wire.Flags;
import org.metaroce.core.wire.NackReason;
import org.metaroce.core.wire.Opcode;

/** More of sections 2 and 6: trimming, READ recovery, credit, ports. */
final class RecoveryCases {
    static final String ENC = "2 Encapsulation";

    private RecoveryCases() {
    }

    static List<ConformanceCase> cases() {
        final List<ConformanceCase> l = new ArrayList<>();
        final byte[] data = pattern(64, 41);
        l.add(must("rel.trimmed-nack", ReliabilityCases.S, "a trimmed new request gets NACK TRIMMED at once and is "
            + "not marked received", ctx -> {
                final Setup s = setup(ctx);
                final int psn = s.t().sendPsn;
                ctx.tester().inject(write(s, 0, data).trimmed().build());
                final Packet n = ctx.expect(nack(s.t()), EXPECT_MS, "NACK TRIMMED [REL-035, WIRE-042]");
                checkEq(NackReason.TRIMMED.code(), n.nackReason(), "NACK reason [REL-035]");
                checkEq(psn, n.nackPsn(), "NACK PSN [REL-035]");
                checkEq(psn, n.cumulativePsn(), "Cumulative PSN: the trimmed PSN is not received [REL-035]");
                checkUntouched(ctx, s.mr(), 0, 64, 0, "[WIRE-042]");
                ctx.tester().inject(write(s, 0, data).build());
                advance(s.t());
                ctx.expect(ackWithCum(s.t(), psn + 1), EXPECT_MS, "an ACK of the full packet sent again");
                checkMemory(ctx, s.mr(), 0, data, "the full packet placed");
            }, "REL-035", "WIRE-042"));

        l.add(must("rel.trimmed-duplicate-ignored", ReliabilityCases.S, "a trimmed copy of a received PSN is dropped "
            + "unanswered", ctx -> {
                final Setup s = setup(ctx);
                final int psn = s.t().sendPsn;
                final byte[] full = write(s, 0, data).build();
                ctx.tester().inject(full);
                advance(s.t());
                ctx.expect(ackWithCum(s.t(), psn + 1), EXPECT_MS, "an ACK");
                final long before = counterOrMissing(ctx, "TRIMMED_IGNORED");
                ctx.tester().inject(write(s, 0, data).psn(psn).msn(s.t().msn - 1).trimmed().build());
                ctx.expectNone(nack(s.t()), QUIET_MS, "no NACK TRIMMED for a received PSN [REL-035]");
                checkCounter(ctx, "TRIMMED_IGNORED", before, 1);
            }, "REL-035", "GEN-002"));

        l.add(must("rel.credit-field", ReliabilityCases.S, "ACKs advertise a finite Credit of at least the minimum "
            + "window", ctx -> {
                final Setup s = setup(ctx);
                final int psn = s.t().sendPsn;
                ctx.tester().inject(write(s, 0, data).build());
                advance(s.t());
                final Packet a = ctx.expect(ackWithCum(s.t(), psn + 1), EXPECT_MS, "an ACK");
                final long credit = Integer.toUnsignedLong(a.credit());
                check(credit != 0xFFFF_FFFFL, "no 'unlimited' Credit from a window below 2^30 [REL-013]",
                    "0xFFFFFFFF");
                check(credit >= 64, "Credit of at least W >= 64 without RECEIVER_CREDIT [REL-001, REL-013]",
                    String.valueOf(credit));
            }, "REL-013", "REL-001"));

        l.add(must("rel.read-lost-response", ReliabilityCases.S, "a lost READ_RESPONSE is re-requested from its "
            + "offset and the READ completes", ctx -> {
                final Setup s = setup(ctx);
                final TesterQp t = s.t();
                final Mr local = ctx.regMr(4096, 0, "LOCAL_WRITE");
                final byte[] remote = pattern(3000, 77);
                ctx.postSend(s.c(), 1, "RDMA_READ", local, 0, 3000, o -> {
                    o.put("remote_addr", 1 << 16);
                    o.put("rkey", 9);
                });
                final Packet req = ctx.expect(q -> t.isRequest(q) && q.opcode() == Opcode.READ_REQUEST, EXPECT_MS,
                    "the READ_REQUEST");
                final int p = req.psn();
                for (final int j : new int[] {0, 2}) {
                    ctx.tester().inject(t.request(Opcode.READ_RESPONSE).psn(p + j).msn(req.msn())
                        .flags(j == 2 ? Flags.LAST : 0).messageOffset(j * 1024L).messageLength(3000)
                        .payload(Arrays.copyOfRange(remote, j * 1024, Math.min(3000, j * 1024 + 1024))).build());
                }
                final Packet again = ctx.expect(q -> t.isRequest(q) && q.opcode() == Opcode.READ_REQUEST
                    && q.psn() == p + 1, 2 * EXPECT_MS, "a READ_REQUEST re-requesting PSN p + 1 [REL-045, REL-046]");
                checkEq(1024L, again.messageOffset(), "Message Offset of the re-request [REL-046]");
                check(again.dmaLength() >= 1024, "DMA Length covering the lost response [REL-046]",
                    String.valueOf(again.dmaLength()));
                check(again.has(Flags.RETRANSMIT), "RETRANSMIT on the re-request [REL-046]",
                    Flags.toString(again.flags()));
                checkEq(1L << 16, again.virtualAddress(), "the original RETH Virtual Address [REL-046]");
                final int count = (int) Math.max(1, (again.dmaLength() + 1023) / 1024);
                for (int j = 1; j < 1 + count; j++) {
                    final int off = j * 1024;
                    ctx.tester().inject(t.request(Opcode.READ_RESPONSE).psn(p + j).msn(req.msn())
                        .flags((j == 2 ? Flags.LAST : 0) | Flags.RETRANSMIT).messageOffset(off).messageLength(3000)
                        .payload(Arrays.copyOfRange(remote, off, Math.min(3000, off + 1024))).build());
                }
                checkEq("SUCCESS", ReliabilityCases.sendCompletion(ctx, s, EXPECT_MS).get("status").asText(),
                    "READ status [OPS-034]");
                checkMemory(ctx, local, 0, remote, "every byte of the READ placed [OPS-022]");
            }, "REL-045", "REL-046", "OPS-022"));

        l.add(must("ops.initiator-depth", OperationCases.S, "the IUT keeps at most the negotiated Initiator Depth "
            + "(2) of READs outstanding", ctx -> {
                final org.metaroce.conformance.suite.IutConnection c = ctx.acceptFromIut(
                    org.metaroce.conformance.suite.QpOptions.defaults(), 1024, 2);
                final TesterQp t = c.tester();
                final Mr local = ctx.regMr(1024, 0, "LOCAL_WRITE");
                for (int i = 0; i < 4; i++) {
                    final int off = i * 64;
                    ctx.postSend(c, i, "RDMA_READ", local, off, 64, o -> {
                        o.put("remote_addr", 1 << 12);
                        o.put("rkey", 3);
                    });
                }
                final List<Packet> first = ctx.tester().collect(q -> t.isRequest(q)
                    && q.opcode() == Opcode.READ_REQUEST, 150);
                final long distinct = first.stream().mapToInt(Packet::psn).distinct().count();
                check(distinct >= 1 && distinct <= 2, "1 or 2 READ_REQUESTs outstanding with Initiator Depth 2 "
                    + "[OPS-024, CM-007]", distinct + " outstanding");
                int done = 0;
                final java.util.Set<Integer> answered = new java.util.HashSet<>();
                java.util.List<Packet> pending = new ArrayList<>(first);
                final long end = System.nanoTime() + 3_000_000_000L;
                while (done < 4 && System.nanoTime() < end) {
                    for (final Packet q : pending) {
                        if (answered.add(q.psn())) {
                            ctx.tester().inject(t.request(Opcode.READ_RESPONSE).psn(q.psn()).msn(q.msn())
                                .flags(Flags.LAST).messageLength(64).payload(pattern(64, q.msn())).build());
                        }
                    }
                    pending = ctx.tester().collect(q -> t.isRequest(q) && q.opcode() == Opcode.READ_REQUEST, 20);
                    final long open = pending.stream().mapToInt(Packet::psn).filter(x -> !answered.contains(x))
                        .distinct().count();
                    check(open <= 2, "never more than 2 new READ_REQUESTs outstanding [OPS-024]", open + " new");
                    done += ctx.poll(c, "send", 1, 0).size();
                }
                checkEq(4, done, "READ completions");
            }, "OPS-024", "CM-007"));

        l.add(must("rel.ack-without-ackreq", ReliabilityCases.S, "a packet with neither ACK_REQ nor LAST is still "
            + "acknowledged (coalescing delay bounded)", ctx -> {
                final Setup s = setup(ctx);
                final int psn = s.t().sendPsn;
                ctx.tester().inject(s.t().request(Opcode.WRITE).flags(0).va(s.mr().addr()).rkey(s.mr().rkey())
                    .messageLength(2 * s.t().pmtu).payload(pattern(s.t().pmtu, 1)).build());
                ctx.expect(ackWithCum(s.t(), psn + 1), EXPECT_MS, "an ACK after ACK_COALESCE_DELAY at the latest "
                    + "[REL-009]");
            }, "REL-009"));

        l.add(must("ops.rsn-conflict", OperationCases.S, "a second message claiming an already matched receive WR "
            + "gets NACK INVALID_REQUEST", ctx -> {
                final Setup s = setup(ctx);
                final TesterQp t = s.t();
                final Mr buf = ctx.regMr(4096, 0, "LOCAL_WRITE");
                ctx.postRecv(s.c(), 1, buf, 0, 4096);
                // Message A (2 packets, RSN 0): only its first packet arrives, so receive 0 is matched to A.
                ctx.tester().inject(t.request(Opcode.SEND).messageLength(2 * t.pmtu).rsn(0)
                    .payload(pattern(t.pmtu, 1)).build());
                final int psnB = t.sendPsn + 2;
                // Message B (new MSN, same RSN 0) conflicts.
                ctx.tester().inject(t.request(Opcode.SEND).psn(psnB).msn(t.msn + 1).flags(Flags.LAST).rsn(0)
                    .payload(pattern(64, 2)).build());
                final Packet n = ctx.expect(nack(t), EXPECT_MS, "NACK INVALID_REQUEST for the RSN conflict [OPS-014]");
                checkEq(NackReason.INVALID_REQUEST.code(), n.nackReason(), "NACK reason [OPS-014, OPS-042]");
                checkEq(psnB, n.nackPsn(), "NACK PSN [REL-007]");
            }, "OPS-014", "OPS-042"));

        l.add(must("rel.duplicate-response", ReliabilityCases.S, "a duplicate READ_RESPONSE is dropped and counted; "
            + "the READ completes once", ctx -> {
                final Setup s = setup(ctx);
                final TesterQp t = s.t();
                final Mr local = ctx.regMr(256, 0, "LOCAL_WRITE");
                ctx.postSend(s.c(), 1, "RDMA_READ", local, 0, 64, o -> {
                    o.put("remote_addr", 4096);
                    o.put("rkey", 5);
                });
                ctx.postSend(s.c(), 2, "RDMA_READ", local, 64, 64, o -> {
                    o.put("remote_addr", 4096);
                    o.put("rkey", 5);
                });
                final Packet r1 = ctx.expect(q -> t.isRequest(q) && q.psn() == t.iutInitialPsn, EXPECT_MS, "READ 1");
                final long before = counterOrMissing(ctx, "DUPLICATE_RESPONSE");
                final byte[] resp = t.request(Opcode.READ_RESPONSE).psn(r1.psn()).msn(r1.msn()).flags(Flags.LAST)
                    .messageLength(64).payload(pattern(64, 5)).build();
                ctx.tester().inject(resp);
                ctx.expect(q -> t.isRequest(q) && q.psn() == t.iutInitialPsn + 1, EXPECT_MS, "READ 2");
                ctx.tester().inject(resp);
                checkCounter(ctx, "DUPLICATE_RESPONSE", before, 1);
                final java.util.List<com.fasterxml.jackson.databind.JsonNode> wc = ctx.poll(s.c(), "send", 2,
                    QUIET_MS);
                checkEq(1, wc.size(), "completions: READ 1 once, READ 2 still outstanding [REL-043]");
                checkMemory(ctx, local, 0, pattern(64, 5), "READ 1 data [OPS-022]");
            }, "REL-043", "GEN-002"));

        l.add(must("rel.nack-trimmed", ReliabilityCases.S, "NACK TRIMMED makes the requester resend the packet at "
            + "once, before any timer", ctx -> {
                final Setup s = setup(ctx, org.metaroce.conformance.suite.QpOptions.defaults().timeoutUs(200_000));
                final int base = ReliabilityCases.warmUp(ctx, s);
                ReliabilityCases.iutWrite(ctx, s, 1, 64);
                final Packet p = ctx.expect(q -> s.t().isRequest(q) && q.psn() == base, EXPECT_MS, "the WRITE");
                final long at = System.nanoTime();
                ctx.tester().inject(s.t().nack(p, NackReason.TRIMMED.code()).build());
                final Packet again = ctx.expect(q -> s.t().isRequest(q) && q.psn() == base && q.has(Flags.RETRANSMIT),
                    EXPECT_MS, "the WRITE resent after NACK TRIMMED [REL-036]");
                final long ms = (again.receivedNs() - at) / 1_000_000L;
                check(ms < 100, "resent at once, well before the 200 ms timeout [REL-036]", ms + " ms");
                ctx.tester().inject(s.t().ack(again, base + 1).build());
                checkEq("SUCCESS", ReliabilityCases.sendCompletion(ctx, s, EXPECT_MS).get("status").asText(),
                    "status");
            }, "REL-036"));

        l.add(must("enc.cm-from-endpoint-port", ENC, "CM answers come from the endpoint port with Path ID 0", ctx -> {
            final long service = ctx.newServiceId();
            ctx.listen(service, org.metaroce.conformance.suite.QpOptions.defaults());
            final long tid = ctx.random().nextLong();
            ctx.tester().inject(ctx.connectRequest(service, tid, ctx.newQpn(), 1, 1024).build());
            final Packet c = ctx.expect(org.metaroce.conformance.suite.CaseContext.cm(Opcode.CONNECT_CHALLENGE, tid),
                EXPECT_MS, "CONNECT_CHALLENGE");
            checkEq(ctx.tester().target().getPort(), c.source().getPort(), "UDP source port = endpoint port "
                + "[ENC-003]");
            checkEq(0, c.pathId(), "Path ID 0 [CM-001]");
        }, "ENC-003", "CM-001"));

        l.add(must("enc.entropy-per-path", ENC, "every data packet of one Path ID comes from the same non-zero "
            + "UDP source port", ctx -> {
                final Setup s = setup(ctx);
                final TesterQp t = s.t();
                ReliabilityCases.iutWrite(ctx, s, 1, 16 * t.pmtu);
                final Map<Integer, Integer> ports = new HashMap<>();
                int seen = 0;
                while (seen < 16) {
                    final Packet p = ctx.expect(t::isRequest, EXPECT_MS, "16 WRITE packets");
                    seen++;
                    check(p.source().getPort() != 0, "non-zero entropy value [ENC-008]", "0");
                    final Integer prev = ports.putIfAbsent(p.pathId(), p.source().getPort());
                    check(prev == null || prev == p.source().getPort(), "one entropy value per Path ID [ENC-007, "
                        + "WIRE-014]", "Path ID " + p.pathId() + " from ports " + prev + " and " + p.source().getPort());
                    check(p.source().getAddress().equals(ctx.tester().target().getAddress()),
                        "packets from the IUT's address", String.valueOf(p.source()));
                }
            }, "ENC-005", "ENC-006", "ENC-007", "ENC-008", "ENC-009", "WIRE-014"));
        return l;
    }
}
