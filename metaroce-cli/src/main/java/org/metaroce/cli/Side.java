// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.cli;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.function.Consumer;

import org.agrona.BufferUtil;
import org.agrona.concurrent.IdleStrategy;
import org.metaroce.core.connection.CmConfig;
import org.metaroce.core.connection.CmEvent;
import org.metaroce.core.connection.ConnectionManager;
import org.metaroce.core.engine.Endpoint;
import org.metaroce.core.engine.EndpointConfig;
import org.metaroce.core.verbs.AccessFlags;
import org.metaroce.core.verbs.CompletionQueue;
import org.metaroce.core.verbs.MemoryRegion;
import org.metaroce.core.verbs.ProtectionDomain;
import org.metaroce.netty.DeviceConfig;
import org.metaroce.netty.MetaRoceDevice;
import org.metaroce.netty.SharedDriver;
import org.metaroce.netty.ThreadingMode;

/**
 * One end of a run: a device, its connection manager, a protection domain, the control queue's
 * completion queue and memory. Built on the device's owning thread (INVOKER: the calling thread).
 * The benchmark thread consumes the completion queues and the connection-manager events, which
 * the connection manager's handler (owning thread) forwards through a queue after letting
 * {@link #ownerHandler} act on them first.
 */
final class Side implements AutoCloseable {
    /** Control messages: 2 receive slots and 2 send slots of 256 bytes. */
    static final int CONTROL_SLOT = 256;
    static final int CONTROL_SLOTS = 4;

    final BenchConfig config;
    final String name;
    final MetaRoceDevice device;
    final Poster poster;
    final ConcurrentLinkedQueue<CmEvent> events = new ConcurrentLinkedQueue<>();
    ProtectionDomain pd;
    ConnectionManager cm;
    CompletionQueue controlCq;
    MemoryRegion controlMr;
    CompletionQueue dataCq;
    MemoryRegion dataMr;
    /** Runs first, on the owning thread, for every connection-manager event. */
    volatile Consumer<CmEvent> ownerHandler = e -> { };

    /**
     * @param config the run
     * @param name "client" or "server"
     * @param bind local address
     * @param endpointPort endpoint port (0 = ephemeral)
     * @param driverIdle idle strategy of a DEDICATED driver thread
     * @param shared the shared driver in SHARED mode, else null
     */
    Side(final BenchConfig config, final String name, final InetAddress bind, final int endpointPort,
         final IdleStrategy driverIdle, final SharedDriver shared) {
        this.config = config;
        this.name = name;
        final ThreadingMode mode = switch (config.mode()) {
            case invoker -> ThreadingMode.INVOKER;
            case dedicated -> ThreadingMode.DEDICATED;
            case shared -> ThreadingMode.SHARED;
        };
        final DeviceConfig dc = new DeviceConfig().bindAddress(bind).endpointPort(endpointPort)
            .entropyPortRange(config.paths(), 0).transport(config.transport()).threadingMode(mode)
            .gso(config.gso()).threadName("metaroce-" + name + "-driver")
            // A software endpoint shares its cores with the JIT, the GC and the kernel's network
            // processing: scheduling stalls of milliseconds are normal, and on a loaded host tens of
            // milliseconds, so the retransmission timer's floor is the tools' QP timeout (-u, 16.8 ms
            // by default; the connection's TIMEOUT caps the floor, so both are set) instead of the
            // specification's 100 us NIC-class default.
            .endpointConfig(new EndpointConfig().minRtoNs(config.qpTimeoutNs()).retryTimeoutNs(config.retryTimeoutNs())
                // With segmentation offload, a burst per path (as many packets as one GSO write holds)
                // hands each socket a run of consecutive PSNs: one GSO send, and little reordering at
                // the receiver [MP-020].
                .pathBurstPackets(config.burst()));
        if (config.gro() != null) {
            dc.gro(config.gro()); // else the transport's default: on for native, off for Netty
        }
        if (mode == ThreadingMode.DEDICATED) {
            dc.idleStrategy(driverIdle);
        }
        if (config.capture() != null) {
            config.capture().configure(dc);
        }
        if (mode == ThreadingMode.SHARED) {
            dc.sharedDriver(shared);
        }
        try {
            device = new MetaRoceDevice(dc);
        } catch (final java.io.UncheckedIOException ex) {
            throw new BenchException(ex.getMessage() != null ? ex.getMessage() : ex.toString(), ex);
        }
        poster = new Poster(new org.metaroce.netty.WorkRequestPoster(device,
            4 * (config.qps() * (config.txDepth() + config.rxDepth() + 8) + 64)));
        try {
            device.call(ep -> {
                setUp(ep);
                return null;
            });
        } catch (final RuntimeException ex) {
            closeQuietly();
            throw ex;
        }
    }

    private void setUp(final Endpoint ep) {
        pd = ep.allocateProtectionDomain();
        controlCq = ep.createCompletionQueue(64);
        controlMr = pd.registerMemory(BufferUtil.allocateDirectAligned(CONTROL_SLOT * CONTROL_SLOTS, 64),
            AccessFlags.ALL);
        final CmConfig cmConfig = new CmConfig().connectTimeoutNs(config.connectTimeoutNs());
        cm = new ConnectionManager(ep, device.endpointPort(), device.peers(), cmConfig);
        cm.eventHandler(event -> {
            try {
                ownerHandler.accept(event);
            } finally {
                events.add(event);
            }
        });
    }

    /**
     * Owning thread: the data memory and completion queue (once per run).
     *
     * @param bytes region length
     * @param cqCapacity completions the data queue pairs can have outstanding
     */
    void allocateData(final long bytes, final int cqCapacity) {
        if (bytes > Integer.MAX_VALUE - 4096) {
            throw new BenchException("data region of " + bytes + " bytes is too large (at most 2 GiB)");
        }
        final ByteBuffer memory = BufferUtil.allocateDirectAligned((int) Math.max(64, bytes), 4096);
        dataMr = pd.registerMemory(memory, AccessFlags.ALL);
        dataCq = device.endpoint().createCompletionQueue(cqCapacity);
    }

    /** Runs {@code task} on the owning thread: now if this is it, else at its next duty cycle. */
    void onOwner(final Runnable task) {
        if (device.isOwningThread()) {
            task.run();
        } else {
            device.execute(task);
        }
    }

    /**
     * As {@link #onOwner}, but when a driver thread owns the device (DEDICATED, SHARED) waits until
     * the task has run, so that what it sets up (a listener) exists when this returns: a client
     * started next (--loopback) would otherwise race it and meet NO_LISTENER. An INVOKER device is
     * driven by a thread that may not be running yet, so there the task is only queued.
     */
    void onOwnerAndWait(final Runnable task) {
        if (device.isOwningThread() || device.threadingMode() == ThreadingMode.INVOKER) {
            onOwner(task);
        } else {
            device.call(ep -> {
                task.run();
                return null;
            });
        }
    }

    /** @return the device's endpoint address (its port is the endpoint port) */
    InetSocketAddress address() {
        return device.localAddress();
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
