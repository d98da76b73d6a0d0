// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.conformance.cases;

import static org.metaroce.conformance.cases.Steps.must;
import static org.metaroce.conformance.cases.Steps.setup;
import static org.metaroce.conformance.suite.CaseContext.EXPECT_MS;
import static org.metaroce.conformance.suite.CaseContext.QUIET_MS;
import static org.metaroce.conformance.suite.CaseContext.check;
import static org.metaroce.conformance.suite.CaseContext.checkEq;
import static org.metaroce.conformance.suite.CaseContext.pattern;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import com.fasterxml.jackson.databind.JsonNode;
import org.metaroce.conformance.agent.AgentException;
import org.metaroce.conformance.cases.Steps.Setup;
import org.metaroce.conformance.suite.CaseContext;
import org.metaroce.conformance.suite.ConformanceCase;
import org.metaroce.conformance.suite.Mr;
import org.metaroce.conformance.suite.QpOptions;
import org.metaroce.conformance.tester.Packet;
import org.metaroce.conformance.tester.TesterQp;
import org.metaroce.core.wire.Flags;
import org.metaroce.core.wire.NackReason;
import org.metaroce.core.wire.Opcode;

/** Verbs-level rules visible through the agent and the wire (sections 5, 6 and 10). */
final class VerbsCases {
    private VerbsCases() {
    }

    /** Posts a 64-byte WRITE with the given flags. */
    private static void postWrite(final CaseContext ctx, final Setup s, final long wrId, final Mr local,
                                  final String... flags) {
        ctx.postSend(s.c(), wrId, "RDMA_WRITE", local, 0, 64, o -> {
            final com.fasterxml.jackson.databind.node.ArrayNode f = o.putArray("flags");
            for (final String x : flags) {
                f.add(x);
            }
            o.put("remote_addr", 1 << 20);
            o.put("rkey", 0x1234);
        });
    }

    /** Expects {@code n} request packets of the IUT and acknowledges them all with one ACK. */
    private static List<Packet> ackAll(final CaseContext ctx, final TesterQp t, final int n) {
        final List<Packet> got = new ArrayList<>();
        while (got.size() < n) {
            got.add(ctx.expect(p -> t.isRequest(p) && !p.has(Flags.RETRANSMIT), EXPECT_MS, n + " request packets"));
        }
        ctx.tester().inject(t.ack(got.get(n - 1), t.iutInitialPsn + n).build());
        return got;
    }

    private static void expectFailure(final CaseContext ctx, final String what, final Runnable op) {
        try {
            op.run();
        } catch (final AgentException ex) {
            check(AgentException.FAILED.equals(ex.code()) || AgentException.BAD_REQUEST.equals(ex.code()),
                what + " refused (FAILED or BAD_REQUEST) [MEM-007]", ex.code() + ": " + ex.getMessage());
            return;
        }
        check(false, what + " refused [MEM-007]", "accepted");
    }

    static List<ConformanceCase> cases() {
        final List<ConformanceCase> l = new ArrayList<>();
        l.add(must("ops.unsignaled", OperationCases.S, "an unsignaled successful WR generates no completion; the "
            + "signaled one after it does", ctx -> {
                final Setup s = setup(ctx, QpOptions.defaults().timeoutUs(100_000));
                final Mr local = ctx.regMr(64, 3, "LOCAL_WRITE");
                postWrite(ctx, s, 1, local);
                postWrite(ctx, s, 2, local, "SIGNALED");
                ackAll(ctx, s.t(), 2);
                final List<JsonNode> wc = ctx.poll(s.c(), "send", 2, QUIET_MS);
                checkEq(1, wc.size(), "send completions: only the signaled WR [OPS-037]");
                checkEq(2L, wc.get(0).get("wr_id").asLong(), "wr_id of the completion [OPS-037]");
                checkEq("SUCCESS", wc.get(0).get("status").asText(), "status [OPS-034]");
            }, "OPS-037", "OPS-034"));

        l.add(must("ops.inline", OperationCases.S, "INLINE changes nothing on the wire", ctx -> {
            final Setup s = setup(ctx, QpOptions.defaults().timeoutUs(100_000));
            final Mr local = ctx.regMr(64, 0, "LOCAL_WRITE");
            ctx.writeMem(local, 0, pattern(64, 4));
            postWrite(ctx, s, 1, local, "SIGNALED", "INLINE");
            postWrite(ctx, s, 2, local, "SIGNALED");
            final List<Packet> p = ackAll(ctx, s.t(), 2);
            final Packet a = p.get(0);
            final Packet b = p.get(1);
            checkEq(b.opcode(), a.opcode(), "opcode [OPS-041]");
            checkEq(b.flags(), a.flags(), "flags [OPS-041]");
            checkEq(b.messageLength(), a.messageLength(), "Message Length [OPS-041]");
            checkEq(b.virtualAddress(), a.virtualAddress(), "RETH Virtual Address [OPS-041]");
            checkEq(b.rkey(), a.rkey(), "RETH R_Key [OPS-041]");
            check(Arrays.equals(a.payload(), b.payload()), "the same payload [OPS-041]", Steps.hexShort(a.payload()));
            final List<JsonNode> wc = ctx.poll(s.c(), "send", 2, EXPECT_MS);
            checkEq(2, wc.size(), "completions");
        }, "OPS-041"));

        l.add(must("mem.keys-unique", MemoryCases.S, "no rkey or lkey is issued twice while live", ctx -> {
            final Set<Integer> rkeys = new HashSet<>();
            final Set<Integer> lkeys = new HashSet<>();
            final List<Mr> live = new ArrayList<>();
            for (int i = 0; i < 64; i++) {
                final Mr mr = ctx.regMr(64, 0, "LOCAL_WRITE", "REMOTE_WRITE");
                check(rkeys.add(mr.rkey()), "a fresh rkey for every live region [MEM-004]",
                    String.format("0x%08x again", mr.rkey()));
                check(lkeys.add(mr.lkey()), "a fresh lkey for every live region [MEM-004]",
                    String.format("0x%08x again", mr.lkey()));
                live.add(mr);
            }
            for (int i = 0; i < 32; i++) {
                ctx.deregMr(live.get(i));
                rkeys.remove(live.get(i).rkey());
                lkeys.remove(live.get(i).lkey());
            }
            for (int i = 0; i < 32; i++) {
                final Mr mr = ctx.regMr(64, 0, "LOCAL_WRITE", "REMOTE_WRITE");
                check(rkeys.add(mr.rkey()), "no rkey of a live region issued again [MEM-004]",
                    String.format("0x%08x again", mr.rkey()));
                check(lkeys.add(mr.lkey()), "no lkey of a live region issued again [MEM-004]",
                    String.format("0x%08x again", mr.lkey()));
            }
        }, "MEM-004"));

        l.add(must("mem.reg-needs-local-write", MemoryCases.S, "registering REMOTE_WRITE or REMOTE_ATOMIC without "
            + "LOCAL_WRITE fails", ctx -> {
                expectFailure(ctx, "REMOTE_WRITE without LOCAL_WRITE", () -> ctx.regMr(64, 0, "REMOTE_WRITE"));
                expectFailure(ctx, "REMOTE_ATOMIC without LOCAL_WRITE", () -> ctx.regMr(64, 0, "REMOTE_ATOMIC"));
                ctx.regMr(64, 0, "REMOTE_READ");
            }, "MEM-007"));

        l.add(must("ops.recv-deregistered", OperationCases.S, "a SEND into a receive buffer deregistered after "
            + "posting: NACK REMOTE_OPERATION, LOC_PROT_ERR, QP in ERR", ctx -> {
                final Setup s = setup(ctx);
                final TesterQp t = s.t();
                final Mr buf = ctx.regMr(256, 0x33, "LOCAL_WRITE");
                ctx.postRecv(s.c(), 7, buf, 0, 256);
                ctx.deregMr(buf);
                final int psn = t.sendPsn;
                ctx.tester().inject(t.request(Opcode.SEND).flags(Flags.LAST | Flags.ACK_REQ).payload(pattern(32, 1))
                    .build());
                final Packet n = ctx.expect(Steps.nack(t), EXPECT_MS, "NACK REMOTE_OPERATION [OPS-015]");
                checkEq(NackReason.REMOTE_OPERATION.code(), n.nackReason(), "NACK reason [OPS-015]");
                checkEq(psn, n.nackPsn(), "NACK PSN [REL-015]");
                final List<JsonNode> wc = ctx.poll(s.c(), "recv", 1, EXPECT_MS);
                check(!wc.isEmpty(), "a receive completion [OPS-015]", "none");
                checkEq("LOC_PROT_ERR", wc.get(0).get("status").asText(), "receive status [OPS-015, MEM-014]");
                checkEq("ERR", ctx.awaitQpState(s.c(), "ERR", EXPECT_MS), "QP state [OPS-015]");
            }, "OPS-015", "MEM-014", "REL-015", "QP-020"));

        l.add(must("rel.local-protection", ReliabilityCases.S, "a READ response for a destination deregistered "
            + "meanwhile: LOC_PROT_ERR, QP in ERR", ctx -> {
                final Setup s = setup(ctx, QpOptions.defaults().timeoutUs(100_000));
                final TesterQp t = s.t();
                final Mr dst = ctx.regMr(256, 0x44, "LOCAL_WRITE");
                ctx.postSend(s.c(), 5, "RDMA_READ", dst, 0, 64, o -> {
                    o.put("remote_addr", 1 << 16);
                    o.put("rkey", 7);
                });
                final Packet req = ctx.expect(q -> t.isRequest(q) && q.opcode() == Opcode.READ_REQUEST, EXPECT_MS,
                    "the READ_REQUEST");
                ctx.deregMr(dst);
                ctx.tester().inject(t.request(Opcode.READ_RESPONSE).psn(req.psn()).msn(req.msn()).flags(Flags.LAST)
                    .messageLength(64).payload(pattern(64, 6)).build());
                final List<JsonNode> wc = ctx.poll(s.c(), "send", 1, EXPECT_MS);
                check(!wc.isEmpty(), "a completion of the READ [REL-050]", "none");
                check(wc.get(0).get("status").asText().equals("LOC_PROT_ERR")
                    || wc.get(0).get("status").asText().equals("LOC_QP_OP_ERR"), "status LOC_PROT_ERR or "
                    + "LOC_QP_OP_ERR [REL-050, MEM-014]", wc.get(0).get("status").asText());
                checkEq("ERR", ctx.awaitQpState(s.c(), "ERR", EXPECT_MS), "QP state [REL-050]");
            }, "REL-050", "MEM-014", "QP-020"));
        return l;
    }
}
