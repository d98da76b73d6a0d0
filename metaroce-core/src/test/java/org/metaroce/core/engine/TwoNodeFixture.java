// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.engine;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

import org.agrona.BufferUtil;
import org.metaroce.core.SeededRandomSource;
import org.metaroce.core.congestion.CongestionControlAlgorithm;
import org.metaroce.core.testwire.InMemoryWire;
import org.metaroce.core.testwire.LinkProfile;
import org.metaroce.core.verbs.AccessFlags;
import org.metaroce.core.verbs.CompletionQueue;
import org.metaroce.core.verbs.MemoryRegion;
import org.metaroce.core.verbs.ProtectionDomain;
import org.metaroce.core.verbs.QpAttributes;
import org.metaroce.core.verbs.QpState;
import org.metaroce.core.verbs.WorkCompletion;

/**
 * Two endpoints on a seeded in-memory wire, each with one connected queue pair (RTS), a protection
 * domain, completion queues and registered memory. Tests drive traffic and inspect memory,
 * completions and counters.
 */
final class TwoNodeFixture {
    static final int REGION_SIZE = 1 << 20;
    static final int[] PATHS = {49152, 49153, 49154, 49155};

    final long seed;
    final InMemoryWire wire;
    final Side a;
    final Side b;

    /** One node: endpoint, QP, CQs and one memory region with all access rights. */
    static final class Side {
        final Endpoint endpoint;
        final int node;
        final ProtectionDomain pd;
        final CompletionQueue sendCq;
        final CompletionQueue recvCq;
        final QueuePair qp;
        final MemoryRegion mr;
        final List<WorkCompletion> sendCompletions = new ArrayList<>();
        final List<WorkCompletion> recvCompletions = new ArrayList<>();
        private final WorkCompletion[] scratch = new WorkCompletion[64];

        Side(final InMemoryWire wire, final EndpointConfig config, final long seed, final QueuePairCapabilities caps,
             final int cqCapacity) {
            endpoint = new Endpoint(config, new SeededRandomSource(seed));
            node = wire.attach(endpoint);
            pd = endpoint.allocateProtectionDomain();
            sendCq = endpoint.createCompletionQueue(cqCapacity);
            recvCq = endpoint.createCompletionQueue(cqCapacity);
            qp = endpoint.createQueuePair(pd, sendCq, recvCq, caps);
            final ByteBuffer memory = BufferUtil.allocateDirectAligned(REGION_SIZE, 64);
            mr = pd.registerMemory(memory, AccessFlags.ALL);
            for (int i = 0; i < scratch.length; i++) {
                scratch[i] = new WorkCompletion();
            }
        }

        /** Moves completions from the CQs into the lists. */
        void drain() {
            drain(sendCq, sendCompletions);
            drain(recvCq, recvCompletions);
        }

        private void drain(final CompletionQueue cq, final List<WorkCompletion> into) {
            int n;
            while ((n = cq.poll(scratch, scratch.length)) > 0) {
                for (int i = 0; i < n; i++) {
                    final WorkCompletion copy = new WorkCompletion();
                    copy.copyFrom(scratch[i]);
                    into.add(copy);
                }
            }
        }

        long address(final long offset) {
            return mr.address() + offset;
        }
    }

    TwoNodeFixture(final long seed) {
        this(seed, LinkProfile.perfect(), new EndpointConfig(), QueuePairCapabilities.defaults(), 4096);
    }

    /**
     * A fixture whose queue pairs have no RETRY_TIMEOUT: RETRY_CNT, the transmission limit and
     * KEEPALIVE_PROBES alone end a connection, as in verbs [REL-029], [REL-030], [CM-030] — for tests
     * of those counts (the default budget of 15 s would wait them out [REL-060]).
     */
    static TwoNodeFixture countingRetriesOnly(final long seed) {
        return new TwoNodeFixture(seed, LinkProfile.perfect(), new EndpointConfig().retryTimeoutNs(0),
            QueuePairCapabilities.defaults(), 4096);
    }

    TwoNodeFixture(final long seed, final LinkProfile profile) {
        this(seed, profile, new EndpointConfig(), QueuePairCapabilities.defaults(), 4096);
    }

    TwoNodeFixture(final long seed, final LinkProfile profile, final EndpointConfig config,
                   final QueuePairCapabilities caps, final int cqCapacity) {
        this.seed = seed;
        System.out.println("TwoNodeFixture seed=" + seed + " profile=" + profile);
        wire = new InMemoryWire(seed, profile);
        a = new Side(wire, config, seed * 31 + 1, caps, cqCapacity);
        b = new Side(wire, config, seed * 31 + 2, caps, cqCapacity);
    }

    /** Connects the two QPs by hand (what the connection manager negotiates), with the given MTU. */
    TwoNodeFixture connect(final int mtu) {
        return connect(mtu, 7, 7, 1_000_000);
    }

    TwoNodeFixture connect(final int mtu, final int retryCount, final int rnrRetry, final long timeoutNs) {
        final int psnA = (int) (seed * 0x9E3779B97F4A7C15L);
        final int psnB = (int) (seed * 0xC2B2AE3D27D4EB4FL) ^ 0x5555;
        bringUp(a.qp, b, mtu, psnB, psnA, retryCount, rnrRetry, timeoutNs);
        bringUp(b.qp, a, mtu, psnA, psnB, retryCount, rnrRetry, timeoutNs);
        return this;
    }

    /**
     * Connects with negotiated Capability Flags (both QPs, as the connection manager would set the
     * CAPABILITIES attribute) and, unless null, the CC_ALGORITHM attribute on both QPs.
     */
    TwoNodeFixture connect(final int mtu, final int capabilities, final CongestionControlAlgorithm cc) {
        return connect(mtu, capabilities, cc, 0);
    }

    /** As {@link #connect(int, int, CongestionControlAlgorithm)}, with an initial window of {@code windowPackets} (0: the algorithm's default). */
    TwoNodeFixture connect(final int mtu, final int capabilities, final CongestionControlAlgorithm cc,
                           final int windowPackets) {
        final int psnA = (int) (seed * 0x9E3779B97F4A7C15L);
        final int psnB = (int) (seed * 0xC2B2AE3D27D4EB4FL) ^ 0x5555;
        bringUp(a.qp, b, mtu, psnB, psnA, capabilities, cc, windowPackets);
        bringUp(b.qp, a, mtu, psnA, psnB, capabilities, cc, windowPackets);
        return this;
    }

    static void bringUp(final QueuePair qp, final Side peer, final int mtu, final int rqPsn, final int sqPsn,
                        final int capabilities, final CongestionControlAlgorithm cc) {
        bringUp(qp, peer, mtu, rqPsn, sqPsn, capabilities, cc, 0);
    }

    private static void bringUp(final QueuePair qp, final Side peer, final int mtu, final int rqPsn, final int sqPsn,
                                final int capabilities, final CongestionControlAlgorithm cc, final int windowPackets) {
        bringUp(qp, peer.qp.qpn(), peer.node, mtu, rqPsn, sqPsn, capabilities, cc, windowPackets);
    }

    /**
     * Takes {@code qp} through INIT and RTR to RTS towards the peer's QP {@code peerQpn} on wire node
     * {@code peerNode}, with the fixtures' usual attributes (the 4 paths, 1 ms timeout, 7 retries).
     */
    static void bringUp(final QueuePair qp, final int peerQpn, final int peerNode, final int mtu, final int rqPsn,
                        final int sqPsn, final int capabilities, final CongestionControlAlgorithm cc,
                        final int windowPackets) {
        qp.modify(QpState.INIT, new QpAttributes().port(1).accessFlags(AccessFlags.ALL));
        qp.modify(QpState.RTR, new QpAttributes().pathMtu(mtu).destQpn(peerQpn).rqPsn(rqPsn)
            .maxDestRdAtomic(16).minRnrTimerNs(20_000).paths(PATHS).remotePeer(peerNode).capabilities(capabilities));
        final QpAttributes rts = new QpAttributes().sqPsn(sqPsn).timeoutNs(1_000_000).retryCount(7).rnrRetry(7)
            .maxRdAtomic(16);
        if (cc != null) {
            rts.ccAlgorithm(cc);
        }
        if (windowPackets > 0) {
            rts.congestionWindowPackets(windowPackets);
        }
        qp.modify(QpState.RTS, rts);
    }

    /** Connects with chosen initial PSNs: {@code psnA} is what A sends first, {@code psnB} what B sends first. */
    TwoNodeFixture connectWithPsns(final int mtu, final int psnA, final int psnB) {
        bringUp(a.qp, b, mtu, psnB, psnA, 7, 7, 1_000_000);
        bringUp(b.qp, a, mtu, psnA, psnB, 7, 7, 1_000_000);
        return this;
    }

    private static void bringUp(final QueuePair qp, final Side peer, final int mtu, final int rqPsn,
                                final int sqPsn, final int retryCount, final int rnrRetry, final long timeoutNs) {
        qp.modify(QpState.INIT, new QpAttributes().port(1).accessFlags(AccessFlags.ALL));
        qp.modify(QpState.RTR, new QpAttributes().pathMtu(mtu).destQpn(peer.qp.qpn()).rqPsn(rqPsn)
            .maxDestRdAtomic(16).minRnrTimerNs(20_000).paths(PATHS).remotePeer(peer.node));
        qp.modify(QpState.RTS, new QpAttributes().sqPsn(sqPsn).timeoutNs(timeoutNs).retryCount(retryCount)
            .rnrRetry(rnrRetry).maxRdAtomic(16));
    }

    /**
     * Starts the MSN and RSN sequences of both QPs away from 0 (before {@code connect}), so that a
     * test can take them across 2^32 [OPS-043]: A's requester starts at {@code msnA} and
     * {@code rsnA} (and B's responder expects {@code rsnA} first), B's at {@code msnB} and
     * {@code rsnB}.
     */
    TwoNodeFixture startSequences(final int msnA, final int rsnA, final int msnB, final int rsnB) {
        startSequences(a.qp, msnA, rsnA, rsnB);
        startSequences(b.qp, msnB, rsnB, rsnA);
        return this;
    }

    /**
     * Starts one QP's MSN and RSN sequences at chosen values instead of 0, so that tests can take
     * every sequence space across 2^32 without sending 2^32 messages [OPS-043]. A conforming QP
     * starts both at 0 [OPS-009, OPS-010]; the initial PSNs are the RQ_PSN and SQ_PSN attributes
     * already. The peer must agree: {@code responderRsn} here is the peer requester's
     * {@code requesterRsn}. Modify to RESET puts all three back to 0.
     *
     * @param requesterMsn the MSN of the first request message the QP sends
     * @param requesterRsn the RSN of the first receive-consuming message the QP sends
     * @param responderRsn the RSN that the first receive WR posted to the QP answers to
     * @throws IllegalStateException unless the QP is in RESET or INIT with nothing posted
     */
    static void startSequences(final QueuePair qp, final int requesterMsn, final int requesterRsn,
                               final int responderRsn) {
        final QpState state = qp.state();
        if ((state != QpState.RESET && state != QpState.INIT) || qp.requester().queued() != 0
            || qp.responder().postedReceives() != 0) {
            throw new IllegalStateException("sequence numbers can only be chosen in RESET or INIT with nothing "
                + "posted; state " + state);
        }
        qp.requester().startSequences(requesterMsn, requesterRsn);
        qp.responder().startRsn(responderRsn);
    }

    /** Runs until both sides have at least the given numbers of completions, or fails after 10 s virtual. */
    boolean runUntilCompletions(final int aSend, final int bRecv) {
        return wire.runUntil(() -> {
            a.drain();
            b.drain();
            return a.sendCompletions.size() >= aSend && b.recvCompletions.size() >= bRecv;
        }, 10_000_000_000L);
    }

    /** Runs until every posted send on both sides has completed. */
    boolean runUntilQuiet() {
        return wire.runUntil(() -> {
            a.drain();
            b.drain();
            return a.qp.outstandingSends() == 0 && b.qp.outstandingSends() == 0;
        }, 10_000_000_000L);
    }
}
