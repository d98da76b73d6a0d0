// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty;

import java.net.InetAddress;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;

import org.agrona.BufferUtil;
import org.agrona.concurrent.BackoffIdleStrategy;
import org.metaroce.core.SeededRandomSource;
import org.metaroce.core.engine.EndpointConfig;
import org.metaroce.core.engine.QueuePair;
import org.metaroce.core.engine.QueuePairCapabilities;
import org.metaroce.core.verbs.AccessFlags;
import org.metaroce.core.verbs.CompletionQueue;
import org.metaroce.core.verbs.MemoryRegion;
import org.metaroce.core.verbs.ProtectionDomain;
import org.metaroce.core.verbs.QpAttributes;
import org.metaroce.core.verbs.QpState;
import org.metaroce.core.verbs.WorkCompletion;

/**
 * Two devices on 127.0.0.1 (ephemeral ports), each with one queue pair, completion queues and a
 * registered memory region, connected by hand: QPNs and PSNs exchanged in-process, remote peer =
 * the peer id of the other device's endpoint address, paths = the local entropy ports.
 *
 * <p>The test thread is the completion queues' consumer. In INVOKER mode it also owns and drives
 * both devices ({@link #pump}); in DEDICATED mode (a thread per device) and SHARED mode (one
 * {@link SharedDriver} thread for both) setup and posting go through {@link MetaRoceDevice#call}.
 */
final class DevicePair implements AutoCloseable {
    static final int REGION_SIZE = 4 << 20;
    static final long TIMEOUT_NS = TimeUnit.SECONDS.toNanos(20);
    static final long MIN_RTO_NS = TimeUnit.MILLISECONDS.toNanos(10);
    static final long INITIAL_RTO_NS = TimeUnit.MILLISECONDS.toNanos(50);

    final Transport transport;
    final ThreadingMode mode;
    final SharedDriver shared;
    final Node a;
    final Node b;

    /** One side: a device and its verbs objects. */
    static final class Node {
        final MetaRoceDevice device;
        final ByteBuffer memory;
        ProtectionDomain pd;
        CompletionQueue sendCq;
        CompletionQueue recvCq;
        QueuePair qp;
        MemoryRegion mr;
        final List<WorkCompletion> sendCompletions = new ArrayList<>();
        final List<WorkCompletion> recvCompletions = new ArrayList<>();
        private final WorkCompletion[] scratch = new WorkCompletion[64];

        Node(final DeviceConfig config) {
            this(new MetaRoceDevice(config));
        }

        Node(final MetaRoceDevice device) {
            this.device = device;
            memory = BufferUtil.allocateDirectAligned(REGION_SIZE, 64);
            for (int i = 0; i < scratch.length; i++) {
                scratch[i] = new WorkCompletion();
            }
            device.call(ep -> {
                pd = ep.allocateProtectionDomain();
                sendCq = ep.createCompletionQueue(4096);
                recvCq = ep.createCompletionQueue(4096);
                qp = ep.createQueuePair(pd, sendCq, recvCq, QueuePairCapabilities.defaults());
                mr = pd.registerMemory(memory, AccessFlags.ALL);
                return null;
            });
        }

        /** Moves completions from the CQs into the lists (test thread = the CQs' consumer). */
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

    DevicePair(final Transport transport, final ThreadingMode mode, final int entropyPorts) {
        this(transport, mode, entropyPorts, c -> { }, c -> { });
    }

    DevicePair(final Transport transport, final ThreadingMode mode, final int entropyPorts,
               final Consumer<DeviceConfig> tweakA, final Consumer<DeviceConfig> tweakB) {
        this.transport = transport;
        this.mode = mode;
        // SHARED: both devices on one driver thread.
        shared = mode == ThreadingMode.SHARED ? new SharedDriver(transport, new BackoffIdleStrategy(100, 10, 1_000,
            100_000)) : null;
        final DeviceConfig ca = config(transport, mode, entropyPorts, 1).sharedDriver(shared);
        tweakA.accept(ca);
        final DeviceConfig cb = config(transport, mode, entropyPorts, 2).sharedDriver(shared);
        tweakB.accept(cb);
        Node nodeA = null;
        Node nodeB = null;
        try {
            nodeA = new Node(ca);
            nodeB = new Node(cb);
        } finally {
            if (nodeB == null) {
                if (nodeA != null) {
                    nodeA.device.close();
                }
                if (shared != null) {
                    shared.close();
                }
            }
        }
        a = nodeA;
        b = nodeB;
    }

    static DeviceConfig config(final Transport transport, final ThreadingMode mode, final int entropyPorts,
                               final long seed) {
        return new DeviceConfig().bindAddress(InetAddress.getLoopbackAddress()).endpointPort(0)
            .entropyPortRange(entropyPorts, 0).transport(transport).threadingMode(mode)
            .randomSource(new SeededRandomSource(seed))
            // Loopback RTTs are tens of microseconds, but a cold JIT, a GC pause or PARANOID leak
            // detection (which records a stack trace per buffer operation) can stall a duty cycle
            // for milliseconds: keep such stalls from looking like loss (these tests are about the
            // driver; loss recovery is tested in core).
            .endpointConfig(new EndpointConfig().minRtoNs(MIN_RTO_NS));
    }

    /** @return a node (QP, CQs, memory) on an existing device */
    static Node node(final MetaRoceDevice device) {
        return new Node(device);
    }

    /** Connects two nodes' QPs by hand, each spraying over its own device's entropy ports. */
    static void connect(final Node x, final Node y, final int mtu) {
        final int qpnX = x.device.call(ep -> x.qp.qpn());
        final int qpnY = y.device.call(ep -> y.qp.qpn());
        bringUp(x, qpnY, x.device.peerId(y.device.localAddress()), mtu, 0x777, 0x111, x.device.entropyPorts());
        bringUp(y, qpnX, y.device.peerId(x.device.localAddress()), mtu, 0x111, 0x777, y.device.entropyPorts());
    }

    /** Connects the two QPs by hand with the given path MTU. */
    DevicePair connect(final int mtu) {
        return connect(mtu, a.device.entropyPorts(), b.device.entropyPorts());
    }

    /** Connects the two QPs by hand with the given path MTU and path sets (entropy values). */
    DevicePair connect(final int mtu, final int[] pathsA, final int[] pathsB) {
        final int qpnA = a.device.call(ep -> a.qp.qpn());
        final int qpnB = b.device.call(ep -> b.qp.qpn());
        final int peerOfB = a.device.peerId(b.device.localAddress());
        final int peerOfA = b.device.peerId(a.device.localAddress());
        final int psnA = 0x12345;
        final int psnB = 0xABCDE;
        bringUp(a, qpnB, peerOfB, mtu, psnB, psnA, pathsA);
        bringUp(b, qpnA, peerOfA, mtu, psnA, psnB, pathsB);
        return this;
    }

    private static void bringUp(final Node node, final int destQpn, final int remotePeer, final int mtu,
                                final int rqPsn, final int sqPsn, final int[] paths) {
        node.device.call(ep -> {
            node.qp.modify(QpState.INIT, new QpAttributes().port(1).accessFlags(AccessFlags.ALL));
            node.qp.modify(QpState.RTR, new QpAttributes().pathMtu(mtu).destQpn(destQpn).rqPsn(rqPsn)
                .maxDestRdAtomic(16).minRnrTimerNs(20_000).paths(paths).remotePeer(remotePeer));
            node.qp.modify(QpState.RTS, new QpAttributes().sqPsn(sqPsn).timeoutNs(INITIAL_RTO_NS).retryCount(7)
                .rnrRetry(7).maxRdAtomic(16));
            return null;
        });
    }

    /**
     * Makes progress until {@code done} holds: in INVOKER mode by driving both devices from this
     * thread, in DEDICATED mode by waiting for the driver threads. Drains the CQs each round.
     *
     * @return whether {@code done} held before the timeout
     */
    boolean pump(final BooleanSupplier done) {
        final long deadline = System.nanoTime() + TIMEOUT_NS;
        while (System.nanoTime() - deadline < 0) {
            if (mode == ThreadingMode.INVOKER) {
                a.device.doWork();
                b.device.doWork();
            } else {
                // Leave the (two) cores to the driver threads.
                LockSupport.parkNanos(20_000);
            }
            a.drain();
            b.drain();
            if (done.getAsBoolean()) {
                return true;
            }
        }
        return false;
    }

    boolean awaitCompletions(final int aSend, final int bRecv) {
        return pump(() -> a.sendCompletions.size() >= aSend && b.recvCompletions.size() >= bRecv);
    }

    @Override
    public void close() {
        try {
            if (a != null) {
                a.device.close();
            }
        } finally {
            try {
                if (b != null) {
                    b.device.close();
                }
            } finally {
                if (shared != null) {
                    shared.close();
                }
            }
        }
    }

    /** @return both devices' driver and endpoint counters, for failure messages */
    String describe() {
        return this + "\n A: " + a.device.counters() + "\n    " + a.device.endpoint().counters() + "\n    "
            + a.device.endpoint().wireCounters() + "\n B: " + b.device.counters() + "\n    "
            + b.device.endpoint().counters() + "\n    " + b.device.endpoint().wireCounters();
    }

    @Override
    public String toString() {
        return transport + "/" + mode;
    }
}
