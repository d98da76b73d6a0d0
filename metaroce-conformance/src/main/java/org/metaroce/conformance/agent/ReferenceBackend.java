// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.conformance.agent;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.agrona.concurrent.UnsafeBuffer;
import org.metaroce.core.connection.CmConfig;
import org.metaroce.core.connection.CmCounter;
import org.metaroce.core.connection.CmEvent;
import org.metaroce.core.connection.CmEventType;
import org.metaroce.core.connection.ConnectParams;
import org.metaroce.core.connection.Connection;
import org.metaroce.core.connection.ConnectionManager;
import org.metaroce.core.connection.ListenParams;
import org.metaroce.core.connection.Listener;
import org.metaroce.core.congestion.CongestionControlAlgorithm;
import org.metaroce.core.connection.QpParams;
import org.metaroce.core.engine.EndpointCounter;
import org.metaroce.core.engine.QueuePair;
import org.metaroce.core.engine.QueuePairCapabilities;
import org.metaroce.core.verbs.AccessFlags;
import org.metaroce.core.verbs.CompletionQueue;
import org.metaroce.core.verbs.MemoryRegion;
import org.metaroce.core.verbs.PostStatus;
import org.metaroce.core.verbs.QpAttributes;
import org.metaroce.core.verbs.ProtectionDomain;
import org.metaroce.core.verbs.RecvRequest;
import org.metaroce.core.verbs.SendFlags;
import org.metaroce.core.verbs.SendRequest;
import org.metaroce.core.verbs.WorkCompletion;
import org.metaroce.core.verbs.WrOpcode;
import org.metaroce.core.wire.ConnectHeader;
import org.metaroce.core.wire.DropReason;
import org.metaroce.netty.DeviceConfig;
import org.metaroce.netty.MetaRoceDevice;
import org.metaroce.netty.ThreadingMode;

/**
 * The reference implementation as an IUT: every command of the agent contract mapped onto a
 * {@link MetaRoceDevice} (DEDICATED driver thread) and its {@link ConnectionManager}. Listeners
 * accept every request automatically; accepted and connected queue pairs get handles the suite
 * uses in later commands.
 */
public final class ReferenceBackend implements AgentBackend {
    private static final int CQ_CAPACITY = 4096;
    private static final int MAX_EVENTS = 1024;

    private final MetaRoceDevice device;
    private final ConnectionManager manager;
    private final ProtectionDomain pd;
    /**
     * Whether the agent declares ECN: the device reads CE marks (native transport) or the self-test
     * switch asks for it (see the constructor).
     */
    private final boolean declareEcn;
    /** Whether the device reads the ECN field (native transport): DCQCN's CNPs are then real. */
    private final boolean readsEcn;
    private final Map<Integer, MemoryRegion> regions = new HashMap<>();
    private final Map<Integer, QpEntry> qps = new ConcurrentHashMap<>();
    private final Map<Long, ListenEntry> listeners = new ConcurrentHashMap<>();
    /** CM events, appended on the owning thread, drained by the events command. */
    private final LinkedBlockingQueue<ObjectNode> events = new LinkedBlockingQueue<>(MAX_EVENTS);
    private final WorkCompletion[] wcs = new WorkCompletion[64];
    /** Handles of MRs and QPs; taken on the agent thread and on the device's owning thread. */
    private final java.util.concurrent.atomic.AtomicInteger nextHandle = new java.util.concurrent.atomic.AtomicInteger(1);

    private static final class QpEntry {
        final int handle;
        final Connection connection;
        final CompletionQueue sendCq;
        final CompletionQueue recvCq;
        final ArrayDeque<ObjectNode> sendDone = new ArrayDeque<>();
        final ArrayDeque<ObjectNode> recvDone = new ArrayDeque<>();

        QpEntry(final int handle, final Connection connection, final CompletionQueue sendCq,
                final CompletionQueue recvCq) {
            this.handle = handle;
            this.connection = connection;
            this.sendCq = sendCq;
            this.recvCq = recvCq;
        }
    }

    private static final class ListenEntry {
        final Listener listener;
        final CompletionQueue sendCq;
        final CompletionQueue recvCq;
        final LinkedBlockingQueue<Integer> accepted = new LinkedBlockingQueue<>();

        ListenEntry(final Listener listener, final CompletionQueue sendCq, final CompletionQueue recvCq) {
            this.listener = listener;
            this.sendCq = sendCq;
            this.recvCq = recvCq;
        }
    }

    /**
     * Opens the device.
     *
     * @param bind the address the device binds (the IUT's data address)
     * @param endpointPort its endpoint port, 0 for any
     */
    public ReferenceBackend(final InetAddress bind, final int endpointPort) {
        this(bind, endpointPort, false);
    }

    /**
     * Opens the device, optionally declaring the {@code ECN} feature for the suite's own tests.
     *
     * <p>On the native transport (JDK 22+ on Linux, picked by AUTO) the device reads the ECN field of
     * every datagram and sends ECT(0) [ENC-015, ENC-016]: the agent declares ECN and QPs may offer
     * it and run DCQCN, without the switch. On Netty (JDK 17, or native unavailable) it does not
     * declare ECN: the Netty driver cannot read the ECN
     * field of received datagrams [ENC-016], so its responder never echoes a CE mark nor sends a
     * CNP [CC-020], and offering the capability would be a false claim [CONF-012]. Its requester,
     * however, does react to ECN_ECHO and CE Count on the ACKs it receives [CC-012, CC-030]; with
     * {@code declareEcnForSelfTests} the agent declares ECN and lets QPs offer the capability so
     * the suite's self-tests can prove its requester-side ECN cases (which craft the marked ACKs
     * themselves) against the reference. DCQCN stays refused. Never use this against a real peer.
     *
     * @param bind the address the device binds (the IUT's data address)
     * @param endpointPort its endpoint port, 0 for any
     * @param declareEcnForSelfTests declare ECN (suite self-tests only)
     */
    public ReferenceBackend(final InetAddress bind, final int endpointPort, final boolean declareEcnForSelfTests) {
        device = new MetaRoceDevice(new DeviceConfig().bindAddress(bind).endpointPort(endpointPort)
            .entropyPortRange(4, 0).threadingMode(ThreadingMode.DEDICATED));
        this.readsEcn = device.readsEcn();
        this.declareEcn = readsEcn || declareEcnForSelfTests;
        manager = device.call(ep -> {
            final ConnectionManager cm = new ConnectionManager(ep, device.endpointPort(), device.peers(),
                new CmConfig());
            cm.eventHandler(this::onEvent);
            return cm;
        });
        pd = device.call(ep -> ep.allocateProtectionDomain());
    }

    /** @return the device's data address (where the lower tester sends) */
    public InetSocketAddress dataAddress() {
        return device.localAddress();
    }

    // ----------------------------------------------------------------------------- owning thread

    private void onEvent(final CmEvent e) {
        final Connection c = e.connection();
        if (e.type() == CmEventType.CONNECT_REQUEST) {
            final ListenEntry l = listeners.get(c.serviceId());
            if (l != null && manager.accept(e, null)) {
                final int handle = register(c, l.sendCq, l.recvCq);
                l.accepted.offer(handle);
            }
        }
        final ObjectNode o = Json.object();
        o.put("type", e.type().name());
        o.put("reason", e.reason());
        final Integer handle = handleOf(c);
        if (handle != null) {
            o.put("qp", handle);
        }
        events.offer(o);
    }

    private Integer handleOf(final Connection c) {
        for (final QpEntry q : qps.values()) {
            if (q.connection == c) {
                return q.handle;
            }
        }
        return null;
    }

    private int register(final Connection c, final CompletionQueue sendCq,
                                      final CompletionQueue recvCq) {
        final int handle = nextHandle.getAndIncrement();
        qps.put(handle, new QpEntry(handle, c, sendCq, recvCq));
        return handle;
    }

    // ----------------------------------------------------------------------------- commands

    @Override
    public void execute(final String command, final ObjectNode req, final ObjectNode reply) {
        switch (command) {
            case AgentProtocol.HELLO -> hello(req, reply);
            case AgentProtocol.RESET -> reset();
            case AgentProtocol.REG_MR -> regMr(req, reply);
            case AgentProtocol.DEREG_MR -> {
                final MemoryRegion mr = mr(req);
                device.call(ep -> {
                    mr.pd().deregister(mr);
                    return null;
                });
                regions.values().remove(mr);
            }
            case AgentProtocol.WRITE_MEM -> {
                final MemoryRegion mr = mr(req);
                final byte[] data = Json.requireHex(req, "hex");
                final int off = Json.requireInt(req, "offset", 0, mr.length());
                if (off + data.length > mr.length()) {
                    throw new AgentException(AgentException.BAD_REQUEST, "write past the end of the region");
                }
                mr.buffer().putBytes(off, data);
            }
            case AgentProtocol.READ_MEM -> {
                final MemoryRegion mr = mr(req);
                final int off = Json.requireInt(req, "offset", 0, mr.length());
                final int len = Json.requireInt(req, "length", 0, mr.length() - off);
                final byte[] data = new byte[len];
                mr.buffer().getBytes(off, data);
                reply.put("hex", Json.hex(data));
            }
            case AgentProtocol.LISTEN -> listen(req);
            case AgentProtocol.ACCEPTED -> accepted(req, reply);
            case AgentProtocol.CONNECT -> connect(req, reply);
            case AgentProtocol.QP_STATE -> {
                final QpEntry q = qp(req);
                device.call(ep -> {
                    final QueuePair p = q.connection.queuePair();
                    reply.put("state", p == null ? "NONE" : p.state().name());
                    reply.put("qpn", q.connection.localQpn());
                    reply.put("dest_qpn", q.connection.remoteQpn());
                    reply.put("connection", q.connection.state().name());
                    return null;
                });
            }
            case AgentProtocol.POST_RECV -> postRecv(req, reply);
            case AgentProtocol.POST_SEND -> postSend(req, reply);
            case AgentProtocol.POLL_CQ -> pollCq(req, reply);
            case AgentProtocol.DISCONNECT -> {
                final QpEntry q = qp(req);
                device.call(ep -> {
                    manager.disconnect(q.connection);
                    return null;
                });
            }
            case AgentProtocol.COUNTERS -> counters(reply);
            case AgentProtocol.MEMORY -> memory(reply);
            case AgentProtocol.EVENTS -> {
                final ArrayNode list = reply.putArray("events");
                final List<ObjectNode> drained = new ArrayList<>();
                events.drainTo(drained);
                drained.forEach(list::add);
            }
            // Every command of the contract is handled above; anything else is a name this agent's
            // contract version does not define, which CONF-012 answers with UNSUPPORTED.
            default -> throw new AgentException(AgentException.UNSUPPORTED, "unknown command '" + command
                + "': not in agent contract version " + AgentProtocol.VERSION);
        }
    }

    private void hello(final ObjectNode req, final ObjectNode reply) {
        final int version = Json.requireInt(req, "version", 0, Integer.MAX_VALUE);
        if (version != AgentProtocol.VERSION) {
            throw new AgentException(AgentException.VERSION, "this agent speaks contract version "
                + AgentProtocol.VERSION + ", not " + version);
        }
        reply.put("version", AgentProtocol.VERSION);
        reply.put("implementation", "MetaRoCE-J reference (metaroce-netty)");
        // GO_BACK_N and RECEIVER_CREDIT are offered per QP through the cc extension's options; ECN
        // only where the driver reads CE marks (native transport) [ENC-016]. REPS (MP-016, OPTIONAL) is
        // not declared: the reference sprays with MP-013 only (docs/implementation-status.md).
        final ArrayNode features = reply.putArray("features").add("GO_BACK_N").add("RECEIVER_CREDIT").add("FIXED")
            .add("IPV6").add("SENDER_COUNT").add("ATTACHED_ACK").add("DEFERRED_ACK");
        if (declareEcn) {
            features.add("ECN");
        }
        final ArrayNode x = reply.putArray("extensions");
        AgentProtocol.EXTENSIONS.forEach(x::add);
        final ObjectNode ep = reply.putObject("endpoint");
        final InetSocketAddress a = device.localAddress();
        ep.put("host", a.getAddress().getHostAddress());
        ep.put("port", a.getPort());
    }

    private void reset() {
        device.call(ep -> {
            for (final QpEntry q : qps.values()) {
                manager.disconnect(q.connection);
            }
            for (final ListenEntry l : listeners.values()) {
                l.listener.close();
            }
            for (final MemoryRegion mr : regions.values()) {
                if (mr.isValid()) {
                    mr.pd().deregister(mr);
                }
            }
            return null;
        });
        qps.clear();
        listeners.clear();
        regions.clear();
        events.clear();
    }

    private void regMr(final ObjectNode req, final ObjectNode reply) {
        final int length = Json.requireInt(req, "length", 1, 1 << 26);
        final int access = accessFlags(req.get("access"));
        final ByteBuffer memory = ByteBuffer.allocateDirect(length);
        if (req.hasNonNull("hex")) {
            final byte[] data = Json.requireHex(req, "hex");
            if (data.length > length) {
                throw new AgentException(AgentException.BAD_REQUEST, "hex longer than the region");
            }
            memory.put(0, data);
        } else {
            final int fill = Json.optInt(req, "fill", 0, 255, 0);
            for (int i = 0; i < length; i++) {
                memory.put(i, (byte) fill);
            }
        }
        final MemoryRegion mr;
        try {
            mr = device.call(ep -> pd.registerMemory(memory, access));
        } catch (final IllegalArgumentException ex) {
            throw new AgentException(AgentException.FAILED, ex.getMessage());
        }
        final int handle = nextHandle.getAndIncrement();
        regions.put(handle, mr);
        reply.put("mr", handle);
        reply.put("addr", Json.unsigned(mr.address()));
        reply.put("rkey", Integer.toUnsignedLong(mr.rkey()));
        reply.put("lkey", Integer.toUnsignedLong(mr.lkey()));
        reply.put("length", mr.length());
    }

    private static int accessFlags(final JsonNode list) {
        int flags = 0;
        if (list == null || list.isNull()) {
            return 0;
        }
        if (!list.isArray()) {
            throw new AgentException(AgentException.BAD_REQUEST, "'access' must be an array of flag names");
        }
        for (final JsonNode n : list) {
            flags |= switch (n.asText()) {
                case "LOCAL_WRITE" -> AccessFlags.LOCAL_WRITE;
                case "REMOTE_WRITE" -> AccessFlags.REMOTE_WRITE;
                case "REMOTE_READ" -> AccessFlags.REMOTE_READ;
                case "REMOTE_ATOMIC" -> AccessFlags.REMOTE_ATOMIC;
                default -> throw new AgentException(AgentException.BAD_REQUEST, "unknown access flag " + n);
            };
        }
        return flags;
    }

    private <T extends QpParams<T>> T qpParams(final T p, final ObjectNode req, final CompletionQueue sendCq,
                                               final CompletionQueue recvCq) {
        try {
            final int rr = Json.optInt(req, "responder_resources", 1, 255, 16);
            p.resources(pd, sendCq, recvCq, new QueuePairCapabilities(Json.optInt(req, "sq_depth", 1, 65536, 256),
                Json.optInt(req, "rq_depth", 1, 65536, 256), 4, 4, rr));
            p.accessFlags(accessFlags(req.get("access")));
            p.pathMtu(Json.optInt(req, "pmtu", 256, 8192, 1024));
            final int[] ports = device.entropyPorts();
            final int count = Json.optInt(req, "path_count", 1, ports.length, ports.length);
            p.paths(java.util.Arrays.copyOf(ports, count));
            p.initiatorDepth(Json.optInt(req, "initiator_depth", 1, 255, 16));
            p.responderResources(rr);
            p.timeoutNs(Json.optLong(req, "timeout_us", 1000) * 1000);
            p.retryCount(Json.optInt(req, "retry_cnt", 0, 7, 7));
            if (req.has("retry_timeout_ms")) {
                p.retryTimeoutNs(Json.optLong(req, "retry_timeout_ms", 0) * 1_000_000L);
            }
            p.rnrRetry(Json.optInt(req, "rnr_retry", 0, 7, 7));
            p.minRnrTimerNs(Json.optInt(req, "min_rnr_timer", 1, 255, 10) * 10_000L);
            ccOptions(p, req, declareEcn, readsEcn);
            return p;
        } catch (final IllegalArgumentException ex) {
            throw new AgentException(AgentException.BAD_REQUEST, ex.getMessage());
        }
    }

    /**
     * QP options of the contract extension {@code cc} (12.4.2): the Capability Flags the QP offers,
     * CC_ALGORITHM and CONGESTION_WINDOW. ECN is refused unless declared, DCQCN unless the device
     * reads CE marks: the Netty driver cannot read the ECN field of received datagrams [ENC-016],
     * so on it this IUT must not offer them [CONF-012].
     */
    private static void ccOptions(final QpParams<?> p, final ObjectNode req, final boolean ecn,
                                  final boolean dcqcn) {
        final JsonNode caps = req.get("capabilities");
        if (caps != null && !caps.isNull()) {
            if (!caps.isArray()) {
                throw new AgentException(AgentException.BAD_REQUEST, "'capabilities' must be an array of names");
            }
            int flags = 0;
            for (final JsonNode n : caps) {
                flags |= switch (n.asText()) {
                    case "RECEIVER_CREDIT" -> ConnectHeader.CAP_RECEIVER_CREDIT;
                    case "GO_BACK_N" -> ConnectHeader.CAP_GO_BACK_N;
                    case "SENDER_COUNT" -> ConnectHeader.CAP_SENDER_COUNT;
                    case "ATTACHED_ACK" -> ConnectHeader.CAP_ATTACHED_ACK;
                    case "DEFERRED_ACK" -> ConnectHeader.CAP_DEFERRED_ACK;
                    case "ECN" -> {
                        if (!ecn) {
                            throw new AgentException(AgentException.UNSUPPORTED,
                                "ECN: the driver cannot read the ECN field of received datagrams [ENC-016]");
                        }
                        yield ConnectHeader.CAP_ECN;
                    }
                    default -> throw new AgentException(AgentException.BAD_REQUEST, "unknown capability " + n);
                };
            }
            p.capabilities(flags);
        }
        if (req.hasNonNull("cc_algorithm")) {
            final CongestionControlAlgorithm a;
            try {
                a = CongestionControlAlgorithm.valueOf(Json.requireText(req, "cc_algorithm"));
            } catch (final IllegalArgumentException ex) {
                throw new AgentException(AgentException.BAD_REQUEST, "unknown cc_algorithm " + req.get("cc_algorithm"));
            }
            if (a == CongestionControlAlgorithm.DCQCN && !dcqcn) {
                throw new AgentException(AgentException.UNSUPPORTED, "DCQCN needs ECN, which this driver cannot offer");
            }
            p.congestionControl(a);
        } else {
            // Absent options take the defaults of table 4.3 [CONF-011]: CC_ALGORITHM DEFAULT [CC-008],
            // not the library's EndpointConfig.congestionControl() (FIXED, for reasons given in
            // docs/implementation-status.md), so the default-algorithm cases judge the algorithm
            // the specification names as the default.
            p.congestionControl(CongestionControlAlgorithm.DEFAULT);
        }
        if (req.hasNonNull("congestion_window")) {
            p.congestionWindowPackets(Json.requireInt(req, "congestion_window", 1, QpAttributes.MAX_CONGESTION_WINDOW));
        }
    }

    /** Extension {@code memory}: the heap in use after a collection, for the bounded-memory cases. */
    private static void memory(final ObjectNode reply) {
        final Runtime rt = Runtime.getRuntime();
        long used = Long.MAX_VALUE;
        // Two collections, the smaller reading: a concurrent allocation burst inflates one at most.
        for (int i = 0; i < 2; i++) {
            System.gc();
            used = Math.min(used, rt.totalMemory() - rt.freeMemory());
        }
        reply.put("in_use", used);
        reply.put("unit", "bytes");
    }

    private void listen(final ObjectNode req) {
        final long serviceId = Json.requireLong(req, "service_id");
        if (listeners.containsKey(serviceId)) {
            throw new AgentException(AgentException.FAILED, "service " + serviceId + " already has a listener");
        }
        final CompletionQueue sendCq = new CompletionQueue(CQ_CAPACITY);
        final CompletionQueue recvCq = new CompletionQueue(CQ_CAPACITY);
        final ListenParams params = qpParams(new ListenParams(), req, sendCq, recvCq);
        final Listener l = device.call(ep -> manager.listen(serviceId, params));
        listeners.put(serviceId, new ListenEntry(l, sendCq, recvCq));
    }

    private void accepted(final ObjectNode req, final ObjectNode reply) {
        final long serviceId = Json.requireLong(req, "service_id");
        final ListenEntry l = listeners.get(serviceId);
        if (l == null) {
            throw new AgentException(AgentException.NOT_FOUND, "no listener for service " + serviceId);
        }
        final long timeoutMs = Json.optLong(req, "timeout_ms", 0);
        final Integer handle;
        try {
            handle = l.accepted.poll(timeoutMs, TimeUnit.MILLISECONDS);
        } catch (final InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new AgentException(AgentException.FAILED, "interrupted");
        }
        if (handle == null) {
            throw new AgentException(AgentException.TIMEOUT, "no connection accepted on service " + serviceId
                + " within " + timeoutMs + " ms");
        }
        reply.put("qp", handle);
        final QpEntry q = qps.get(handle);
        reply.put("qpn", q.connection.localQpn());
    }

    private void connect(final ObjectNode req, final ObjectNode reply) {
        final long serviceId = Json.requireLong(req, "service_id");
        final InetSocketAddress server;
        try {
            server = new InetSocketAddress(InetAddress.getByName(Json.requireText(req, "host")),
                Json.requireInt(req, "port", 1, 65535));
        } catch (final UnknownHostException ex) {
            throw new AgentException(AgentException.BAD_REQUEST, "unknown host: " + ex.getMessage());
        }
        final CompletionQueue sendCq = new CompletionQueue(CQ_CAPACITY);
        final CompletionQueue recvCq = new CompletionQueue(CQ_CAPACITY);
        final ConnectParams params = qpParams(new ConnectParams(), req, sendCq, recvCq).serviceId(serviceId)
            .connectTimeoutNs(Json.optLong(req, "connect_timeout_ms", 3000) * 1_000_000L);
        final int handle = device.call(ep -> {
            params.peer(device.peers().peerId(server));
            final Connection c = manager.connect(params);
            return register(c, sendCq, recvCq);
        });
        reply.put("qp", handle);
        reply.put("qpn", qps.get(handle).connection.localQpn());
    }

    private void postRecv(final ObjectNode req, final ObjectNode reply) {
        final QpEntry q = qp(req);
        final RecvRequest wr = new RecvRequest(4).wrId(Json.requireLong(req, "wr_id"));
        for (final JsonNode s : sges(req)) {
            final long[] sge = sge((ObjectNode) s);
            wr.addSge(sge[0], (int) sge[1], (int) sge[2]);
        }
        final int status = device.call(ep -> q.connection.queuePair().postRecv(wr));
        postResult(status, reply);
    }

    private void postSend(final ObjectNode req, final ObjectNode reply) {
        final QpEntry q = qp(req);
        final WrOpcode opcode;
        try {
            opcode = WrOpcode.valueOf(Json.requireText(req, "opcode"));
        } catch (final IllegalArgumentException ex) {
            throw new AgentException(AgentException.BAD_REQUEST, "unknown opcode " + req.get("opcode"));
        }
        final SendRequest wr = new SendRequest(4).wrId(Json.requireLong(req, "wr_id")).opcode(opcode);
        for (final JsonNode s : sges(req)) {
            final long[] sge = sge((ObjectNode) s);
            wr.addSge(sge[0], (int) sge[1], (int) sge[2]);
        }
        int flags = 0;
        for (final JsonNode f : req.path("flags")) {
            flags |= switch (f.asText()) {
                case "SIGNALED" -> SendFlags.SIGNALED;
                case "FENCE" -> SendFlags.FENCE;
                case "SOLICITED" -> SendFlags.SOLICITED;
                case "INLINE" -> SendFlags.INLINE;
                default -> throw new AgentException(AgentException.BAD_REQUEST, "unknown send flag " + f);
            };
        }
        wr.sendFlags(flags);
        wr.immData((int) Json.optLong(req, "imm", 0));
        wr.remoteAddr(Json.optLong(req, "remote_addr", 0));
        wr.rkey((int) Json.optLong(req, "rkey", 0));
        wr.compareAdd(Json.optLong(req, "compare_add", 0));
        wr.swap(Json.optLong(req, "swap", 0));
        final int status = device.call(ep -> q.connection.queuePair().postSend(wr));
        postResult(status, reply);
    }

    private static void postResult(final int status, final ObjectNode reply) {
        if (status != PostStatus.OK) {
            // The refusal code travels as the reply's status [CONF-021].
            throw new AgentException(AgentException.FAILED, "post failed: " + PostStatus.describe(status),
                PostStatus.describe(status));
        }
        reply.put("status", "OK");
    }

    private static JsonNode sges(final ObjectNode req) {
        final JsonNode list = req.get("sge");
        if (list == null || list.isNull()) {
            return Json.MAPPER.createArrayNode();
        }
        if (!list.isArray()) {
            throw new AgentException(AgentException.BAD_REQUEST, "'sge' must be an array");
        }
        return list;
    }

    /** @return absolute address, length and lkey of one {mr, offset, length} entry */
    private long[] sge(final ObjectNode s) {
        final MemoryRegion mr = mr(s);
        final long off = Json.optLong(s, "offset", 0);
        final long len = Json.requireLong(s, "length");
        return new long[] {mr.address() + off, len, Integer.toUnsignedLong(mr.lkey())};
    }

    private void pollCq(final ObjectNode req, final ObjectNode reply) {
        final QpEntry q = qp(req);
        final String queue = Json.optText(req, "queue", "send");
        if (!queue.equals("send") && !queue.equals("recv")) {
            throw new AgentException(AgentException.BAD_REQUEST, "queue must be send or recv");
        }
        final int min = Json.optInt(req, "min", 0, 4096, 1);
        final int max = Json.optInt(req, "max", 1, 4096, 64);
        final long deadline = System.nanoTime() + Json.optLong(req, "timeout_ms", 0) * 1_000_000L;
        final ArrayDeque<ObjectNode> done = queue.equals("send") ? q.sendDone : q.recvDone;
        while (true) {
            drain(q.sendCq);
            drain(q.recvCq);
            if (done.size() >= min || System.nanoTime() - deadline >= 0) {
                break;
            }
            try {
                Thread.sleep(1);
            } catch (final InterruptedException ex) {
                Thread.currentThread().interrupt();
                break;
            }
        }
        final ArrayNode list = reply.putArray("completions");
        while (!done.isEmpty() && list.size() < max) {
            list.add(done.poll());
        }
    }

    /** Moves completions from a (possibly shared) CQ to the queues of the QPs they belong to. */
    private void drain(final CompletionQueue cq) {
        for (int i = 0; i < wcs.length; i++) {
            if (wcs[i] == null) {
                wcs[i] = new WorkCompletion();
            }
        }
        int n;
        while ((n = cq.poll(wcs, wcs.length)) > 0) {
            for (int i = 0; i < n; i++) {
                final WorkCompletion wc = wcs[i];
                final ObjectNode o = Json.object();
                o.put("wr_id", wc.wrId());
                o.put("status", wc.status().name());
                o.put("opcode", wc.opcode().name());
                o.put("byte_len", Integer.toUnsignedLong(wc.byteLen()));
                if (wc.hasImm()) {
                    o.put("imm", Integer.toUnsignedLong(wc.immData()));
                }
                if (wc.opcode().name().startsWith("RECV")) {
                    // Whether the message was solicited [OPS-035, OPS-040, CONF-021].
                    o.put("solicited", (wc.wcFlags() & WorkCompletion.WC_SOLICITED) != 0);
                }
                o.put("qp_num", wc.qpNum());
                o.put("src_qp", wc.srcQp());
                for (final QpEntry e : qps.values()) {
                    if (e.connection.localQpn() == wc.qpNum() && (e.sendCq == cq || e.recvCq == cq)) {
                        (cq == e.recvCq ? e.recvDone : e.sendDone).add(o);
                        break;
                    }
                }
            }
        }
    }

    private void counters(final ObjectNode reply) {
        final Map<String, Long> all = new LinkedHashMap<>();
        device.call(ep -> {
            for (final DropReason r : DropReason.values()) {
                all.merge(r.name(), ep.wireCounters().dropped(r), Long::sum);
            }
            for (final EndpointCounter c : EndpointCounter.values()) {
                all.merge(c.name(), ep.counters().get(c), Long::sum);
            }
            for (final CmCounter c : CmCounter.values()) {
                final String name = switch (c) {
                    case BAD_COOKIE, CM_MISMATCH, CM_UNEXPECTED, UNKNOWN_QPN -> c.name();
                    default -> "CM_" + c.name();
                };
                all.merge(name, manager.counters().get(c), Long::sum);
            }
            return null;
        });
        final ObjectNode o = reply.putObject("counters");
        all.forEach(o::put);
    }

    private MemoryRegion mr(final ObjectNode req) {
        final int handle = Json.requireInt(req, "mr", 0, Integer.MAX_VALUE);
        final MemoryRegion mr = regions.get(handle);
        if (mr == null) {
            throw new AgentException(AgentException.NOT_FOUND, "no memory region " + handle);
        }
        return mr;
    }

    private QpEntry qp(final ObjectNode req) {
        final int handle = Json.requireInt(req, "qp", 0, Integer.MAX_VALUE);
        final QpEntry q = qps.get(handle);
        if (q == null) {
            throw new AgentException(AgentException.NOT_FOUND, "no queue pair " + handle);
        }
        return q;
    }

    @Override
    public void close() {
        device.close();
    }
}
