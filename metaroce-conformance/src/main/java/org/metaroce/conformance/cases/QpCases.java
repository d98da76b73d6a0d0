// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.conformance.cases;

import static org.metaroce.conformance.cases.Steps.ackWithCum;
import static org.metaroce.conformance.cases.Steps.advance;
import static org.metaroce.conformance.cases.Steps.anyAnswer;
import static org.metaroce.conformance.cases.Steps.checkCounter;
import static org.metaroce.conformance.cases.Steps.checkUntouched;
import static org.metaroce.conformance.cases.Steps.counterOrMissing;
import static org.metaroce.conformance.cases.Steps.liveness;
import static org.metaroce.conformance.cases.Steps.must;
import static org.metaroce.conformance.cases.Steps.setup;
import static org.metaroce.conformance.cases.Steps.write;
import static org.metaroce.conformance.suite.CaseContext.EXPECT_MS;
import static org.metaroce.conformance.suite.CaseContext.QUIET_MS;
import static org.metaroce.conformance.suite.CaseContext.check;
import static org.metaroce.conformance.suite.CaseContext.checkEq;
import static org.metaroce.conformance.suite.CaseContext.pattern;

import java.util.ArrayList;
import java.util.List;

import com.fasterxml.jackson.databind.JsonNode;
import org.metaroce.conformance.cases.Steps.Setup;
import org.metaroce.conformance.suite.CaseContext;
import org.metaroce.conformance.suite.ConformanceCase;
import org.metaroce.conformance.suite.IutConnection;
import org.metaroce.conformance.suite.Mr;
import org.metaroce.conformance.suite.QpOptions;
import org.metaroce.conformance.tester.TesterQp;
import org.metaroce.core.wire.Opcode;

/** Section 4, queue pairs: demultiplexing, peer checks, per-state acceptance. */
final class QpCases {
    static final String S = "4 Queue pairs";

    private QpCases() {
    }

    /** A packet that QP-level validation drops: silence, the counter, memory untouched, the QP alive. */
    static ConformanceCase dropped(final String id, final String title, final String counter,
                                   final java.util.function.Function<Setup, byte[]> bad, final String... reqs) {
        return must(id, S, title, ctx -> {
            final Setup s = setup(ctx);
            final long before = counterOrMissing(ctx, counter);
            ctx.tester().inject(bad.apply(s));
            ctx.expectNone(anyAnswer(s.t()), QUIET_MS, "no answer [QP-024, QP-025]");
            checkCounter(ctx, counter, before, 1);
            checkUntouched(ctx, s.mr(), 0, 2048, 0, "[QP-023]");
            liveness(ctx, s, "after the drop");
        }, reqs);
    }

    static List<ConformanceCase> cases() {
        final List<ConformanceCase> l = new ArrayList<>();
        final byte[] data = pattern(64, 31);
        l.add(dropped("qp.unknown-qpn", "a packet for a QPN with no live QP is dropped unanswered", "UNKNOWN_QPN",
            s -> write(s, 0, data).destQpn(s.t().iutQpn ^ 0x800001).build(), "QP-024", "QP-023", "SEC-006"));
        l.add(dropped("qp.qpn0-data", "a data opcode addressed to QPN 0 is dropped unanswered", "UNKNOWN_QPN",
            s -> write(s, 0, data).destQpn(0).build(), "QP-024", "WIRE-010"));
        l.add(dropped("qp.peer-mismatch", "a packet from the wrong source QPN is dropped unanswered", "PEER_MISMATCH",
            s -> write(s, 0, data).srcQpn(s.t().qpn ^ 0x400001).build(), "QP-025", "SEC-004",
            // A correct Integrity Check does not make the packet authentic [SEC-011].
            "SEC-011"));
        l.add(dropped("qp.oversize-pmtu", "a payload above the QP's PMTU (1024) is dropped", "OVERSIZE",
            s -> write(s, 0, pattern(2048, 1)).build(), "QP-026"));

        l.add(must("qp.rtr-accepts-requests", S, "a QP in RTR (READY_TO_USE lost) accepts data, which establishes it",
            ctx -> {
                final IutConnection c = ctx.connect(QpOptions.defaults(), false, ctx.random().nextInt());
                final Setup s = new Setup(c, ctx.regMr(4096, 0, Steps.ALL_REMOTE));
                final int psn = s.t().sendPsn;
                ctx.tester().inject(write(s, 0, data).build());
                advance(s.t());
                ctx.expect(ackWithCum(s.t(), psn + 1), EXPECT_MS, "an ACK from the QP in RTR [CM-014, QP-013]");
                Steps.checkMemory(ctx, s.mr(), 0, data, "data placed in RTR [CM-014]");
                checkEq("RTS", ctx.awaitQpState(c, "RTS", EXPECT_MS), "QP state after COMM_EST [CM-013]");
            }, "CM-013", "CM-014", "QP-013"));

        l.add(must("qp.err-drops-requests", S, "after a disconnect the QP drops requests unanswered", ctx -> {
            final Setup s = setup(ctx);
            final TesterQp t = s.t();
            ctx.tester().inject(t.cm(Opcode.DISCONNECT_REQUEST).build());
            ctx.expect(p -> t.fromIut(p) && p.opcode() == Opcode.DISCONNECT_REPLY, EXPECT_MS, "DISCONNECT_REPLY");
            ctx.tester().inject(write(s, 0, data).build());
            ctx.expectNone(p -> t.fromIut(p) && p.opcode() != Opcode.DISCONNECT_REPLY, QUIET_MS,
                "no answer from a QP in ERR [QP-011, CM-034]");
            checkUntouched(ctx, s.mr(), 0, 64, 0, "[QP-011]");
        }, "QP-011", "CM-034"));

        l.add(must("qp.post-in-err", S, "a send WR posted to a QP in ERR completes WR_FLUSH_ERR and sends nothing",
            ctx -> {
                final Setup s = setup(ctx);
                final TesterQp t = s.t();
                ctx.tester().inject(t.cm(Opcode.DISCONNECT_REQUEST).build());
                ctx.expect(p -> t.fromIut(p) && p.opcode() == Opcode.DISCONNECT_REPLY, EXPECT_MS, "DISCONNECT_REPLY");
                checkEq("ERR", ctx.awaitQpState(s.c(), "ERR", EXPECT_MS), "QP state [CM-031]");
                final Mr local = ctx.regMr(64, 1, "LOCAL_WRITE");
                ctx.postSend(s.c(), 5, "RDMA_WRITE", local, 0, 16, o -> {
                    o.put("remote_addr", 4096);
                    o.put("rkey", 1);
                });
                final List<JsonNode> wc = ctx.poll(s.c(), "send", 1, EXPECT_MS);
                check(!wc.isEmpty(), "a completion [QP-018]", "none");
                checkEq("WR_FLUSH_ERR", wc.get(0).get("status").asText(), "status [QP-018]");
                ctx.expectNone(t::isRequest, QUIET_MS, "no request on the wire [QP-018]");
            }, "QP-018", "QP-015"));

        l.add(must("qp.isolation", S, "a fatal error on one QP leaves another QP of the same IUT working", ctx -> {
            final Setup a = setup(ctx);
            final Setup b = setup(ctx);
            ctx.tester().inject(MemoryCases.writeTo(a, a.mr(), a.mr().addr(), a.mr().rkey() ^ 0x7777_0001, 16)
                .build());
            ctx.expect(Steps.nack(a.t()), EXPECT_MS, "NACK REMOTE_ACCESS on the first QP");
            checkEq("RTS", ctx.qpState(b.c()), "the other QP's state [SEC-010]");
            liveness(ctx, b, "on the other QP [SEC-010]");
        }, "SEC-010", "GEN-006"));
        return l;
    }

}
