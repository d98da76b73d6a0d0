// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.conformance.cases;

import static org.metaroce.conformance.cases.Steps.advance;
import static org.metaroce.conformance.cases.Steps.anyAnswer;
import static org.metaroce.conformance.cases.Steps.checkCounter;
import static org.metaroce.conformance.cases.Steps.checkUntouched;
import static org.metaroce.conformance.cases.Steps.counterOrMissing;
import static org.metaroce.conformance.cases.Steps.liveness;
import static org.metaroce.conformance.cases.Steps.must;
import static org.metaroce.conformance.cases.Steps.setup;
import static org.metaroce.conformance.cases.Steps.write;
import static org.metaroce.conformance.suite.CaseContext.check;
import static org.metaroce.conformance.suite.CaseContext.checkEq;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.Function;

import org.metaroce.conformance.cases.Steps.Setup;
import org.metaroce.conformance.suite.CaseContext;
import org.metaroce.conformance.suite.ConformanceCase;
import org.metaroce.conformance.tester.Packet;
import org.metaroce.core.wire.Flags;
import org.metaroce.core.wire.Opcode;

/** Section 3, packet formats: malformed packets are dropped, counted and never answered. */
final class WireCases {
    static final String S = "3 Packet formats";

    private WireCases() {
    }

    /**
     * A malformed variant of a valid 64-byte WRITE: dropped without an answer, counted under its
     * reason, memory untouched, and the QP still serves the valid packet with the same PSN.
     */
    static ConformanceCase malformed(final String id, final String title, final String reason,
                                     final Function<Setup, byte[]> bad, final String... reqs) {
        return must(id, S, title, ctx -> {
            final Setup s = setup(ctx);
            final long before = counterOrMissing(ctx, reason);
            ctx.tester().inject(bad.apply(s));
            ctx.expectNone(anyAnswer(s.t()), CaseContext.QUIET_MS, "no answer to a packet dropped as " + reason
                + " [WIRE-050]");
            checkCounter(ctx, reason, before, 1);
            checkUntouched(ctx, s.mr(), 0, 256, 0, "[WIRE-050]");
            liveness(ctx, s, "with the same PSN: the drop changed nothing [WIRE-050]");
        }, reqs);
    }

    static List<ConformanceCase> cases() {
        final List<ConformanceCase> l = new ArrayList<>();
        final byte[] data = CaseContext.pattern(64, 5);
        l.add(malformed("wire.integrity-check", "a packet whose Integrity Check fails is dropped unanswered",
            "INTEGRITY_CHECK_FAILED", s -> write(s, 0, data).corruptIntegrity().build(), "WIRE-040", "WIRE-041",
            "WIRE-050"));
        l.add(malformed("wire.version-2", "a packet of version 2 (a future secured format) is dropped unanswered",
            "UNSUPPORTED_VERSION", s -> write(s, 0, data).version(2).build(), "WIRE-011", "SEC-014"));
        l.add(malformed("wire.version-0", "a packet of version 0 is dropped unanswered", "UNSUPPORTED_VERSION",
            s -> write(s, 0, data).version(0).build(), "WIRE-011"));
        l.add(malformed("wire.unknown-opcode", "an unknown opcode (0x0A) is dropped unanswered", "UNKNOWN_OPCODE",
            s -> write(s, 0, data).rawOpcode(0x0A).build(), "WIRE-020"));
        l.add(malformed("wire.unknown-opcode-high", "an unknown opcode (0xFF) is dropped unanswered",
            "UNKNOWN_OPCODE", s -> write(s, 0, data).rawOpcode(0xFF).build(), "WIRE-020"));
        l.add(malformed("wire.header-length", "a Header Length that does not match the opcode is dropped",
            "BAD_HEADER_LENGTH", s -> write(s, 0, data).headerLengthWords(13).build(), "WIRE-012"));
        l.add(malformed("wire.length-mismatch", "a datagram longer than header + payload + 4 is dropped",
            "LENGTH_MISMATCH", s -> write(s, 0, data).extraBytes(4).build(), "WIRE-005"));
        l.add(malformed("wire.payload-length-field", "a Payload Length larger than the payload carried is dropped",
            "LENGTH_MISMATCH", s -> write(s, 0, data).payloadLengthField(72).build(), "WIRE-005"));
        l.add(malformed("wire.truncated-base", "a datagram shorter than the Base Header is dropped", "TRUNCATED",
            s -> write(s, 0, data).truncateTo(16).build(), "WIRE-003", "WIRE-050"));
        l.add(malformed("wire.truncated-header", "a datagram cut inside its extension headers is dropped",
            "TRUNCATED", s -> write(s, 0, data).truncateTo(40).build(), "WIRE-003", "WIRE-050"));
        l.add(malformed("wire.oversize", "a data payload above 8192 bytes is dropped", "OVERSIZE",
            s -> write(s, 0, new byte[8196]).build(), "WIRE-022"));
        l.add(malformed("wire.unexpected-payload", "a READ_REQUEST carrying payload is dropped",
            "UNEXPECTED_PAYLOAD", s -> s.t().request(Opcode.READ_REQUEST).flags(Flags.ACK_REQ | Flags.LAST)
                .va(s.mr().addr()).rkey(s.mr().rkey()).messageLength(64).dmaLength(64).payload(new byte[8]).build(),
            "WIRE-021"));
        l.add(malformed("wire.message-bounds", "Message Offset + Payload Length beyond Message Length is dropped",
            "BAD_MESSAGE_BOUNDS", s -> write(s, 0, data).messageLength(32).dmaLength(32).build(), "WIRE-033"));
        l.add(malformed("wire.dma-length", "a WRITE whose DMA Length differs from Message Length is dropped",
            "BAD_MESSAGE_BOUNDS", s -> write(s, 0, data).dmaLength(65).build(), "WIRE-035"));
        l.add(malformed("wire.bad-trim", "a trimmed READ_REQUEST (an opcode without payload) is dropped",
            "BAD_TRIM", s -> s.t().request(Opcode.READ_REQUEST).flags(Flags.LAST).va(s.mr().addr())
                .rkey(s.mr().rkey()).messageLength(64).dmaLength(64).trimmed().build(), "WIRE-042"));

        l.add(must("wire.reserved-ignored", S, "reserved bits and bytes set by a sender are ignored by the receiver",
            ctx -> {
                final Setup s = setup(ctx);
                final int psn = s.t().sendPsn;
                // 0x0200: a flag still reserved (0x0400 is ATTACHED_ACK since v1.0.15, which changes the length).
                ctx.tester().inject(write(s, 0, data).flags(Flags.ACK_REQ | Flags.LAST | 0x0200)
                    .reserved(0x5, 0xAA, 0x55).build());
                advance(s.t());
                ctx.expect(Steps.ackWithCum(s.t(), psn + 1), CaseContext.EXPECT_MS,
                    "an ACK: reserved fields must be ignored [WIRE-002]");
                Steps.checkMemory(ctx, s.mr(), 0, data, "the WRITE placed [WIRE-002]");
            }, "WIRE-002"));

        l.add(must("wire.iut-headers", S, "every packet the IUT sends is version 1, reserved-zero, length-consistent "
            + "and integrity-protected", ctx -> {
                final Setup s = setup(ctx);
                final Mr512 m = Mr512.of(ctx);
                final List<Packet> pkts = iutWrite(ctx, s, m, 3000);
                for (final Packet p : pkts) {
                    checkEq(1, p.version(), "Version of " + p + " [WIRE-011]");
                    checkEq(0, p.reservedNibble() | p.reservedBytes() | (p.flags() & ~Flags.DEFINED),
                        "reserved bits of " + p + " [WIRE-002]");
                    checkEq(p.opcode().headerLengthWords(), p.headerLengthWords(), "Header Length of " + p
                        + " [WIRE-012]");
                    check(p.lengthConsistent(), "UDP payload = header + payload + 4 [WIRE-005]", p.bytes().length
                        + " bytes for " + p);
                    check(p.integrityValid(), "a valid CRC-32C Integrity Check [WIRE-040]", "bad check on " + p);
                    checkEq(s.t().qpn, p.destQpn(), "Destination QPN at offset 5 [WIRE-010]");
                }
            // The datagram is exactly one packet: header at byte 0, Integrity Check last [ENC-001].
            }, "WIRE-002", "WIRE-005", "WIRE-010", "WIRE-011", "WIRE-012", "WIRE-040", "ENC-001"));

        l.add(must("ops.write-segmentation", OperationCases.S, "a 3000-byte WRITE at PMTU 1024 is sent as 3 "
            + "self-describing packets", ctx -> {
                final Setup s = setup(ctx);
                final Mr512 m = Mr512.of(ctx);
                final List<Packet> pkts = iutWrite(ctx, s, m, 3000);
                checkEq(3, pkts.size(), "number of packets, N = ceil(3000 / 1024) [OPS-002]");
                final byte[] all = new byte[3000];
                for (int k = 0; k < 3; k++) {
                    final Packet p = pkts.get(k);
                    checkEq(s.t().iutInitialPsn + k, p.psn(), "PSN of packet " + k + " [OPS-002, OPS-006]");
                    checkEq((long) k * 1024, p.messageOffset(), "Message Offset of packet " + k + " [OPS-002]");
                    checkEq(Math.min(1024, 3000 - k * 1024), p.payloadLength(), "Payload Length of packet " + k
                        + " [OPS-002]");
                    checkEq(k == 2, p.has(Flags.LAST), "LAST on packet " + k + " [WIRE-015]");
                    checkEq(3000L, p.messageLength(), "Message Length [OPS-003]");
                    checkEq(0, p.msn(), "MSN of the first message [OPS-009]");
                    checkEq(m.remoteAddr, p.virtualAddress(), "RETH Virtual Address of byte 0 [WIRE-034]");
                    checkEq(3000L, p.dmaLength(), "DMA Length = Message Length [WIRE-035]");
                    System.arraycopy(p.payload(), 0, all, k * 1024, p.payloadLength());
                }
                check(Arrays.equals(all, CaseContext.pattern(3000, 11)), "the message bytes in order [OPS-002]",
                    "different bytes");
            }, "OPS-002", "OPS-003", "OPS-006", "WIRE-015", "WIRE-034", "WIRE-035", "OPS-034", "OPS-038"));

        l.add(must("rel.ack-echo", ReliabilityCases.S, "an ACK echoes the triggering packet's PSN, timestamp and "
            + "path", ctx -> {
                final Setup s = setup(ctx);
                final int psn = s.t().sendPsn;
                ctx.tester().inject(write(s, 0, data).timestamp(0x12345678).pathId(3).build());
                advance(s.t());
                final Packet ack = ctx.expect(Steps.ackWithCum(s.t(), psn + 1), CaseContext.EXPECT_MS,
                    "an ACK with Cumulative PSN = PSN + 1 [REL-012]");
                checkEq(psn, ack.psn(), "Base Header PSN = triggering PSN [REL-012]");
                checkEq(0x12345678, ack.echoedTimestamp(), "Echoed Timestamp [WIRE-061]");
                checkEq(3, ack.echoedPathId(), "Echoed Path ID [WIRE-061]");
                checkEq(0L, ack.sackBitmap(), "SACK bitmap with nothing after the cumulative point [WIRE-060]");
            }, "WIRE-061", "REL-012", "WIRE-060"));
        return l;
    }

    /** A 4 KiB region on the tester side, described by the VA the IUT writes to (the tester checks bytes). */
    record Mr512(long remoteAddr, int rkey) {
        static Mr512 of(final CaseContext ctx) {
            return new Mr512(0x1000_0000L + ctx.random().nextInt(1 << 20) * 8L, ctx.random().nextInt());
        }
    }

    /**
     * Has the IUT WRITE {@code length} pattern bytes to the tester and returns the packets of the
     * first transmission, after acknowledging them all.
     */
    static List<Packet> iutWrite(final CaseContext ctx, final Setup s, final Mr512 m, final int length) {
        final org.metaroce.conformance.suite.Mr local = ctx.regMr(Math.max(length, 1), 0, "LOCAL_WRITE");
        ctx.writeMem(local, 0, CaseContext.pattern(length, 11));
        ctx.postSend(s.c(), 1, "RDMA_WRITE", local, 0, length, o -> {
            o.put("remote_addr", Long.toUnsignedString(m.remoteAddr));
            o.put("rkey", Integer.toUnsignedLong(m.rkey));
        });
        final int n = Math.max(1, (length + s.t().pmtu - 1) / s.t().pmtu);
        final List<Packet> out = new ArrayList<>();
        final boolean[] seen = new boolean[n];
        while (out.size() < n) {
            final Packet p = ctx.expect(s.t()::isRequest, CaseContext.EXPECT_MS, n + " WRITE packets [OPS-002]");
            final int k = p.psn() - s.t().iutInitialPsn;
            if (k >= 0 && k < n && !seen[k]) {
                seen[k] = true;
                out.add(p);
            }
        }
        out.sort((a, b) -> Integer.compare(a.psn() - s.t().iutInitialPsn, b.psn() - s.t().iutInitialPsn));
        final Packet last = out.get(n - 1);
        ctx.tester().inject(s.t().ack(last, s.t().iutInitialPsn + n).build());
        final var wc = ctx.poll(s.c(), "send", 1, CaseContext.EXPECT_MS);
        check(!wc.isEmpty() && wc.get(0).get("status").asText().equals("SUCCESS"),
            "the WRITE completes SUCCESS once every PSN is acknowledged [OPS-034]", wc.toString());
        checkEq(1L, wc.get(0).get("wr_id").asLong(), "wr_id of the send completion [OPS-038]");
        checkEq("RDMA_WRITE", wc.get(0).get("opcode").asText(), "opcode of the send completion [OPS-038]");
        checkEq((long) length, wc.get(0).get("byte_len").asLong(), "byte_len of the send completion [OPS-038]");
        return out;
    }
}
