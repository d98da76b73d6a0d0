// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.conformance.cases;

import static org.metaroce.conformance.cases.Steps.ackWithCum;
import static org.metaroce.conformance.cases.Steps.advance;
import static org.metaroce.conformance.cases.Steps.anyAnswer;
import static org.metaroce.conformance.cases.Steps.checkCounter;
import static org.metaroce.conformance.cases.Steps.checkMemory;
import static org.metaroce.conformance.cases.Steps.checkUntouched;
import static org.metaroce.conformance.cases.Steps.counterOrMissing;
import static org.metaroce.conformance.cases.Steps.fromLe64;
import static org.metaroce.conformance.cases.Steps.le64;
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
import java.util.List;

import com.fasterxml.jackson.databind.JsonNode;
import org.metaroce.conformance.cases.Steps.Setup;
import org.metaroce.conformance.suite.CaseContext;
import org.metaroce.conformance.suite.ConformanceCase;
import org.metaroce.conformance.suite.IutConnection;
import org.metaroce.conformance.suite.Mr;
import org.metaroce.conformance.suite.QpOptions;
import org.metaroce.conformance.tester.LowerTester;
import org.metaroce.conformance.tester.Packet;
import org.metaroce.conformance.tester.TesterQp;
import org.metaroce.core.wire.AckHeader;
import org.metaroce.core.wire.Flags;
import org.metaroce.core.wire.NackReason;
import org.metaroce.core.wire.Opcode;

/** Section 6, reliability: acknowledgements, windows, duplicates, loss recovery, errors. */
final class ReliabilityCases {
    static final String S = "6 Reliability";

    private ReliabilityCases() {
    }

    /** Posts an {@code n}-packet WRITE on the IUT (PMTU of the connection) to the tester. */
    static void iutWrite(final CaseContext ctx, final Setup s, final long wrId, final int bytes) {
        final Mr local = ctx.regMr(bytes, 0, "LOCAL_WRITE");
        ctx.writeMem(local, 0, pattern(bytes, (int) wrId));
        ctx.postSend(s.c(), wrId, "RDMA_WRITE", local, 0, bytes, o -> {
            o.put("remote_addr", 1 << 20);
            o.put("rkey", 0x1234);
        });
    }

    /** Waits for the first send completion and keeps it for {@link #exactlyOne}. */
    static JsonNode sendCompletion(final CaseContext ctx, final Setup s, final long timeoutMs) {
        final List<JsonNode> wc = ctx.poll(s.c(), "send", 1, timeoutMs);
        check(!wc.isEmpty(), "a send completion within " + timeoutMs + " ms", "none");
        LAST_EXTRA.set(wc.size() - 1);
        return wc.get(0);
    }

    private static final ThreadLocal<Integer> LAST_EXTRA = ThreadLocal.withInitial(() -> 0);

    /** Fails if the WR polled by {@link #sendCompletion} completed more than once [OPS-033, OPS-037]. */
    static void exactlyOne(final CaseContext ctx, final Setup s) {
        final List<JsonNode> more = ctx.poll(s.c(), "send", 1, QUIET_MS);
        final int extra = LAST_EXTRA.get() + more.size();
        check(extra == 0, "exactly one completion for one WR [OPS-033, OPS-037]", (1 + extra) + " completions");
    }

    static ConformanceCase lossCase(final String id, final String title, final int n, final int[] lost,
                                    final boolean exactlyOnce, final String... reqs) {
        return must(id, S, title, ctx -> {
            final Setup s = setup(ctx, QpOptions.defaults().timeoutUs(50_000));
            final int base = warmUp(ctx, s);
            final int[] drops = new int[n];
            for (final int k : lost) {
                drops[k] = 1;
            }
            iutWrite(ctx, s, 1, n * s.t().pmtu);
            final SackResponder r = new SackResponder(ctx, s.t(), base, n, drops);
            check(r.run(3000, 200), "every PSN delivered after retransmission [REL-023, REL-028]",
                "missing after 3 s; arrivals " + r.arrivals.size());
            for (final int k : lost) {
                check(r.transmissions(k) >= 2, "lost PSN offset " + k + " retransmitted [REL-023]",
                    r.transmissions(k) + " transmission(s)");
            }
            final List<String> needless = r.needless();
            if (!needless.isEmpty()) {
                check(false, "no retransmission of a PSN after the IUT processed the ACK covering it (only "
                    + java.util.Arrays.toString(lost) + " were lost" + (exactlyOnce ? ", each retransmitted once" : "")
                    + ") [REL-023, REL-031]", "needless copies " + needless + "; arrivals " + r.describe()
                    + "; IUT counters " + retransmitCounters(ctx));
            }
            for (final Packet p : r.arrivals) {
                final int k = p.psn() - base;
                if (k < 0 || k >= n) {
                    continue;
                }
                final boolean first = r.arrivals.stream().filter(q -> q.psn() == p.psn()).findFirst().get() == p;
                checkEq(!first, p.has(Flags.RETRANSMIT), "RETRANSMIT flag on transmission of offset " + k
                    + " [WIRE-016]");
            }
            checkEq("SUCCESS", sendCompletion(ctx, s, EXPECT_MS).get("status").asText(), "WR status [OPS-034]");
        }, reqs);
    }

    /**
     * [REL-070] The IUT sends a SEND; the tester answers with a WRITE of its own that carries the
     * SEND's ACK in its trailer, and sends no ACK packet: the SEND completes and the WRITE is placed
     * and acknowledged. On a QP without the capability the same packet is dropped whole: the WRITE is
     * neither placed nor acknowledged, and the SEND waits until a plain ACK comes.
     */
    private static void attachedAck(final CaseContext ctx) {
        ctx.requireExtension("cc");
        final byte[] data = pattern(16, 23);
        final Mr local = ctx.regMr(64, 1, "LOCAL_WRITE");
        for (final boolean negotiated : new boolean[] {true, false}) {
            // TIMEOUT 100 ms: the SEND waits for the tester's packet; an early RTO copy is harmless but noise.
            final QpOptions opts = QpOptions.defaults().timeoutUs(100_000);
            final Setup s = setup(ctx, negotiated ? opts.capabilities(QpOptions.CAP_ATTACHED_ACK) : opts);
            final TesterQp t = s.t();
            checkEq(negotiated ? QpOptions.CAP_ATTACHED_ACK : 0, t.capabilities & QpOptions.CAP_ATTACHED_ACK,
                "ATTACHED_ACK in the IUT's CONNECT_REPLY exactly when the tester proposed it [CM-019]");
            ctx.postSend(s.c(), 1, "SEND", local, 0, 16, o -> { });
            final Packet send = ctx.expect(q -> t.isRequest(q) && q.psn() == t.iutInitialPsn, EXPECT_MS,
                "the IUT's SEND");
            final int psn = t.sendPsn;
            ctx.tester().inject(write(s, 0, data)
                .attachedAck(t.ack(send, t.iutInitialPsn + 1).credit(64).build()).build());
            if (negotiated) {
                advance(t);
                final List<JsonNode> wc = ctx.poll(s.c(), "send", 1, EXPECT_MS);
                checkEq(1, wc.size(), "the SEND completes on the ACK attached to the tester's WRITE, no ACK "
                    + "packet sent [REL-070, WIRE-071]");
                checkEq("SUCCESS", wc.get(0).get("status").asText(), "status of the SEND [REL-070]");
                // The IUT may attach its own ACK to a request of its own (a copy of the SEND): either form.
                ctx.expect(q -> t.fromIut(q) && (q.opcode() == Opcode.ACK && q.cumulativePsn() == psn + 1
                    || q.hasAttachedAck() && q.attachedCumulativePsn() == psn + 1), EXPECT_MS,
                    "an ACK of the WRITE: the request part is handled as without the trailer [REL-070]");
                checkMemory(ctx, s.mr(), 0, data, "the WRITE placed [REL-070]");
            } else {
                ctx.expectNone(q -> t.fromIut(q) && (q.opcode() == Opcode.ACK || q.opcode() == Opcode.NACK)
                    && q.cumulativePsn() == psn + 1, QUIET_MS,
                    "no ACK of the WRITE that carried ATTACHED_ACK on a QP without the capability [REL-070]");
                checkUntouched(ctx, s.mr(), 0, data.length, 0, "by a packet dropped whole [REL-070]");
                check(ctx.poll(s.c(), "send", 0, 0).isEmpty(), "the SEND still waits: the attached ACK was not "
                    + "taken [REL-070]", "a completion");
                ctx.tester().inject(t.ack(send, t.iutInitialPsn + 1).build());
                checkEq(1, ctx.poll(s.c(), "send", 1, EXPECT_MS).size(), "the SEND completes on a plain ACK");
            }
        }
    }

    /**
     * [REL-073] With DEFERRED_ACK the tester sends a one-packet WRITE with LAST but without ACK_REQ
     * and nothing after it: the IUT may hold the ACK for a request to carry, but with none to come it
     * MUST still send it by itself (by ACK_DEFER_DELAY, 250 µs). Without the capability LAST alone
     * makes the ACK immediate [REL-008]. The WRITE is placed either way.
     */
    private static void deferredAck(final CaseContext ctx) {
        ctx.requireExtension("cc");
        for (final boolean negotiated : new boolean[] {true, false}) {
            final byte[] data = pattern(16, negotiated ? 29 : 31);
            final QpOptions opts = QpOptions.defaults();
            final Setup s = setup(ctx, negotiated ? opts.capabilities(QpOptions.CAP_DEFERRED_ACK) : opts);
            final TesterQp t = s.t();
            checkEq(negotiated ? QpOptions.CAP_DEFERRED_ACK : 0, t.capabilities & QpOptions.CAP_DEFERRED_ACK,
                "DEFERRED_ACK in the IUT's CONNECT_REPLY exactly when the tester proposed it [CM-019]");
            final int psn = t.sendPsn;
            ctx.tester().inject(write(s, 0, data).flags(Flags.LAST).build());
            advance(t);
            ctx.expect(ackWithCum(t, psn + 1), EXPECT_MS, negotiated
                ? "an ACK of the WRITE sent without ACK_REQ, by itself: no request of the IUT's was coming to "
                    + "carry it [REL-073]"
                : "an ACK of the WRITE with LAST: immediate without DEFERRED_ACK [REL-008]");
            checkMemory(ctx, s.mr(), 0, data, "the WRITE placed");
        }
    }

    static List<ConformanceCase> cases() {
        final List<ConformanceCase> l = new ArrayList<>();
        final byte[] data = pattern(64, 17);

        l.add(must("rel.sack-bitmap", S, "a gap is reported at once with the Cumulative PSN and SACK bitmap, and its "
            + "filling at once", ctx -> {
                final Setup s = setup(ctx);
                final TesterQp t = s.t();
                final int psn = t.sendPsn;
                ctx.tester().inject(write(s, 0, data).build());
                ctx.tester().inject(write(s, 128, data).psn(psn + 2).msn(t.msn + 2).flags(Flags.LAST).build());
                // Both packets may be answered by one ACK whose trigger is the ACK_REQ packet [REL-010, REL-011].
                ctx.expect(p -> t.fromIut(p) && p.opcode() == Opcode.ACK && p.cumulativePsn() == psn + 1
                    && p.sackBitmap() == 1L, EXPECT_MS, "an immediate ACK with Cumulative PSN = ePSN and SACK bit 0 "
                    + "(= Cumulative PSN + 1) set [REL-008, REL-012, WIRE-060]");
                ctx.tester().inject(write(s, 64, data).psn(psn + 1).msn(t.msn + 1).flags(Flags.LAST).build());
                advance(t, 3);
                t.msn += 2;
                final Packet fill = ctx.expect(ackWithCum(t, psn + 3), EXPECT_MS,
                    "an ACK advancing over the filled gap [REL-008]");
                checkEq(0L, fill.sackBitmap(), "empty SACK bitmap after the gap is filled [REL-012]");
            }, "REL-008", "REL-012", "WIRE-060"));

        l.add(new ConformanceCase("rel.attached-ack", S, org.metaroce.conformance.suite.Level.MUST,
            List.of("REL-070", "WIRE-071", "CM-019"), "with ATTACHED_ACK an ACK riding on the tester's request "
            + "completes the IUT's SEND and the request is handled as without it; without the capability such a "
            + "packet is dropped whole", "ATTACHED_ACK", ReliabilityCases::attachedAck));

        l.add(new ConformanceCase("rel.deferred-ack", S, org.metaroce.conformance.suite.Level.MUST,
            List.of("REL-073", "REL-008", "CM-019"), "with DEFERRED_ACK a LAST packet without ACK_REQ is "
            + "still acknowledged when no request comes to carry the ACK; without it LAST alone asks",
            "DEFERRED_ACK", ReliabilityCases::deferredAck));

        l.add(must("rel.duplicate", S, "a duplicate WRITE is acknowledged with DUPLICATE and not placed again", ctx -> {
            final Setup s = setup(ctx);
            final byte[] first = write(s, 0, data).build();
            final int psn = s.t().sendPsn;
            ctx.tester().inject(first);
            advance(s.t());
            ctx.expect(ackWithCum(s.t(), psn + 1), EXPECT_MS, "an ACK of the WRITE");
            ctx.writeMem(s.mr(), 0, new byte[64]);
            ctx.tester().inject(first);
            final Packet dup = ctx.expect(p -> s.t().fromIut(p) && p.opcode() == Opcode.ACK && p.psn() == psn,
                EXPECT_MS, "an ACK of the duplicate [REL-042]");
            check((dup.ackFlags() & AckHeader.FLAG_DUPLICATE) != 0, "ACK Flags DUPLICATE [REL-042]",
                "ACK Flags " + dup.ackFlags());
            checkUntouched(ctx, s.mr(), 0, 64, 0, "by the duplicate [REL-041]");
        }, "REL-041", "REL-042"));

        l.add(must("rel.psn-beyond-window", S, "a request far beyond the receive window gets NACK PSN_WINDOW and is "
            + "not accepted", ctx -> {
                final Setup s = setup(ctx);
                final int far = s.t().sendPsn + (1 << 29);
                ctx.tester().inject(write(s, 0, data).psn(far).build());
                final Packet n = ctx.expect(nack(s.t()), EXPECT_MS, "NACK PSN_WINDOW [REL-002]");
                checkEq(NackReason.PSN_WINDOW.code(), n.nackReason(), "NACK reason [REL-003]");
                checkEq(far, n.nackPsn(), "NACK PSN = the packet's PSN [REL-003]");
                checkUntouched(ctx, s.mr(), 0, 64, 0, "[REL-006]");
                Steps.liveness(ctx, s, "after a PSN_WINDOW NACK");
            }, "REL-002", "REL-003", "REL-006"));

        l.add(must("rel.psn-out-of-range", S, "a request 2^30 beyond ePSN is dropped unanswered", ctx -> {
            final Setup s = setup(ctx);
            final long before = counterOrMissing(ctx, "PSN_OUT_OF_RANGE");
            ctx.tester().inject(write(s, 0, data).psn(s.t().sendPsn + (1 << 30) + 5).build());
            ctx.expectNone(anyAnswer(s.t()), QUIET_MS, "no answer [REL-002]");
            checkCounter(ctx, "PSN_OUT_OF_RANGE", before, 1);
            checkUntouched(ctx, s.mr(), 0, 64, 0, "[REL-002]");
        }, "REL-002", "GEN-002"));

        l.add(must("rel.psn-wrap", S, "PSNs wrap from 2^32 - 1 to 0 without loss", ctx -> {
            final IutConnection c = ctx.connect(QpOptions.defaults(), true, 0xFFFF_FFFE);
            final Setup s = new Setup(c, ctx.regMr(4096, 0, Steps.ALL_REMOTE));
            for (int i = 0; i < 4; i++) {
                ctx.tester().inject(write(s, i * 64, pattern(64, i)).build());
                advance(s.t());
            }
            ctx.expect(ackWithCum(s.t(), 2), EXPECT_MS, "Cumulative PSN 2 after PSNs FFFFFFFE..1 [REL-005]");
            for (int i = 0; i < 4; i++) {
                checkMemory(ctx, s.mr(), i * 64, pattern(64, i), "WRITE " + i + " placed");
            }
        }, "REL-002", "REL-005", "WIRE-001"));

        l.add(must("rel.read-duplicate", S, "a duplicate READ_REQUEST is executed again, reading memory again, with "
            + "RETRANSMIT set", ctx -> {
                final Setup s = setup(ctx);
                final TesterQp t = s.t();
                ctx.writeMem(s.mr(), 0, pattern(512, 1));
                final byte[] req = t.request(Opcode.READ_REQUEST).flags(Flags.LAST).va(s.mr().addr())
                    .rkey(s.mr().rkey()).messageLength(512).dmaLength(512).build();
                final int psn = t.sendPsn;
                ctx.tester().inject(req);
                advance(t);
                final Packet r1 = ctx.expect(p -> t.fromIut(p) && p.opcode() == Opcode.READ_RESPONSE, EXPECT_MS,
                    "the READ_RESPONSE");
                checkEq(psn, r1.psn(), "PSN");
                ctx.writeMem(s.mr(), 0, pattern(512, 2));
                ctx.tester().inject(req);
                final Packet r2 = ctx.expect(p -> t.fromIut(p) && p.opcode() == Opcode.READ_RESPONSE, EXPECT_MS,
                    "a READ_RESPONSE to the duplicate READ_REQUEST [REL-044]");
                check(r2.has(Flags.RETRANSMIT), "RETRANSMIT on the re-executed response [REL-044]",
                    Flags.toString(r2.flags()));
                check(Arrays.equals(r2.payload(), pattern(512, 2)), "the memory as it is now [REL-044]",
                    "stale or different bytes");
            }, "REL-044", "MEM-013"));

        l.add(must("rel.atomic-exactly-once", S, "a retransmitted FETCH_ADD is answered from the replay cache, not "
            + "executed twice", ctx -> {
                final Setup s = setup(ctx);
                final TesterQp t = s.t();
                ctx.writeMem(s.mr(), 0, le64(40));
                final byte[] req = t.request(Opcode.FETCH_ADD).flags(Flags.LAST).messageLength(8).va(s.mr().addr())
                    .rkey(s.mr().rkey()).swapAdd(2).build();
                final int psn = t.sendPsn;
                ctx.tester().inject(req);
                advance(t);
                ctx.expect(p -> t.fromIut(p) && p.opcode() == Opcode.ATOMIC_RESPONSE, EXPECT_MS, "ATOMIC_RESPONSE");
                ctx.tester().inject(req);
                final Packet again = ctx.expect(p -> t.fromIut(p) && p.opcode() == Opcode.ATOMIC_RESPONSE,
                    EXPECT_MS, "the ATOMIC_RESPONSE re-sent for the duplicate [REL-047]");
                checkEq(psn, again.psn(), "PSN");
                checkEq(40L, again.originalData(), "the retained original value [REL-047]");
                check(again.has(Flags.RETRANSMIT), "RETRANSMIT on the replayed response [REL-047]",
                    Flags.toString(again.flags()));
                checkEq(42L, fromLe64(ctx.readMem(s.mr(), 0, 8)), "target: added exactly once [REL-047]");
            }, "REL-047", "REL-041"));

        l.add(lossCase("rel.one-loss-one-retransmit", "one lost packet of eight is retransmitted exactly once, alone",
            8, new int[] {2}, true, "REL-023", "REL-031", "WIRE-016"));
        l.add(lossCase("rel.multi-gap", "three gaps: only the missing packets are retransmitted", 8,
            new int[] {1, 4, 6}, false, "REL-023", "REL-032"));
        l.add(lossCase("rel.tail-loss", "a lost last packet is recovered by probe or timeout, alone", 6,
            new int[] {5}, false, "REL-026", "REL-028"));

        l.add(must("rel.retransmit-identical", S, "a retransmission carries the same headers and payload, with "
            + "RETRANSMIT", ctx -> {
                final Setup s = setup(ctx, QpOptions.defaults().timeoutUs(50_000));
                final int base = warmUp(ctx, s);
                iutWrite(ctx, s, 1, 2 * s.t().pmtu);
                final SackResponder r = new SackResponder(ctx, s.t(), base, 2, new int[] {1, 0});
                check(r.run(3000, 50), "delivery after one loss", "incomplete");
                final List<Packet> copies = r.arrivals.stream().filter(p -> p.psn() == base).toList();
                check(copies.size() >= 2, "the lost packet sent again [REL-023]", copies.size() + " transmission(s)");
                final Packet a = copies.get(0);
                final Packet b = copies.get(1);
                checkEq(a.opcode(), b.opcode(), "opcode [REL-031]");
                checkEq(a.messageOffset(), b.messageOffset(), "Message Offset [REL-031]");
                checkEq(a.messageLength(), b.messageLength(), "Message Length [REL-031]");
                checkEq(a.msn(), b.msn(), "MSN [REL-031]");
                checkEq(a.virtualAddress(), b.virtualAddress(), "RETH [REL-031]");
                check(Arrays.equals(a.payload(), b.payload()), "the same payload [REL-031]", "different payload");
                check(b.has(Flags.RETRANSMIT), "RETRANSMIT set [WIRE-016]", Flags.toString(b.flags()));
                check(!a.has(Flags.RETRANSMIT), "no RETRANSMIT on the original [WIRE-016]", Flags.toString(a.flags()));
            }, "REL-031", "WIRE-016"));

        l.add(must("rel.lost-acks", S, "when every ACK is lost the WR still completes, exactly once", ctx -> {
            final Setup s = setup(ctx);
            final TesterQp t = s.t();
            iutWrite(ctx, s, 1, 2 * t.pmtu);
            final List<Packet> got = ctx.tester().collect(t::isRequest, 60);
            check(got.size() >= 2, "both packets sent", got.size() + " packets");
            final Packet probe = ctx.expect(p -> t.isRequest(p) && p.has(Flags.RETRANSMIT), EXPECT_MS,
                "a probe or timeout retransmission while no ACK arrives [REL-026, REL-028]");
            ctx.tester().inject(t.ack(probe, t.iutInitialPsn + 2).ackFlags(AckHeader.FLAG_DUPLICATE).build());
            checkEq("SUCCESS", sendCompletion(ctx, s, EXPECT_MS).get("status").asText(), "status [OPS-034]");
            exactlyOne(ctx, s);
        }, "REL-026", "REL-028", "REL-017"));

        l.add(must("rel.retry-exhausted", S, "with no ACK at all the WR fails RETRY_EXC_ERR and the QP enters ERR",
            ctx -> {
                final Setup s = setup(ctx, QpOptions.defaults().retryCnt(2).timeoutUs(1000).retryTimeoutMs(0));
                iutWrite(ctx, s, 1, 256);
                final JsonNode wc = sendCompletion(ctx, s, 3000);
                checkEq("RETRY_EXC_ERR", wc.get("status").asText(), "status [REL-029]");
                checkEq("ERR", ctx.awaitQpState(s.c(), "ERR", EXPECT_MS), "QP state [REL-029]");
            }, "REL-029", "QP-009"));

        l.add(must("rel.retry-timeout", S, "with RETRY_TIMEOUT 600 ms and no ACK at all the WR fails RETRY_EXC_ERR "
            + "once both the retry count and the 600 ms are spent, not after the count alone", ctx -> {
                final Setup s = setup(ctx, QpOptions.defaults().retryCnt(2).timeoutUs(1000).retryTimeoutMs(600));
                final long start = System.nanoTime();
                iutWrite(ctx, s, 1, 256);
                final JsonNode wc = sendCompletion(ctx, s, 3000);
                final long ms = (System.nanoTime() - start) / 1_000_000L;
                checkEq("RETRY_EXC_ERR", wc.get("status").asText(), "status [REL-029]");
                // The budget runs from the first transmission, which follows the post.
                check(ms >= 590, "no RETRY_EXC_ERR before RETRY_TIMEOUT although RETRY_CNT = 2 ran out after a few "
                    + "milliseconds [REL-060]", "after " + ms + " ms");
                check(ms <= 600 + 100 + 1000, "RETRY_EXC_ERR within RETRY_TIMEOUT + RTO_MAX (+1 s of tolerance) "
                    + "[REL-029, REL-060]", "after " + ms + " ms");
                checkEq("ERR", ctx.awaitQpState(s.c(), "ERR", EXPECT_MS), "QP state [REL-029]");
            }, "REL-060", "REL-029"));

        l.add(must("rel.blackhole-recovery", S, "after 40 ms of total loss the transfer resumes and completes", ctx -> {
            final Setup s = setup(ctx);
            iutWrite(ctx, s, 1, 4 * s.t().pmtu);
            LowerTester.sleep(40);
            ctx.tester().clearBacklog();
            final SackResponder r = new SackResponder(ctx, s.t(), s.t().iutInitialPsn, 4, new int[4]);
            check(r.run(3000, 0), "every PSN delivered once the path works again [REL-028]", "incomplete");
            checkEq("SUCCESS", sendCompletion(ctx, s, EXPECT_MS).get("status").asText(), "status [REL-022]");
        }, "REL-022", "REL-028"));

        l.add(must("rel.nack-remote-access", S, "NACK REMOTE_ACCESS completes the WR REM_ACCESS_ERR and flushes the "
            + "rest", ctx -> nackCase(ctx, NackReason.REMOTE_ACCESS.code(), "REM_ACCESS_ERR"),
            "REL-049", "REL-051", "MEM-016"));
        l.add(must("rel.nack-invalid-request", S, "NACK INVALID_REQUEST completes the WR REM_INV_REQ_ERR",
            ctx -> nackCase(ctx, NackReason.INVALID_REQUEST.code(), "REM_INV_REQ_ERR"), "REL-049", "REL-051"));
        l.add(must("rel.nack-remote-operation", S, "NACK REMOTE_OPERATION completes the WR REM_OP_ERR",
            ctx -> nackCase(ctx, NackReason.REMOTE_OPERATION.code(), "REM_OP_ERR"), "REL-049", "REL-051"));

        l.add(must("rel.nack-unknown-reason", S, "a NACK with an unknown reason is no error; its ACK part counts",
            ctx -> {
                final Setup s = setup(ctx);
                iutWrite(ctx, s, 1, 64);
                final Packet p = ctx.expect(s.t()::isRequest, EXPECT_MS, "the WRITE");
                ctx.tester().inject(s.t().nack(p, 0x2A).cumulativePsn(p.psn() + 1).build());
                checkEq("SUCCESS", sendCompletion(ctx, s, EXPECT_MS).get("status").asText(),
                    "status: the embedded ACK delivers the WRITE [WIRE-064]");
            }, "WIRE-064", "REL-049"));

        l.add(must("rel.rnr-retry", S, "after NACK RNR the requester waits the RNR delay, then succeeds", ctx -> {
            final Setup s = setup(ctx, QpOptions.defaults().timeoutUs(50_000));
            final int base = warmUp(ctx, s);
            final Mr local = ctx.regMr(64, 1, "LOCAL_WRITE");
            ctx.postSend(s.c(), 1, "SEND", local, 0, 32, o -> { });
            final Packet p = ctx.expect(q -> s.t().isRequest(q) && q.psn() == base, EXPECT_MS, "the SEND");
            final long nackAt = System.nanoTime();
            ctx.tester().inject(s.t().nack(p, NackReason.RNR.code()).rnrTimer(100).build());
            // A KEEPALIVE fence: copies that arrive before its answer may have been decided before
            // the IUT read the NACK (a probe crossing it) and prove nothing [CONF-014].
            ctx.tester().inject(org.metaroce.conformance.tester.PacketBuilder.of(Opcode.KEEPALIVE)
                .destQpn(s.t().iutQpn).srcQpn(s.t().qpn).flags(Flags.ACK_REQ).psn(s.t().sendPsn)
                .timestamp(0x5EED0001).build());
            final Packet fence = ctx.expect(q -> s.t().fromIut(q) && q.opcode() == Opcode.ACK
                && q.echoedTimestamp() == 0x5EED0001, EXPECT_MS, "an answer to the KEEPALIVE [CM-028]");
            final Packet again = ctx.expect(q -> s.t().isRequest(q) && q.psn() == p.psn()
                && q.receivedNs() > fence.receivedNs(), EXPECT_MS, "the SEND retried after the RNR delay [REL-039]");
            final long waitedUs = (again.receivedNs() - nackAt) / 1000;
            check(waitedUs >= 1000, "no retry before the RNR Timer (100 x 10 us) [REL-039, GEN-004]",
                "retried after " + waitedUs + " us");
            ctx.tester().inject(s.t().ack(again, p.psn() + 1).build());
            checkEq("SUCCESS", sendCompletion(ctx, s, EXPECT_MS).get("status").asText(),
                "status: RNR is not an error [REL-039]");
        }, "REL-039", "GEN-004"));

        l.add(must("rel.rnr-exhausted", S, "RNR_RETRY 1 runs out: the WR fails RNR_RETRY_EXC_ERR", ctx -> {
            final Setup s = setup(ctx, QpOptions.defaults().rnrRetry(1));
            final Mr local = ctx.regMr(64, 1, "LOCAL_WRITE");
            ctx.postSend(s.c(), 1, "SEND", local, 0, 32, o -> { });
            final long end = System.nanoTime() + 3_000_000_000L;
            while (System.nanoTime() < end) {
                final Packet p = ctx.tester().poll(s.t()::isRequest, 100);
                if (p != null) {
                    ctx.tester().inject(s.t().nack(p, NackReason.RNR.code()).rnrTimer(1).build());
                }
                final List<JsonNode> wc = ctx.poll(s.c(), "send", 1, 0);
                if (!wc.isEmpty()) {
                    checkEq("RNR_RETRY_EXC_ERR", wc.get(0).get("status").asText(), "status [REL-040]");
                    return;
                }
            }
            check(false, "RNR_RETRY_EXC_ERR after RNR_RETRY + 1 episodes [REL-040]", "no completion in 3 s");
        }, "REL-040"));

        l.add(must("rel.ack-for-unsent-psn", S, "an ACK beyond the next PSN is ignored and changes nothing", ctx -> {
            final Setup s = setup(ctx);
            final long before = counterOrMissing(ctx, "ACK_FOR_UNSENT_PSN");
            iutWrite(ctx, s, 1, 64);
            final Packet p = ctx.expect(s.t()::isRequest, EXPECT_MS, "the WRITE");
            ctx.tester().inject(s.t().ack(p, p.psn() + 100).build());
            // The WRITE stays unacknowledged meanwhile: less than the retry budget [CONF-014].
            final List<JsonNode> early = ctx.poll(s.c(), "send", 1, CaseContext.RETRYING_QUIET_MS);
            check(early.isEmpty(), "no completion from an ACK for unsent PSNs [WIRE-062]", early.toString());
            checkCounter(ctx, "ACK_FOR_UNSENT_PSN", before, 1);
            ctx.tester().inject(s.t().ack(p, p.psn() + 1).build());
            checkEq("SUCCESS", sendCompletion(ctx, s, EXPECT_MS).get("status").asText(), "status after a valid ACK");
        }, "WIRE-062", "REL-016"));
        return l;
    }

    /** @return the IUT's retransmission counters by cause, for failure messages */
    static String retransmitCounters(final CaseContext ctx) {
        final StringBuilder sb = new StringBuilder();
        ctx.counters().forEach((k, v) -> {
            if (k.startsWith("RETRANSMITS_") || k.equals("TIMEOUTS") || k.equals("SPURIOUS_RETRANSMITS")) {
                sb.append(k).append('=').append(v).append(' ');
            }
        });
        return sb.toString().trim();
    }

    /**
     * Runs one loss-free 2-packet WRITE first, so that both ends have warmed up and the IUT has RTT
     * samples: the loss cases then judge retransmission decisions, not start-up delays.
     *
     * @return the PSN the next WRITE starts at
     */
    static int warmUp(final CaseContext ctx, final Setup s) {
        iutWrite(ctx, s, 100, 2 * s.t().pmtu);
        final SackResponder warm = new SackResponder(ctx, s.t(), s.t().iutInitialPsn, 2, new int[2]);
        check(warm.run(3000, 0), "a loss-free WRITE delivered (warm-up)", "incomplete");
        checkEq("SUCCESS", sendCompletion(ctx, s, EXPECT_MS).get("status").asText(), "warm-up WRITE status");
        return s.t().iutInitialPsn + 2;
    }

    private static void nackCase(final CaseContext ctx, final int reason, final String status) {
        final Setup s = setup(ctx);
        iutWrite(ctx, s, 1, 64);
        // The second WR is unsignaled: its flush completion is due all the same [QP-017, OPS-037].
        final Mr local = ctx.regMr(64, 0, "LOCAL_WRITE");
        ctx.postSend(s.c(), 2, "RDMA_WRITE", local, 0, 64, o -> {
            o.putArray("flags");
            o.put("remote_addr", 1 << 20);
            o.put("rkey", 0x1234);
        });
        final Packet p = ctx.expect(q -> s.t().isRequest(q) && q.psn() == s.t().iutInitialPsn, EXPECT_MS,
            "the first WRITE");
        ctx.tester().inject(s.t().nack(p, reason).build());
        final List<JsonNode> wc = ctx.poll(s.c(), "send", 2, EXPECT_MS);
        checkEq(2, wc.size(), "completions of both WRs [REL-051]");
        checkEq(status, wc.get(0).get("status").asText(), "status of the NACKed WR [REL-049]");
        checkEq("WR_FLUSH_ERR", wc.get(1).get("status").asText(), "status of the later WR [REL-051]");
        checkEq("ERR", ctx.awaitQpState(s.c(), "ERR", EXPECT_MS), "QP state [REL-049]");
    }
}
