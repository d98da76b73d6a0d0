// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.connection;

import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;

import org.agrona.BufferUtil;
import org.agrona.concurrent.UnsafeBuffer;
import org.metaroce.core.SeededRandomSource;
import org.metaroce.core.engine.Endpoint;
import org.metaroce.core.engine.EndpointConfig;
import org.metaroce.core.engine.PeerDirectory;
import org.metaroce.core.engine.QueuePairCapabilities;
import org.metaroce.core.testwire.InMemoryWire;
import org.metaroce.core.testwire.LinkProfile;
import org.metaroce.core.verbs.AccessFlags;
import org.metaroce.core.verbs.CompletionQueue;
import org.metaroce.core.verbs.MemoryRegion;
import org.metaroce.core.verbs.ProtectionDomain;
import org.metaroce.core.verbs.WorkCompletion;

/**
 * Nodes with an endpoint and a connection manager each on a seeded in-memory wire. Every node
 * records its events; a server node can answer CONNECT_REQUESTs through {@link Node#onRequest}.
 */
final class CmFixture {
    static final int SERVER_PORT = 4796;
    static final int CLIENT_PORT = 49_000;
    static final long SERVICE = 20_000;
    static final int REGION_SIZE = 1 << 20;
    static final long MS = 1_000_000L;
    static final long S = 1_000_000_000L;

    final long seed;
    final InMemoryWire wire;
    final List<Node> nodes = new ArrayList<>();

    /** One node: endpoint, connection manager, PD, CQs, a registered region and its events. */
    static final class Node {
        final Endpoint endpoint;
        final ConnectionManager cm;
        final int id;
        final ProtectionDomain pd;
        final CompletionQueue sendCq;
        final CompletionQueue recvCq;
        final MemoryRegion mr;
        final List<CmEvent> events = new ArrayList<>();
        final List<WorkCompletion> sendCompletions = new ArrayList<>();
        final List<WorkCompletion> recvCompletions = new ArrayList<>();
        Consumer<CmEvent> onRequest;
        private final WorkCompletion[] scratch = new WorkCompletion[64];

        Node(final InMemoryWire wire, final long seed, final int port, final CmConfig config) {
            endpoint = new Endpoint(new EndpointConfig(), new SeededRandomSource(seed));
            id = wire.attach(endpoint);
            cm = new ConnectionManager(endpoint, port, PeerDirectory.IDENTITY, config);
            cm.eventHandler(e -> {
                events.add(e);
                if (e.type() == CmEventType.CONNECT_REQUEST && onRequest != null) {
                    onRequest.accept(e);
                }
            });
            pd = endpoint.allocateProtectionDomain();
            sendCq = endpoint.createCompletionQueue(4096);
            recvCq = endpoint.createCompletionQueue(4096);
            mr = pd.registerMemory(BufferUtil.allocateDirectAligned(REGION_SIZE, 64), AccessFlags.ALL);
            for (int i = 0; i < scratch.length; i++) {
                scratch[i] = new WorkCompletion();
            }
        }

        long address(final long offset) {
            return mr.address() + offset;
        }

        /** Private data describing {@code length} bytes of this node's region at {@code offset}. */
        byte[] regionInfo(final long offset, final int length) {
            final UnsafeBuffer b = new UnsafeBuffer(new byte[16]);
            b.putLong(0, address(offset), ByteOrder.BIG_ENDIAN);
            b.putInt(8, mr.rkey(), ByteOrder.BIG_ENDIAN);
            b.putInt(12, length, ByteOrder.BIG_ENDIAN);
            return b.byteArray();
        }

        ListenParams listenParams() {
            return new ListenParams().resources(pd, sendCq, recvCq, QueuePairCapabilities.defaults())
                .accessFlags(AccessFlags.ALL).pathMtu(1024).paths(50_000, 50_001, 50_002, 50_003);
        }

        ConnectParams connectParams(final Node server) {
            return new ConnectParams().peer(server.id).serviceId(SERVICE)
                .resources(pd, sendCq, recvCq, QueuePairCapabilities.defaults()).accessFlags(AccessFlags.ALL)
                .pathMtu(1024).paths(60_000, 60_001, 60_002, 60_003);
        }

        List<CmEvent> events(final CmEventType type) {
            final List<CmEvent> selected = new ArrayList<>();
            for (final CmEvent e : events) {
                if (e.type() == type) {
                    selected.add(e);
                }
            }
            return selected;
        }

        long count(final CmEventType type) {
            return events.stream().filter(e -> e.type() == type).count();
        }

        CmEvent first(final CmEventType type) {
            for (final CmEvent e : events) {
                if (e.type() == type) {
                    return e;
                }
            }
            return null;
        }

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
    }

    CmFixture(final long seed, final LinkProfile profile) {
        this.seed = seed;
        this.wire = new InMemoryWire(seed, profile);
        System.out.println("CmFixture seed=" + seed + " profile=" + profile);
    }

    Node node(final int port, final CmConfig config) {
        final Node n = new Node(wire, seed * 31 + nodes.size() + 1, port, config);
        nodes.add(n);
        return n;
    }

    boolean runUntil(final BooleanSupplier condition, final long timeoutNs) {
        return wire.runUntil(() -> {
            for (final Node n : nodes) {
                n.drain();
            }
            return condition.getAsBoolean();
        }, timeoutNs);
    }
}
