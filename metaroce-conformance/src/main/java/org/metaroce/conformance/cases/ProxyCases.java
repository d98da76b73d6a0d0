// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.conformance.cases;

import static org.metaroce.conformance.cases.Steps.must;
import static org.metaroce.conformance.suite.CaseContext.EXPECT_MS;
import static org.metaroce.conformance.suite.CaseContext.check;
import static org.metaroce.conformance.suite.CaseContext.checkEq;

import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import com.fasterxml.jackson.databind.JsonNode;
import org.metaroce.conformance.agent.AgentProtocol;
import org.metaroce.conformance.cases.Steps.Setup;
import org.metaroce.conformance.proxy.FaultProfile;
import org.metaroce.conformance.proxy.FaultProxy;
import org.metaroce.conformance.proxy.PacketMutator;
import org.metaroce.conformance.suite.CaseContext;
import org.metaroce.conformance.suite.ConformanceCase;
import org.metaroce.conformance.suite.IutConnection;
import org.metaroce.conformance.suite.QpOptions;
import org.metaroce.conformance.tester.Packet;
import org.metaroce.conformance.tester.PacketBuilder;
import org.metaroce.core.wire.Opcode;

/** Peer behaviour over a seeded faulty link: the fault proxy sits between the tester and the IUT. */
final class ProxyCases {
    private ProxyCases() {
    }

    /** Runs {@code body} with the tester talking to the IUT through a fault proxy. */
    interface ProxiedBody {
        void run(CaseContext ctx, FaultProxy proxy) throws Exception;
    }

    static void viaProxy(final CaseContext ctx, final ProxiedBody body) throws Exception {
        final InetSocketAddress iut = ctx.tester().target();
        try (FaultProxy proxy = new FaultProxy(new InetSocketAddress(iut.getAddress(), 0), iut, FaultProfile.NONE,
            FaultProfile.NONE, ctx.random().nextLong(), PacketMutator.NONE)) {
            ctx.tester().target(proxy.listenAddress());
            try {
                body.run(ctx, proxy);
            } finally {
                ctx.tester().target(iut);
            }
        }
    }

    static List<ConformanceCase> cases() {
        final List<ConformanceCase> l = new ArrayList<>();
        l.add(must("rel.lossy-link-transfer", ReliabilityCases.S, "a 48-packet WRITE over a link with 10% loss, "
            + "reordering and duplication is delivered and completes once", ctx -> viaProxy(ctx, (c, proxy) -> {
                final Setup s = Steps.setup(c, QpOptions.defaults().timeoutUs(20_000));
                final FaultProfile lossy = FaultProfile.parse("loss=10,reorder=10,reorder-ms=0.3,dup=5");
                proxy.profiles(lossy, lossy);
                ReliabilityCases.iutWrite(c, s, 1, 48 * s.t().pmtu);
                final SackResponder r = new SackResponder(c, s.t(), s.t().iutInitialPsn, 48, new int[48]);
                check(r.run(5000, 100), "every PSN delivered despite the faults [REL-023, REL-028]",
                    "incomplete; proxy " + proxy.toClientStats());
                // The last ACKs may be lost too: keep answering until the WR completes.
                List<JsonNode> wc = List.of();
                final long end = System.nanoTime() + 5_000_000_000L;
                while (wc.isEmpty() && System.nanoTime() < end) {
                    r.serve(20);
                    wc = c.poll(s.c(), "send", 1, 0);
                }
                check(!wc.isEmpty(), "a send completion", "none within 5 s");
                checkEq("SUCCESS", wc.get(0).get("status").asText(), "the WRITE's status [OPS-034]");
                proxy.profiles(FaultProfile.NONE, FaultProfile.NONE);
                r.serve(100);
                final List<JsonNode> more = c.poll(s.c(), "send", 1, 0);
                check(wc.size() == 1 && more.isEmpty(), "exactly one completion [OPS-033, OPS-037]",
                    (wc.size() + more.size()) + " completions");
            }), "REL-023", "REL-028", "REL-041", "OPS-034"));

        l.add(must("cm.client-setup-under-loss", ConnectionCases.S, "the IUT as client connects over a link with 25% "
            + "loss by retransmitting its requests", c -> {
                final FaultProfile lossy = FaultProfile.parse("loss=25");
                final long service = c.newServiceId();
                final IutConnection conn;
                // The IUT connects to the proxy, which forwards to the tester.
                try (FaultProxy reverse = new FaultProxy(new InetSocketAddress(c.tester().localAddress().getAddress(),
                    0), c.tester().localAddress(), lossy, lossy, c.random().nextLong(), PacketMutator.NONE)) {
                    final InetSocketAddress via = reverse.listenAddress();
                    final JsonNode r = c.call(AgentProtocol.CONNECT, o -> {
                        o.put("host", via.getAddress().getHostAddress());
                        o.put("port", via.getPort());
                        o.put("service_id", service);
                        o.put("connect_timeout_ms", 3000);
                    });
                    conn = new IutConnection(r.get("qp").asInt(), null);
                    final byte[] cookie = new byte[20];
                    Arrays.fill(cookie, (byte) 0x77);
                    byte[] reply = null;
                    final long end = System.nanoTime() + 3_500_000_000L;
                    String state = "";
                    while (System.nanoTime() < end && !state.equals("RTS")) {
                        final Packet p = c.tester().poll(q -> q.wellFormed() && q.opcode() == Opcode.CONNECT_REQUEST
                            && q.serviceId() == service, 50);
                        if (p != null) {
                            if (Arrays.equals(p.cookie(), new byte[20])) {
                                c.tester().inject(PacketBuilder.of(Opcode.CONNECT_CHALLENGE).destQpn(p.sourceQpn())
                                    .serviceId(service).transactionId(p.transactionId()).cookie(cookie).build(),
                                    p.source());
                            } else {
                                if (reply == null) {
                                    reply = PacketBuilder.of(Opcode.CONNECT_REPLY).destQpn(p.sourceQpn()).srcQpn(4711)
                                        .serviceId(service).transactionId(p.transactionId()).initialPsn(9)
                                        .proposal(1024, 0, 16, 16, 1).build();
                                }
                                c.tester().inject(reply, p.source());
                            }
                        }
                        state = c.qpState(conn);
                    }
                    checkEq("RTS", state, "client QP state within the connect timeout; link " + reverse.toTargetStats()
                        + " [CM-022, CM-007]");
                }
            }, "CM-022", "CM-006", "CM-007"));
        return l;
    }
}
