// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.conformance.cases;

import static org.metaroce.conformance.cases.Steps.ALL_REMOTE;
import static org.metaroce.conformance.cases.Steps.ackWithCum;
import static org.metaroce.conformance.cases.Steps.advance;
import static org.metaroce.conformance.cases.Steps.checkMemory;
import static org.metaroce.conformance.cases.Steps.checkUntouched;
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
import org.metaroce.conformance.suite.Mr;
import org.metaroce.conformance.suite.QpOptions;
import org.metaroce.conformance.tester.Packet;
import org.metaroce.conformance.tester.TesterQp;
import org.metaroce.core.wire.Flags;
import org.metaroce.core.wire.NackReason;
import org.metaroce.core.wire.Opcode;

/** Section 5, operations: the IUT as responder to the tester's requests, and as requester. */
final class OperationCases {
    static final String S = "5 Operations";

    private OperationCases() {
    }

    /** Sends a message of {@code data} as packets in {@code order}; returns nothing, advances PSN and MSN. */
    static void sendMessage(final CaseContext ctx, final Setup s, final Opcode op, final byte[] data,
                            final int[] order, final long va, final int rsn, final int imm) {
        final TesterQp t = s.t();
        final int pmtu = t.pmtu;
        final int n = Math.max(1, (data.length + pmtu - 1) / pmtu);
        for (final int k : order) {
            final int off = k * pmtu;
            final int len = Math.min(pmtu, data.length - off);
            final boolean last = k == n - 1;
            ctx.tester().inject(t.request(op).psn(t.sendPsn + k).flags(last ? Flags.LAST : 0).messageOffset(off)
                .messageLength(data.length).rsn(rsn).va(va).rkey(s.mr().rkey()).imm(imm)
                .payload(Arrays.copyOfRange(data, off, off + len)).build());
        }
        advance(t, n);
    }

    static JsonNode oneCompletion(final CaseContext ctx, final Setup s, final String queue, final String why) {
        final List<JsonNode> wc = ctx.poll(s.c(), queue, 1, EXPECT_MS);
        check(!wc.isEmpty(), "a " + queue + " completion " + why, "none within " + EXPECT_MS + " ms");
        return wc.get(0);
    }

    static List<ConformanceCase> cases() {
        final List<ConformanceCase> l = new ArrayList<>();
        l.add(must("ops.send-single", S, "a one-packet SEND lands in the posted receive and completes RECV", ctx -> {
            final Setup s = setup(ctx);
            final Mr buf = ctx.regMr(256, 0, "LOCAL_WRITE");
            ctx.postRecv(s.c(), 77, buf, 0, 256);
            final byte[] data = pattern(100, 3);
            final int psn = s.t().sendPsn;
            sendMessage(ctx, s, Opcode.SEND, data, new int[] {0}, 0, 0, 0);
            ctx.expect(ackWithCum(s.t(), psn + 1), EXPECT_MS, "an ACK of the SEND [REL-008]");
            final JsonNode wc = oneCompletion(ctx, s, "recv", "[OPS-030]");
            checkEq("SUCCESS", wc.get("status").asText(), "status [OPS-035]");
            checkEq("RECV", wc.get("opcode").asText(), "opcode [OPS-035]");
            checkEq(77L, wc.get("wr_id").asLong(), "wr_id [OPS-035]");
            checkEq(100L, wc.get("byte_len").asLong(), "byte_len = Message Length [OPS-035]");
            checkMemory(ctx, buf, 0, data, "the SEND's bytes in the receive buffer [OPS-011]");
        }, "OPS-011", "OPS-030", "OPS-035"));

        l.add(must("ops.recv-solicited", S, "receive completions report whether the SEND was solicited", ctx -> {
            final Setup s = setup(ctx);
            final Mr buf = ctx.regMr(256, 0, "LOCAL_WRITE");
            ctx.postRecv(s.c(), 1, buf, 0, 128);
            ctx.postRecv(s.c(), 2, buf, 128, 128);
            final TesterQp t = s.t();
            final int psn = t.sendPsn;
            // The first SEND solicited, the second not [OPS-040].
            for (int k = 0; k < 2; k++) {
                ctx.tester().inject(t.request(Opcode.SEND).psn(t.sendPsn).flags(Flags.LAST | (k == 0 ? Flags.SOLICITED : 0))
                    .messageOffset(0).messageLength(16).rsn(k).payload(pattern(16, k)).build());
                advance(t);
            }
            ctx.expect(ackWithCum(t, psn + 2), EXPECT_MS, "an ACK of both SENDs [REL-008]");
            final List<JsonNode> wc = ctx.poll(s.c(), "recv", 2, EXPECT_MS);
            checkEq(2, wc.size(), "receive completions");
            for (int k = 0; k < 2; k++) {
                checkEq((long) k + 1, wc.get(k).get("wr_id").asLong(), "wr_id of completion " + k + " [OPS-033]");
                check(wc.get(k).has("solicited"), "a 'solicited' field in the receive completion [CONF-021]",
                    wc.get(k).toString());
                checkEq(k == 0, wc.get(k).get("solicited").asBoolean(), "solicited of SEND " + k + " [OPS-035, OPS-040]");
            }
        }, "OPS-035", "OPS-040", "CONF-021"));

        l.add(must("ops.send-multi-reordered", S, "a 3-packet SEND arriving out of order is placed and completes "
            + "only when whole", ctx -> {
                final Setup s = setup(ctx);
                final Mr buf = ctx.regMr(4096, 0, "LOCAL_WRITE");
                ctx.postRecv(s.c(), 1, buf, 0, 4096);
                final byte[] data = pattern(2500, 9);
                final int psn = s.t().sendPsn;
                final TesterQp t = s.t();
                sendMessage(ctx, s, Opcode.SEND, data, new int[] {2, 0}, 0, 0, 0);
                t.sendPsn = psn;
                t.msn--;
                final List<JsonNode> early = ctx.poll(s.c(), "recv", 1, QUIET_MS);
                check(early.isEmpty(), "no receive completion while PSN " + (psn + 1) + " is missing [OPS-030]",
                    early.toString());
                sendMessage(ctx, s, Opcode.SEND, data, new int[] {1}, 0, 0, 0);
                final JsonNode wc = oneCompletion(ctx, s, "recv", "once every packet arrived [OPS-030]");
                checkEq("SUCCESS", wc.get("status").asText(), "status");
                checkEq(2500L, wc.get("byte_len").asLong(), "byte_len [OPS-035]");
                checkMemory(ctx, buf, 0, data, "the message placed by offset [OPS-011]");
            }, "OPS-011", "OPS-030"));

        l.add(must("ops.send-imm", S, "SEND_WITH_IMM delivers the immediate data once, in the receive completion",
            ctx -> {
                final Setup s = setup(ctx);
                final Mr buf = ctx.regMr(256, 0, "LOCAL_WRITE");
                ctx.postRecv(s.c(), 5, buf, 0, 256);
                sendMessage(ctx, s, Opcode.SEND_WITH_IMM, pattern(32, 1), new int[] {0}, 0, 0, 0xCAFE0001);
                final JsonNode wc = oneCompletion(ctx, s, "recv", "[OPS-036]");
                checkEq(0xCAFE0001L, wc.path("imm").asLong(-1), "immediate data [OPS-036, WIRE-036]");
                checkEq("RECV", wc.get("opcode").asText(), "opcode [OPS-035]");
            }, "OPS-036", "WIRE-036", "OPS-035"));

        l.add(must("ops.rnr-then-success", S, "a SEND without a posted receive gets NACK RNR; after posting, its "
            + "retransmission succeeds", ctx -> {
                final Setup s = setup(ctx, QpOptions.defaults().minRnrTimer(20));
                final Mr buf = ctx.regMr(256, 0, "LOCAL_WRITE");
                final TesterQp t = s.t();
                final int psn = t.sendPsn;
                final byte[] data = pattern(64, 2);
                sendMessage(ctx, s, Opcode.SEND, data, new int[] {0}, 0, 0, 0);
                final Packet n = ctx.expect(nack(t), EXPECT_MS, "NACK RNR [OPS-013]");
                checkEq(NackReason.RNR.code(), n.nackReason(), "NACK reason RNR [REL-038]");
                checkEq(psn, n.nackPsn(), "NACK PSN = the SEND's PSN [REL-038]");
                checkEq(20, n.rnrTimer(), "RNR Timer = MIN_RNR_TIMER [REL-038]");
                ctx.postRecv(s.c(), 9, buf, 0, 256);
                ctx.tester().inject(t.request(Opcode.SEND).psn(psn).msn(t.msn - 1).flags(Flags.LAST
                    | Flags.RETRANSMIT | Flags.ACK_REQ).messageLength(64).payload(data).build());
                ctx.expect(ackWithCum(t, psn + 1), EXPECT_MS, "an ACK of the retried SEND [OPS-013]");
                final JsonNode wc = oneCompletion(ctx, s, "recv", "after the retry");
                checkEq("SUCCESS", wc.get("status").asText(), "status");
                checkMemory(ctx, buf, 0, data, "the SEND placed");
            }, "OPS-013", "REL-038"));

        l.add(must("ops.recv-too-small", S, "a SEND longer than its receive buffer: NACK REMOTE_OPERATION, LOC_LEN_ERR,"
            + " nothing written", ctx -> {
                final Setup s = setup(ctx);
                final Mr buf = ctx.regMr(256, 0, "LOCAL_WRITE");
                ctx.postRecv(s.c(), 3, buf, 0, 16);
                final int psn = s.t().sendPsn;
                sendMessage(ctx, s, Opcode.SEND, pattern(100, 4), new int[] {0}, 0, 0, 0);
                final Packet n = ctx.expect(nack(s.t()), EXPECT_MS, "NACK REMOTE_OPERATION [OPS-012]");
                checkEq(NackReason.REMOTE_OPERATION.code(), n.nackReason(), "NACK reason [OPS-012]");
                checkEq(psn, n.nackPsn(), "NACK PSN [REL-007]");
                final JsonNode wc = oneCompletion(ctx, s, "recv", "[OPS-012]");
                checkEq("LOC_LEN_ERR", wc.get("status").asText(), "receive status [OPS-012]");
                checkUntouched(ctx, buf, 0, 256, 0, "[OPS-012]");
                checkEq("ERR", ctx.awaitQpState(s.c(), "ERR", EXPECT_MS), "responder QP state [OPS-012]");
            }, "OPS-012", "REL-007"));

        l.add(must("ops.write-multi-reordered", S, "a 3-packet WRITE arriving out of order is placed exactly", ctx -> {
            final Setup s = setup(ctx);
            final byte[] data = pattern(3000, 6);
            final int psn = s.t().sendPsn;
            sendMessage(ctx, s, Opcode.WRITE, data, new int[] {1, 2, 0}, s.mr().addr() + 100, 0, 0);
            ctx.expect(ackWithCum(s.t(), psn + 3), EXPECT_MS, "an ACK covering the whole WRITE [REL-008]");
            checkMemory(ctx, s.mr(), 100, data, "every byte at VA + Message Offset [OPS-016]");
            checkUntouched(ctx, s.mr(), 3100, 16, 0, "after the message [OPS-016]");
        }, "OPS-016", "WIRE-034"));

        l.add(must("ops.write-zero-length", S, "a zero-length WRITE with a bogus rkey is acknowledged, not checked",
            ctx -> {
                final Setup s = setup(ctx);
                final int psn = s.t().sendPsn;
                ctx.tester().inject(s.t().request(Opcode.WRITE).flags(Flags.ACK_REQ | Flags.LAST).va(0)
                    .rkey(0xDEADBEEF).build());
                advance(s.t());
                ctx.expect(ackWithCum(s.t(), psn + 1), EXPECT_MS, "an ACK of the zero-length WRITE [OPS-017]");
                checkEq("RTS", ctx.qpState(s.c()), "QP state [OPS-017, MEM-012]");
            }, "OPS-017", "MEM-012", "OPS-004"));

        l.add(must("ops.write-imm", S, "WRITE_WITH_IMM places data and completes RECV_RDMA_WITH_IMM with the immediate",
            ctx -> {
                final Setup s = setup(ctx);
                final Mr buf = ctx.regMr(64, 0, "LOCAL_WRITE");
                ctx.postRecv(s.c(), 8, buf, 0, 64);
                final byte[] data = pattern(200, 8);
                sendMessage(ctx, s, Opcode.WRITE_WITH_IMM, data, new int[] {0}, s.mr().addr(), 0, 0x01020304);
                final JsonNode wc = oneCompletion(ctx, s, "recv", "[OPS-018]");
                checkEq("RECV_RDMA_WITH_IMM", wc.get("opcode").asText(), "opcode [OPS-018]");
                checkEq(200L, wc.get("byte_len").asLong(), "byte_len = Message Length [OPS-018]");
                checkEq(0x01020304L, wc.path("imm").asLong(-1), "immediate [OPS-018]");
                checkMemory(ctx, s.mr(), 0, data, "the data in the target region [OPS-016]");
                checkUntouched(ctx, buf, 0, 64, 0, "receive buffer of a WRITE_WITH_IMM [OPS-018]");
            }, "OPS-018", "OPS-035", "REL-062"));

        l.add(must("ops.read-multi", S, "a 2500-byte READ at PMTU 1024 is answered by 3 correct READ_RESPONSEs", ctx -> {
            final Setup s = setup(ctx);
            final byte[] data = pattern(2500, 12);
            ctx.writeMem(s.mr(), 0, data);
            final TesterQp t = s.t();
            final int psn = t.sendPsn;
            final int msn = t.msn;
            ctx.tester().inject(t.request(Opcode.READ_REQUEST).flags(Flags.LAST).va(s.mr().addr()).rkey(s.mr().rkey())
                .messageLength(2500).dmaLength(2500).build());
            advance(t, 3);
            final byte[] got = new byte[2500];
            for (int j = 0; j < 3; j++) {
                final int psnJ = psn + j;
                final Packet r = ctx.expect(p -> t.fromIut(p) && p.opcode() == Opcode.READ_RESPONSE
                    && p.psn() == psnJ, EXPECT_MS, "READ_RESPONSE with PSN q + " + j + " [OPS-021]");
                checkEq((long) j * 1024, r.messageOffset(), "Message Offset of response " + j + " [OPS-021]");
                checkEq(Math.min(1024, 2500 - j * 1024), r.payloadLength(), "Payload Length [OPS-021]");
                checkEq(msn, r.msn(), "MSN of the request [OPS-021]");
                checkEq(j == 2, r.has(Flags.LAST), "LAST on response " + j + " [OPS-021]");
                System.arraycopy(r.payload(), 0, got, j * 1024, r.payloadLength());
            }
            check(Arrays.equals(got, data), "the region's bytes [OPS-021]", "different bytes");
        }, "OPS-021", "OPS-007"));

        l.add(must("ops.read-zero-length", S, "a zero-length READ with a bogus rkey gets one empty READ_RESPONSE "
            + "with LAST", ctx -> {
                final Setup s = setup(ctx);
                final TesterQp t = s.t();
                final int psn = t.sendPsn;
                ctx.tester().inject(t.request(Opcode.READ_REQUEST).flags(Flags.LAST).va(0).rkey(0x0BADBEEF)
                    .messageLength(0).dmaLength(0).build());
                advance(t);
                final Packet r = ctx.expect(p -> t.fromIut(p) && p.opcode() == Opcode.READ_RESPONSE, EXPECT_MS,
                    "one READ_RESPONSE [OPS-023]");
                checkEq(psn, r.psn(), "PSN");
                checkEq(0, r.payloadLength(), "Payload Length [OPS-023]");
                check(r.has(Flags.LAST), "LAST [OPS-023]", Flags.toString(r.flags()));
            }, "OPS-023", "OPS-004"));

        l.add(must("ops.fetch-add", S, "FETCH_ADD returns the original value and adds modulo 2^64, little-endian in "
            + "memory", ctx -> {
                final Setup s = setup(ctx);
                ctx.writeMem(s.mr(), 8, le64(0xFFFF_FFFF_FFFF_FFFEL));
                final TesterQp t = s.t();
                final int psn = t.sendPsn;
                final int msn = t.msn;
                ctx.tester().inject(t.request(Opcode.FETCH_ADD).flags(Flags.LAST).messageLength(8)
                    .va(s.mr().addr() + 8).rkey(s.mr().rkey()).swapAdd(3).build());
                advance(t);
                final Packet r = ctx.expect(p -> t.fromIut(p) && p.opcode() == Opcode.ATOMIC_RESPONSE, EXPECT_MS,
                    "an ATOMIC_RESPONSE [OPS-028]");
                checkEq(psn, r.psn(), "PSN of the request [OPS-008]");
                checkEq(msn, r.msn(), "MSN of the request [OPS-028]");
                checkEq(0xFFFF_FFFF_FFFF_FFFEL, r.originalData(), "Original Remote Data [OPS-025]");
                check(r.has(Flags.LAST), "LAST [OPS-028]", Flags.toString(r.flags()));
                checkEq(1L, fromLe64(ctx.readMem(s.mr(), 8, 8)), "target after the add, wrapped [OPS-025, OPS-026]");
            }, "OPS-025", "OPS-026", "OPS-028", "OPS-008"));

        l.add(must("ops.cmp-swap", S, "CMP_SWAP swaps only when the target equals Compare Data", ctx -> {
            final Setup s = setup(ctx);
            ctx.writeMem(s.mr(), 16, le64(5));
            final TesterQp t = s.t();
            for (final long[] op : new long[][] {{5, 9, 5, 9}, {5, 11, 9, 9}}) {
                ctx.tester().inject(t.request(Opcode.CMP_SWAP).flags(Flags.LAST).messageLength(8)
                    .va(s.mr().addr() + 16).rkey(s.mr().rkey()).compare(op[0]).swapAdd(op[1]).build());
                final int psn = t.sendPsn;
                advance(t);
                final Packet r = ctx.expect(p -> t.fromIut(p) && p.opcode() == Opcode.ATOMIC_RESPONSE
                    && p.psn() == psn, EXPECT_MS, "an ATOMIC_RESPONSE [OPS-028]");
                checkEq(op[2], r.originalData(), "original value [OPS-025]");
                checkEq(op[3], fromLe64(ctx.readMem(s.mr(), 16, 8)), "target after CMP_SWAP [OPS-025]");
            }
        }, "OPS-025"));

        l.add(must("ops.bad-segmentation", S, "a request whose Message Offset is not a multiple of the PMTU gets NACK "
            + "INVALID_REQUEST", ctx -> {
                final Setup s = setup(ctx);
                final int psn = s.t().sendPsn;
                ctx.tester().inject(write(s, 0, pattern(1024, 1)).messageOffset(100).messageLength(1124).build());
                final Packet n = ctx.expect(nack(s.t()), EXPECT_MS, "NACK INVALID_REQUEST [OPS-005]");
                checkEq(NackReason.INVALID_REQUEST.code(), n.nackReason(), "NACK reason [OPS-042]");
                checkEq(psn, n.nackPsn(), "NACK PSN [REL-007]");
                checkUntouched(ctx, s.mr(), 0, 2048, 0, "[REL-006]");
            }, "OPS-005", "OPS-042", "REL-007"));

        l.add(must("ops.iut-msn-rsn", S, "the IUT numbers MSN per message and RSN per receive-consuming message",
            ctx -> {
                final Setup s = setup(ctx);
                final Mr local = ctx.regMr(64, 1, "LOCAL_WRITE");
                final String[] ops = {"SEND", "RDMA_WRITE", "SEND_WITH_IMM", "RDMA_WRITE_WITH_IMM"};
                for (int i = 0; i < ops.length; i++) {
                    ctx.postSend(s.c(), i, ops[i], local, 0, 16, o -> {
                        o.put("remote_addr", 4096);
                        o.put("rkey", 1234);
                        o.put("imm", 7);
                    });
                }
                final int[] rsn = {0, 0, 1, 2};
                final TesterQp t = s.t();
                for (int i = 0; i < ops.length; i++) {
                    final int psn = t.iutInitialPsn + i;
                    final Packet p = ctx.expect(q -> t.isRequest(q) && q.psn() == psn, EXPECT_MS,
                        "request " + i + " with PSN " + psn + " [OPS-006]");
                    checkEq(i, p.msn(), "MSN of message " + i + " [OPS-009]");
                    checkEq(rsn[i], p.rsn(), "RSN of message " + i + " [OPS-010, WIRE-032]");
                    ctx.tester().inject(t.ack(p, psn + 1).build());
                }
                final List<JsonNode> wc = ctx.poll(s.c(), "send", 4, EXPECT_MS);
                checkEq(4, wc.size(), "send completions");
            }, "OPS-006", "OPS-009", "OPS-010", "WIRE-032"));

        l.add(must("ops.iut-solicited", S, "SOLICITED is carried on the packets of a solicited SEND only", ctx -> {
            // TIMEOUT 100 ms: the tester withholds the first ACK while the agent posts the second WR; with
            // the 1 ms default an RTO could fire first and leave a conforming window at one packet,
            // which then holds the second WR back [CC-015, CC-001].
            final Setup s = setup(ctx, QpOptions.defaults().timeoutUs(100_000));
            final Mr local = ctx.regMr(64, 1, "LOCAL_WRITE");
            ctx.postSend(s.c(), 1, "SEND", local, 0, 16, o -> o.putArray("flags").add("SIGNALED").add("SOLICITED"));
            ctx.postSend(s.c(), 2, "SEND", local, 0, 16, o -> { });
            final TesterQp t = s.t();
            final Packet a = ctx.expect(q -> t.isRequest(q) && q.psn() == t.iutInitialPsn, EXPECT_MS, "SEND 1");
            final Packet b = ctx.expect(q -> t.isRequest(q) && q.psn() == t.iutInitialPsn + 1, EXPECT_MS, "SEND 2");
            check(a.has(Flags.SOLICITED), "SOLICITED on the solicited SEND [OPS-040]", Flags.toString(a.flags()));
            check(!b.has(Flags.SOLICITED), "no SOLICITED on the other SEND [OPS-040]", Flags.toString(b.flags()));
        }, "OPS-040"));

        l.add(must("ops.iut-read-request", S, "the IUT's READ_REQUEST reserves N PSNs; its next request follows them",
            ctx -> {
                // TIMEOUT 100 ms: the tester withholds the first ACK while the agent posts the second WR; with
                // the 1 ms default an RTO could fire first and leave a conforming window at one packet,
                // which then holds the second WR back [CC-015, CC-001].
                final Setup s = setup(ctx, QpOptions.defaults().timeoutUs(100_000));
                final Mr local = ctx.regMr(4096, 0, "LOCAL_WRITE");
                ctx.postSend(s.c(), 1, "RDMA_READ", local, 0, 3000, o -> {
                    o.put("remote_addr", 65536);
                    o.put("rkey", 42);
                });
                ctx.postSend(s.c(), 2, "SEND", local, 0, 8, o -> { });
                final TesterQp t = s.t();
                final Packet r = ctx.expect(q -> t.isRequest(q) && q.opcode() == Opcode.READ_REQUEST, EXPECT_MS,
                    "a READ_REQUEST [OPS-020]");
                checkEq(t.iutInitialPsn, r.psn(), "PSN [OPS-020]");
                checkEq(0L, r.messageOffset(), "Message Offset [OPS-020]");
                checkEq(3000L, r.messageLength(), "Message Length [OPS-020]");
                checkEq(3000L, r.dmaLength(), "DMA Length [OPS-020]");
                checkEq(65536L, r.virtualAddress(), "Virtual Address of byte 0 [OPS-020]");
                checkEq(0, r.rsn(), "RSN [OPS-020]");
                check(r.has(Flags.LAST), "LAST on an unsplit READ [OPS-020]", Flags.toString(r.flags()));
                final Packet send = ctx.expect(q -> t.isRequest(q) && q.opcode() == Opcode.SEND, EXPECT_MS,
                    "the SEND after the READ");
                checkEq(t.iutInitialPsn + 3, send.psn(), "PSN after the 3 reserved slots [OPS-007]");
            }, "OPS-007", "OPS-020"));

        l.add(must("ops.completion-order", S, "a later WR acknowledged first does not complete before the earlier one",
            ctx -> {
                // TIMEOUT 100 ms: the tester withholds the first ACK while the agent posts the second WR; with
                // the 1 ms default an RTO could fire first and leave a conforming window at one packet,
                // which then holds the second WR back [CC-015, CC-001].
                final Setup s = setup(ctx, QpOptions.defaults().timeoutUs(100_000));
                final Mr local = ctx.regMr(64, 1, "LOCAL_WRITE");
                for (int i = 1; i <= 2; i++) {
                    ctx.postSend(s.c(), i, "RDMA_WRITE", local, 0, 16, o -> {
                        o.put("remote_addr", 4096);
                        o.put("rkey", 99);
                    });
                }
                final TesterQp t = s.t();
                final int b = t.iutInitialPsn;
                ctx.expect(q -> t.isRequest(q) && q.psn() == b, EXPECT_MS, "WRITE 1");
                final Packet second = ctx.expect(q -> t.isRequest(q) && q.psn() == b + 1, EXPECT_MS, "WRITE 2");
                ctx.tester().inject(t.ack(second, b).sack(1).build());
                // WR 1 stays unacknowledged while the IUT retries it: watch for less than the
                // shortest retry budget, or a correct IUT may give up inside the window [REL-029].
                final List<JsonNode> early = ctx.poll(s.c(), "send", 1, CaseContext.RETRYING_QUIET_MS);
                check(early.isEmpty(), "no completion while WR 1 is unacknowledged [OPS-033]", early.toString());
                ctx.tester().inject(t.ack(second, b + 2).build());
                final List<JsonNode> wc = ctx.poll(s.c(), "send", 2, EXPECT_MS);
                checkEq(2, wc.size(), "completions");
                checkEq(1L, wc.get(0).get("wr_id").asLong(), "first completion [OPS-033]");
                checkEq(2L, wc.get(1).get("wr_id").asLong(), "second completion [OPS-033]");
            }, "OPS-033", "OPS-034"));

        l.add(must("ops.fence", S, "a FENCE WRITE waits for the earlier READ to complete", ctx -> {
            final Setup s = setup(ctx);
            final Mr local = ctx.regMr(256, 0, ALL_REMOTE);
            ctx.postSend(s.c(), 1, "RDMA_READ", local, 0, 64, o -> {
                o.put("remote_addr", 8192);
                o.put("rkey", 5);
            });
            ctx.postSend(s.c(), 2, "RDMA_WRITE", local, 128, 16, o -> {
                o.putArray("flags").add("SIGNALED").add("FENCE");
                o.put("remote_addr", 8192);
                o.put("rkey", 5);
            });
            final TesterQp t = s.t();
            final Packet read = ctx.expect(q -> t.isRequest(q) && q.opcode() == Opcode.READ_REQUEST, EXPECT_MS,
                "the READ_REQUEST");
            ctx.expectNone(q -> t.isRequest(q) && q.opcode() == Opcode.WRITE, QUIET_MS,
                "no WRITE before the READ completed [OPS-039]");
            final byte[] data = pattern(64, 21);
            ctx.tester().inject(t.request(Opcode.READ_RESPONSE).psn(read.psn()).msn(read.msn()).flags(Flags.LAST)
                .messageLength(64).payload(data).build());
            final Packet w = ctx.expect(q -> t.isRequest(q) && q.opcode() == Opcode.WRITE, EXPECT_MS,
                "the fenced WRITE after the READ completed [OPS-039]");
            ctx.tester().inject(t.ack(w, w.psn() + 1).build());
            final List<JsonNode> wc = ctx.poll(s.c(), "send", 2, EXPECT_MS);
            checkEq(2, wc.size(), "completions");
            checkMemory(ctx, local, 0, data, "READ data placed [OPS-022]");
        }, "OPS-039", "OPS-022"));
        return l;
    }
}
