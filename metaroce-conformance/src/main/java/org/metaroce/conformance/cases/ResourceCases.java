// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.conformance.cases;

import static org.metaroce.conformance.cases.Steps.advance;
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
import java.util.Arrays;
import java.util.List;

import org.metaroce.conformance.cases.Steps.Setup;
import org.metaroce.conformance.suite.CaseContext;
import org.metaroce.conformance.suite.ConformanceCase;
import org.metaroce.conformance.suite.QpOptions;
import org.metaroce.conformance.tester.LowerTester;
import org.metaroce.conformance.tester.Packet;
import org.metaroce.conformance.tester.PacketBuilder;
import org.metaroce.conformance.tester.TesterQp;
import org.metaroce.core.wire.Flags;
import org.metaroce.core.wire.Opcode;

/** Bounded responder resources and bounded memory under floods (sections 1, 5, 6 and 11). */
final class ResourceCases {
    /** Generous bound on the IUT's memory growth from a 30 000-packet flood (about 500 B a packet). */
    static final long FLOOD_GROWTH_BOUND = 16L << 20;

    private ResourceCases() {
    }

    /** A READ_REQUEST of 64 bytes at {@code offset} with PSN {@code psn} and MSN {@code msn}. */
    private static byte[] read(final Setup s, final int psn, final int msn, final int offset) {
        return s.t().request(Opcode.READ_REQUEST).psn(psn).msn(msn).flags(Flags.LAST).va(s.mr().addr() + offset)
            .rkey(s.mr().rkey()).messageLength(64).dmaLength(64).build();
    }

    static List<ConformanceCase> cases() {
        final List<ConformanceCase> l = new ArrayList<>();
        l.add(must("ops.responder-busy", OperationCases.S, "READs held behind a gap: at least Responder Resources "
            + "are kept; any beyond what the IUT holds are dropped unaccepted and served when resent", ctx -> {
                final Setup s = setup(ctx, QpOptions.defaults().depths(16, 4));
                final TesterQp t = s.t();
                final int rr = t.responderResources;
                final int n = 16;
                final int e = t.sendPsn;
                final int m = t.msn;
                final byte[] contents = pattern(n * 64, 5);
                ctx.writeMem(s.mr(), 0, contents);
                final long before = counterOrMissing(ctx, "RESPONDER_BUSY");
                // PSN e is missing: READs e + 1 .. e + 16 wait for it [OPS-029]; the IUT must hold at
                // least its Responder Resources of them and may drop the rest [OPS-024].
                for (int i = 1; i <= n; i++) {
                    ctx.tester().inject(read(s, e + i, m + i, (i - 1) * 64));
                }
                ctx.expectNone(p -> t.fromIut(p) && p.opcode() == Opcode.READ_RESPONSE, QUIET_MS,
                    "no READ_RESPONSE while an earlier PSN is missing [OPS-029]");
                // The WRITE at e fills the gap; the first READ reads what it wrote [OPS-029].
                final byte[] fresh = pattern(64, 9);
                System.arraycopy(fresh, 0, contents, 0, 64);
                ctx.tester().inject(write(s, 0, fresh).psn(e).msn(m).build());
                final List<Packet> answers = new ArrayList<>();
                answers.add(ctx.expect(p -> t.fromIut(p) && p.opcode() == Opcode.READ_RESPONSE, EXPECT_MS,
                    "READ_RESPONSEs once the gap is filled [OPS-029]"));
                answers.addAll(ctx.tester().collect(p -> t.fromIut(p) && p.opcode() == Opcode.READ_RESPONSE,
                    QUIET_MS));
                final java.util.TreeSet<Integer> served = new java.util.TreeSet<>();
                for (final Packet p : answers) {
                    final int i = p.psn() - e;
                    check(i >= 1 && i <= n, "READ_RESPONSEs only for the READs", "PSN offset " + i);
                    check(Arrays.equals(Arrays.copyOfRange(contents, (i - 1) * 64, i * 64), p.payload()),
                        "READ " + i + " returns the memory after the earlier WRITE [OPS-029]",
                        Steps.hexShort(p.payload()));
                    served.add(i);
                }
                final int k = served.size();
                check(served.last() == k, "the READs served are the first ones, in PSN order [OPS-029]",
                    "served " + served);
                check(k >= Math.min(rr, n), "at least the negotiated Responder Resources (" + rr + ") held "
                    + "[OPS-024]", k + " served");
                if (before >= 0) {
                    LowerTester.sleep(20);
                    checkEq((long) (n - k), counterOrMissing(ctx, "RESPONDER_BUSY") - before,
                        "RESPONDER_BUSY drops = READs not held [OPS-024, GEN-002]");
                }
                if (k < n) {
                    // The first dropped READ was not marked received: the cumulative point stops there.
                    ctx.tester().inject(PacketBuilder.of(Opcode.KEEPALIVE).destQpn(t.iutQpn).srcQpn(t.qpn)
                        .psn(e + n + 1).flags(Flags.ACK_REQ).timestamp(0x0B5E0001).build());
                    final Packet a = ctx.expect(p -> t.fromIut(p) && p.opcode() == Opcode.ACK
                        && p.echoedTimestamp() == 0x0B5E0001, EXPECT_MS, "an answer to a KEEPALIVE [CM-028]");
                    checkEq(e + 1 + k, a.cumulativePsn(), "Cumulative PSN: dropped READs unaccepted [OPS-024, "
                        + "REL-006]");
                    for (int i = k + 1; i <= n; i++) {
                        ctx.tester().inject(read(s, e + i, m + i, (i - 1) * 64));
                    }
                    final List<Packet> more = new ArrayList<>();
                    final long end = System.nanoTime() + EXPECT_MS * 1_000_000L;
                    while (more.size() < n - k && System.nanoTime() < end) {
                        final Packet p = ctx.tester().poll(q -> t.fromIut(q) && q.opcode() == Opcode.READ_RESPONSE
                            && q.psn() - e > k, 50);
                        if (p != null) {
                            more.add(p);
                        }
                    }
                    checkEq((long) (n - k), more.stream().mapToInt(Packet::psn).distinct().count(),
                        "READs served when sent again [OPS-024]");
                }
                advance(t, n + 1);
            }, "OPS-024", "OPS-029", "REL-006", "GEN-002"));

        l.add(must("robust.flood-memory", RobustnessCases.S, "30 000 hostile packets (window flood, unknown QPNs, "
            + "spoofed and forged handshakes) leave the IUT's memory bounded", ctx -> {
                ctx.requireExtension("memory");
                final Setup s = setup(ctx);
                final long service = ctx.newServiceId();
                ctx.listen(service, QpOptions.defaults());
                // One round first, so that lazily built structures exist before the baseline.
                flood(ctx, s, service, 500);
                LowerTester.sleep(100);
                ctx.tester().clearBacklog();
                final long base = ctx.memoryInUse();
                flood(ctx, s, service, 7500);
                LowerTester.sleep(200);
                ctx.tester().clearBacklog();
                final long after = ctx.memoryInUse();
                check(after - base <= FLOOD_GROWTH_BOUND, "memory growth at most " + (FLOOD_GROWTH_BOUND >> 20)
                    + " MiB after 30 000 hostile packets [GEN-006, SEC-009]", ((after - base) >> 10) + " KiB ("
                    + (base >> 10) + " KiB before)");
                ConnectionCases.noAcceptedConnection(ctx, service, "from spoofed handshakes [SEC-008]");
                // Served again within EXPECT_MS = 1 s of the flood's end [GEN-008].
                liveness(ctx, s, "after the floods [GEN-006, GEN-008]");
            }, "GEN-006", "GEN-008", "SEC-009", "SEC-008", "CONF-022"));
        return l;
    }

    /** Sends {@code n} packets of each of four hostile kinds. */
    private static void flood(final CaseContext ctx, final Setup s, final long service, final int n) {
        final TesterQp t = s.t();
        for (int i = 0; i < n; i++) {
            ctx.tester().inject(write(s, 0, pattern(16, i)).psn(t.sendPsn + (1 << 29) + i).build());
            ctx.tester().inject(write(s, 0, pattern(16, i)).destQpn(unknownQpn(ctx, t)).build());
            ctx.tester().inject(ctx.connectRequest(service, ctx.random().nextLong(), ctx.newQpn(), i, 1024).build());
            final byte[] cookie = new byte[20];
            for (int k = 0; k < cookie.length; k++) {
                cookie[k] = (byte) ctx.random().nextInt(256);
            }
            ctx.tester().inject(ctx.connectRequest(service, ctx.random().nextLong(), ctx.newQpn(), i, 1024)
                .cookie(cookie).build());
            if ((i & 255) == 255) {
                // A breath for the IUT's receive buffer: the point is memory, not socket overflow.
                LowerTester.sleep(2);
            }
        }
    }

    private static int unknownQpn(final CaseContext ctx, final TesterQp t) {
        int q;
        do {
            q = ctx.newQpn();
        } while (q == t.iutQpn);
        return q;
    }
}
