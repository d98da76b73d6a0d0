// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.conformance.suite;

import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.function.Consumer;
import java.util.function.Predicate;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.metaroce.conformance.agent.AgentClient;
import org.metaroce.conformance.agent.AgentException;
import org.metaroce.conformance.agent.AgentProtocol;
import org.metaroce.conformance.tester.LowerTester;
import org.metaroce.conformance.tester.Packet;
import org.metaroce.conformance.tester.PacketBuilder;
import org.metaroce.conformance.tester.TesterQp;
import org.metaroce.core.wire.Opcode;

/**
 * Everything a case uses: the agent (to drive the IUT's verbs), the lower tester (to speak the
 * wire), a seeded random source, the connection-manager handshakes in both roles, and checks that
 * fail with Expected and Actual.
 */
public final class CaseContext {
    /** Default tolerance for a packet the IUT must send "immediately" or after a short timer. */
    public static final long EXPECT_MS = 1000;
    /** Default window in which the IUT must stay silent. */
    public static final long QUIET_MS = 150;
    /**
     * Window for checks made while the tester withholds an acknowledgement the IUT is retrying:
     * shorter than the least time an IUT with the default RTO_MIN (100 us) and RETRY_CNT (7) may
     * take to give up, 25.5 ms [REL-029], so that a correct IUT is never caught ending the
     * connection inside it.
     */
    public static final long RETRYING_QUIET_MS = 20;

    private final AgentClient agent;
    private final LowerTester tester;
    private final Set<String> features;
    private final Set<String> extensions;
    private final SplittableRandom random;
    private final ConformanceCase testCase;

    public CaseContext(final AgentClient agent, final LowerTester tester, final Set<String> features, final long seed,
                       final ConformanceCase testCase) {
        this(agent, tester, features, Set.of(), seed, testCase);
    }

    /**
     * @param extensions agent-contract extensions the agent declared in hello (12.4.2: {@code cc},
     *     {@code memory})
     */
    public CaseContext(final AgentClient agent, final LowerTester tester, final Set<String> features,
                       final Set<String> extensions, final long seed, final ConformanceCase testCase) {
        this.agent = agent;
        this.tester = tester;
        this.features = features;
        this.extensions = extensions;
        this.random = new SplittableRandom(seed ^ testCase.id().hashCode());
        this.testCase = testCase;
    }

    public LowerTester tester() {
        return tester;
    }

    public SplittableRandom random() {
        return random;
    }

    public ConformanceCase testCase() {
        return testCase;
    }

    /** Skips the case unless the IUT declares {@code feature} [CONF-002]. */
    public void require(final String feature) {
        if (!features.contains(feature)) {
            throw new CaseSkipped("the IUT does not declare " + feature);
        }
    }

    /** Skips the case unless the agent declares the contract extension {@code name} [CONF-012]. */
    public void requireExtension(final String name) {
        if (!extensions.contains(name)) {
            throw new CaseSkipped("the agent does not declare the contract extension '" + name + "'");
        }
    }

    /**
     * @return the Java heap (or the IUT's equivalent) in use, in bytes, as the agent's
     *     {@code memory} command reports it after a collection (extension {@code memory})
     */
    public long memoryInUse() {
        requireExtension("memory");
        return call("memory", o -> { }).get("in_use").asLong();
    }

    // ------------------------------------------------------------------------------ agent

    /**
     * Calls the agent.
     *
     * @param cmd command
     * @param args fills in arguments
     * @return the reply
     * @throws CaseSkipped when the agent answers UNSUPPORTED
     */
    public ObjectNode call(final String cmd, final Consumer<ObjectNode> args) {
        final ObjectNode req = AgentClient.request(cmd);
        args.accept(req);
        try {
            return agent.call(req);
        } catch (final AgentException ex) {
            if (AgentException.UNSUPPORTED.equals(ex.code())) {
                throw new CaseSkipped("agent: " + ex.getMessage());
            }
            throw ex;
        }
    }

    /** Registers memory filled with {@code fill}. */
    public Mr regMr(final int length, final int fill, final String... access) {
        final ObjectNode r = call(AgentProtocol.REG_MR, o -> {
            o.put("length", length);
            o.put("fill", fill);
            final ArrayNode a = o.putArray("access");
            for (final String f : access) {
                a.add(f);
            }
        });
        return new Mr(r.get("mr").asInt(), Long.parseUnsignedLong(r.get("addr").asText()), (int) r.get("rkey")
            .asLong(), (int) r.get("lkey").asLong(), r.get("length").asInt());
    }

    public void deregMr(final Mr mr) {
        call(AgentProtocol.DEREG_MR, o -> o.put("mr", mr.handle()));
    }

    public byte[] readMem(final Mr mr, final int offset, final int length) {
        final ObjectNode r = call(AgentProtocol.READ_MEM, o -> {
            o.put("mr", mr.handle());
            o.put("offset", offset);
            o.put("length", length);
        });
        return HexFormat.of().parseHex(r.get("hex").asText());
    }

    public void writeMem(final Mr mr, final int offset, final byte[] data) {
        call(AgentProtocol.WRITE_MEM, o -> {
            o.put("mr", mr.handle());
            o.put("offset", offset);
            o.put("hex", HexFormat.of().formatHex(data));
        });
    }

    /** @return every counter of the IUT by name [GEN-002] */
    public Map<String, Long> counters() {
        final ObjectNode r = call(AgentProtocol.COUNTERS, o -> { });
        final Map<String, Long> m = new LinkedHashMap<>();
        r.get("counters").properties().forEach(e -> m.put(e.getKey(), e.getValue().asLong()));
        return m;
    }

    /** @return the counter's value, or skips the case if the IUT does not report it */
    public long counter(final String name) {
        final Long v = counters().get(name);
        if (v == null) {
            throw new CaseSkipped("the agent reports no counter " + name);
        }
        return v;
    }

    /** @return the state name of the IUT's queue pair */
    public String qpState(final IutConnection c) {
        return call(AgentProtocol.QP_STATE, o -> o.put("qp", c.qp())).get("state").asText();
    }

    /** Polls the QP state until it is {@code state} or the time passes; returns the last state seen. */
    public String awaitQpState(final IutConnection c, final String state, final long timeoutMs) {
        final long deadline = System.nanoTime() + timeoutMs * 1_000_000L;
        String s;
        do {
            s = qpState(c);
            if (s.equals(state)) {
                return s;
            }
            LowerTester.sleep(5);
        } while (System.nanoTime() - deadline < 0);
        return s;
    }

    public void postRecv(final IutConnection c, final long wrId, final Mr mr, final int offset, final int length) {
        call(AgentProtocol.POST_RECV, o -> {
            o.put("qp", c.qp());
            o.put("wr_id", wrId);
            final ObjectNode s = o.putArray("sge").addObject();
            s.put("mr", mr.handle());
            s.put("offset", offset);
            s.put("length", length);
        });
    }

    /**
     * Posts a send WR on the IUT.
     *
     * @param c connection
     * @param wrId wr_id
     * @param opcode verbs opcode name
     * @param local local buffer (null for none)
     * @param offset offset in it
     * @param length length
     * @param more extra arguments (remote_addr, rkey, imm, flags, ...)
     */
    public void postSend(final IutConnection c, final long wrId, final String opcode, final Mr local, final int offset,
                         final int length, final Consumer<ObjectNode> more) {
        call(AgentProtocol.POST_SEND, o -> {
            o.put("qp", c.qp());
            o.put("wr_id", wrId);
            o.put("opcode", opcode);
            o.putArray("flags").add("SIGNALED");
            if (local != null) {
                final ObjectNode s = o.putArray("sge").addObject();
                s.put("mr", local.handle());
                s.put("offset", offset);
                s.put("length", length);
            }
            more.accept(o);
        });
    }

    /** @return completions of the QP's send or recv queue, waiting until {@code min} are there or the time passes */
    public List<JsonNode> poll(final IutConnection c, final String queue, final int min, final long timeoutMs) {
        final ObjectNode r = call(AgentProtocol.POLL_CQ, o -> {
            o.put("qp", c.qp());
            o.put("queue", queue);
            o.put("min", min);
            o.put("timeout_ms", timeoutMs);
        });
        final List<JsonNode> out = new ArrayList<>();
        r.get("completions").forEach(out::add);
        return out;
    }

    /** @return CM events the agent recorded since the last call */
    public List<JsonNode> events() {
        final List<JsonNode> out = new ArrayList<>();
        call(AgentProtocol.EVENTS, o -> { }).get("events").forEach(out::add);
        return out;
    }

    // ------------------------------------------------------------------------------ handshakes

    /** @return a fresh random Service ID */
    public long newServiceId() {
        return 10_000 + random.nextInt(1 << 30);
    }

    /** @return a random QPN in 1..2^24-1 */
    public int newQpn() {
        return 1 + random.nextInt(0xFF_FFFE);
    }

    /** Asks the IUT to listen on {@code serviceId}, accepting every request. */
    public void listen(final long serviceId, final QpOptions opts) {
        if (opts.needsCcExtension()) {
            requireExtension("cc");
        }
        call(AgentProtocol.LISTEN, o -> {
            o.put("service_id", serviceId);
            opts.into(o);
        });
    }

    /** @return a first CONNECT_REQUEST from the tester (cookie zero) [CM-002] */
    public PacketBuilder connectRequest(final long serviceId, final long tid, final int qpn, final int initialPsn,
                                        final int pmtu) {
        return PacketBuilder.of(Opcode.CONNECT_REQUEST).destQpn(0).srcQpn(qpn).serviceId(serviceId)
            .transactionId(tid).initialPsn(initialPsn).proposal(pmtu, 0, 16, 16, 1);
    }

    /** @return a predicate for a CM packet of transaction {@code tid} with {@code opcode} */
    public static Predicate<Packet> cm(final Opcode opcode, final long tid) {
        return p -> p.wellFormed() && p.opcode() == opcode && p.transactionId() == tid;
    }

    /** Connects the tester (client) to a listener on the IUT (server), READY_TO_USE included. */
    public IutConnection connect(final QpOptions opts) {
        return connect(opts, true, random.nextInt());
    }

    /**
     * Connects the tester (client) to a new listener on the IUT.
     *
     * @param opts the IUT's queue-pair options
     * @param sendRtu whether to send READY_TO_USE (false leaves the IUT's QP in RTR, CM-013)
     * @param initialPsn the tester's initial PSN
     * @return the connection
     */
    public IutConnection connect(final QpOptions opts, final boolean sendRtu, final int initialPsn) {
        final long service = newServiceId();
        listen(service, opts);
        final long tid = random.nextLong();
        final int qpn = newQpn();
        final PacketBuilder req = connectRequest(service, tid, qpn, initialPsn, 8192)
            .proposal(8192, opts.capabilities(), 16, 16, opts.testerPaths());
        tester.inject(req.build());
        final Packet challenge = expect(cm(Opcode.CONNECT_CHALLENGE, tid), EXPECT_MS,
            "CONNECT_CHALLENGE for the first CONNECT_REQUEST [CM-010]");
        tester.inject(req.cookie(challenge.cookie()).build());
        final Packet reply = expect(cm(Opcode.CONNECT_REPLY, tid), EXPECT_MS,
            "CONNECT_REPLY for the CONNECT_REQUEST with a valid cookie [CM-012]");
        final TesterQp t = new TesterQp(qpn, reply.sourceQpn(), initialPsn, reply.initialPsn(), reply.pathMtu(), tid,
            service);
        t.capabilities = reply.capabilities();
        t.responderResources = reply.responderResources();
        t.pathCount = reply.pathCount();
        if (sendRtu) {
            tester.inject(t.cm(Opcode.READY_TO_USE).build());
        }
        final ObjectNode acc = call(AgentProtocol.ACCEPTED, o -> {
            o.put("service_id", service);
            o.put("timeout_ms", EXPECT_MS);
        });
        if (sendRtu) {
            final IutConnection c = new IutConnection(acc.get("qp").asInt(), t);
            final String s = awaitQpState(c, "RTS", EXPECT_MS);
            check(s.equals("RTS"), "the IUT's QP in RTS after READY_TO_USE [CM-013]", "state " + s);
            return c;
        }
        return new IutConnection(acc.get("qp").asInt(), t);
    }

    /**
     * Has the IUT connect (client) to the tester (server) and completes the handshake with a
     * cookie challenge, as a server must [CM-010].
     *
     * @param opts the IUT's options
     * @param serverPmtu the tester's path MTU
     * @return the connection once READY_TO_USE arrived
     */
    public IutConnection acceptFromIut(final QpOptions opts, final int serverPmtu) {
        return acceptFromIut(opts, serverPmtu, 16);
    }

    /**
     * As {@link #acceptFromIut(QpOptions, int)}, with the tester accepting at most
     * {@code serverResources} outstanding READ/atomic requests from the IUT (its Responder Resources).
     */
    public IutConnection acceptFromIut(final QpOptions opts, final int serverPmtu, final int serverResources) {
        final long service = newServiceId();
        final InetSocketAddress me = tester.localAddress();
        if (opts.needsCcExtension()) {
            requireExtension("cc");
        }
        final ObjectNode r = call(AgentProtocol.CONNECT, o -> {
            o.put("host", me.getAddress().getHostAddress());
            o.put("port", me.getPort());
            o.put("service_id", service);
            opts.into(o);
        });
        final Packet first = expect(p -> p.wellFormed() && p.opcode() == Opcode.CONNECT_REQUEST
            && p.serviceId() == service, EXPECT_MS, "a CONNECT_REQUEST from the IUT [CM-005]");
        final byte[] cookie = new byte[20];
        for (int i = 0; i < cookie.length; i++) {
            cookie[i] = (byte) random.nextInt(256);
        }
        tester.inject(PacketBuilder.of(Opcode.CONNECT_CHALLENGE).destQpn(first.sourceQpn()).srcQpn(0)
            .serviceId(service).transactionId(first.transactionId()).cookie(cookie).build());
        final Packet second = expect(p -> p.wellFormed() && p.opcode() == Opcode.CONNECT_REQUEST
            && p.transactionId() == first.transactionId() && java.util.Arrays.equals(p.cookie(), cookie), EXPECT_MS,
            "the second CONNECT_REQUEST echoing the cookie [CM-006]");
        final int qpn = newQpn();
        final int ipsn = random.nextInt();
        final int pmtu = Math.min(serverPmtu, second.pathMtu());
        final byte[] replyBytes = PacketBuilder.of(Opcode.CONNECT_REPLY).destQpn(second.sourceQpn()).srcQpn(qpn)
            .serviceId(service).transactionId(second.transactionId()).initialPsn(ipsn)
            .proposal(pmtu, second.capabilities() & opts.capabilities(), Math.min(16, second.responderResources()),
                Math.min(serverResources,
                second.initiatorDepth()), 1)
            .build();
        tester.inject(replyBytes);
        expect(p -> p.wellFormed() && p.opcode() == Opcode.READY_TO_USE && p.transactionId() == first.transactionId(),
            EXPECT_MS, "READY_TO_USE after CONNECT_REPLY [CM-007]");
        final TesterQp t = new TesterQp(qpn, second.sourceQpn(), ipsn, second.initialPsn(), pmtu,
            second.transactionId(), service);
        t.capabilities = second.capabilities() & opts.capabilities();
        t.handshakeReply = replyBytes;
        t.pathCount = 1;
        final IutConnection c = new IutConnection(r.get("qp").asInt(), t);
        final String s = awaitQpState(c, "RTS", EXPECT_MS);
        check(s.equals("RTS"), "the IUT's client QP in RTS after CONNECT_REPLY [CM-007]", "state " + s);
        return c;
    }

    // ------------------------------------------------------------------------------ expectations

    /**
     * Waits for a packet; fails the case when none comes.
     *
     * @param match what is expected
     * @param timeoutMs tolerance
     * @param expected the expectation in words, with the requirement ID
     * @return the packet
     */
    public Packet expect(final Predicate<Packet> match, final long timeoutMs, final String expected) {
        final Packet p = tester.poll(match, timeoutMs);
        if (p == null) {
            throw new CaseFailure(expected + " within " + timeoutMs + " ms", "no such packet; " + recent());
        }
        return p;
    }

    /** Fails the case if a matching packet arrives within {@code windowMs}. */
    public void expectNone(final Predicate<Packet> match, final long windowMs, final String expected) {
        final List<Packet> got = tester.collect(match, windowMs);
        if (!got.isEmpty()) {
            throw new CaseFailure(expected, got.size() + " packet(s), first: " + got.get(0));
        }
    }

    /** @return a short description of the last packets received, for failure messages */
    public String recent() {
        final List<Packet> t = tester.trace();
        if (t.isEmpty()) {
            return "the IUT sent nothing";
        }
        final StringBuilder sb = new StringBuilder("last received: ");
        for (int i = Math.max(0, t.size() - 3); i < t.size(); i++) {
            sb.append('[').append(t.get(i)).append("] ");
        }
        return sb.toString().trim();
    }

    // ------------------------------------------------------------------------------ checks

    public static void check(final boolean ok, final String expected, final String actual) {
        if (!ok) {
            throw new CaseFailure(expected, actual);
        }
    }

    public static void checkEq(final Object expected, final Object actual, final String what) {
        if (!java.util.Objects.equals(expected, actual)) {
            throw new CaseFailure(what + " = " + expected, String.valueOf(actual));
        }
    }

    /** @return bytes 0..n-1 filled with a pattern derived from {@code seed} */
    public static byte[] pattern(final int n, final int seed) {
        final byte[] b = new byte[n];
        for (int i = 0; i < n; i++) {
            b[i] = (byte) (seed + i * 7);
        }
        return b;
    }
}
