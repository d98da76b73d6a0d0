// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.conformance.cases;

import java.util.Arrays;
import java.util.List;
import java.util.function.Predicate;

import org.metaroce.conformance.suite.CaseBody;
import org.metaroce.conformance.suite.CaseContext;
import org.metaroce.conformance.suite.ConformanceCase;
import org.metaroce.conformance.suite.IutConnection;
import org.metaroce.conformance.suite.Level;
import org.metaroce.conformance.suite.Mr;
import org.metaroce.conformance.suite.QpOptions;
import org.metaroce.conformance.tester.Packet;
import org.metaroce.conformance.tester.PacketBuilder;
import org.metaroce.conformance.tester.TesterQp;
import org.metaroce.core.wire.Flags;
import org.metaroce.core.wire.Opcode;

/** Building blocks shared by the case catalogues. */
final class Steps {
    static final String[] ALL_REMOTE = {"LOCAL_WRITE", "REMOTE_WRITE", "REMOTE_READ", "REMOTE_ATOMIC"};

    private Steps() {
    }

    static ConformanceCase must(final String id, final String section, final String title, final CaseBody body,
                                final String... reqs) {
        return new ConformanceCase(id, section, Level.MUST, List.of(reqs), title, null, body);
    }

    static ConformanceCase should(final String id, final String section, final String title, final CaseBody body,
                                  final String... reqs) {
        return new ConformanceCase(id, section, Level.SHOULD, List.of(reqs), title, null, body);
    }

    /** A connection with the default options and a 4 KiB region that allows every remote operation. */
    record Setup(IutConnection c, Mr mr) {
        TesterQp t() {
            return c.tester();
        }
    }

    static Setup setup(final CaseContext ctx) {
        return setup(ctx, QpOptions.defaults());
    }

    static Setup setup(final CaseContext ctx, final QpOptions opts) {
        final IutConnection c = ctx.connect(opts);
        return new Setup(c, ctx.regMr(4096, 0, ALL_REMOTE));
    }

    /** @return a one-packet WRITE of {@code data} at {@code offset}, with ACK_REQ and LAST */
    static PacketBuilder write(final Setup s, final int offset, final byte[] data) {
        return s.t().request(Opcode.WRITE).flags(Flags.ACK_REQ | Flags.LAST).va(s.mr().addr() + offset)
            .rkey(s.mr().rkey()).payload(data);
    }

    /** Marks a one-PSN message as sent. */
    static void advance(final TesterQp t) {
        advance(t, 1);
    }

    static void advance(final TesterQp t, final int psns) {
        t.sendPsn += psns;
        t.msn++;
    }

    /**
     * @return any data-path packet from the IUT's QP that could answer a packet of the tester: not a
     *     KEEPALIVE (sent on idle timers) and not a connection-manager packet (a CONNECT_REPLY
     *     retransmitted because READY_TO_USE was slow to arrive is no answer to a data packet)
     */
    static Predicate<Packet> anyAnswer(final TesterQp t) {
        return p -> t.fromIut(p) && p.opcode() != Opcode.KEEPALIVE && !p.opcode().isConnectionManagement();
    }

    static Predicate<Packet> ackWithCum(final TesterQp t, final int cum) {
        return p -> t.fromIut(p) && p.opcode() == Opcode.ACK && p.cumulativePsn() == cum;
    }

    static Predicate<Packet> nack(final TesterQp t) {
        return p -> t.fromIut(p) && p.opcode() == Opcode.NACK;
    }

    /** Sends a valid 8-byte WRITE at offset 0 with the next PSN and expects its ACK: the QP is alive. */
    static void liveness(final CaseContext ctx, final Setup s, final String why) {
        final byte[] data = CaseContext.pattern(8, 99);
        ctx.tester().inject(write(s, 0, data).build());
        final int psn = s.t().sendPsn;
        advance(s.t());
        ctx.expect(ackWithCum(s.t(), psn + 1), CaseContext.EXPECT_MS, "an ACK of a valid WRITE " + why);
        checkMemory(ctx, s.mr(), 0, data, "the valid WRITE placed");
    }

    static void checkMemory(final CaseContext ctx, final Mr mr, final int offset, final byte[] expected,
                            final String what) {
        final byte[] got = ctx.readMem(mr, offset, expected.length);
        if (!Arrays.equals(got, expected)) {
            CaseContext.check(false, what + ": " + hexShort(expected), hexShort(got));
        }
    }

    static void checkUntouched(final CaseContext ctx, final Mr mr, final int offset, final int length,
                               final int fill, final String req) {
        final byte[] expected = new byte[length];
        Arrays.fill(expected, (byte) fill);
        checkMemory(ctx, mr, offset, expected, "memory untouched " + req);
    }

    static String hexShort(final byte[] b) {
        final String h = java.util.HexFormat.of().formatHex(b, 0, Math.min(b.length, 24));
        return b.length > 24 ? h + "... (" + b.length + " B)" : h;
    }

    /** @return the counter's value, or -1 when the IUT does not report it */
    static long counterOrMissing(final CaseContext ctx, final String name) {
        final Long v = ctx.counters().get(name);
        return v == null ? -1 : v;
    }

    /** Checks that a counter rose by exactly {@code delta} (skipped when the IUT does not report it). */
    static void checkCounter(final CaseContext ctx, final String name, final long before, final long delta) {
        if (before < 0) {
            return;
        }
        long now = counterOrMissing(ctx, name);
        for (int i = 0; i < 20 && now - before < delta; i++) {
            org.metaroce.conformance.tester.LowerTester.sleep(5);
            now = counterOrMissing(ctx, name);
        }
        CaseContext.check(now - before == delta, "drop counter " + name + " +" + delta + " [GEN-002]",
            "+" + (now - before));
    }

    /** Little-endian 8 bytes [OPS-026]. */
    static byte[] le64(final long v) {
        final byte[] b = new byte[8];
        for (int i = 0; i < 8; i++) {
            b[i] = (byte) (v >>> (8 * i));
        }
        return b;
    }

    static long fromLe64(final byte[] b) {
        long v = 0;
        for (int i = 7; i >= 0; i--) {
            v = (v << 8) | (b[i] & 0xFF);
        }
        return v;
    }
}
