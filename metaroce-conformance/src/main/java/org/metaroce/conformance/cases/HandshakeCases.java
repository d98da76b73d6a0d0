// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.conformance.cases;

import static org.metaroce.conformance.cases.Steps.must;
import static org.metaroce.conformance.cases.Steps.setup;
import static org.metaroce.conformance.cases.Steps.write;
import static org.metaroce.conformance.suite.CaseContext.EXPECT_MS;
import static org.metaroce.conformance.suite.CaseContext.QUIET_MS;
import static org.metaroce.conformance.suite.CaseContext.check;
import static org.metaroce.conformance.suite.CaseContext.checkEq;
import static org.metaroce.conformance.suite.CaseContext.pattern;

import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
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
import org.metaroce.core.wire.Opcode;

/** More of section 9: unknown reasons, client timeout, duplicate replies, keepalive and peer death. */
final class HandshakeCases {
    static final String S = ConnectionCases.S;

    private HandshakeCases() {
    }

    /** Has the IUT connect to the tester; returns its agent handle and its first CONNECT_REQUEST. */
    private static Object[] iutConnects(final CaseContext ctx, final long service, final long timeoutMs) {
        final InetSocketAddress me = ctx.tester().localAddress();
        final ObjectNode r = ctx.call(AgentProtocol.CONNECT, o -> {
            o.put("host", me.getAddress().getHostAddress());
            o.put("port", me.getPort());
            o.put("service_id", service);
            o.put("connect_timeout_ms", timeoutMs);
        });
        final Packet first = ctx.expect(p -> p.wellFormed() && p.opcode() == Opcode.CONNECT_REQUEST
            && p.serviceId() == service, EXPECT_MS, "a CONNECT_REQUEST from the IUT [CM-005]");
        return new Object[] {r.get("qp").asInt(), first};
    }

    static List<ConformanceCase> cases() {
        final List<ConformanceCase> l = new ArrayList<>();
        l.add(must("cm.reject-unknown-reason", S, "a CONNECT_REJECT with an unknown Reason is a rejection with the "
            + "raw code", ctx -> {
                final long service = ctx.newServiceId();
                final Object[] c = iutConnects(ctx, service, 3000);
                final int qp = (int) c[0];
                final Packet first = (Packet) c[1];
                ctx.tester().inject(PacketBuilder.of(Opcode.CONNECT_REJECT).destQpn(first.sourceQpn()).srcQpn(0)
                    .serviceId(service).transactionId(first.transactionId()).cmReason(0x5A).build());
                final List<JsonNode> seen = new ArrayList<>();
                final JsonNode e = TimerCases.awaitEvent(ctx, qp, "REJECTED", EXPECT_MS, seen);
                check(e != null, "a REJECTED event [CM-018]", "events " + seen);
                checkEq(0x5A, e.path("reason").asInt(), "the event's reason: the raw code [CM-018]");
                final String st = ctx.awaitQpState(new IutConnection(qp, null), "ERR", EXPECT_MS);
                checkEq("ERR", st, "the rejected client's QP state [CM-008]");
            }, "CM-018", "CM-008"));

        l.add(must("cm.disconnect-unknown-reason", S, "a DISCONNECT_REQUEST with an unknown Reason is a NORMAL "
            + "disconnect", ctx -> {
                final Setup s = setup(ctx);
                final TesterQp t = s.t();
                ctx.events();
                ctx.tester().inject(t.cm(Opcode.DISCONNECT_REQUEST).cmReason(0x66).build());
                ctx.expect(p -> t.fromIut(p) && p.opcode() == Opcode.DISCONNECT_REPLY, EXPECT_MS,
                    "DISCONNECT_REPLY [CM-031]");
                final List<JsonNode> seen = new ArrayList<>();
                final JsonNode e = TimerCases.awaitEvent(ctx, s.c().qp(), "DISCONNECTED", EXPECT_MS, seen);
                check(e != null, "a DISCONNECTED event [CM-018]", "events " + seen);
                checkEq(0, e.path("reason").asInt(), "the event's reason: NORMAL (0) [CM-018]");
            }, "CM-018", "CM-031"));

        l.add(must("cm.client-timeout", S, "a client without any answer gives up after CONNECT_TIMEOUT: UNREACHABLE, "
            + "QP in ERR, no more requests", ctx -> {
                final long service = ctx.newServiceId();
                final long started = System.nanoTime();
                final Object[] c = iutConnects(ctx, service, 400);
                final int qp = (int) c[0];
                final Packet first = (Packet) c[1];
                // Not before CONNECT_TIMEOUT (GEN-004): nothing at 250 ms.
                LowerTester.sleep(Math.max(0, 250 - (System.nanoTime() - started) / 1_000_000L));
                final List<JsonNode> seen = new ArrayList<>();
                for (final JsonNode e : ctx.events()) {
                    seen.add(e);
                    check(!(e.path("type").asText().equals("UNREACHABLE") && e.path("qp").asInt(-1) == qp),
                        "no UNREACHABLE before the 400 ms CONNECT_TIMEOUT [CM-023, GEN-004]", "UNREACHABLE at "
                        + (System.nanoTime() - started) / 1_000_000L + " ms");
                }
                final JsonNode e = TimerCases.awaitEvent(ctx, qp, "UNREACHABLE", 3000, seen);
                check(e != null, "UNREACHABLE within 3 s of a 400 ms CONNECT_TIMEOUT [CM-023]", "events " + seen);
                checkEq("ERR", ctx.awaitQpState(new IutConnection(qp, null), "ERR", EXPECT_MS), "QP state [CM-023]");
                LowerTester.sleep(20);
                ctx.tester().clearBacklog();
                ctx.expectNone(p -> p.wellFormed() && p.opcode() == Opcode.CONNECT_REQUEST
                    && p.transactionId() == first.transactionId(), QUIET_MS, "no CONNECT_REQUEST after giving up "
                    + "[CM-023]");
            }, "CM-023", "GEN-004"));

        l.add(must("cm.duplicate-reply", S, "a client in RTS answers a duplicate CONNECT_REPLY with READY_TO_USE and "
            + "ignores a duplicate CONNECT_CHALLENGE", ctx -> {
                final IutConnection c = ctx.acceptFromIut(QpOptions.defaults(), 1024);
                final TesterQp t = c.tester();
                ctx.tester().inject(t.handshakeReply);
                ctx.expect(p -> p.wellFormed() && p.opcode() == Opcode.READY_TO_USE
                    && p.transactionId() == t.transactionId, EXPECT_MS, "READY_TO_USE re-sent [CM-026]");
                ctx.tester().inject(PacketBuilder.of(Opcode.CONNECT_CHALLENGE).destQpn(t.iutQpn).srcQpn(0)
                    .serviceId(t.serviceId).transactionId(t.transactionId).cookie(new byte[20]).build());
                ctx.expectNone(p -> p.wellFormed() && p.opcode() == Opcode.CONNECT_REQUEST
                    && p.transactionId() == t.transactionId, QUIET_MS, "no CONNECT_REQUEST for a duplicate "
                    + "CONNECT_CHALLENGE [CM-026]");
                checkEq("RTS", ctx.qpState(c), "the client's QP state [CM-026]");
            }, "CM-026"));

        l.add(must("cm.keepalive-idle", S, "a silent peer gets KEEPALIVEs after KEEPALIVE_IDLE, is declared dead "
            + "after the probes, and the QP stays in ERR", ctx -> {
                // RETRY_TIMEOUT 0: the probes alone decide [CM-030] (else 15 s of silence [REL-060]).
                final Setup s = setup(ctx, QpOptions.defaults().retryTimeoutMs(0));
                final TesterQp t = s.t();
                // Last packet of the tester: the WRITE below (its ACK is the IUT's last expected packet).
                ctx.tester().inject(write(s, 0, pattern(8, 1)).build());
                final long lastSent = System.nanoTime();
                Steps.advance(t);
                final Packet k = ctx.expect(p -> t.fromIut(p) && p.opcode() == Opcode.KEEPALIVE, 3000,
                    "a KEEPALIVE after KEEPALIVE_IDLE (1 s) of silence [CM-027]");
                final long idleMs = (k.receivedNs() - lastSent) / 1_000_000L;
                check(idleMs >= 1000, "no KEEPALIVE before KEEPALIVE_IDLE = 1 s [CM-027, GEN-004]",
                    "after " + idleMs + " ms");
                check(k.has(Flags.ACK_REQ), "ACK_REQ on the KEEPALIVE [CM-027]", Flags.toString(k.flags()));
                checkEq(t.iutInitialPsn, k.psn(), "PSN = the next PSN the IUT's requester assigns [CM-027]");
                // No answers: after KEEPALIVE_PROBES unanswered probes (2 s of silence) the peer is dead.
                final String st = ctx.awaitQpState(s.c(), "ERR", 4000);
                final long deadMs = (System.nanoTime() - lastSent) / 1_000_000L;
                checkEq("ERR", st, "QP state once the probes went unanswered [CM-030]");
                check(deadMs >= 1900, "the peer not declared dead before 2 s of silence [CM-030]",
                    "ERR after " + deadMs + " ms");
                ctx.tester().inject(write(s, 8, pattern(8, 2)).build());
                LowerTester.sleep(50);
                checkEq("ERR", ctx.qpState(s.c()), "QP state after a valid packet: ERR until reset [QP-019]");
                Steps.checkUntouched(ctx, s.mr(), 8, 8, 0, "by a request to a QP in ERR [QP-011]");
            }, "CM-027", "CM-030", "CM-042", "QP-019", "GEN-004"));
        return l;
    }
}
