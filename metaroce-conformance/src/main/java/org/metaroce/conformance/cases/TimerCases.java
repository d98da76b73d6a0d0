// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.conformance.cases;

import static org.metaroce.conformance.cases.Steps.must;
import static org.metaroce.conformance.cases.Steps.setup;
import static org.metaroce.conformance.suite.CaseContext.EXPECT_MS;
import static org.metaroce.conformance.suite.CaseContext.QUIET_MS;
import static org.metaroce.conformance.suite.CaseContext.check;
import static org.metaroce.conformance.suite.CaseContext.checkEq;

import java.util.ArrayList;
import java.util.List;

import com.fasterxml.jackson.databind.JsonNode;
import org.metaroce.conformance.agent.AgentProtocol;
import org.metaroce.conformance.cases.Steps.Setup;
import org.metaroce.conformance.suite.CaseContext;
import org.metaroce.conformance.suite.ConformanceCase;
import org.metaroce.conformance.suite.IutConnection;
import org.metaroce.conformance.suite.QpOptions;
import org.metaroce.conformance.tester.LowerTester;
import org.metaroce.conformance.tester.Packet;
import org.metaroce.conformance.tester.PacketBuilder;
import org.metaroce.conformance.tester.TesterQp;
import org.metaroce.core.wire.Flags;
import org.metaroce.core.wire.NackReason;
import org.metaroce.core.wire.Opcode;

/** Timers and state rules of sections 4, 6 and 9: the first RTO, transmission limit, CM timeouts. */
final class TimerCases {
    private TimerCases() {
    }

    /** @return Transmit Timestamp interval b − a on the IUT's clock, in ns (low 32 bits, REL-020) */
    static long txInterval(final Packet a, final Packet b) {
        return Integer.toUnsignedLong(b.timestamp() - a.timestamp());
    }

    /** Polls the agent's events until one of {@code type} for {@code qp}; null when none in time. */
    static JsonNode awaitEvent(final CaseContext ctx, final int qp, final String type, final long timeoutMs,
                               final List<JsonNode> seen) {
        final long end = System.nanoTime() + timeoutMs * 1_000_000L;
        do {
            for (final JsonNode e : ctx.events()) {
                seen.add(e);
                if (e.path("type").asText().equals(type) && e.path("qp").asInt(-1) == qp) {
                    return e;
                }
            }
            LowerTester.sleep(10);
        } while (System.nanoTime() - end < 0);
        return null;
    }

    static List<ConformanceCase> cases() {
        final List<ConformanceCase> l = new ArrayList<>();
        l.add(must("rel.initial-rto", ReliabilityCases.S, "before any RTT sample nothing is resent before TIMEOUT "
            + "(20 ms), judged on the IUT's Transmit Timestamps", ctx -> {
                final Setup s = setup(ctx, QpOptions.defaults().timeoutUs(20_000));
                final TesterQp t = s.t();
                ReliabilityCases.iutWrite(ctx, s, 1, 64);
                final Packet original = ctx.expect(t::isRequest, EXPECT_MS, "the WRITE");
                final Packet copy = ctx.expect(q -> t.isRequest(q) && q.psn() == original.psn(), EXPECT_MS,
                    "a probe or timeout retransmission while no ACK arrives [REL-026, REL-028]");
                final long us = txInterval(original, copy) / 1000;
                check(us >= 20_000, "no copy before RTO = PTO = TIMEOUT = 20 ms without an RTT sample [REL-027, "
                    + "REL-026, GEN-004]", "copy sent " + us + " us after the original (IUT clock)");
                check(copy.has(Flags.RETRANSMIT), "RETRANSMIT on the copy [WIRE-016]", Flags.toString(copy.flags()));
                ctx.tester().inject(t.ack(copy, original.psn() + 1).build());
                checkEq("SUCCESS", ReliabilityCases.sendCompletion(ctx, s, EXPECT_MS).get("status").asText(),
                    "status [OPS-034]");
            }, "REL-027", "REL-026", "GEN-004"));

        l.add(must("rel.transmission-limit", ReliabilityCases.S, "a packet sent 16 times without delivery ends the "
            + "connection, whatever made it resend", ctx -> {
                final Setup s = setup(ctx, QpOptions.defaults().timeoutUs(200_000).retryTimeoutMs(0));
                final TesterQp t = s.t();
                ReliabilityCases.iutWrite(ctx, s, 1, 64);
                int transmissions = 0;
                final long end = System.nanoTime() + 5_000_000_000L;
                List<JsonNode> wc = List.of();
                while (System.nanoTime() < end && wc.isEmpty()) {
                    final Packet p = ctx.tester().poll(t::isRequest, 20);
                    if (p != null) {
                        transmissions++;
                        // Each copy is refused as outside the window: it is resent at once [REL-003].
                        ctx.tester().inject(t.nack(p, NackReason.PSN_WINDOW.code()).cumulativePsn(p.psn()).build());
                    }
                    wc = ctx.poll(s.c(), "send", 1, 0);
                }
                check(!wc.isEmpty(), "the WR ends within 5 s of PSN_WINDOW refusals [REL-030]",
                    transmissions + " transmissions, no completion");
                check(transmissions <= 16, "at most 16 transmissions of one packet [REL-030]",
                    transmissions + " transmissions");
                checkEq("RETRY_EXC_ERR", wc.get(0).get("status").asText(), "status, as REL-029 [REL-030]");
                checkEq("ERR", ctx.awaitQpState(s.c(), "ERR", EXPECT_MS), "QP state [REL-030]");
            }, "REL-030", "REL-029"));

        l.add(must("rel.trims-not-counted", ReliabilityCases.S, "20 transmissions answered by NACK TRIMMED do not "
            + "end the connection; the WR then succeeds", ctx -> {
                final Setup s = setup(ctx, QpOptions.defaults().timeoutUs(200_000));
                final TesterQp t = s.t();
                ReliabilityCases.iutWrite(ctx, s, 1, 64);
                Packet last = null;
                for (int i = 0; i < 20; i++) {
                    last = ctx.expect(t::isRequest, EXPECT_MS, "transmission " + (i + 1) + " of the WRITE, resent "
                        + "after each NACK TRIMMED [REL-036, REL-059]");
                    if (i < 19) {
                        ctx.tester().inject(t.nack(last, NackReason.TRIMMED.code()).build());
                    }
                }
                check(ctx.poll(s.c(), "send", 1, 0).isEmpty(), "no completion: trims do not count towards the "
                    + "16-transmission limit [REL-059]", "completed");
                ctx.tester().inject(t.ack(last, last.psn() + 1).build());
                checkEq("SUCCESS", ReliabilityCases.sendCompletion(ctx, s, EXPECT_MS).get("status").asText(),
                    "status after 19 trims and an ACK [REL-059]");
                checkEq("RTS", ctx.qpState(s.c()), "QP state [REL-059]");
            }, "REL-059", "REL-036"));

        l.add(must("cm.server-timeout", ConnectionCases.S, "a server without READY_TO_USE or data raises "
            + "CONNECT_ERROR after CONNECT_TIMEOUT (3 s), not before", ctx -> {
                final long started = System.nanoTime();
                final IutConnection c = ctx.connect(QpOptions.defaults(), false, ctx.random().nextInt());
                ctx.events();
                final List<JsonNode> seen = new ArrayList<>();
                final JsonNode early = awaitEvent(ctx, c.qp(), "CONNECT_ERROR", 2500, seen);
                check(early == null, "no CONNECT_ERROR before CONNECT_TIMEOUT = 3 s [CM-024, GEN-004]",
                    "CONNECT_ERROR after " + (System.nanoTime() - started) / 1_000_000L + " ms");
                final JsonNode e = awaitEvent(ctx, c.qp(), "CONNECT_ERROR", 3000, seen);
                check(e != null, "CONNECT_ERROR within 5.5 s [CM-024]", "events " + seen);
                checkEq("ERR", ctx.awaitQpState(c, "ERR", EXPECT_MS), "QP state [CM-024]");
            }, "CM-024", "GEN-004"));

        l.add(must("cm.disconnect-timeout", ConnectionCases.S, "the disconnecting side raises DISCONNECTED on "
            + "DISCONNECT_REPLY, or after DISCONNECT_TIMEOUT without one", ctx -> {
                final Setup answered = setup(ctx);
                final Setup silent = setup(ctx);
                ctx.events();
                final long silentStart = System.nanoTime();
                for (final Setup s : List.of(answered, silent)) {
                    ctx.call(AgentProtocol.DISCONNECT, o -> o.put("qp", s.c().qp()));
                }
                final TesterQp ta = answered.t();
                final Packet req = ctx.expect(p -> ta.fromIut(p) && p.opcode() == Opcode.DISCONNECT_REQUEST,
                    EXPECT_MS, "DISCONNECT_REQUEST [CM-031]");
                ctx.tester().inject(PacketBuilder.of(Opcode.DISCONNECT_REPLY).destQpn(ta.iutQpn).srcQpn(ta.qpn)
                    .serviceId(ta.serviceId).transactionId(req.transactionId()).build());
                final List<JsonNode> seen = new ArrayList<>();
                check(awaitEvent(ctx, answered.c().qp(), "DISCONNECTED", EXPECT_MS, seen) != null,
                    "DISCONNECTED on DISCONNECT_REPLY [CM-032]", "events " + seen);
                final JsonNode e = awaitEvent(ctx, silent.c().qp(), "DISCONNECTED", 3000, seen);
                check(e != null, "DISCONNECTED after DISCONNECT_TIMEOUT (1 s) without a reply [CM-032]",
                    "events " + seen);
                final long ms = (System.nanoTime() - silentStart) / 1_000_000L;
                check(ms >= 900, "the unanswered side waits DISCONNECT_TIMEOUT for a reply [CM-032]",
                    "DISCONNECTED after " + ms + " ms");
                final List<Packet> retries = ctx.tester().collect(p -> silent.t().fromIut(p)
                    && p.opcode() == Opcode.DISCONNECT_REQUEST, 0);
                check(!retries.isEmpty(), "DISCONNECT_REQUEST (re)sent to the silent peer [CM-032]", "none");
            }, "CM-032", "CM-031"));

        l.add(must("cm.disconnect-in-rtr", ConnectionCases.S, "a DISCONNECT_REQUEST reaches the CM of a QP still in "
            + "RTR", ctx -> {
                final IutConnection c = ctx.connect(QpOptions.defaults(), false, ctx.random().nextInt());
                checkEq("RTR", ctx.qpState(c), "the server's QP before READY_TO_USE [CM-013]");
                final TesterQp t = c.tester();
                ctx.tester().inject(t.cm(Opcode.DISCONNECT_REQUEST).build());
                ctx.expect(p -> t.fromIut(p) && p.opcode() == Opcode.DISCONNECT_REPLY, EXPECT_MS,
                    "DISCONNECT_REPLY from a QP in RTR [CM-004]");
                checkEq("ERR", ctx.awaitQpState(c, "ERR", EXPECT_MS), "QP state [CM-031]");
            }, "CM-004", "CM-031"));

        l.add(must("qp.rtr-sends-no-request", QpCases.S, "a send WR posted in RTR is refused with INVALID_QP_STATE "
            + "and nothing is sent; the same WR posted once the QP is in RTS goes out", ctx -> {
                final IutConnection c = ctx.connect(QpOptions.defaults(), false, ctx.random().nextInt());
                final TesterQp t = c.tester();
                checkEq("RTR", ctx.qpState(c), "the server's QP before READY_TO_USE [CM-013]");
                final org.metaroce.conformance.suite.Mr local = ctx.regMr(64, 1, "LOCAL_WRITE");
                final java.util.function.Consumer<com.fasterxml.jackson.databind.node.ObjectNode> target = o -> {
                    o.put("remote_addr", 4096);
                    o.put("rkey", 3);
                };
                // Table 4.6: a post in RTR fails INVALID_QP_STATE and creates no WR [QP-015]. v1.0
                // of this case also accepted a post that was kept and sent after RTS (v1.0.1).
                String refusal = null;
                try {
                    ctx.postSend(c, 1, "RDMA_WRITE", local, 0, 64, target);
                } catch (final org.metaroce.conformance.agent.AgentException ex) {
                    check(org.metaroce.conformance.agent.AgentException.FAILED.equals(ex.code()),
                        "the post refused with error FAILED [CONF-021]", ex.code() + ": " + ex.getMessage());
                    refusal = String.valueOf(ex.status());
                }
                checkEq("INVALID_QP_STATE", refusal, "status of a send WR posted in RTR [QP-015, CONF-021]");
                ctx.expectNone(t::isRequest, QUIET_MS, "no request from a QP in RTR [QP-012]");
                ctx.tester().inject(t.cm(Opcode.READY_TO_USE).build());
                checkEq("RTS", ctx.awaitQpState(c, "RTS", EXPECT_MS), "the QP after READY_TO_USE [CM-013]");
                ctx.expectNone(t::isRequest, QUIET_MS, "nothing sent for the refused WR once in RTS [QP-015]");
                ctx.postSend(c, 2, "RDMA_WRITE", local, 0, 64, target);
                final Packet w = ctx.expect(t::isRequest, EXPECT_MS, "the WRITE posted in RTS [QP-015]");
                ctx.tester().inject(t.ack(w, w.psn() + 1).build());
                final List<JsonNode> wc = ctx.poll(c, "send", 1, EXPECT_MS);
                check(!wc.isEmpty(), "a completion of the WRITE", "none");
                checkEq(2L, wc.get(0).get("wr_id").asLong(), "the completion is the WR posted in RTS, not the refused "
                    + "one [QP-015]");
                checkEq("SUCCESS", wc.get(0).get("status").asText(), "status");
                check(ctx.poll(c, "send", 1, QUIET_MS).isEmpty(), "no completion for the refused WR [QP-015]",
                    "a second completion");
            }, "QP-012", "QP-015", "CONF-021"));
        return l;
    }
}
