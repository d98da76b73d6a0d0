// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.conformance.cases;

import static org.metaroce.conformance.cases.Steps.advance;
import static org.metaroce.conformance.cases.Steps.must;
import static org.metaroce.conformance.cases.Steps.setup;
import static org.metaroce.conformance.cases.Steps.write;
import static org.metaroce.conformance.suite.CaseContext.EXPECT_MS;
import static org.metaroce.conformance.suite.CaseContext.check;
import static org.metaroce.conformance.suite.CaseContext.pattern;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;

import org.metaroce.conformance.cases.Steps.Setup;
import org.metaroce.conformance.suite.CaseContext;
import org.metaroce.conformance.suite.ConformanceCase;
import org.metaroce.conformance.suite.QpOptions;
import org.metaroce.conformance.tester.Packet;
import org.metaroce.conformance.tester.TesterQp;
import org.metaroce.core.wire.Flags;
import org.metaroce.core.wire.Opcode;

/** Section 7, multipath: the path set, Path IDs and path choice as seen on the wire. */
final class PathCases {
    static final String S = "7 Multipath";

    private PathCases() {
    }

    /** The first transmissions of a 24-packet WRITE of the IUT, before any ACK. */
    private static List<Packet> firstPackets(final CaseContext ctx, final Setup s, final int n) {
        ReliabilityCases.iutWrite(ctx, s, 1, n * s.t().pmtu);
        final List<Packet> got = new ArrayList<>();
        while (got.size() < n) {
            got.add(ctx.expect(p -> s.t().isRequest(p) && !p.has(Flags.RETRANSMIT), EXPECT_MS, n + " packets"));
        }
        return got;
    }

    /** Path ID within [0, count) and one entropy value per Path ID, distinct between Path IDs. */
    private static void checkPathSet(final TesterQp t, final List<Packet> packets, final String what) {
        final Map<Integer, Integer> ports = new HashMap<>();
        for (final Packet p : packets) {
            check(p.pathId() >= 0 && p.pathId() < t.pathCount, what + ": Path ID below the negotiated Path Count "
                + t.pathCount + " [MP-001]", p.opcode() + " on Path ID " + p.pathId());
            final Integer prev = ports.putIfAbsent(p.pathId(), p.source().getPort());
            check(prev == null || prev == p.source().getPort(), what + ": one entropy value per Path ID [MP-002, "
                + "ENC-007]", "Path ID " + p.pathId() + " from ports " + prev + " and " + p.source().getPort());
        }
        check(new HashSet<>(ports.values()).size() == ports.size(), what + ": distinct entropy values for distinct "
            + "Path IDs [MP-002]", ports.toString());
    }

    static List<ConformanceCase> cases() {
        final List<ConformanceCase> l = new ArrayList<>();
        l.add(must("mp.single-path", S, "with Path Count 1 every packet of the QP uses Path ID 0", ctx -> {
            final Setup s = setup(ctx, QpOptions.defaults().timeoutUs(100_000).testerPaths(1));
            check(s.t().pathCount == 1, "Path Count = min of the proposals = 1 [MP-001, CM-019]",
                String.valueOf(s.t().pathCount));
            for (final Packet p : firstPackets(ctx, s, 12)) {
                check(p.pathId() == 0, "Path ID 0 with Path Count 1 [MP-015]", "Path ID " + p.pathId());
            }
        }, "MP-001", "MP-015", "CM-019"));

        l.add(must("mp.round-robin", S, "with equal weights new packets take the paths in smooth weighted round "
            + "robin; ACKs stay on the responder's path set", ctx -> {
                final Setup s = setup(ctx, QpOptions.defaults().timeoutUs(100_000).testerPaths(3));
                final TesterQp t = s.t();
                check(t.pathCount >= 1 && t.pathCount <= 3, "Path Count = min of the proposals, at most 3 [MP-001]",
                    String.valueOf(t.pathCount));
                final int k = t.pathCount;
                final List<Packet> first = firstPackets(ctx, s, 4 * k);
                checkPathSet(t, first, "requests");
                // Before any feedback every weight is 1: SWRR then visits each path once per round.
                for (int r = 0; r < 4; r++) {
                    final HashSet<Integer> round = new HashSet<>();
                    for (int i = 0; i < k; i++) {
                        round.add(first.get(r * k + i).pathId());
                    }
                    check(round.size() == k, "each round of " + k + " new packets on " + k + " distinct paths "
                        + "(equal weights) [MP-013]", "round " + r + " used paths " + round);
                }
                // The responder side: ACKs of 12 WRITEs use the IUT's own path set [MP-017].
                for (int i = 0; i < 12; i++) {
                    ctx.tester().inject(write(s, i * 64, pattern(64, i)).build());
                    advance(t);
                }
                final List<Packet> acks = ctx.tester().collect(p -> t.fromIut(p) && p.opcode() == Opcode.ACK
                    && p.echoedTimestamp() != 0, 200);
                check(!acks.isEmpty(), "ACKs of the WRITEs", "none");
                checkPathSet(t, acks, "ACKs");
                final List<Packet> all = new ArrayList<>(first);
                all.addAll(acks);
                checkPathSet(t, all, "requests and ACKs together");
            }, "MP-001", "MP-002", "MP-013", "MP-017", "ENC-007"));
        return l;
    }
}
