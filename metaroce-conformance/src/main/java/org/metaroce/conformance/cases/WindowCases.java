// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.conformance.cases;

import static org.metaroce.conformance.cases.Steps.ackWithCum;
import static org.metaroce.conformance.cases.Steps.advance;
import static org.metaroce.conformance.cases.Steps.checkMemory;
import static org.metaroce.conformance.cases.Steps.must;
import static org.metaroce.conformance.cases.Steps.nack;
import static org.metaroce.conformance.cases.Steps.setup;
import static org.metaroce.conformance.cases.Steps.write;
import static org.metaroce.conformance.suite.CaseContext.EXPECT_MS;
import static org.metaroce.conformance.suite.CaseContext.QUIET_MS;
import static org.metaroce.conformance.suite.CaseContext.check;
import static org.metaroce.conformance.suite.CaseContext.checkEq;
import static org.metaroce.conformance.suite.CaseContext.pattern;

import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import org.metaroce.conformance.cases.Steps.Setup;
import org.metaroce.conformance.suite.CaseContext;
import org.metaroce.conformance.suite.CaseSkipped;
import org.metaroce.conformance.suite.ConformanceCase;
import org.metaroce.conformance.suite.QpOptions;
import org.metaroce.conformance.tester.LowerTester;
import org.metaroce.conformance.tester.Packet;
import org.metaroce.conformance.tester.TesterQp;
import org.metaroce.core.wire.Flags;
import org.metaroce.core.wire.NackReason;
import org.metaroce.core.wire.Opcode;

/** Receive-window and acknowledgement rules of section 6 and the source-port rule of section 2. */
final class WindowCases {
    private WindowCases() {
    }

    /** Sends one WRITE and returns the Credit of its ACK: at most W, so a lower bound of W [REL-013]. */
    private static long creditOf(final CaseContext ctx, final Setup s) {
        final int psn = s.t().sendPsn;
        ctx.tester().inject(write(s, 0, pattern(8, 1)).build());
        advance(s.t());
        return Integer.toUnsignedLong(ctx.expect(ackWithCum(s.t(), psn + 1), EXPECT_MS, "an ACK").credit());
    }

    static List<ConformanceCase> cases() {
        final List<ConformanceCase> l = new ArrayList<>();
        l.add(must("rel.read-range", ReliabilityCases.S, "a READ whose PSN range ends beyond the window gets NACK "
            + "PSN_WINDOW; an accepted READ marks all its PSNs", ctx -> {
                final Setup s = setup(ctx, QpOptions.defaults().pmtu(256));
                final TesterQp t = s.t();
                final long credit = creditOf(ctx, s);
                final long length = 1L << 31;
                final long n = length / t.pmtu;
                if (credit >= n) {
                    throw new CaseSkipped("the IUT's window (Credit " + credit + ") covers a 2^31-byte READ");
                }
                final int x = t.sendPsn;
                // x is new (= ePSN), x + n - 1 is beyond any window below 2^23 [REL-004].
                ctx.tester().inject(t.request(Opcode.READ_REQUEST).flags(Flags.LAST).va(s.mr().addr())
                    .rkey(s.mr().rkey()).messageLength(length).dmaLength(length).build());
                final Packet no = ctx.expect(nack(t), EXPECT_MS, "NACK PSN_WINDOW [REL-004]");
                checkEq(NackReason.PSN_WINDOW.code(), no.nackReason(), "NACK reason [REL-004]");
                checkEq(x, no.nackPsn(), "NACK PSN = the READ's PSN [REL-004]");
                ctx.expectNone(p -> t.fromIut(p) && p.opcode() == Opcode.READ_RESPONSE, QUIET_MS,
                    "no READ_RESPONSE for a refused READ [REL-004]");
                // A 3-packet READ at x occupies x .. x + 2; the WRITE after it has PSN x + 3.
                ctx.writeMem(s.mr(), 0, pattern(768, 3));
                ctx.tester().inject(t.request(Opcode.READ_REQUEST).flags(Flags.LAST).va(s.mr().addr())
                    .rkey(s.mr().rkey()).messageLength(768).dmaLength(768).build());
                final Set<Integer> psns = new HashSet<>();
                while (psns.size() < 3) {
                    psns.add(ctx.expect(p -> t.fromIut(p) && p.opcode() == Opcode.READ_RESPONSE, EXPECT_MS,
                        "three READ_RESPONSEs").psn() - x);
                }
                checkEq(Set.of(0, 1, 2), psns, "READ_RESPONSE PSN offsets [REL-004, OPS-020]");
                advance(t, 3);
                ctx.tester().inject(write(s, 1024, pattern(8, 4)).build());
                advance(t);
                ctx.expect(ackWithCum(t, x + 4), EXPECT_MS, "Cumulative PSN x + 4: the READ marked x .. x + 2 "
                    + "received [REL-004]");
            }, "REL-004", "OPS-020"));

        l.add(must("rel.ack-beyond-bitmap", ReliabilityCases.S, "each packet beyond Cumulative PSN + 64 is the "
            + "trigger of an ACK of its own", ctx -> {
                final Setup s = setup(ctx);
                final TesterQp t = s.t();
                final long credit = creditOf(ctx, s);
                if (credit < 80) {
                    throw new CaseSkipped("the IUT's Credit " + credit + " does not show a window of 80 PSNs");
                }
                final int e = t.sendPsn;
                for (int i = 70; i < 73; i++) {
                    ctx.tester().inject(write(s, (i - 70) * 64, pattern(64, i)).psn(e + i).msn(t.msn + i)
                        .flags(Flags.LAST).build());
                }
                final Set<Integer> triggers = new HashSet<>();
                final long end = System.nanoTime() + EXPECT_MS * 1_000_000L;
                while (triggers.size() < 3 && System.nanoTime() < end) {
                    final Packet a = ctx.tester().poll(p -> t.fromIut(p) && p.opcode() == Opcode.ACK, 50);
                    if (a != null) {
                        checkEq(e, a.cumulativePsn(), "Cumulative PSN: the gap at ePSN stays [REL-012]");
                        triggers.add(a.psn() - e);
                    }
                }
                checkEq(Set.of(70, 71, 72), triggers, "ACK triggers: each packet beyond the bitmap [REL-010]");
                checkMemory(ctx, s.mr(), 128, pattern(64, 72), "the packets accepted");
            }, "REL-010"));

        l.add(must("rel.stale-ack-credit", ReliabilityCases.S, "Credit is taken only from an ACK that is not stale",
            ctx -> {
                final Setup s = setup(ctx, QpOptions.defaults().pmtu(256).timeoutUs(100_000));
                final TesterQp t = s.t();
                final int base = t.iutInitialPsn;
                CongestionCases.longWrite(ctx, s, 100);
                final List<Packet> first = ctx.tester().collect(t::isRequest, 60);
                check(first.size() >= 8, "the first packets of the WRITE", first.size() + " packets");
                final Packet p4 = first.stream().filter(p -> p.psn() == base + 4).findFirst().orElseThrow();
                final Packet p2 = first.stream().filter(p -> p.psn() == base + 2).findFirst().orElseThrow();
                final int top = first.stream().mapToInt(p -> p.psn() - base).max().orElse(0);
                // Current: Cumulative PSN 5 with a Credit that allows nothing beyond what was sent.
                ctx.tester().inject(t.ack(p4, base + 5).credit(Math.max(1, top + 1 - 5)).build());
                // Stale (Cumulative PSN 3 < 5), granting 1000: its credit must be ignored [REL-018].
                ctx.tester().inject(t.ack(p2, base + 3).credit(1000).build());
                final List<Packet> later = ctx.tester().collect(q -> t.isRequest(q) && !q.has(Flags.RETRANSMIT), 60);
                for (final Packet p : later) {
                    check(p.psn() - base <= top, "no new PSN from the credit of a stale ACK [REL-018, REL-019]",
                        "new PSN offset " + (p.psn() - base) + " (highest allowed " + top + ")");
                }
            }, "REL-018", "REL-019"));

        l.add(must("enc.source-port-ignored", RecoveryCases.ENC, "a request from another UDP source port is served "
            + "and answered at the peer's address", ctx -> {
                final Setup s = setup(ctx);
                final TesterQp t = s.t();
                final InetSocketAddress local = ctx.tester().localAddress();
                try (LowerTester other = new LowerTester(new InetSocketAddress(local.getAddress(), 0),
                    ctx.tester().target())) {
                    final int psn = t.sendPsn;
                    other.inject(write(s, 0, pattern(64, 8)).build());
                    advance(t);
                    ctx.expect(ackWithCum(t, psn + 1), EXPECT_MS, "the ACK at the tester's endpoint address, not the "
                        + "packet's source port [ENC-004]");
                    checkMemory(ctx, s.mr(), 0, pattern(64, 8), "the WRITE placed [ENC-004]");
                    check(other.poll(p -> true, 50) == null, "nothing sent to the other source port [ENC-004]",
                        "a packet");
                }
            }, "ENC-004", "ENC-002"));
        return l;
    }
}
