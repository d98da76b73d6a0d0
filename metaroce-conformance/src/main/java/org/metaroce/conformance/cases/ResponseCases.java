// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.conformance.cases;

import static org.metaroce.conformance.cases.Steps.checkMemory;
import static org.metaroce.conformance.cases.Steps.fromLe64;
import static org.metaroce.conformance.cases.Steps.le64;
import static org.metaroce.conformance.cases.Steps.must;
import static org.metaroce.conformance.cases.Steps.setup;
import static org.metaroce.conformance.suite.CaseContext.EXPECT_MS;
import static org.metaroce.conformance.suite.CaseContext.check;
import static org.metaroce.conformance.suite.CaseContext.checkEq;
import static org.metaroce.conformance.suite.CaseContext.pattern;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import com.fasterxml.jackson.databind.JsonNode;
import org.metaroce.conformance.cases.Steps.Setup;
import org.metaroce.conformance.suite.CaseContext;
import org.metaroce.conformance.suite.ConformanceCase;
import org.metaroce.conformance.suite.Level;
import org.metaroce.conformance.suite.Mr;
import org.metaroce.conformance.suite.QpOptions;
import org.metaroce.conformance.tester.Packet;
import org.metaroce.conformance.tester.TesterQp;
import org.metaroce.core.wire.Flags;
import org.metaroce.core.wire.Opcode;

/** Responses at the IUT's requester (sections 5 and 6): trims, lost atomic responses, segments. */
final class ResponseCases {
    private ResponseCases() {
    }

    /** A READ_RESPONSE of offset {@code j} (in PMTUs) of an {@code length}-byte READ answered from {@code remote}. */
    private static byte[] response(final TesterQp t, final Packet req, final int j, final byte[] remote,
                                   final int flags) {
        final int off = j * t.pmtu;
        final int end = Math.min(remote.length, off + t.pmtu);
        return t.request(Opcode.READ_RESPONSE).psn(req.psn() + j).msn(req.msn())
            .flags((end == remote.length ? Flags.LAST : 0) | flags).messageOffset(off).messageLength(remote.length)
            .payload(Arrays.copyOfRange(remote, off, end)).build();
    }

    static List<ConformanceCase> cases() {
        final List<ConformanceCase> l = new ArrayList<>();
        l.add(must("rel.trimmed-read-response", ReliabilityCases.S, "a trimmed READ_RESPONSE is re-requested at once; "
            + "a trimmed copy of a received one is ignored", ctx -> {
                final Setup s = setup(ctx, QpOptions.defaults().timeoutUs(200_000));
                final TesterQp t = s.t();
                final Mr local = ctx.regMr(4096, 0, "LOCAL_WRITE");
                final byte[] remote = pattern(3000, 21);
                ctx.postSend(s.c(), 1, "RDMA_READ", local, 0, 3000, o -> {
                    o.put("remote_addr", 1 << 16);
                    o.put("rkey", 9);
                });
                final Packet req = ctx.expect(q -> t.isRequest(q) && q.opcode() == Opcode.READ_REQUEST, EXPECT_MS,
                    "the READ_REQUEST");
                ctx.tester().inject(response(t, req, 0, remote, 0));
                final long at = System.nanoTime();
                ctx.tester().inject(t.request(Opcode.READ_RESPONSE).psn(req.psn() + 1).msn(req.msn())
                    .messageOffset(t.pmtu).messageLength(3000).payload(new byte[t.pmtu]).trimmed().build());
                final Packet again = ctx.expect(q -> t.isRequest(q) && q.opcode() == Opcode.READ_REQUEST
                    && q.psn() == req.psn() + 1, EXPECT_MS, "a READ_REQUEST re-requesting the trimmed response "
                    + "[REL-037, REL-046]");
                final long ms = (again.receivedNs() - at) / 1_000_000L;
                check(ms < 100, "re-requested at once, well before the 200 ms timeout [REL-037]", ms + " ms");
                checkEq((long) t.pmtu, again.messageOffset(), "Message Offset of the re-request [REL-046]");
                check(again.has(Flags.RETRANSMIT), "RETRANSMIT on the re-request [REL-046]",
                    Flags.toString(again.flags()));
                final long before = Steps.counterOrMissing(ctx, "TRIMMED_IGNORED");
                // A trimmed copy of response 0, already received, is ignored [REL-037].
                ctx.tester().inject(t.request(Opcode.READ_RESPONSE).psn(req.psn()).msn(req.msn())
                    .messageOffset(0).messageLength(3000).payload(new byte[t.pmtu]).trimmed().build());
                Steps.checkCounter(ctx, "TRIMMED_IGNORED", before, 1);
                for (int j = 1; j < 3; j++) {
                    ctx.tester().inject(response(t, req, j, remote, j == 1 ? Flags.RETRANSMIT : 0));
                }
                checkEq("SUCCESS", ReliabilityCases.sendCompletion(ctx, s, EXPECT_MS).get("status").asText(),
                    "READ status");
                checkMemory(ctx, local, 0, remote, "every byte of the READ placed");
            }, "REL-037", "REL-046", "GEN-002"));

        l.add(must("rel.atomic-response-lost", ReliabilityCases.S, "an atomic known delivered whose response is "
            + "missing is resent unchanged, with RETRANSMIT, once a later response arrived", ctx -> {
                final Setup s = setup(ctx, QpOptions.defaults().timeoutUs(200_000));
                final TesterQp t = s.t();
                final Mr local = ctx.regMr(64, 0, "LOCAL_WRITE");
                ctx.postSend(s.c(), 1, "ATOMIC_FETCH_ADD", local, 0, 8, o -> {
                    o.put("remote_addr", 1 << 12);
                    o.put("rkey", 11);
                    o.put("compare_add", 5);
                });
                ctx.postSend(s.c(), 2, "RDMA_READ", local, 16, 32, o -> {
                    o.put("remote_addr", 1 << 13);
                    o.put("rkey", 11);
                });
                final Packet atomic = ctx.expect(q -> t.isRequest(q) && q.opcode() == Opcode.FETCH_ADD, EXPECT_MS,
                    "the FETCH_ADD");
                final Packet read = ctx.expect(q -> t.isRequest(q) && q.opcode() == Opcode.READ_REQUEST, EXPECT_MS,
                    "the READ_REQUEST");
                // The atomic is known delivered (ACK with Cumulative PSN past it) and a later response
                // arrives: its response is lost [REL-045, REL-048].
                ctx.tester().inject(t.ack(atomic, atomic.psn() + 1).build());
                final long at = System.nanoTime();
                ctx.tester().inject(t.request(Opcode.READ_RESPONSE).psn(read.psn()).msn(read.msn())
                    .flags(Flags.LAST).messageLength(32).payload(pattern(32, 2)).build());
                final Packet again = ctx.expect(q -> t.isRequest(q) && q.opcode() == Opcode.FETCH_ADD, EXPECT_MS,
                    "the FETCH_ADD resent [REL-048]");
                final long ms = (again.receivedNs() - at) / 1_000_000L;
                check(ms < 100, "resent by the REL-045 rule, well before the 200 ms timeout [REL-048]", ms + " ms");
                check(again.has(Flags.RETRANSMIT), "RETRANSMIT [REL-048]", Flags.toString(again.flags()));
                checkEq(atomic.psn(), again.psn(), "PSN [REL-048]");
                checkEq(atomic.virtualAddress(), again.virtualAddress(), "Virtual Address unchanged [REL-048]");
                checkEq(atomic.rkey(), again.rkey(), "R_Key unchanged [REL-048]");
                checkEq(atomic.swapOrAdd(), again.swapOrAdd(), "Add Data unchanged [REL-048]");
                checkEq(atomic.msn(), again.msn(), "MSN unchanged [REL-048]");
                ctx.tester().inject(t.request(Opcode.ATOMIC_RESPONSE).psn(atomic.psn()).msn(atomic.msn())
                    .flags(Flags.LAST).original(77).build());
                final List<JsonNode> wc = ctx.poll(s.c(), "send", 2, EXPECT_MS);
                checkEq(2, wc.size(), "completions of the atomic and the READ");
                checkEq("SUCCESS", wc.get(0).get("status").asText(), "atomic status");
                checkEq(77L, fromLe64(ctx.readMem(local, 0, 8)), "the original value returned [OPS-028]");
            }, "REL-048", "REL-045", "OPS-028"));

        l.add(new ConformanceCase("rel.gbn-read-order", ReliabilityCases.S, Level.MUST, List.of("REL-055", "REL-046"),
            "go-back-N requester: a READ_RESPONSE after a missing one is dropped and the missing one re-requested",
            "GO_BACK_N", ctx -> {
                ctx.requireExtension("cc");
                final Setup s = setup(ctx, QpOptions.defaults().timeoutUs(200_000)
                    .capabilities(QpOptions.CAP_GO_BACK_N));
                final TesterQp t = s.t();
                check((t.capabilities & QpOptions.CAP_GO_BACK_N) != 0, "GO_BACK_N negotiated [CM-019]",
                    String.valueOf(t.capabilities));
                final Mr local = ctx.regMr(4096, 0, "LOCAL_WRITE");
                final byte[] remote = pattern(3000, 31);
                ctx.postSend(s.c(), 1, "RDMA_READ", local, 0, 3000, o -> {
                    o.put("remote_addr", 1 << 16);
                    o.put("rkey", 9);
                });
                final Packet req = ctx.expect(q -> t.isRequest(q) && q.opcode() == Opcode.READ_REQUEST, EXPECT_MS,
                    "the READ_REQUEST");
                final long before = Steps.counterOrMissing(ctx, "SEQUENCE_GAP");
                ctx.tester().inject(response(t, req, 0, remote, 0));
                ctx.tester().inject(response(t, req, 2, remote, 0));
                final Packet again = ctx.expect(q -> t.isRequest(q) && q.opcode() == Opcode.READ_REQUEST
                    && q.psn() == req.psn() + 1, EXPECT_MS, "a re-request from the first missing response [REL-055]");
                checkEq((long) t.pmtu, again.messageOffset(), "Message Offset [REL-046]");
                check(again.dmaLength() >= 3000 - t.pmtu, "DMA Length covering response 2, which was dropped "
                    + "[REL-055]", String.valueOf(again.dmaLength()));
                if (before >= 0) {
                    check(Steps.counterOrMissing(ctx, "SEQUENCE_GAP") > before, "the out-of-order response "
                        + "counted SEQUENCE_GAP [REL-055]", "unchanged");
                }
                for (int j = 1; j < 3; j++) {
                    ctx.tester().inject(response(t, req, j, remote, Flags.RETRANSMIT));
                }
                checkEq("SUCCESS", ReliabilityCases.sendCompletion(ctx, s, EXPECT_MS).get("status").asText(),
                    "READ status");
                checkMemory(ctx, local, 0, remote, "every byte of the READ placed");
            }));

        l.add(must("ops.atomic-across-qps", OperationCases.S, "FETCH_ADDs on one word from two QPs, interleaved, "
            + "are each applied exactly once", ctx -> {
                final Setup a = setup(ctx);
                final org.metaroce.conformance.suite.IutConnection cb = ctx.connect(QpOptions.defaults());
                final TesterQp tb = cb.tester();
                final TesterQp ta = a.t();
                ctx.writeMem(a.mr(), 0, le64(1000));
                final java.util.Set<Long> originals = new java.util.HashSet<>();
                for (int i = 0; i < 50; i++) {
                    for (final TesterQp t : List.of(ta, tb)) {
                        ctx.tester().inject(t.request(Opcode.FETCH_ADD).flags(Flags.LAST).messageLength(8)
                            .va(a.mr().addr()).rkey(a.mr().rkey()).swapAdd(1).build());
                        Steps.advance(t);
                    }
                    for (final TesterQp t : List.of(ta, tb)) {
                        final Packet r = ctx.expect(q -> t.fromIut(q) && q.opcode() == Opcode.ATOMIC_RESPONSE
                            && q.psn() == t.sendPsn - 1, EXPECT_MS, "the ATOMIC_RESPONSE");
                        check(originals.add(r.originalData()), "distinct original values: no two atomics saw the "
                            + "same value [OPS-027]", "original " + r.originalData() + " twice");
                    }
                }
                checkEq(1100L, fromLe64(ctx.readMem(a.mr(), 0, 8)), "the word after 100 adds of 1 [OPS-027]");
            }, "OPS-027", "OPS-028"));

        l.add(must("cc.responder-signals", CongestionCases.S, "every ACK carries the signals a requester relies on: "
            + "the echo, a plausible ACK Delay, the Echoed Path ID, a CE Count of 0 without CE marks", ctx -> {
                final Setup s = setup(ctx);
                final TesterQp t = s.t();
                for (int i = 0; i < 8; i++) {
                    final int stamp = 0x51600000 + i;
                    final int psn = t.sendPsn;
                    final long sent = System.nanoTime();
                    ctx.tester().inject(Steps.write(s, i * 64, pattern(64, i)).timestamp(stamp).pathId(i % 3).build());
                    Steps.advance(t);
                    final Packet a = ctx.expect(p -> t.fromIut(p) && p.opcode() == Opcode.ACK
                        && p.echoedTimestamp() == stamp, EXPECT_MS, "an ACK echoing the WRITE's timestamp [CC-009]");
                    checkEq(psn, a.psn(), "triggering PSN [REL-012]");
                    checkEq(i % 3, a.echoedPathId(), "Echoed Path ID [CC-009, REL-012]");
                    final long heldNs = a.receivedNs() - sent;
                    final long ackDelay = a.ackDelay();
                    check(ackDelay <= heldNs, "ACK Delay (ns) no longer than the tester saw the round trip take "
                        + "[CC-009, REL-012]", ackDelay + " ns against " + heldNs + " ns");
                    checkEq(0, a.ceCount(), "CE Count without any CE-marked packet [CC-009, ENC-016]");
                }
            }, "CC-009", "REL-012"));

        l.add(must("ops.read-segments", OperationCases.S, "a READ larger than the credit is requested in segments: "
            + "PMTU-aligned, increasing, covering the READ, each within the credit", ctx -> {
                final Setup s = setup(ctx, QpOptions.defaults().timeoutUs(200_000));
                final TesterQp t = s.t();
                final int pmtu = t.pmtu;
                // A first WRITE, acknowledged with Credit 2: from now on 2 PSNs past the cumulative point.
                ReliabilityCases.iutWrite(ctx, s, 1, 64);
                final Packet w = ctx.expect(t::isRequest, EXPECT_MS, "the WRITE");
                int cum = w.psn() + 1;
                ctx.tester().inject(t.ack(w, cum).credit(2).build());
                final int length = 10_000;
                final byte[] remote = pattern(length, 41);
                final Mr local = ctx.regMr(length, 0, "LOCAL_WRITE");
                ctx.postSend(s.c(), 2, "RDMA_READ", local, 0, length, o -> {
                    o.put("remote_addr", 1 << 20);
                    o.put("rkey", 13);
                });
                long covered = 0;
                int credit = 2;
                final long end = System.nanoTime() + 5_000_000_000L;
                while (covered < length && System.nanoTime() < end) {
                    final Packet seg = ctx.expect(q -> t.fromIut(q) && (q.opcode() == Opcode.KEEPALIVE
                        || q.opcode() == Opcode.READ_REQUEST && !q.has(Flags.RETRANSMIT)), 800,
                        "the next READ_REQUEST segment, or, while the credit blocks the READ, a KEEPALIVE after one "
                        + "RTO (at most RTO_MAX = 100 ms; the idle KEEPALIVE of CM-027 would take 1 s) [OPS-019, "
                        + "REL-019]");
                    if (seg.opcode() == Opcode.KEEPALIVE) {
                        // An IUT that does not segment waits for credit and asks for it [REL-019]: the
                        // answer grants 16, enough for the whole READ.
                        check(seg.has(Flags.ACK_REQ), "ACK_REQ on the credit KEEPALIVE [REL-019]",
                            Flags.toString(seg.flags()));
                        credit = 16;
                        ctx.tester().inject(t.ack(seg, cum).credit(credit).build());
                        continue;
                    }
                    final long o = seg.messageOffset();
                    final long d = seg.dmaLength();
                    checkEq(covered, o, "segment offset: the next uncovered byte, segments in order [OPS-019]");
                    check(o % pmtu == 0, "segment offset a multiple of the PMTU [OPS-019]", String.valueOf(o));
                    check(d > 0 && (d % pmtu == 0 || o + d == length), "segment length a multiple of the PMTU "
                        + "unless it ends the READ [OPS-019]", String.valueOf(d));
                    final int n = (int) ((d + pmtu - 1) / pmtu);
                    final int k = credit;
                    check((seg.psn() + n - 1) - cum < k, "the segment's PSN range within the Credit of " + k
                        + " [REL-019]", "PSNs " + (seg.psn() - cum) + ".." + (seg.psn() - cum + n - 1)
                        + " past the cumulative point");
                    check(seg.has(Flags.LAST) == (o + d == length), "LAST exactly on the segment ending the READ "
                        + "[OPS-020]", Flags.toString(seg.flags()));
                    for (int j = 0; j < n; j++) {
                        final int off = (int) o + j * pmtu;
                        final int e = Math.min(length, off + pmtu);
                        ctx.tester().inject(t.request(Opcode.READ_RESPONSE).psn(seg.psn() + j).msn(seg.msn())
                            .flags(e == length ? Flags.LAST : 0).messageOffset(off).messageLength(length)
                            .payload(java.util.Arrays.copyOfRange(remote, off, e)).build());
                    }
                    covered = o + d;
                    cum = seg.psn() + n;
                    ctx.tester().inject(t.ack(seg, cum).credit(credit).build());
                }
                checkEq((long) length, covered, "the segments cover the READ [OPS-019]");
                final List<JsonNode> wc = ctx.poll(s.c(), "send", 2, EXPECT_MS);
                check(wc.size() == 2 && wc.get(1).get("status").asText().equals("SUCCESS"), "the READ completes",
                    wc.toString());
                checkMemory(ctx, local, 0, remote, "every byte of the READ placed [OPS-022]");
            }, "OPS-019", "REL-019", "OPS-020"));

        l.add(new ConformanceCase("cc.receiver-credit-grant", CongestionCases.S, Level.MUST,
            List.of("CC-018", "REL-013", "REL-014"), "RECEIVER_CREDIT responder: Credit between 1 and the window, "
            + "and an ACK whenever the requester has used it up", "RECEIVER_CREDIT", ctx -> {
                ctx.requireExtension("cc");
                final Setup s = setup(ctx, QpOptions.defaults().capabilities(QpOptions.CAP_RECEIVER_CREDIT));
                final TesterQp t = s.t();
                check((t.capabilities & QpOptions.CAP_RECEIVER_CREDIT) != 0, "RECEIVER_CREDIT negotiated [CM-019]",
                    String.valueOf(t.capabilities));
                int cum = t.sendPsn;
                ctx.tester().inject(Steps.write(s, 0, pattern(8, 0)).build());
                Steps.advance(t);
                Packet a = ctx.expect(Steps.ackWithCum(t, cum + 1), EXPECT_MS, "an ACK");
                cum++;
                // Three windows, each sent exactly up to the Credit, as middle packets of one WRITE
                // (no ACK_REQ, no LAST): each time the IUT must grant more by itself [REL-014].
                // One message longer than everything sent, so that no packet sent is its last.
                final int total = (3 * 1024 + 1) * t.pmtu;
                final Mr big = ctx.regMr(total, 0, Steps.ALL_REMOTE);
                final int base = t.sendPsn;
                int k = 0;
                for (int round = 0; round < 3; round++) {
                    final long credit = Integer.toUnsignedLong(a.credit());
                    check(credit >= 1 && credit != 0xFFFF_FFFFL && credit <= (1L << 30), "Credit at least 1 and "
                        + "finite with RECEIVER_CREDIT [CC-018, REL-013]", String.valueOf(credit));
                    final int use = (int) Math.min(credit, 1024);
                    for (int i = 0; i < use; i++, k++) {
                        ctx.tester().inject(t.request(Opcode.WRITE).psn(base + k).flags(0).messageOffset((long) k
                            * t.pmtu).messageLength(total).va(big.addr()).rkey(big.rkey())
                            .payload(pattern(t.pmtu, k)).build());
                    }
                    final int target = base + k;
                    a = ctx.expect(p -> t.fromIut(p) && p.opcode() == Opcode.ACK && p.cumulativePsn() == target,
                        EXPECT_MS, "an ACK once the Credit (" + credit + ") is used up [REL-014, CC-025]");
                }
                cum = base + k;
                check(cum - base >= 3, "progress through three windows", (cum - base) + " PSNs");
            }));
        return l;
    }
}
