// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.cli;

import java.net.InetAddress;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.function.Function;

import org.agrona.BufferUtil;
import org.agrona.concurrent.UnsafeBuffer;
import org.metaroce.core.connection.CmConfig;
import org.metaroce.core.connection.CmEvent;
import org.metaroce.core.connection.CmEventType;
import org.metaroce.core.connection.ConnectionManager;
import org.metaroce.core.engine.Endpoint;
import org.metaroce.core.engine.EndpointConfig;
import org.metaroce.core.verbs.AccessFlags;
import org.metaroce.core.verbs.CompletionQueue;
import org.metaroce.core.verbs.MemoryRegion;
import org.metaroce.core.verbs.ProtectionDomain;
import org.metaroce.core.verbs.WorkCompletion;
import org.metaroce.netty.DeviceConfig;
import org.metaroce.netty.MetaRoceDevice;
import org.metaroce.netty.ThreadingMode;
import org.metaroce.netty.Transport;

/**
 * Test fixture: one {@link MetaRoceDevice} on 127.0.0.1 (ephemeral endpoint and entropy ports)
 * with a {@link ConnectionManager} handed the device's peer table, as the CLI's {@code Side}
 * builds it, plus a protection domain, one send and one receive completion queue and one
 * registered memory region.
 *
 * <p>The test thread is the consumer of the completion queues and of the connection-manager
 * events. In INVOKER mode it also owns and drives the device ({@link #pump}); in DEDICATED mode
 * the device's driver thread does, and setup and posting go through {@link #call}. Connection
 * manager events are recorded by the owning thread and moved into {@link #events} by
 * {@link #drain()}; {@link #onOwnerEvent} runs first, on the owning thread (accept there).
 */
final class UdpCmNode implements AutoCloseable {
    final String name;
    final ThreadingMode mode;
    final MetaRoceDevice device;
    final ByteBuffer memory;
    ProtectionDomain pd;
    CompletionQueue sendCq;
    CompletionQueue recvCq;
    MemoryRegion mr;
    ConnectionManager cm;
    /** Runs on the owning thread for every connection-manager event, before it is recorded. */
    volatile Consumer<CmEvent> onOwnerEvent = e -> { };
    /** Failures of {@link #onOwnerEvent} (the owning thread cannot fail the test itself). */
    final ConcurrentLinkedQueue<Throwable> ownerFailures = new ConcurrentLinkedQueue<>();
    private final ConcurrentLinkedQueue<CmEvent> incoming = new ConcurrentLinkedQueue<>();
    /** Events in the order raised, as seen by the test thread after {@link #drain()}. */
    final List<CmEvent> events = new ArrayList<>();
    final List<WorkCompletion> sendCompletions = new ArrayList<>();
    final List<WorkCompletion> recvCompletions = new ArrayList<>();
    private final WorkCompletion[] scratch = new WorkCompletion[256];

    /**
     * @param name "A", "B", ... for messages
     * @param mode INVOKER (the calling thread owns it) or DEDICATED
     * @param regionBytes size of the registered region
     * @param paths entropy ports (send sockets) of the device
     * @param cqCapacity capacity of each completion queue
     * @param endpointConfig protocol parameters
     * @param cmConfig connection-manager parameters
     * @param tweak last changes to the device configuration
     */
    UdpCmNode(final String name, final ThreadingMode mode, final int regionBytes, final int paths, final int cqCapacity,
              final EndpointConfig endpointConfig, final CmConfig cmConfig, final Consumer<DeviceConfig> tweak) {
        this.name = name;
        this.mode = mode;
        final DeviceConfig dc = new DeviceConfig().bindAddress(InetAddress.getLoopbackAddress()).endpointPort(0)
            .entropyPortRange(paths, 0).transport(Transport.AUTO).threadingMode(mode)
            .endpointConfig(endpointConfig).threadName("metaroce-test-" + name);
        tweak.accept(dc);
        device = new MetaRoceDevice(dc);
        memory = BufferUtil.allocateDirectAligned(regionBytes, 4096);
        for (int i = 0; i < scratch.length; i++) {
            scratch[i] = new WorkCompletion();
        }
        try {
            device.call(ep -> {
                pd = ep.allocateProtectionDomain();
                sendCq = ep.createCompletionQueue(cqCapacity);
                recvCq = ep.createCompletionQueue(cqCapacity);
                mr = pd.registerMemory(memory, AccessFlags.ALL);
                cm = new ConnectionManager(ep, device.endpointPort(), device.peers(), cmConfig);
                cm.eventHandler(e -> {
                    try {
                        onOwnerEvent.accept(e);
                    } catch (final RuntimeException | Error ex) {
                        ownerFailures.add(ex);
                    } finally {
                        incoming.add(e);
                    }
                });
                return null;
            });
        } catch (final RuntimeException ex) {
            closeQuietly();
            throw ex;
        }
    }

    /** Runs {@code f} on the owning thread (directly when this is it) and returns its result. */
    <T> T call(final Function<Endpoint, T> f) {
        return device.call(f);
    }

    /** @return the region as a buffer (read it on the owning thread, or once the peer is quiet) */
    UnsafeBuffer buffer() {
        return mr.buffer();
    }

    long address(final long offset) {
        return mr.address() + offset;
    }

    /** Moves completions and connection-manager events to the test thread's lists. */
    void drain() {
        drain(sendCq, sendCompletions);
        drain(recvCq, recvCompletions);
        CmEvent e;
        while ((e = incoming.poll()) != null) {
            events.add(e);
        }
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

    /** @return recorded events of {@code type} */
    List<CmEvent> events(final CmEventType type) {
        final List<CmEvent> out = new ArrayList<>();
        for (final CmEvent e : events) {
            if (e.type() == type) {
                out.add(e);
            }
        }
        return out;
    }

    long count(final CmEventType type) {
        return events.stream().filter(e -> e.type() == type).count();
    }

    /** @return the device's counters, for failure messages */
    String describe() {
        return name + " " + device + "\n    driver:   " + device.counters() + "\n    endpoint: "
            + device.endpoint().counters() + "\n    wire:     " + device.endpoint().wireCounters()
            + (cm != null ? "\n    cm:       " + cm.counters() : "");
    }

    /**
     * Makes progress until {@code done} holds or {@code timeoutNs} passes: INVOKER nodes are driven
     * by this thread (closed ones skipped), DEDICATED ones by their driver threads; every node is
     * drained each round.
     *
     * @return whether {@code done} held in time
     */
    static boolean pump(final long timeoutNs, final BooleanSupplier done, final UdpCmNode... nodes) {
        final long deadline = System.nanoTime() + timeoutNs;
        while (true) {
            boolean invoker = false;
            for (final UdpCmNode n : nodes) {
                if (n.mode == ThreadingMode.INVOKER && !n.device.isClosed()) {
                    n.device.doWork();
                    invoker = true;
                }
            }
            for (final UdpCmNode n : nodes) {
                n.drain();
            }
            if (done.getAsBoolean()) {
                return true;
            }
            if (System.nanoTime() - deadline > 0) {
                return false;
            }
            if (!invoker) {
                // Leave the cores to the driver threads.
                LockSupport.parkNanos(TimeUnit.MICROSECONDS.toNanos(50));
            }
        }
    }

    /** @return a description of every node, for failure messages */
    static String describe(final UdpCmNode... nodes) {
        final StringBuilder sb = new StringBuilder();
        for (final UdpCmNode n : nodes) {
            sb.append('\n').append(n.describe());
        }
        return sb.toString();
    }

    /** Fills {@code length} bytes at {@code offset} with a pattern that differs per {@code seed}. */
    static void fill(final UnsafeBuffer b, final int offset, final int length, final int seed) {
        long x = 0x9E37_79B9_7F4A_7C15L * (seed + 1);
        for (int i = 0; i < length; i++) {
            x ^= x << 13;
            x ^= x >>> 7;
            x ^= x << 17;
            b.putByte(offset + i, (byte) x);
        }
    }

    /** Throws an AssertionError naming the first differing byte. */
    static void assertSameBytes(final String what, final UnsafeBuffer x, final int xOffset, final UnsafeBuffer y,
                                final int yOffset, final int length) {
        for (int i = 0; i < length; i++) {
            final byte bx = x.getByte(xOffset + i);
            final byte by = y.getByte(yOffset + i);
            if (bx != by) {
                throw new AssertionError(what + ": byte " + i + " of " + length + " differs: expected " + bx
                    + ", got " + by);
            }
        }
    }

    private void closeQuietly() {
        try {
            device.close();
        } catch (final RuntimeException ex) {
            // Best effort.
        }
    }

    @Override
    public void close() {
        device.close();
    }
}
