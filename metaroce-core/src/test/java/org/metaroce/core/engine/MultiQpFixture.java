// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.engine;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

import org.agrona.BufferUtil;
import org.metaroce.core.SeededRandomSource;
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
 * Two endpoints on a seeded in-memory wire with several connected queue-pair pairs between them
 * (all in RTS), one protection domain and one registered memory region per endpoint that every
 * queue pair shares. Node A gives every queue pair its own send and receive CQ; node B shares one
 * CQ among all its queue pairs, sends and receives alike, so that the routing of completions by
 * QPN is exercised too. Completions are collected per queue pair and per direction.
 */
final class MultiQpFixture {
    static final int[] PATHS = {49152, 49153, 49154, 49155};

    final long seed;
    final InMemoryWire wire;
    final Node a;
    final Node b;
    final int qpCount;

    /** One end of a connected pair: its QP and the completions collected for it. */
    static final class QpEnd {
        final QueuePair qp;
        final List<WorkCompletion> sendCompletions = new ArrayList<>();
        final List<WorkCompletion> recvCompletions = new ArrayList<>();

        QpEnd(final QueuePair qp) {
            this.qp = qp;
        }
    }

    /** One endpoint: its QPs (index i of A is connected to index i of B), CQs and memory region. */
    static final class Node {
        final String name;
        final Endpoint endpoint;
        final int node;
        final ProtectionDomain pd;
        final MemoryRegion mr;
        final List<QpEnd> qps = new ArrayList<>();
        final List<CompletionQueue> cqs = new ArrayList<>();
        private final WorkCompletion[] scratch = new WorkCompletion[64];

        Node(final String name, final InMemoryWire wire, final long seed, final int regionSize) {
            this.name = name;
            endpoint = new Endpoint(new EndpointConfig(), new SeededRandomSource(seed));
            node = wire.attach(endpoint);
            pd = endpoint.allocateProtectionDomain();
            final ByteBuffer memory = BufferUtil.allocateDirectAligned(regionSize, 64);
            mr = pd.registerMemory(memory, AccessFlags.ALL);
            for (int i = 0; i < scratch.length; i++) {
                scratch[i] = new WorkCompletion();
            }
        }

        long address(final long offset) {
            return mr.address() + offset;
        }

        QpEnd byQpn(final int qpn) {
            for (final QpEnd end : qps) {
                if (end.qp.qpn() == qpn) {
                    return end;
                }
            }
            throw new AssertionError(name + ": completion for unknown QPN " + qpn);
        }

        /** Moves completions from every CQ into the per-QP lists, routed by QPN and opcode. */
        void drain() {
            for (final CompletionQueue cq : cqs) {
                int n;
                while ((n = cq.poll(scratch, scratch.length)) > 0) {
                    for (int i = 0; i < n; i++) {
                        final WorkCompletion copy = new WorkCompletion().copyFrom(scratch[i]);
                        final QpEnd end = byQpn(copy.qpNum());
                        (copy.opcode().isReceive() ? end.recvCompletions : end.sendCompletions).add(copy);
                    }
                }
            }
        }

        boolean quiet() {
            for (final QpEnd end : qps) {
                if (end.qp.outstandingSends() != 0 || end.qp.postedReceives() != 0) {
                    return false;
                }
            }
            return true;
        }
    }

    /**
     * @param seed seeds the wire's faults, the endpoints' randomness and the initial PSNs
     * @param profile fault profile of both directions
     * @param qpCount number of QP pairs
     * @param mtu path MTU of every QP
     * @param regionSize bytes of each endpoint's memory region
     */
    MultiQpFixture(final long seed, final LinkProfile profile, final int qpCount, final int mtu, final int regionSize) {
        this(seed, profile, qpCount, mtu, regionSize, 7, 1_000_000);
    }

    MultiQpFixture(final long seed, final LinkProfile profile, final int qpCount, final int mtu, final int regionSize,
                   final int retryCount, final long timeoutNs) {
        this(seed, profile, qpCount, mtu, regionSize, retryCount, timeoutNs, 0, null);
    }

    /**
     * @param capabilities negotiated Capability Flags of every QP (the CAPABILITIES attribute)
     * @param cc CC_ALGORITHM of every QP, or null for the endpoint default
     */
    MultiQpFixture(final long seed, final LinkProfile profile, final int qpCount, final int mtu, final int regionSize,
                   final int retryCount, final long timeoutNs, final int capabilities,
                   final org.metaroce.core.congestion.CongestionControlAlgorithm cc) {
        this.seed = seed;
        this.qpCount = qpCount;
        System.out.println("MultiQpFixture seed=" + seed + " qps=" + qpCount + " mtu=" + mtu + " profile=" + profile);
        wire = new InMemoryWire(seed, profile);
        a = new Node("A", wire, seed * 31 + 1, regionSize);
        b = new Node("B", wire, seed * 31 + 2, regionSize);
        final CompletionQueue shared = b.endpoint.createCompletionQueue(8192);
        b.cqs.add(shared);
        for (int i = 0; i < qpCount; i++) {
            final CompletionQueue sendCq = a.endpoint.createCompletionQueue(4096);
            final CompletionQueue recvCq = a.endpoint.createCompletionQueue(4096);
            a.cqs.add(sendCq);
            a.cqs.add(recvCq);
            a.qps.add(new QpEnd(a.endpoint.createQueuePair(a.pd, sendCq, recvCq, QueuePairCapabilities.defaults())));
            b.qps.add(new QpEnd(b.endpoint.createQueuePair(b.pd, shared, shared, QueuePairCapabilities.defaults())));
        }
        for (int i = 0; i < qpCount; i++) {
            final int psnA = (int) ((seed + i) * 0x9E3779B97F4A7C15L);
            final int psnB = (int) ((seed + i) * 0xC2B2AE3D27D4EB4FL) ^ 0x5555;
            bringUp(a.qps.get(i).qp, b, b.qps.get(i).qp, mtu, psnB, psnA, retryCount, timeoutNs, capabilities, cc);
            bringUp(b.qps.get(i).qp, a, a.qps.get(i).qp, mtu, psnA, psnB, retryCount, timeoutNs, capabilities, cc);
        }
    }

    private static void bringUp(final QueuePair qp, final Node peer, final QueuePair peerQp, final int mtu,
                                final int rqPsn, final int sqPsn, final int retryCount, final long timeoutNs,
                                final int capabilities, final org.metaroce.core.congestion.CongestionControlAlgorithm cc) {
        qp.modify(QpState.INIT, new QpAttributes().port(1).accessFlags(AccessFlags.ALL));
        qp.modify(QpState.RTR, new QpAttributes().pathMtu(mtu).destQpn(peerQp.qpn()).rqPsn(rqPsn)
            .maxDestRdAtomic(16).minRnrTimerNs(20_000).paths(PATHS).remotePeer(peer.node).capabilities(capabilities));
        final QpAttributes rts = new QpAttributes().sqPsn(sqPsn).timeoutNs(timeoutNs).retryCount(retryCount)
            .rnrRetry(7).maxRdAtomic(16);
        if (cc != null) {
            rts.ccAlgorithm(cc);
        }
        qp.modify(QpState.RTS, rts);
    }

    Node node(final boolean isA) {
        return isA ? a : b;
    }

    void drain() {
        a.drain();
        b.drain();
    }

    /** Runs until every posted send and receive on both nodes has completed. */
    boolean runUntilQuiet(final long timeoutNs) {
        return runUntilQuiet(timeoutNs, () -> { });
    }

    /**
     * Runs until every posted send and receive on both nodes has completed, calling
     * {@code afterDrain} each time completions have been collected (after every settled instant),
     * so a test can check what must be visible when a completion is seen.
     */
    boolean runUntilQuiet(final long timeoutNs, final Runnable afterDrain) {
        return wire.runUntil(() -> {
            drain();
            afterDrain.run();
            return a.quiet() && b.quiet();
        }, timeoutNs);
    }

    /** @return both endpoints' counters and the wire's, for failure messages and logs */
    String describe() {
        return "seed=" + seed + " A " + a.endpoint.counters() + " B " + b.endpoint.counters() + " " + wire.stats();
    }
}
