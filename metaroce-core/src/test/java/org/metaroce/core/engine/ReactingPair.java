// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.engine;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

import org.agrona.BufferUtil;
import org.agrona.DirectBuffer;
import org.metaroce.core.SeededRandomSource;
import org.metaroce.core.testwire.InMemoryWire;
import org.metaroce.core.testwire.LinkProfile;
import org.metaroce.core.verbs.AccessFlags;
import org.metaroce.core.verbs.CompletionQueue;
import org.metaroce.core.verbs.MemoryRegion;
import org.metaroce.core.verbs.ProtectionDomain;
import org.metaroce.core.verbs.WorkCompletion;

/**
 * Two endpoints on a seeded in-memory wire whose applications react to completions between the
 * endpoint's read and its send, as the drivers' {@code doWork} step does (and so as the tools and
 * the loopback benchmarks run): a reply posted on a receive completion is in the send queue when the
 * endpoint next polls. {@link TwoNodeFixture} reacts only between virtual instants, after the poll
 * that follows the read has sent what was due.
 */
final class ReactingPair {
    static final int REGION_SIZE = 1 << 20;

    final long seed;
    final InMemoryWire wire;
    final Node a;
    final Node b;

    /** One node: endpoint, QP, queues, memory, and what its application does after each read. */
    static final class Node implements DatagramEndpoint {
        final Endpoint endpoint;
        final int id;
        final CompletionQueue sendCq;
        final CompletionQueue recvCq;
        final QueuePair qp;
        final MemoryRegion mr;
        final List<WorkCompletion> sendCompletions = new ArrayList<>();
        final List<WorkCompletion> recvCompletions = new ArrayList<>();
        /** Called with each receive completion, between the read and the endpoint's next poll. */
        Consumer<WorkCompletion> onReceive = wc -> { };
        private final WorkCompletion[] scratch = new WorkCompletion[16];

        Node(final InMemoryWire wire, final EndpointConfig config, final long seed) {
            endpoint = new Endpoint(config, new SeededRandomSource(seed));
            id = wire.attach(this);
            final ProtectionDomain pd = endpoint.allocateProtectionDomain();
            sendCq = endpoint.createCompletionQueue(4096);
            recvCq = endpoint.createCompletionQueue(4096);
            qp = endpoint.createQueuePair(pd, sendCq, recvCq, QueuePairCapabilities.defaults());
            final ByteBuffer memory = BufferUtil.allocateDirectAligned(REGION_SIZE, 64);
            mr = pd.registerMemory(memory, AccessFlags.ALL);
            for (int i = 0; i < scratch.length; i++) {
                scratch[i] = new WorkCompletion();
            }
        }

        long address(final long offset) {
            return mr.address() + offset;
        }

        long counter(final EndpointCounter counter) {
            return endpoint.counters().get(counter);
        }

        @Override
        public void onDatagram(final long nowNs, final DirectBuffer buffer, final int offset, final int length,
                               final int peerId, final int ecn) {
            endpoint.onDatagram(nowNs, buffer, offset, length, peerId, ecn);
            react();
        }

        @Override
        public void onDatagram(final long nowNs, final long arrivalNs, final DirectBuffer buffer, final int offset,
                               final int length, final int peerId, final int ecn) {
            endpoint.onDatagram(nowNs, arrivalNs, buffer, offset, length, peerId, ecn);
            react();
        }

        /** The application's step: reap completions, react to receives. */
        void react() {
            int n;
            while ((n = sendCq.poll(scratch, scratch.length)) > 0) {
                for (int i = 0; i < n; i++) {
                    final WorkCompletion copy = new WorkCompletion();
                    copy.copyFrom(scratch[i]);
                    sendCompletions.add(copy);
                }
            }
            while ((n = recvCq.poll(scratch, scratch.length)) > 0) {
                for (int i = 0; i < n; i++) {
                    final WorkCompletion copy = new WorkCompletion();
                    copy.copyFrom(scratch[i]);
                    recvCompletions.add(copy);
                    onReceive.accept(copy);
                }
            }
        }

        @Override
        public int poll(final long nowNs, final TransmitSink sink) {
            return endpoint.poll(nowNs, sink);
        }

        @Override
        public long nextDeadlineNs() {
            return endpoint.nextDeadlineNs();
        }
    }

    ReactingPair(final long seed, final LinkProfile profile, final EndpointConfig config) {
        this.seed = seed;
        System.out.println("ReactingPair seed=" + seed + " profile=" + profile);
        wire = new InMemoryWire(seed, profile);
        a = new Node(wire, config, seed * 31 + 1);
        b = new Node(wire, config, seed * 31 + 2);
    }

    /** Connects the QPs by hand, each with the Capability Flags given (the connection manager would set both alike). */
    ReactingPair connect(final int mtu, final int capabilitiesA, final int capabilitiesB) {
        return connect(mtu, capabilitiesA, capabilitiesB, null, 0);
    }

    /** As {@link #connect(int, int, int)}, with a congestion control and its window in packets (0: its own). */
    ReactingPair connect(final int mtu, final int capabilitiesA, final int capabilitiesB,
                         final org.metaroce.core.congestion.CongestionControlAlgorithm cc, final int windowPackets) {
        final int psnA = (int) (seed * 0x9E3779B97F4A7C15L);
        final int psnB = (int) (seed * 0xC2B2AE3D27D4EB4FL) ^ 0x5555;
        TwoNodeFixture.bringUp(a.qp, b.qp.qpn(), b.id, mtu, psnB, psnA, capabilitiesA, cc, windowPackets);
        TwoNodeFixture.bringUp(b.qp, a.qp.qpn(), a.id, mtu, psnA, psnB, capabilitiesB, cc, windowPackets);
        return this;
    }
}
