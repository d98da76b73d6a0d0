// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.conformance.cases;

import static org.metaroce.conformance.cases.Steps.ALL_REMOTE;
import static org.metaroce.conformance.cases.Steps.advance;
import static org.metaroce.conformance.cases.Steps.checkUntouched;
import static org.metaroce.conformance.cases.Steps.liveness;
import static org.metaroce.conformance.cases.Steps.must;
import static org.metaroce.conformance.cases.Steps.nack;
import static org.metaroce.conformance.cases.Steps.setup;

import static org.metaroce.conformance.suite.CaseContext.EXPECT_MS;
import static org.metaroce.conformance.suite.CaseContext.check;
import static org.metaroce.conformance.suite.CaseContext.checkEq;
import static org.metaroce.conformance.suite.CaseContext.pattern;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.BiFunction;

import com.fasterxml.jackson.databind.JsonNode;
import org.metaroce.conformance.cases.Steps.Setup;
import org.metaroce.conformance.suite.CaseContext;
import org.metaroce.conformance.suite.ConformanceCase;
import org.metaroce.conformance.suite.Mr;
import org.metaroce.conformance.suite.QpOptions;
import org.metaroce.conformance.tester.Packet;
import org.metaroce.conformance.tester.PacketBuilder;
import org.metaroce.core.wire.Flags;
import org.metaroce.core.wire.NackReason;
import org.metaroce.core.wire.Opcode;

/** Section 10, memory protection: every violation is NACKed, fatal, and leaves memory untouched. */
final class MemoryCases {
    static final String S = "10 Memory protection";
    private static final int FILL = 0x5A;

    private MemoryCases() {
    }

    /**
     * A violation case: a valid WRITE first (the region and QP work), then the offending request
     * built by {@code bad} against a sentinel-filled region: NACK {@code reason} with its PSN,
     * memory untouched, the responder's QP in ERR.
     */
    static ConformanceCase violation(final String id, final String title, final NackReason reason,
                                     final String[] regionAccess, final QpOptions opts,
                                     final BiFunction<Setup, Mr, PacketBuilder> bad, final String... reqs) {
        return must(id, S, title, ctx -> {
            final Setup s = setup(ctx, opts);
            final Mr target = ctx.regMr(1024, FILL, regionAccess);
            if (opts.equals(DEFAULT)) {
                liveness(ctx, s, "before the violation (the setup works)");
            }
            final int psn = s.t().sendPsn;
            ctx.tester().inject(bad.apply(s, target).build());
            final Packet n = ctx.expect(nack(s.t()), EXPECT_MS, "NACK " + reason + " [MEM-015]");
            checkEq(reason.code(), n.nackReason(), "NACK reason");
            checkEq(psn, n.nackPsn(), "NACK PSN = the offending packet's PSN [MEM-015, REL-007]");
            checkEq(psn, n.psn(), "Base Header PSN = the triggering packet's [REL-015]");
            checkUntouched(ctx, target, 0, 1024, FILL, "[MEM-015]");
            checkEq("ERR", ctx.awaitQpState(s.c(), "ERR", EXPECT_MS), "responder QP state [MEM-015, REL-007]");
        }, reqs);
    }

    private static final QpOptions DEFAULT = QpOptions.defaults();

    static PacketBuilder writeTo(final Setup s, final Mr target, final long va, final int rkey, final int length) {
        return s.t().request(Opcode.WRITE).flags(Flags.ACK_REQ | Flags.LAST).va(va).rkey(rkey)
            .payload(pattern(length, 3));
    }

    static List<ConformanceCase> cases() {
        final List<ConformanceCase> l = new ArrayList<>();
        l.add(violation("mem.bad-rkey", "a WRITE with an rkey that names no region", NackReason.REMOTE_ACCESS,
            ALL_REMOTE, DEFAULT, (s, m) -> writeTo(s, m, m.addr(), m.rkey() ^ 0x5A5A_0001, 16),
            "MEM-009", "MEM-015", "REL-007", "REL-015"));
        l.add(violation("mem.front-bound", "a WRITE starting one byte before the region", NackReason.REMOTE_ACCESS,
            ALL_REMOTE, DEFAULT, (s, m) -> writeTo(s, m, m.addr() - 1, m.rkey(), 16), "MEM-009", "MEM-010"));
        l.add(violation("mem.rear-bound", "a WRITE ending one byte after the region", NackReason.REMOTE_ACCESS,
            ALL_REMOTE, DEFAULT, (s, m) -> writeTo(s, m, m.addr() + m.length() - 15, m.rkey(), 16), "MEM-009",
            "MEM-010"));
        l.add(violation("mem.length-overflow", "a WRITE whose range wraps around 2^64", NackReason.REMOTE_ACCESS,
            ALL_REMOTE, DEFAULT, (s, m) -> writeTo(s, m, -8L, m.rkey(), 16), "MEM-010"));
        l.add(violation("mem.no-remote-write", "a WRITE into a region without REMOTE_WRITE", NackReason.REMOTE_ACCESS,
            new String[] {"LOCAL_WRITE", "REMOTE_READ"}, DEFAULT, (s, m) -> writeTo(s, m, m.addr(), m.rkey(), 16),
            "MEM-009"));
        l.add(violation("mem.no-remote-read", "a READ of a region without REMOTE_READ", NackReason.REMOTE_ACCESS,
            new String[] {"LOCAL_WRITE", "REMOTE_WRITE"}, DEFAULT, (s, m) -> s.t().request(Opcode.READ_REQUEST)
                .flags(Flags.LAST).va(m.addr()).rkey(m.rkey()).messageLength(64).dmaLength(64), "MEM-009"));
        l.add(violation("mem.no-remote-atomic", "a FETCH_ADD on a region without REMOTE_ATOMIC",
            NackReason.REMOTE_ACCESS, new String[] {"LOCAL_WRITE", "REMOTE_WRITE"}, DEFAULT,
            (s, m) -> s.t().request(Opcode.FETCH_ADD).flags(Flags.LAST).messageLength(8).va(m.addr()).rkey(m.rkey())
                .swapAdd(1), "MEM-009"));
        l.add(violation("mem.misaligned-atomic", "a FETCH_ADD at an address not a multiple of 8",
            NackReason.INVALID_REQUEST, ALL_REMOTE, DEFAULT, (s, m) -> s.t().request(Opcode.FETCH_ADD)
                .flags(Flags.LAST).messageLength(8).va(m.addr() + 4).rkey(m.rkey()).swapAdd(1), "MEM-011",
            "WIRE-037"));
        l.add(violation("mem.qp-access-write", "a WRITE to a QP whose ACCESS_FLAGS lack REMOTE_WRITE",
            NackReason.INVALID_REQUEST, ALL_REMOTE, QpOptions.defaults().access("REMOTE_READ"),
            (s, m) -> writeTo(s, m, m.addr(), m.rkey(), 16), "MEM-008"));
        l.add(violation("mem.qp-access-read", "a READ on a QP whose ACCESS_FLAGS lack REMOTE_READ",
            NackReason.INVALID_REQUEST, ALL_REMOTE, QpOptions.defaults().access("REMOTE_WRITE"),
            (s, m) -> s.t().request(Opcode.READ_REQUEST).flags(Flags.LAST).va(m.addr()).rkey(m.rkey())
                .messageLength(64).dmaLength(64), "MEM-008"));

        l.add(must("mem.deregistered", S, "a WRITE with the rkey of a deregistered region is a violation", ctx -> {
            final Setup s = setup(ctx);
            final Mr gone = ctx.regMr(1024, FILL, ALL_REMOTE);
            final Mr keep = ctx.regMr(1024, FILL, ALL_REMOTE);
            ctx.deregMr(gone);
            final int psn = s.t().sendPsn;
            ctx.tester().inject(writeTo(s, gone, gone.addr(), gone.rkey(), 16).build());
            final Packet n = ctx.expect(nack(s.t()), EXPECT_MS, "NACK REMOTE_ACCESS [MEM-005]");
            checkEq(NackReason.REMOTE_ACCESS.code(), n.nackReason(), "NACK reason [MEM-005]");
            checkEq(psn, n.nackPsn(), "NACK PSN");
            checkUntouched(ctx, keep, 0, 1024, FILL, "in the other region [MEM-015]");
        }, "MEM-005", "MEM-015"));

        l.add(must("mem.fatal-nack-replay", S, "a retransmission of the offending packet gets the same NACK again",
            ctx -> {
                final Setup s = setup(ctx);
                final byte[] bad = writeTo(s, s.mr(), s.mr().addr(), s.mr().rkey() ^ 0x0F0F_0001, 16).build();
                final int psn = s.t().sendPsn;
                ctx.tester().inject(bad);
                ctx.expect(nack(s.t()), EXPECT_MS, "NACK REMOTE_ACCESS");
                checkEq("ERR", ctx.awaitQpState(s.c(), "ERR", EXPECT_MS), "QP state");
                ctx.tester().inject(bad);
                final Packet again = ctx.expect(nack(s.t()), EXPECT_MS, "the same NACK for the retransmission "
                    + "[REL-052]");
                checkEq(NackReason.REMOTE_ACCESS.code(), again.nackReason(), "reason [REL-052]");
                checkEq(psn, again.nackPsn(), "NACK PSN [REL-052]");
            }, "REL-052"));

        l.add(must("mem.error-flush", S, "after a fatal violation every posted receive completes WR_FLUSH_ERR", ctx -> {
            final Setup s = setup(ctx);
            final Mr buf = ctx.regMr(256, 0, "LOCAL_WRITE");
            ctx.postRecv(s.c(), 1, buf, 0, 128);
            ctx.postRecv(s.c(), 2, buf, 128, 128);
            ctx.tester().inject(writeTo(s, s.mr(), s.mr().addr(), s.mr().rkey() ^ 0x3C3C_0001, 16).build());
            ctx.expect(nack(s.t()), EXPECT_MS, "NACK REMOTE_ACCESS");
            final List<JsonNode> wc = ctx.poll(s.c(), "recv", 2, EXPECT_MS);
            checkEq(2, wc.size(), "receive completions [QP-017]");
            for (final JsonNode w : wc) {
                checkEq("WR_FLUSH_ERR", w.get("status").asText(), "status of receive " + w.get("wr_id")
                    + " [QP-017, MEM-015]");
            }
            checkEq(1L, wc.get(0).get("wr_id").asLong(), "flush in post order [QP-017]");
        }, "QP-017", "MEM-015"));

        l.add(must("mem.keys-random", S, "rkeys and lkeys are non-zero, unique and not sequential", ctx -> {
            final Set<Integer> keys = new HashSet<>();
            final List<Integer> rkeys = new ArrayList<>();
            for (int i = 0; i < 8; i++) {
                final Mr m = ctx.regMr(64, 0, ALL_REMOTE);
                check(m.rkey() != 0 && m.lkey() != 0, "non-zero keys [MEM-003]", m.toString());
                check(keys.add(m.rkey()) && keys.add(m.lkey()), "unique keys in one namespace [MEM-003]",
                    "repeated key in " + m);
                rkeys.add(m.rkey());
            }
            final Set<Integer> steps = new HashSet<>();
            for (int i = 1; i < rkeys.size(); i++) {
                steps.add(rkeys.get(i) - rkeys.get(i - 1));
            }
            check(steps.size() > 1, "rkeys not derived from a counter [SEC-002, MEM-003]", "constant step "
                + steps);
        }, "MEM-003", "SEC-002"));

        l.add(must("mem.rkey-guessing", S, "a wrong rkey guess ends the connection: later guesses reach nothing", ctx -> {
            final Setup s = setup(ctx);
            final Mr target = ctx.regMr(1024, FILL, ALL_REMOTE);
            ctx.tester().inject(writeTo(s, target, target.addr(), target.rkey() + 1, 16).build());
            advance(s.t());
            for (int i = 0; i < 32; i++) {
                ctx.tester().inject(writeTo(s, target, target.addr(), i == 31 ? target.rkey() : ctx.random().nextInt(),
                    16).build());
                advance(s.t());
            }
            ctx.expect(nack(s.t()), EXPECT_MS, "NACK REMOTE_ACCESS for the first guess [MEM-015]");
            checkEq("ERR", ctx.awaitQpState(s.c(), "ERR", EXPECT_MS), "QP state after a guess [MEM-015]");
            checkUntouched(ctx, target, 0, 1024, FILL, "even by the correct key sent after a wrong guess [SEC-001]");
        }, "MEM-015", "SEC-001", "QP-011"));
        return l;
    }

}
