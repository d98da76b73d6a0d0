// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.conformance.cases;

import static org.metaroce.conformance.cases.Steps.ackWithCum;
import static org.metaroce.conformance.cases.Steps.checkMemory;
import static org.metaroce.conformance.cases.Steps.checkUntouched;
import static org.metaroce.conformance.cases.Steps.counterOrMissing;
import static org.metaroce.conformance.cases.Steps.nack;
import static org.metaroce.conformance.cases.Steps.setup;
import static org.metaroce.conformance.cases.Steps.write;
import static org.metaroce.conformance.suite.CaseContext.EXPECT_MS;
import static org.metaroce.conformance.suite.CaseContext.QUIET_MS;
import static org.metaroce.conformance.suite.CaseContext.check;
import static org.metaroce.conformance.suite.CaseContext.checkEq;
import static org.metaroce.conformance.suite.CaseContext.pattern;

import java.util.ArrayList;
import java.util.List;

import org.metaroce.conformance.cases.Steps.Setup;
import org.metaroce.conformance.suite.CaseContext;
import org.metaroce.conformance.suite.ConformanceCase;
import org.metaroce.conformance.suite.Level;
import org.metaroce.conformance.suite.QpOptions;
import org.metaroce.conformance.tester.LowerTester;
import org.metaroce.conformance.tester.Packet;
import org.metaroce.conformance.tester.TesterQp;
import org.metaroce.core.wire.Flags;
import org.metaroce.core.wire.NackReason;
import org.metaroce.core.wire.Opcode;

/** Section 6.11, the go-back-N baseline mode, for IUTs that declare GO_BACK_N. */
final class GoBackNCases {
    private GoBackNCases() {
    }

    private static ConformanceCase gbn(final String id, final String title,
                                       final org.metaroce.conformance.suite.CaseBody body, final String... reqs) {
        return new ConformanceCase(id, ReliabilityCases.S, Level.MUST, List.of(reqs), title, "GO_BACK_N", body);
    }

    /** A connection on which both sides offered GO_BACK_N, which must then be negotiated [CM-019]. */
    private static Setup gbnSetup(final CaseContext ctx, final QpOptions opts) {
        ctx.requireExtension("cc");
        final Setup s = setup(ctx, opts.capabilities(QpOptions.CAP_GO_BACK_N));
        check((s.t().capabilities & QpOptions.CAP_GO_BACK_N) != 0, "GO_BACK_N negotiated when both offer it "
            + "[CM-019]", String.format("capabilities 0x%04x", s.t().capabilities));
        return s;
    }

    static List<ConformanceCase> cases() {
        final List<ConformanceCase> l = new ArrayList<>();
        l.add(gbn("rel.gbn-responder", "go-back-N responder: an out-of-order packet is dropped and NACKed "
            + "SEQUENCE_GAP once; the gap's filling is not followed by the dropped packets", ctx -> {
                final Setup s = gbnSetup(ctx, QpOptions.defaults());
                final TesterQp t = s.t();
                final int e = t.sendPsn;
                final int m = t.msn;
                ctx.tester().inject(write(s, 0, pattern(64, 0)).build());
                ctx.expect(ackWithCum(t, e + 1), EXPECT_MS, "an ACK of the in-order WRITE");
                final long before = counterOrMissing(ctx, "SEQUENCE_GAP");
                // e + 1 is missing: e + 2 and e + 3 arrive out of order.
                final byte[] p2 = write(s, 128, pattern(64, 2)).psn(e + 2).msn(m + 2).build();
                final byte[] p3 = write(s, 192, pattern(64, 3)).psn(e + 3).msn(m + 3).build();
                ctx.tester().inject(p2);
                final Packet n = ctx.expect(nack(t), EXPECT_MS, "NACK SEQUENCE_GAP for an out-of-order packet "
                    + "[REL-053]");
                checkEq(NackReason.SEQUENCE_GAP.code(), n.nackReason(), "NACK reason [REL-053]");
                checkEq(e + 1, n.nackPsn(), "NACK PSN = ePSN [REL-053, REL-015]");
                checkEq(e + 1, n.cumulativePsn(), "Cumulative PSN [REL-012]");
                checkEq(0L, n.sackBitmap(), "SACK bitmap always 0 in go-back-N [REL-053]");
                ctx.tester().inject(p3);
                ctx.expectNone(p -> nack(t).test(p) && p.nackReason() == NackReason.SEQUENCE_GAP.code(), QUIET_MS,
                    "at most one NACK SEQUENCE_GAP per value of ePSN [REL-053]");
                if (before >= 0) {
                    // Both packets were dropped; whether the NACKed one counts too, REL-053 leaves open.
                    LowerTester.sleep(20);
                    final long delta = counterOrMissing(ctx, "SEQUENCE_GAP") - before;
                    check(delta == 1 || delta == 2, "drop counter SEQUENCE_GAP +1 or +2 [REL-053, GEN-002]",
                        "+" + delta);
                }
                checkUntouched(ctx, s.mr(), 128, 128, 0, "by the dropped out-of-order packets [REL-053]");
                ctx.tester().inject(write(s, 64, pattern(64, 1)).psn(e + 1).msn(m + 1).build());
                final Packet a = ctx.expect(p -> t.fromIut(p) && p.opcode() == Opcode.ACK
                    && p.psn() == e + 1, EXPECT_MS, "an ACK of the packet filling the gap");
                checkEq(e + 2, a.cumulativePsn(), "Cumulative PSN: e + 2 and e + 3 were not accepted [REL-053]");
                ctx.tester().inject(p2);
                ctx.tester().inject(p3);
                ctx.expect(ackWithCum(t, e + 4), EXPECT_MS, "an ACK after the go-back-N resend");
                checkMemory(ctx, s.mr(), 64, pattern(64, 1), "offset 64 placed");
                checkMemory(ctx, s.mr(), 128, pattern(64, 2), "offset 128 placed after the resend");
                checkMemory(ctx, s.mr(), 192, pattern(64, 3), "offset 192 placed after the resend");
            }, "REL-053", "REL-015", "CM-019", "CC-024"));

        l.add(gbn("rel.gbn-requester", "go-back-N requester: NACK SEQUENCE_GAP resends every packet from the "
            + "NACK PSN in order, on Path ID 0", ctx -> {
                final Setup s = gbnSetup(ctx, QpOptions.defaults().timeoutUs(100_000));
                final TesterQp t = s.t();
                final int base = t.iutInitialPsn;
                ReliabilityCases.iutWrite(ctx, s, 1, 6 * t.pmtu);
                final List<Packet> first = new ArrayList<>();
                while (first.size() < 6) {
                    first.add(ctx.expect(t::isRequest, EXPECT_MS, "the 6 packets of the WRITE"));
                }
                for (final Packet p : first) {
                    checkEq(0, p.pathId(), "Path ID of every packet in go-back-N [REL-056]");
                }
                final Packet trigger = first.stream().filter(p -> p.psn() == base + 3).findFirst().orElseThrow();
                ctx.tester().inject(t.nack(trigger, NackReason.SEQUENCE_GAP.code()).cumulativePsn(base + 2)
                    .nack(NackReason.SEQUENCE_GAP.code(), base + 2).build());
                final List<Integer> resent = new ArrayList<>();
                Packet last = trigger;
                while (resent.size() < 4) {
                    final Packet p = ctx.expect(q -> t.isRequest(q) && q.has(Flags.RETRANSMIT), EXPECT_MS,
                        "retransmissions of PSNs base + 2 .. base + 5 [REL-054]");
                    checkEq(0, p.pathId(), "Path ID of a retransmission [REL-056]");
                    resent.add(p.psn() - base);
                    last = p;
                }
                checkEq(List.of(2, 3, 4, 5), resent, "retransmitted offsets, in PSN order [REL-054]");
                ctx.tester().inject(t.ack(last, base + 6).build());
                checkEq("SUCCESS", ReliabilityCases.sendCompletion(ctx, s, EXPECT_MS).get("status").asText(),
                    "status [OPS-034]");
            }, "REL-054", "REL-056"));
        return l;
    }
}
