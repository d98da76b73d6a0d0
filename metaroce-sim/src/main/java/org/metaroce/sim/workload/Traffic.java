// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.sim.workload;

import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.agrona.BufferUtil;
import org.metaroce.core.verbs.AccessFlags;
import org.metaroce.core.verbs.MemoryRegion;
import org.metaroce.core.verbs.PostStatus;
import org.metaroce.core.verbs.ProtectionDomain;
import org.metaroce.core.verbs.QpAttributes;
import org.metaroce.core.verbs.QpState;
import org.metaroce.core.verbs.RecvRequest;
import org.metaroce.core.verbs.SendFlags;
import org.metaroce.core.verbs.SendRequest;
import org.metaroce.core.verbs.WcStatus;
import org.metaroce.core.verbs.WorkCompletion;
import org.metaroce.core.verbs.WrOpcode;
import org.metaroce.core.wire.Opcode;
import org.metaroce.core.wire.WireConstants;
import org.metaroce.core.engine.DatagramEndpoint;
import org.metaroce.core.engine.EndpointConfig;
import org.metaroce.core.engine.QueuePair;
import org.metaroce.core.engine.QueuePairCapabilities;
import org.metaroce.sim.transport.TransportProfile;
import org.metaroce.sim.net.Host;
import org.metaroce.sim.net.Network;
import org.metaroce.sim.net.Packet;
import org.metaroce.sim.net.Port;
import org.metaroce.sim.net.Switch;

/**
 * Turns flows into verbs on the hosts' real endpoints: one reliable-connected QP pair per
 * (source, destination) the first time they talk, set up the way the connection manager would
 * (the profile chooses paths, congestion control and per-QP options), and each flow posted as
 * WRITEs of at most {@link #CHUNK_BYTES} with the last one WRITE_WITH_IMM carrying the flow id.
 *
 * <p>All hosts register one shared buffer: payload content is irrelevant to the fabric, and this
 * keeps a 128-host run within a few megabytes of direct memory.
 */
public final class Traffic {
    /** Largest single WRITE a flow is cut into. */
    public static final int CHUNK_BYTES = 1 << 20;
    /**
     * 64 sends (chunks beyond wait in the connection's backlog) and 64 receives: a flow posts one
     * receive, and no workload has more than a few flows in progress on one QP pair. Every WQE is
     * preallocated, and a 128-host all-to-all has 32 512 QPs: 256 receives each took 1 GB of heap.
     */
    private static final QueuePairCapabilities CAPS = new QueuePairCapabilities(64, 64, 1, 1, 16);

    private final Network network;
    private final TransportProfile profile;
    private final ByteBuffer memory = BufferUtil.allocateDirectAligned(CHUNK_BYTES, 64);
    private final ProtectionDomain[] pds;
    private final MemoryRegion[] regions;
    private final Map<Long, Connection> connections = new HashMap<>();
    private final Map<Long, Connection> byLocalQp = new HashMap<>();
    private final List<Flow> flows = new ArrayList<>();
    private final SendRequest send = new SendRequest(1);
    private final RecvRequest recv = new RecvRequest(1);
    private int failedFlows;
    private int queuePairPairs;

    /** The two QPs of one (source, destination) pair and the chunks waiting for send-queue room. */
    private static final class Connection {
        final Host src;
        final Host dst;
        final QueuePair srcQp;
        final QueuePair dstQp;
        final ArrayDeque<long[]> backlog = new ArrayDeque<>();

        Connection(final Host src, final Host dst, final QueuePair srcQp, final QueuePair dstQp) {
            this.src = src;
            this.dst = dst;
            this.srcQp = srcQp;
            this.dstQp = dstQp;
        }
    }

    /**
     * @param network the fabric whose hosts carry the flows
     * @param profile transport choices applied to every QP
     */
    public Traffic(final Network network, final TransportProfile profile) {
        this.network = network;
        this.profile = profile;
        final int n = network.hosts().size();
        pds = new ProtectionDomain[n];
        regions = new MemoryRegion[n];
        for (final Host h : network.hosts()) {
            pds[h.hostIndex()] = h.endpoint().allocateProtectionDomain();
            regions[h.hostIndex()] = pds[h.hostIndex()].registerMemory(memory.duplicate(), AccessFlags.ALL);
            h.completionListener(this::onCompletion);
            // A profile without ECN is a platform that cannot set the field: Not-ECT [ENC-015].
            h.ecnCodepoint(profile.ecn() ? DatagramEndpoint.ECN_ECT_0 : DatagramEndpoint.ECN_NOT_ECT);
        }
        configureEndpoints();
    }

    /**
     * Sets what a deployment configures on every endpoint before its QPs reach RTS: LINK_RATE, the
     * NIC's rate (8.9), and, when the profile asks for it, BASE_RTT_MAX = the fabric's largest
     * unloaded RTT [CC-028]. Without the bound each flow's baseRTT is the smallest RTT it happened
     * to sample; flows that start together sample behind each other's first packets, their
     * references differ by up to a packet time per flow, and the delay-based algorithm shares a
     * port unfairly (four flows into one port: 1.18 max/min rate without it).
     */
    private void configureEndpoints() {
        final long fabricRttNs = profile.boundBaseRtt() ? largestUnloadedRttNs() : 0;
        for (final Host h : network.hosts()) {
            final EndpointConfig config = h.endpoint().config();
            if (config.linkRateBitsPerSecond() != h.nic().rateBps()) {
                // A configuration object may be shared by hosts; it must not need two rates.
                if (h.hostIndex() > 0 && network.hosts().get(0).endpoint().config() == config) {
                    throw new IllegalStateException("hosts with different NIC rates share one EndpointConfig");
                }
                config.linkRateBitsPerSecond(h.nic().rateBps());
            }
            config.baseRttMaxNs(fabricRttNs);
        }
    }

    /**
     * The fabric's largest unloaded RTT: over every ordered host pair, the latency of a full-PMTU
     * WRITE from one to the other (store-and-forward over every hop, first ECMP choice) plus that
     * of the smallest ACK back. This is a lower bound of any RTT sample on that path, so flows
     * crossing the longest paths all use it as their common reference.
     *
     * @return nanoseconds
     */
    public long largestUnloadedRttNs() {
        final int dataWire = Opcode.WRITE.headerLength() + profile.pmtu() + WireConstants.INTEGRITY_CHECK_LENGTH
            + Packet.FRAME_OVERHEAD_BYTES;
        final int ackWire = Opcode.ACK.headerLength() + WireConstants.INTEGRITY_CHECK_LENGTH + Packet.FRAME_OVERHEAD_BYTES;
        long largest = 0;
        final int n = network.hosts().size();
        for (int a = 0; a < n; a++) {
            for (int b = 0; b < n; b++) {
                if (a != b) {
                    largest = Math.max(largest, oneWayLatencyNs(a, b, dataWire) + oneWayLatencyNs(b, a, ackWire));
                }
            }
        }
        return largest;
    }

    private long oneWayLatencyNs(final int src, final int dst, final int wireBytes) {
        long latency = 0;
        Port port = network.hosts().get(src).nic();
        for (int hops = 0; hops < 16; hops++) {
            latency += port.propagationNs() + port.serializationNs(wireBytes);
            final var next = port.peer().owner();
            if (next == network.hosts().get(dst)) {
                return latency;
            }
            if (!(next instanceof Switch sw)) {
                break;
            }
            port = sw.ports().get(sw.route(dst)[0]);
        }
        throw new IllegalStateException("no path from host" + src + " to host" + dst);
    }

    /** @return every flow started, in start order (index = flow id) */
    public List<Flow> flows() {
        return flows;
    }

    /** @return flows that ended with an error completion */
    public int failedFlows() {
        return failedFlows;
    }

    /** @return QP pairs created */
    public int connectionCount() {
        return queuePairPairs;
    }

    /** @return the profile */
    public TransportProfile profile() {
        return profile;
    }

    /** @return the network */
    public Network network() {
        return network;
    }

    /**
     * @param src source host
     * @param dst destination host
     * @return the shared sending QP of the pair, or null before their first flow
     */
    public QueuePair senderQueuePair(final int src, final int dst) {
        final Connection c = connections.get(key(src, dst));
        return c == null ? null : c.srcQp;
    }

    /**
     * Describes the sending QP of a pair for diagnosing flows that did not complete: its state,
     * outstanding sends, backlog, smoothed RTT and congestion-control state.
     *
     * @param src source host
     * @param dst destination host
     * @return a one-line description, or "no connection"
     */
    public String connectionState(final int src, final int dst) {
        final Connection c = connections.get(key(src, dst));
        if (c == null) {
            return "no connection";
        }
        return "qp " + c.srcQp.qpn() + " " + c.srcQp.state() + ", outstanding sends " + c.srcQp.outstandingSends()
            + ", backlog " + c.backlog.size() + ", srtt " + c.srcQp.smoothedRttNs() + " ns, cc " + c.srcQp.congestionControl();
    }

    /**
     * Starts a flow now.
     *
     * @param nowNs the current virtual time
     * @param src source host index
     * @param dst destination host index, not src
     * @param bytes bytes to transfer, at least 1
     * @param tag label for reports
     * @param listener told on completion, or null
     * @return the flow
     */
    public Flow startFlow(final long nowNs, final int src, final int dst, final long bytes, final String tag,
                          final FlowListener listener) {
        return startFlow(nowNs, src, dst, bytes, tag, listener, false);
    }

    /**
     * Starts a flow now, optionally on a QP pair of its own. Flows of one QP complete in post
     * order (RC semantics), so a short flow posted behind a long one waits for it; independent
     * flows such as background traffic get their own QPs to be measured independently, as
     * flow-level simulators assume.
     *
     * @param nowNs the current virtual time
     * @param src source host index
     * @param dst destination host index, not src
     * @param bytes bytes to transfer, at least 1
     * @param tag label for reports
     * @param listener told on completion, or null
     * @param dedicatedQp whether the flow gets a new QP pair instead of the pair's shared one
     * @return the flow
     */
    public Flow startFlow(final long nowNs, final int src, final int dst, final long bytes, final String tag,
                          final FlowListener listener, final boolean dedicatedQp) {
        if (src == dst) {
            throw new IllegalArgumentException("a flow needs two different hosts, got " + src + " -> " + dst);
        }
        if (bytes < 1) {
            throw new IllegalArgumentException("a flow carries at least 1 byte, got " + bytes);
        }
        final Connection c = dedicatedQp ? newConnection(src, dst) : connection(src, dst);
        final Flow flow = new Flow(flows.size(), src, dst, bytes, nowNs, idealFctNs(src, dst, bytes), tag, listener);
        flows.add(flow);
        recv.clear();
        recv.wrId(flow.id()).numSge(0);
        final int rs = c.dstQp.postRecv(recv);
        if (rs != PostStatus.OK) {
            throw new IllegalStateException("receive queue of host" + dst + " refused a receive: " + PostStatus.describe(rs));
        }
        for (long offset = 0; offset < bytes; offset += CHUNK_BYTES) {
            final int len = (int) Math.min(CHUNK_BYTES, bytes - offset);
            c.backlog.add(new long[] {flow.id(), len, offset + len >= bytes ? 1 : 0});
        }
        pump(c);
        c.src.kick(nowNs);
        return flow;
    }

    /**
     * Connects src to dst now, ahead of any flow, as applications that connect at initialisation
     * do (NCCL, MPI): the QP pair reaches RTS, and both hosts are served so that whatever the
     * endpoints send at connection (the Sender Count announcements of [CC-038]) leaves. A later
     * flow between the two uses this pair.
     *
     * @param nowNs the current virtual time
     * @param src source host index
     * @param dst destination host index, not src
     */
    public void connect(final long nowNs, final int src, final int dst) {
        if (src == dst) {
            throw new IllegalArgumentException("a connection needs two different hosts, got " + src + " -> " + dst);
        }
        final Connection c = connection(src, dst);
        c.src.kick(nowNs);
        c.dst.kick(nowNs);
    }

    /** Posts backlogged chunks while the send queue takes them. */
    private void pump(final Connection c) {
        while (!c.backlog.isEmpty()) {
            final long[] chunk = c.backlog.peekFirst();
            final boolean last = chunk[2] == 1;
            send.clear();
            send.wrId(chunk[0]).opcode(last ? WrOpcode.RDMA_WRITE_WITH_IMM : WrOpcode.RDMA_WRITE)
                .sendFlags(SendFlags.SIGNALED)
                .addSge(regions[c.src.hostIndex()].address(), (int) chunk[1], regions[c.src.hostIndex()].lkey())
                .remoteAddr(regions[c.dst.hostIndex()].address()).rkey(regions[c.dst.hostIndex()].rkey());
            if (last) {
                send.immData((int) chunk[0]);
            }
            final int status = c.srcQp.postSend(send);
            if (status == PostStatus.QUEUE_FULL) {
                return;
            }
            if (status != PostStatus.OK) {
                throw new IllegalStateException("host" + c.src.hostIndex() + " refused a WRITE: " + PostStatus.describe(status));
            }
            c.backlog.pollFirst();
        }
    }

    private void onCompletion(final long nowNs, final Host host, final WorkCompletion wc, final boolean sendSide) {
        final Connection c = byLocalQp.get(key(host.hostIndex(), wc.qpNum()));
        if (wc.status() != WcStatus.SUCCESS) {
            final int flowId = (int) wc.wrId();
            if (flowId >= 0 && flowId < flows.size() && flows.get(flowId).error == null) {
                flows.get(flowId).error = wc.status() + " at host" + host.hostIndex();
                failedFlows++;
                // A failed flow ends the run: its workload can never complete.
                network.simulator().stop();
            }
            return;
        }
        if (sendSide) {
            if (c != null) {
                pump(c);
            }
            return;
        }
        final Flow flow = flows.get(wc.immData());
        flow.endNs = nowNs;
        if (flow.listener() != null) {
            flow.listener().onFlowDone(nowNs, flow);
        }
    }

    private static long key(final int a, final int b) {
        return ((long) a << 32) | (b & 0xFFFFFFFFL);
    }

    private Connection connection(final int src, final int dst) {
        final Connection existing = connections.get(key(src, dst));
        if (existing != null) {
            return existing;
        }
        final Connection c = newConnection(src, dst);
        connections.put(key(src, dst), c);
        return c;
    }

    private Connection newConnection(final int src, final int dst) {
        final Host s = network.hosts().get(src);
        final Host d = network.hosts().get(dst);
        final QueuePair sq = s.endpoint().createQueuePair(pds[src], s.sendCq(), s.recvCq(), CAPS);
        final QueuePair dq = d.endpoint().createQueuePair(pds[dst], d.sendCq(), d.recvCq(), CAPS);
        final int psnS = s.endpoint().random().nextInt();
        final int psnD = d.endpoint().random().nextInt();
        bringUp(sq, dq, d, psnD, psnS, entropies(src, dst));
        bringUp(dq, sq, s, psnS, psnD, entropies(dst, src));
        final Connection c = new Connection(s, d, sq, dq);
        queuePairPairs++;
        byLocalQp.put(key(src, sq.qpn()), c);
        byLocalQp.put(key(dst, dq.qpn()), c);
        return c;
    }

    /** Distinct UDP source ports per QP, spread so different pairs hash differently. */
    private int[] entropies(final int src, final int dst) {
        final int n = profile.pathsPerQp();
        final int base = 49152 + Math.floorMod((src * 7919 + dst * 104729) * 31, 16384 - n);
        final int[] e = new int[n];
        for (int i = 0; i < n; i++) {
            e[i] = base + i;
        }
        return e;
    }

    private void bringUp(final QueuePair qp, final QueuePair peerQp, final Host peer, final int rqPsn, final int sqPsn,
                         final int[] paths) {
        qp.modify(QpState.INIT, new QpAttributes().port(1).accessFlags(AccessFlags.ALL));
        qp.modify(QpState.RTR, new QpAttributes().pathMtu(profile.pmtu()).destQpn(peerQp.qpn()).rqPsn(rqPsn)
            .maxDestRdAtomic(16).minRnrTimerNs(20_000).paths(paths).remotePeer(peer.hostIndex())
            .capabilities(profile.capabilities()));
        final QpAttributes rts = new QpAttributes().sqPsn(sqPsn).timeoutNs(1_000_000).retryCount(7)
            .rnrRetry(7).maxRdAtomic(16).ccAlgorithm(profile.ccAlgorithm());
        if (profile.congestionWindowPackets() > 0) {
            rts.congestionWindowPackets(profile.congestionWindowPackets());
        }
        qp.modify(QpState.RTS, rts);
    }

    /**
     * FCT of a flow alone on the idle fabric: the first packet crosses every hop store-and-forward,
     * the rest follow at the slowest link's rate (WRITE packets of PMTU payload; the last packet
     * of each chunk partial; the flow's last packet WRITE_WITH_IMM).
     *
     * @param src source host
     * @param dst destination host
     * @param bytes flow size
     * @return nanoseconds
     */
    public long idealFctNs(final int src, final int dst, final long bytes) {
        final int pmtu = profile.pmtu();
        long wireTotal = 0;
        int firstWire = -1;
        for (long offset = 0; offset < bytes; offset += CHUNK_BYTES) {
            final int len = (int) Math.min(CHUNK_BYTES, bytes - offset);
            final boolean lastChunk = offset + len >= bytes;
            for (int p = 0; p < len; p += pmtu) {
                final int payload = Math.min(pmtu, len - p);
                final boolean lastPacket = lastChunk && p + payload >= len;
                final int header = (lastPacket ? Opcode.WRITE_WITH_IMM : Opcode.WRITE).headerLength();
                final int wire = header + payload + WireConstants.INTEGRITY_CHECK_LENGTH + Packet.FRAME_OVERHEAD_BYTES;
                if (firstWire < 0) {
                    firstWire = wire;
                }
                wireTotal += wire;
            }
        }
        long latency = 0;
        long slowest = Long.MAX_VALUE;
        Port port = network.hosts().get(src).nic();
        for (int hops = 0; hops < 16; hops++) {
            latency += port.propagationNs() + port.serializationNs(firstWire);
            slowest = Math.min(slowest, port.rateBps());
            final var next = port.peer().owner();
            if (next == network.hosts().get(dst)) {
                return latency + (long) Math.ceil((wireTotal - firstWire) * 8e9 / slowest);
            }
            if (!(next instanceof Switch sw)) {
                break;
            }
            port = sw.ports().get(sw.route(dst)[0]);
        }
        throw new IllegalStateException("no path from host" + src + " to host" + dst);
    }
}
