// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.conformance.cases;

import static org.metaroce.conformance.cases.Steps.advance;
import static org.metaroce.conformance.cases.Steps.checkCounter;
import static org.metaroce.conformance.cases.Steps.counterOrMissing;
import static org.metaroce.conformance.cases.Steps.liveness;
import static org.metaroce.conformance.cases.Steps.must;
import static org.metaroce.conformance.cases.Steps.setup;
import static org.metaroce.conformance.suite.CaseContext.EXPECT_MS;
import static org.metaroce.conformance.suite.CaseContext.QUIET_MS;
import static org.metaroce.conformance.suite.CaseContext.check;
import static org.metaroce.conformance.suite.CaseContext.checkEq;
import static org.metaroce.conformance.suite.CaseContext.cm;

import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.metaroce.conformance.agent.AgentException;
import org.metaroce.conformance.agent.AgentProtocol;
import org.metaroce.conformance.cases.Steps.Setup;
import org.metaroce.conformance.suite.CaseContext;
import org.metaroce.conformance.suite.ConformanceCase;
import org.metaroce.conformance.suite.IutConnection;
import org.metaroce.conformance.suite.QpOptions;
import org.metaroce.conformance.tester.Packet;
import org.metaroce.conformance.tester.PacketBuilder;
import org.metaroce.conformance.tester.TesterQp;
import org.metaroce.core.wire.Flags;
import org.metaroce.core.wire.Opcode;

/** Section 9, connection management: the IUT as server and as client, with a cookie-checking peer. */
final class ConnectionCases {
    static final String S = "9 Connection management";

    private ConnectionCases() {
    }

    /** Fails unless the agent has no accepted connection on {@code service} (nothing was allocated). */
    static void noAcceptedConnection(final CaseContext ctx, final long service, final String req) {
        try {
            final ObjectNode r = ctx.call(AgentProtocol.ACCEPTED, o -> {
                o.put("service_id", service);
                o.put("timeout_ms", 100);
            });
            check(false, "no connection delivered to the application " + req, "connection qp " + r.get("qp"));
        } catch (final AgentException ex) {
            check(AgentException.TIMEOUT.equals(ex.code()), "no connection (agent TIMEOUT) " + req,
                ex.code() + ": " + ex.getMessage());
        }
    }

    /** The agent connects to the tester; returns the first CONNECT_REQUEST and the agent's QP handle. */
    static Object[] iutConnects(final CaseContext ctx, final long service, final QpOptions opts) {
        final InetSocketAddress me = ctx.tester().localAddress();
        final ObjectNode r = ctx.call(AgentProtocol.CONNECT, o -> {
            o.put("host", me.getAddress().getHostAddress());
            o.put("port", me.getPort());
            o.put("service_id", service);
            o.put("connect_timeout_ms", 2000);
            o.putArray("access").add("REMOTE_WRITE");
            o.put("pmtu", opts.pmtu());
        });
        final Packet first = ctx.expect(p -> p.wellFormed() && p.opcode() == Opcode.CONNECT_REQUEST
            && p.serviceId() == service, EXPECT_MS, "a CONNECT_REQUEST from the IUT [CM-005]");
        return new Object[] {first, new IutConnection(r.get("qp").asInt(), null)};
    }

    static boolean hasEvent(final List<JsonNode> events, final String type) {
        return events.stream().anyMatch(e -> e.get("type").asText().equals(type));
    }

    static List<ConformanceCase> cases() {
        final List<ConformanceCase> l = new ArrayList<>();
        l.add(must("cm.challenge", S, "a first CONNECT_REQUEST gets a stateless CONNECT_CHALLENGE and allocates "
            + "nothing", ctx -> {
                final long service = ctx.newServiceId();
                ctx.listen(service, QpOptions.defaults());
                final long tid = ctx.random().nextLong();
                final int qpn = ctx.newQpn();
                final byte[] req = ctx.connectRequest(service, tid, qpn, 7, 1024).build();
                ctx.tester().inject(req);
                final Packet c = ctx.expect(cm(Opcode.CONNECT_CHALLENGE, tid), EXPECT_MS, "CONNECT_CHALLENGE [CM-010]");
                checkEq(qpn, c.destQpn(), "Destination QPN = client QPN [CM-001]");
                checkEq(0, c.sourceQpn(), "Source QPN 0 [CM-001]");
                checkEq(0, c.psn(), "PSN 0 [CM-001]");
                checkEq(0, c.pathId(), "Path ID 0 [CM-001]");
                checkEq(service, c.serviceId(), "echoed Service ID [CM-002]");
                check(!Arrays.equals(c.cookie(), new byte[20]), "a non-zero cookie [CM-015]", "zero cookie");
                check(c.bytes().length <= req.length, "no amplification: answer not larger than the request [SEC-005]",
                    c.bytes().length + " > " + req.length);
                checkEq(0, c.payloadLength(), "no private data [CM-010]");
                noAcceptedConnection(ctx, service, "before the cookie returns [CM-011]");
            }, "CM-001", "CM-002", "CM-010", "CM-011", "SEC-005"));

        l.add(must("cm.no-listener", S, "a request for a service without listener is rejected NO_LISTENER", ctx -> {
            final long tid = ctx.random().nextLong();
            ctx.tester().inject(ctx.connectRequest(ctx.newServiceId(), tid, ctx.newQpn(), 1, 1024).build());
            final Packet r = ctx.expect(cm(Opcode.CONNECT_REJECT, tid), EXPECT_MS, "CONNECT_REJECT [CM-010]");
            checkEq(1, r.cmReason(), "reason NO_LISTENER [CM-010]");
        }, "CM-010"));

        l.add(must("cm.bad-mtu", S, "a request with an illegal Path MTU is rejected BAD_PARAMETERS", ctx -> {
            final long service = ctx.newServiceId();
            ctx.listen(service, QpOptions.defaults());
            final long tid = ctx.random().nextLong();
            ctx.tester().inject(ctx.connectRequest(service, tid, ctx.newQpn(), 1, 1024).proposal(300, 0, 16, 16, 1)
                .build());
            final Packet r = ctx.expect(cm(Opcode.CONNECT_REJECT, tid), EXPECT_MS, "CONNECT_REJECT [CM-010]");
            checkEq(4, r.cmReason(), "reason BAD_PARAMETERS [CM-010]");
        }, "CM-010"));

        l.add(must("cm.zero-source-qpn", S, "a request with Source QPN 0 is rejected BAD_PARAMETERS", ctx -> {
            final long service = ctx.newServiceId();
            ctx.listen(service, QpOptions.defaults());
            final long tid = ctx.random().nextLong();
            ctx.tester().inject(ctx.connectRequest(service, tid, 0, 1, 1024).build());
            final Packet r = ctx.expect(cm(Opcode.CONNECT_REJECT, tid), EXPECT_MS, "CONNECT_REJECT [CM-010]");
            checkEq(4, r.cmReason(), "reason BAD_PARAMETERS [CM-010]");
        }, "CM-010"));

        l.add(must("cm.forged-cookie", S, "a forged cookie is re-challenged, counted, and allocates nothing", ctx -> {
            final long service = ctx.newServiceId();
            ctx.listen(service, QpOptions.defaults());
            final long before = counterOrMissing(ctx, "BAD_COOKIE");
            final long tid = ctx.random().nextLong();
            final byte[] forged = new byte[20];
            for (int i = 0; i < forged.length; i++) {
                forged[i] = (byte) ctx.random().nextInt(256);
            }
            ctx.tester().inject(ctx.connectRequest(service, tid, ctx.newQpn(), 1, 1024).cookie(forged).build());
            ctx.expect(cm(Opcode.CONNECT_CHALLENGE, tid), EXPECT_MS, "a new CONNECT_CHALLENGE [CM-010 step 4]");
            ctx.expectNone(cm(Opcode.CONNECT_REPLY, tid), QUIET_MS, "no CONNECT_REPLY [CM-011]");
            checkCounter(ctx, "BAD_COOKIE", before, 1);
            noAcceptedConnection(ctx, service, "for a forged cookie [CM-011, SEC-008]");
        }, "CM-010", "CM-011", "SEC-008"));

        l.add(must("cm.negotiation", S, "the CONNECT_REPLY carries the negotiated minimums and capability "
            + "intersection", ctx -> {
                final long service = ctx.newServiceId();
                ctx.listen(service, QpOptions.defaults().pmtu(1024).depths(8, 4));
                final long tid = ctx.random().nextLong();
                final PacketBuilder req = ctx.connectRequest(service, tid, ctx.newQpn(), 1, 8192)
                    .proposal(8192, 0x0007, 16, 2, 255);
                ctx.tester().inject(req.build());
                final Packet ch = ctx.expect(cm(Opcode.CONNECT_CHALLENGE, tid), EXPECT_MS, "CONNECT_CHALLENGE");
                ctx.tester().inject(req.cookie(ch.cookie()).build());
                final Packet r = ctx.expect(cm(Opcode.CONNECT_REPLY, tid), EXPECT_MS, "CONNECT_REPLY");
                checkEq(1024, r.pathMtu(), "Path MTU = min(8192, 1024) [CM-019]");
                check(r.pathCount() >= 1 && r.pathCount() <= 255, "1 <= Path Count <= proposal [CM-019]",
                    String.valueOf(r.pathCount()));
                check((r.capabilities() & ~0x0007) == 0, "capabilities within the proposal [CM-019]",
                    Integer.toHexString(r.capabilities()));
                checkEq(2, r.initiatorDepth(), "Initiator Depth = min(s.ID 8, c.RR 2) [CM-019]");
                checkEq(4, r.responderResources(), "Responder Resources = min(s.RR 4, c.ID 16) [CM-019]");
                checkEq(service, r.serviceId(), "echoed Service ID [CM-002]");
            }, "CM-019", "CM-002", "GEN-001"));

        l.add(must("cm.declared-capabilities", S, "the reply advertises no capability the IUT does not declare", ctx -> {
            final long service = ctx.newServiceId();
            ctx.listen(service, QpOptions.defaults());
            final long tid = ctx.random().nextLong();
            final PacketBuilder req = ctx.connectRequest(service, tid, ctx.newQpn(), 1, 1024)
                .proposal(1024, 0x001F, 16, 16, 1);
            ctx.tester().inject(req.build());
            final Packet ch = ctx.expect(cm(Opcode.CONNECT_CHALLENGE, tid), EXPECT_MS, "CONNECT_CHALLENGE");
            ctx.tester().inject(req.cookie(ch.cookie()).build());
            final Packet r = ctx.expect(cm(Opcode.CONNECT_REPLY, tid), EXPECT_MS, "CONNECT_REPLY");
            final Set<String> f = new HashSet<>();
            for (final JsonNode n : ctx.call(AgentProtocol.HELLO, o -> o.put("version", AgentProtocol.VERSION))
                .path("features")) {
                f.add(n.asText());
            }
            final int allowed = (f.contains("RECEIVER_CREDIT") ? 1 : 0) | (f.contains("GO_BACK_N") ? 2 : 0)
                | (f.contains("ECN") ? 4 : 0) | (f.contains("SENDER_COUNT") ? 8 : 0)
                | (f.contains("ATTACHED_ACK") ? 0x10 : 0) | (f.contains("DEFERRED_ACK") ? 0x20 : 0);
            check((r.capabilities() & ~allowed) == 0, "only declared capabilities [GEN-001, CONF-002]",
                String.format("0x%04x with declared 0x%04x", r.capabilities(), allowed));
        }, "GEN-001", "CONF-002"));

        l.add(must("cm.duplicate-request", S, "a duplicate second CONNECT_REQUEST re-sends the reply and creates no "
            + "second QP", ctx -> {
                final long service = ctx.newServiceId();
                ctx.listen(service, QpOptions.defaults());
                final long tid = ctx.random().nextLong();
                final PacketBuilder req = ctx.connectRequest(service, tid, ctx.newQpn(), 1, 1024);
                ctx.tester().inject(req.build());
                final Packet ch = ctx.expect(cm(Opcode.CONNECT_CHALLENGE, tid), EXPECT_MS, "CONNECT_CHALLENGE");
                final byte[] second = req.cookie(ch.cookie()).build();
                ctx.tester().inject(second);
                final Packet r1 = ctx.expect(cm(Opcode.CONNECT_REPLY, tid), EXPECT_MS, "CONNECT_REPLY");
                ctx.tester().inject(second);
                final Packet r2 = ctx.expect(cm(Opcode.CONNECT_REPLY, tid), EXPECT_MS, "the CONNECT_REPLY again "
                    + "[CM-025]");
                checkEq(r1.sourceQpn(), r2.sourceQpn(), "the same server QPN [CM-025]");
                checkEq(r1.initialPsn(), r2.initialPsn(), "the same initial PSN [CM-025]");
                sameExceptTimestamp(r1, r2, "the re-sent CONNECT_REPLY [CM-041]");
                ctx.call(AgentProtocol.ACCEPTED, o -> {
                    o.put("service_id", service);
                    o.put("timeout_ms", EXPECT_MS);
                });
                noAcceptedConnection(ctx, service, "a second time [CM-025]");
            }, "CM-025", "CM-041"));

        l.add(must("cm.reply-retransmit", S, "without READY_TO_USE the server retransmits CONNECT_REPLY, not before "
            + "100 ms", ctx -> {
                final long service = ctx.newServiceId();
                ctx.listen(service, QpOptions.defaults());
                final long tid = ctx.random().nextLong();
                final PacketBuilder req = ctx.connectRequest(service, tid, ctx.newQpn(), 1, 1024);
                ctx.tester().inject(req.build());
                final Packet ch = ctx.expect(cm(Opcode.CONNECT_CHALLENGE, tid), EXPECT_MS, "CONNECT_CHALLENGE");
                ctx.tester().inject(req.cookie(ch.cookie()).build());
                final Packet r1 = ctx.expect(cm(Opcode.CONNECT_REPLY, tid), EXPECT_MS, "CONNECT_REPLY");
                final Packet r2 = ctx.expect(cm(Opcode.CONNECT_REPLY, tid), 2000, "a retransmitted CONNECT_REPLY "
                    + "[CM-022]");
                // Judged on the IUT's own Transmit Timestamps [WIRE-013]: the tester's receive
                // stamps carry its thread's wake-up jitter, which could make a correct IUT look
                // early by a fraction of a millisecond [CONF-014].
                final long gapNs = (r2.timestamp() - r1.timestamp()) & 0xFFFF_FFFFL;
                check(gapNs >= 100_000_000L, "no retransmission before CM_RETRANSMIT_INITIAL = 100 ms [CM-022, GEN-004]",
                    String.format("%.3f ms between the two Transmit Timestamps", gapNs / 1e6));
                sameExceptTimestamp(r1, r2, "the retransmitted CONNECT_REPLY [CM-041]");
            }, "CM-022", "CM-041", "GEN-004"));

        l.add(must("cm.disconnect", S, "DISCONNECT_REQUEST is answered DISCONNECT_REPLY and the QP enters ERR", ctx -> {
            final Setup s = setup(ctx);
            final TesterQp t = s.t();
            ctx.tester().inject(t.cm(Opcode.DISCONNECT_REQUEST).build());
            final Packet r = ctx.expect(p -> t.fromIut(p) && p.opcode() == Opcode.DISCONNECT_REPLY, EXPECT_MS,
                "DISCONNECT_REPLY [CM-031]");
            checkEq(t.transactionId, r.transactionId(), "Transaction ID [CM-002]");
            checkEq("ERR", ctx.awaitQpState(s.c(), "ERR", EXPECT_MS), "QP state [CM-031]");
            ctx.tester().inject(t.cm(Opcode.DISCONNECT_REQUEST).build());
            ctx.expect(p -> t.fromIut(p) && p.opcode() == Opcode.DISCONNECT_REPLY, EXPECT_MS,
                "DISCONNECT_REPLY to the duplicate DISCONNECT_REQUEST [CM-034]");
        }, "CM-031", "CM-034", "CM-002"));

        l.add(must("cm.mismatch", S, "a DISCONNECT_REQUEST with a wrong Transaction ID is dropped as CM_MISMATCH",
            ctx -> {
                final Setup s = setup(ctx);
                final TesterQp t = s.t();
                final long before = counterOrMissing(ctx, "CM_MISMATCH");
                ctx.tester().inject(t.cm(Opcode.DISCONNECT_REQUEST).transactionId(t.transactionId ^ 1).build());
                ctx.expectNone(p -> t.fromIut(p) && p.opcode() == Opcode.DISCONNECT_REPLY, QUIET_MS,
                    "no DISCONNECT_REPLY [CM-003]");
                checkCounter(ctx, "CM_MISMATCH", before, 1);
                checkEq("RTS", ctx.qpState(s.c()), "QP state [CM-003]");
                liveness(ctx, s, "after the forged disconnect [CM-003]");
            }, "CM-003", "SEC-012"));

        l.add(must("cm.keepalive-answer", S, "a KEEPALIVE with ACK_REQ is answered at once with an ACK echoing it",
            ctx -> {
                final Setup s = setup(ctx);
                final TesterQp t = s.t();
                ctx.tester().inject(PacketBuilder.of(Opcode.KEEPALIVE).destQpn(t.iutQpn).srcQpn(t.qpn)
                    .flags(Flags.ACK_REQ).psn(t.sendPsn).timestamp(0x0BADF00D).pathId(2).build());
                final Packet a = ctx.expect(p -> t.fromIut(p) && p.opcode() == Opcode.ACK
                    && p.echoedTimestamp() == 0x0BADF00D, EXPECT_MS, "an ACK answering the KEEPALIVE [CM-028]");
                checkEq(t.sendPsn, a.psn(), "PSN = the KEEPALIVE's [CM-028]");
                checkEq(2, a.echoedPathId(), "Echoed Path ID [CM-028]");
                checkEq(t.sendPsn, a.cumulativePsn(), "Cumulative PSN = ePSN [CM-028, REL-012]");
            }, "CM-028", "REL-012"));

        l.add(must("cm.keepalive-no-ackreq", S, "a KEEPALIVE without ACK_REQ is not answered", ctx -> {
            final Setup s = setup(ctx);
            final TesterQp t = s.t();
            ctx.tester().inject(PacketBuilder.of(Opcode.KEEPALIVE).destQpn(t.iutQpn).srcQpn(t.qpn).psn(t.sendPsn)
                .timestamp(0x0FEEDBAC).build());
            ctx.expectNone(p -> t.fromIut(p) && p.opcode() == Opcode.ACK, QUIET_MS, "no ACK [CM-028]");
        }, "CM-028"));

        l.add(must("cm.restarted-peer", S, "a verified new handshake from the same QPN and address replaces the old "
            + "connection", ctx -> {
                final Setup s = setup(ctx);
                final TesterQp old = s.t();
                final long tid = ctx.random().nextLong();
                ctx.call(AgentProtocol.LISTEN, o -> {
                    o.put("service_id", old.serviceId + 1);
                    o.putArray("access").add("REMOTE_WRITE");
                });
                final PacketBuilder req = ctx.connectRequest(old.serviceId + 1, tid, old.qpn, 5, 1024);
                ctx.tester().inject(req.build());
                final Packet ch = ctx.expect(cm(Opcode.CONNECT_CHALLENGE, tid), EXPECT_MS, "CONNECT_CHALLENGE");
                ctx.tester().inject(req.cookie(ch.cookie()).build());
                ctx.expect(cm(Opcode.CONNECT_REPLY, tid), EXPECT_MS, "CONNECT_REPLY for the restarted peer [CM-036]");
                checkEq("ERR", ctx.awaitQpState(s.c(), "ERR", EXPECT_MS), "the old QP's state [CM-036]");
            }, "CM-036"));

        l.add(must("cm.client-handshake", S, "the IUT as client: cookie zero first, identical second request, "
            + "READY_TO_USE", ctx -> {
                final long service = ctx.newServiceId();
                final Object[] st = iutConnects(ctx, service, QpOptions.defaults());
                final Packet first = (Packet) st[0];
                checkEq(0, first.destQpn(), "Destination QPN 0 [CM-001]");
                checkEq(0, first.psn(), "PSN 0 [CM-001]");
                check(first.sourceQpn() != 0, "a non-zero Source QPN [CM-005]", "0");
                check(Arrays.equals(first.cookie(), new byte[20]), "a zero cookie [CM-002]", "non-zero");
                final byte[] cookie = new byte[20];
                Arrays.fill(cookie, (byte) 0x42);
                ctx.tester().inject(PacketBuilder.of(Opcode.CONNECT_CHALLENGE).destQpn(first.sourceQpn())
                    .serviceId(service).transactionId(first.transactionId()).cookie(cookie).build());
                final Packet second = ctx.expect(p -> p.wellFormed() && p.opcode() == Opcode.CONNECT_REQUEST
                    && p.transactionId() == first.transactionId() && !Arrays.equals(p.cookie(), new byte[20]),
                    EXPECT_MS, "the second CONNECT_REQUEST [CM-006]");
                check(Arrays.equals(second.cookie(), cookie), "the challenge's cookie echoed [CM-006]",
                    Steps.hexShort(second.cookie()));
                final byte[] a = Arrays.copyOfRange(first.bytes(), 24, 24 + 28);
                final byte[] b = Arrays.copyOfRange(second.bytes(), 24, 24 + 28);
                check(Arrays.equals(a, b), "the second request identical to the first but for the cookie [CM-006]",
                    "CM fields differ");
                ctx.tester().inject(PacketBuilder.of(Opcode.CONNECT_REPLY).destQpn(first.sourceQpn()).srcQpn(777)
                    .serviceId(service).transactionId(first.transactionId()).initialPsn(1000)
                    .proposal(1024, 0, 16, 16, 1).build());
                ctx.expect(p -> p.wellFormed() && p.opcode() == Opcode.READY_TO_USE
                    && p.transactionId() == first.transactionId() && p.destQpn() == 777, EXPECT_MS,
                    "READY_TO_USE to the server's QPN [CM-007]");
                final IutConnection c = (IutConnection) st[1];
                checkEq("RTS", ctx.awaitQpState(c, "RTS", EXPECT_MS), "client QP state [CM-007]");
            }, "CM-001", "CM-002", "CM-005", "CM-006", "CM-007", "WIRE-070"));

        l.add(must("cm.client-reject", S, "the IUT as client: CONNECT_REJECT raises REJECTED and ends in ERR", ctx -> {
            final long service = ctx.newServiceId();
            final Object[] st = iutConnects(ctx, service, QpOptions.defaults());
            final Packet first = (Packet) st[0];
            ctx.tester().inject(PacketBuilder.of(Opcode.CONNECT_REJECT).destQpn(first.sourceQpn()).serviceId(service)
                .transactionId(first.transactionId()).cmReason(2).build());
            final IutConnection c = (IutConnection) st[1];
            checkEq("ERR", ctx.awaitQpState(c, "ERR", EXPECT_MS), "client QP state [CM-008]");
            check(hasEvent(ctx.events(), "REJECTED"), "a REJECTED event [CM-008]", "none");
        }, "CM-008"));

        l.add(must("cm.client-bad-reply", S, "the IUT as client: a reply above its proposal is refused with "
            + "DISCONNECT_REQUEST BAD_PARAMETERS", ctx -> {
                final long service = ctx.newServiceId();
                final Object[] st = iutConnects(ctx, service, QpOptions.defaults().pmtu(1024));
                final Packet first = (Packet) st[0];
                ctx.tester().inject(PacketBuilder.of(Opcode.CONNECT_REPLY).destQpn(first.sourceQpn()).srcQpn(4242)
                    .serviceId(service).transactionId(first.transactionId()).initialPsn(1)
                    .proposal(8192, 0, 16, 16, 1).build());
                final Packet d = ctx.expect(p -> p.wellFormed() && p.opcode() == Opcode.DISCONNECT_REQUEST
                    && p.transactionId() == first.transactionId(), EXPECT_MS, "DISCONNECT_REQUEST [CM-009]");
                checkEq(4, d.cmReason(), "reason BAD_PARAMETERS [CM-009]");
                checkEq(4242, d.destQpn(), "to the server QP [CM-009]");
                checkEq("ERR", ctx.awaitQpState((IutConnection) st[1], "ERR", EXPECT_MS), "client QP state [CM-009]");
            }, "CM-009"));

        l.add(must("cm.client-rechallenge", S, "the IUT as client: a new CONNECT_CHALLENGE replaces the cookie", ctx -> {
            final long service = ctx.newServiceId();
            final Object[] st = iutConnects(ctx, service, QpOptions.defaults());
            final Packet first = (Packet) st[0];
            for (final byte fill : new byte[] {0x11, 0x22}) {
                final byte[] cookie = new byte[20];
                Arrays.fill(cookie, fill);
                ctx.tester().inject(PacketBuilder.of(Opcode.CONNECT_CHALLENGE).destQpn(first.sourceQpn())
                    .serviceId(service).transactionId(first.transactionId()).cookie(cookie).build());
                ctx.expect(p -> p.wellFormed() && p.opcode() == Opcode.CONNECT_REQUEST
                    && Arrays.equals(p.cookie(), cookie), EXPECT_MS, "a CONNECT_REQUEST with cookie "
                    + Steps.hexShort(cookie) + " [CM-006]");
            }
        }, "CM-006"));

        l.add(must("cm.initial-psn-random", S, "initial PSNs differ per connection and follow no counter", ctx -> {
            final List<Integer> psns = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                psns.add(ctx.connect(QpOptions.defaults()).tester().iutInitialPsn);
            }
            check(new HashSet<>(psns).size() == 4, "four different initial PSNs [CM-020]", psns.toString());
            final Set<Integer> steps = new HashSet<>();
            for (int i = 1; i < psns.size(); i++) {
                steps.add(psns.get(i) - psns.get(i - 1));
            }
            check(steps.size() > 1, "not derived from a counter [SEC-002]", "constant step " + steps);
        }, "CM-020", "SEC-002"));

        l.add(Steps.should("cm.qpn-random", S, "QPNs are allocated at random, not sequentially", ctx -> {
            final List<Integer> qpns = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                qpns.add(ctx.connect(QpOptions.defaults()).tester().iutQpn);
            }
            final Set<Integer> steps = new HashSet<>();
            for (int i = 1; i < qpns.size(); i++) {
                steps.add(qpns.get(i) - qpns.get(i - 1));
            }
            check(steps.size() > 1, "QPNs with no constant step [QP-001, SEC-001]", qpns.toString());
        }, "QP-001", "SEC-001"));

        l.add(must("cm.late-packet-after-teardown", S, "a data packet of a disconnected connection reaches nothing",
            ctx -> {
                final Setup s = setup(ctx);
                final TesterQp t = s.t();
                final byte[] late = Steps.write(s, 0, Steps.le64(1)).build();
                ctx.tester().inject(t.cm(Opcode.DISCONNECT_REQUEST).build());
                ctx.expect(p -> t.fromIut(p) && p.opcode() == Opcode.DISCONNECT_REPLY, EXPECT_MS, "DISCONNECT_REPLY");
                final IutConnection next = ctx.connect(QpOptions.defaults());
                ctx.tester().inject(late);
                ctx.expectNone(p -> t.fromIut(p) && p.opcode() != Opcode.DISCONNECT_REPLY, QUIET_MS,
                    "no answer to a late packet of the old connection [CM-034]");
                Steps.checkUntouched(ctx, s.mr(), 0, 8, 0, "[CM-034, CM-035]");
                checkEq("RTS", ctx.qpState(next), "the new connection unaffected [CM-035]");
                advance(t);
            }, "CM-034", "CM-035"));
        return l;
    }

    /**
     * A CM packet repeated by retransmission or re-sending carries the same bytes as the first
     * except the Transmit Timestamp (its own send time, WIRE-013) and the Integrity Check [CM-041].
     */
    static void sameExceptTimestamp(final Packet first, final Packet again, final String what) {
        final byte[] a = first.bytes();
        final byte[] b = again.bytes();
        checkEq(a.length, b.length, what + ": length");
        for (int i = 0; i < a.length - 4; i++) {
            if (i >= org.metaroce.core.wire.BaseHeader.TIMESTAMP_OFFSET
                && i < org.metaroce.core.wire.BaseHeader.TIMESTAMP_OFFSET + 4) {
                continue;
            }
            if (a[i] != b[i]) {
                check(false, what + ": every byte but the Transmit Timestamp and the Integrity Check as in the first",
                    String.format("byte %d is 0x%02x, was 0x%02x", i, b[i] & 0xFF, a[i] & 0xFF));
            }
        }
    }
}
