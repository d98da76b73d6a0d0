// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.collectives;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;

import org.agrona.BufferUtil;
import org.metaroce.core.connection.CmConfig;
import org.metaroce.core.connection.CmReason;
import org.metaroce.core.connection.ConnectParams;
import org.metaroce.core.connection.Connection;
import org.metaroce.core.connection.ListenParams;
import org.metaroce.core.engine.QueuePairCapabilities;
import org.metaroce.core.verbs.AccessFlags;
import org.metaroce.core.verbs.CompletionQueue;
import org.metaroce.core.verbs.MemoryRegion;
import org.metaroce.core.verbs.ProtectionDomain;
import org.metaroce.core.verbs.RecvRequest;
import org.metaroce.netty.ConnectionFailedException;
import org.metaroce.netty.ConnectionRejectedException;
import org.metaroce.netty.ConnectionService;
import org.metaroce.netty.IncomingRequest;
import org.metaroce.netty.MetaRoceDevice;
import org.metaroce.netty.ThreadingMode;
import org.metaroce.netty.WorkRequestPoster;

/**
 * Connects one rank to every other [COLL-001..COLL-004]: rank i connects to every lower rank
 * and accepts every higher one, on one connection-manager service. Both sides' private data
 * carry a hello: magic, rank, world size, slot count, chunk size, and the address and rkey of
 * the slots reserved for the other side's chunks. Receives are posted before the connection is
 * used; a connection refused because the peer is not listening yet is retried until the setup
 * deadline.
 */
final class Wiring implements AutoCloseable {
    /** Connection-manager Service ID of collectives ("MRCOLL"). */
    static final long SERVICE = 0x4D52_434F_4C4CL;
    static final int MAGIC = 0x4D52_434C; // "MRCL"
    static final int HELLO_BYTES = 32;
    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(Wiring.class);
    /** The connection manager's settings: the defaults (DISCONNECT_TIMEOUT 1 s bounds {@link #close}). */
    private static final CmConfig CM_CONFIG = new CmConfig();

    final int rank;
    final int size;
    final MetaRoceDevice device;
    final ConnectionService service;
    ProtectionDomain pd;
    CompletionQueue cq;
    MemoryRegion staging;
    /** Receive buffers for control messages with a payload (region grants, COLL-033), rqDepth per peer. */
    MemoryRegion control;
    Engine engine;
    private final Connection[] connections;
    private int rqDepth;
    private int sqDepth;

    private Wiring(final MetaRoceDevice device, final int rank, final int size) {
        this.device = device;
        this.rank = rank;
        this.size = size;
        this.service = new ConnectionService(device, CM_CONFIG);
        this.connections = new Connection[size];
    }

    static Communicator connect(final MetaRoceDevice device, final int rank, final List<InetSocketAddress> endpoints,
                                final CommConfig config) {
        final int size = endpoints.size();
        if (rank < 0 || rank >= size) {
            throw new IllegalArgumentException("rank must be in 0.." + (size - 1) + ", got " + rank);
        }
        if (device.threadingMode() == ThreadingMode.INVOKER && !device.isOwningThread()) {
            throw new IllegalArgumentException("a communicator on an INVOKER device must be built on the device's "
                + "owning thread (the thread that built the device), which then runs every operation [COLL-029]");
        }
        final Wiring w = new Wiring(device, rank, size);
        try {
            w.wire(endpoints, config);
            return new Communicator(w, config);
        } catch (final RuntimeException | Error ex) {
            w.close();
            throw ex;
        }
    }

    private void wire(final List<InetSocketAddress> endpoints, final CommConfig config) {
        final int slots = config.slots();
        final int chunk = config.chunkBytes();
        sqDepth = 4 * slots + 8;
        // Up to S data chunks, S slot grants and S region grants (COLL-004, COLL-033), and a margin.
        rqDepth = 3 * slots + 8;
        final QueuePairCapabilities caps = new QueuePairCapabilities(sqDepth, rqDepth, 1, 1, 1);
        device.call(ep -> {
            pd = ep.allocateProtectionDomain();
            cq = ep.createCompletionQueue(Math.max(64, (size - 1) * (sqDepth + rqDepth) + 64));
            final long bytes = (long) size * slots * chunk;
            if (bytes > Integer.MAX_VALUE - 4096) {
                throw new IllegalArgumentException("slot memory of " + bytes + " bytes (size x slots x chunkBytes) "
                    + "exceeds 2 GiB");
            }
            staging = pd.registerMemory(BufferUtil.allocateDirectAligned((int) Math.max(64, bytes), 4096),
                AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE);
            control = pd.registerMemory(BufferUtil.allocateDirectAligned(Math.max(64, size * (rqDepth + sqDepth)
                * Engine.CONTROL_BYTES), 64), AccessFlags.LOCAL_WRITE);
            return null;
        });
        service.listen(SERVICE, new ListenParams().resources(pd, cq, cq, caps).accessFlags(AccessFlags.ALL)
            .pathMtu(config.pathMtu()).paths(device.entropyPorts()).timeoutNs(config.qpTimeoutNs()));
        final long deadline = System.nanoTime() + config.setupTimeout().toNanos();
        final Link[] links = new Link[size];
        final AtomicReference<Throwable> acceptFailure = new AtomicReference<>();
        final boolean invoker = device.threadingMode() == ThreadingMode.INVOKER;
        // INVOKER: the blocking calls drive the device, so this thread connects to every lower rank
        // and then accepts the higher ones (requests that arrive meanwhile are queued by the
        // service). This terminates: rank 0 accepts at once, and rank p accepts once its own
        // connects to ranks below p are done. Otherwise an acceptor thread accepts meanwhile.
        final Thread acceptor = invoker ? null : new Thread(() -> {
            try {
                acceptAll(links, slots, chunk, deadline);
            } catch (final Throwable t) {
                acceptFailure.set(t);
            }
        }, "metaroce-coll-accept-" + rank);
        if (acceptor != null) {
            acceptor.setDaemon(true);
            acceptor.start();
        }
        try {
            for (int peer = 0; peer < rank; peer++) {
                connectTo(peer, endpoints.get(peer), caps, config, links, slots, chunk, deadline);
            }
            if (acceptor != null) {
                acceptor.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime()) + 1_000));
            } else {
                try {
                    acceptAll(links, slots, chunk, deadline);
                } catch (final CollectiveException ex) {
                    acceptFailure.set(ex);
                }
            }
        } catch (final InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new CollectiveException("setup of rank " + rank + " interrupted", "setup", -1, ex);
        } finally {
            if (acceptor != null && acceptor.isAlive()) {
                acceptor.interrupt();
            }
        }
        final Throwable failure = acceptFailure.get();
        if (failure instanceof CollectiveException ce) {
            throw ce;
        }
        if (failure != null) {
            throw new CollectiveException("setup of rank " + rank + " failed: " + failure, "setup", -1, failure);
        }
        final TreeSet<Integer> missing = new TreeSet<>();
        for (int i = 0; i < size; i++) {
            if (i != rank && links[i] == null) {
                missing.add(i);
            }
        }
        if (!missing.isEmpty()) {
            throw new CollectiveException("setup of rank " + rank + " timed out after "
                + config.setupTimeout().toMillis() + " ms: no connection from rank(s) " + missing, "setup",
                missing.first(), null);
        }
        final int ringCapacity = 4 * (size - 1) * (sqDepth + rqDepth) + 64;
        engine = new Engine(rank, size, links, cq, new WorkRequestPoster(device, ringCapacity),
            invoker ? config.invokerIdleStrategy(device) : config.driverRankIdleStrategy(cq), config.operationTimeout().toNanos(),
            chunk, sqDepth, invoker ? device : null);
        engine.diagnostics = () -> " [endpoint counters: " + device.endpoint().counters() + "]";
        // Beside the device's own counters, so `metaroce stat` shows what the collectives did.
        device.attachCounters(engine.counters);
    }

    private void connectTo(final int peer, final InetSocketAddress address, final QueuePairCapabilities caps,
                           final CommConfig config, final Link[] links, final int slots, final int chunk,
                           final long deadline) throws InterruptedException {
        final byte[] hello = hello(peer, slots, chunk);
        ConnectionFailedException last = null;
        while (System.nanoTime() - deadline < 0) {
            final long left = deadline - System.nanoTime();
            try {
                final Connection c = service.connect(address, SERVICE, new ConnectParams()
                    .resources(pd, cq, cq, caps).accessFlags(AccessFlags.ALL).pathMtu(config.pathMtu())
                    .paths(device.entropyPorts()).timeoutNs(config.qpTimeoutNs()).privateData(hello)
                    .connectTimeoutNs(Math.min(left, TimeUnit.SECONDS.toNanos(10))), Duration.ofNanos(left));
                links[peer] = link(peer, c, c.peerPrivateData(), slots, chunk);
                return;
            } catch (final ConnectionRejectedException ex) {
                if (ex.reason() != CmReason.NO_LISTENER) {
                    throw new CollectiveException("setup of rank " + rank + ": rank " + peer + " at " + address
                        + " rejected the connection: " + ex.reasonName() + rejection(ex.privateData()), "setup", peer, ex);
                }
                last = ex; // not listening yet: try again
            } catch (final ConnectionFailedException ex) {
                last = ex; // unreachable so far (not started yet): try again until the deadline
            }
            Thread.sleep(20);
        }
        throw new CollectiveException("setup of rank " + rank + " timed out after " + config.setupTimeout().toMillis()
            + " ms: rank " + peer + " at " + address + " never answered" + (last != null ? " (" + last.getMessage()
            + ")" : ""), "setup", peer, last);
    }

    private static String rejection(final byte[] data) {
        return data == null || data.length == 0 ? "" : " (" + new String(data, java.nio.charset.StandardCharsets.UTF_8)
            + ")";
    }

    private void acceptAll(final Link[] links, final int slots, final int chunk, final long deadline)
        throws InterruptedException {
        int expected = size - 1 - rank;
        while (expected > 0) {
            final long left = deadline - System.nanoTime();
            if (left <= 0) {
                return; // the caller names the missing ranks
            }
            final IncomingRequest request;
            try {
                request = service.awaitRequest(SERVICE, Duration.ofNanos(left));
            } catch (final TimeoutException ex) {
                return;
            }
            final ByteBuffer h = ByteBuffer.wrap(request.privateData());
            final String problem = checkHello(h, slots, chunk);
            final int peer = problem == null ? h.getInt(4) : -1;
            if (problem != null || peer <= rank) {
                final String why = problem != null ? problem : "rank " + peer + " may not connect to rank " + rank
                    + " (only higher ranks connect)";
                service.reject(request, why.getBytes(java.nio.charset.StandardCharsets.UTF_8));
                throw new CollectiveException("setup of rank " + rank + ": refused a connection from "
                    + request.client() + ": " + why, "setup", peer, null);
            }
            try {
                final Connection c = service.accept(request, hello(peer, slots, chunk), Duration.ofNanos(
                    Math.max(1, deadline - System.nanoTime())));
                if (links[peer] != null) {
                    // The peer gave up on an attempt this side had accepted (its connect timed out
                    // under load) and tried again: the new connection replaces the old one.
                    LOG.debug("rank {}: rank {} connected again; replacing {}", rank, peer, connections[peer]);
                    service.disconnectAsync(connections[peer]);
                    expected++;
                }
                links[peer] = link(peer, c, request.privateData(), slots, chunk);
                expected--;
            } catch (final ConnectionFailedException ex) {
                // The peer's attempt failed half way (it gave up, or its READY_TO_USE was lost for
                // good): it retries with a new request until its own deadline; wait for that.
                LOG.debug("rank {}: accepting rank {} failed ({}); waiting for it to try again", rank, peer,
                    ex.getMessage());
            }
        }
    }

    private String checkHello(final ByteBuffer h, final int slots, final int chunk) {
        if (h.remaining() < HELLO_BYTES || h.getInt(0) != MAGIC) {
            return "not a MetaRoCE collectives hello";
        }
        final int peer = h.getInt(4);
        if (h.getInt(8) != size) {
            return "rank " + peer + " has world size " + h.getInt(8) + ", rank " + rank + " has " + size;
        }
        if (peer < 0 || peer >= size) {
            return "rank " + peer + " is out of range for world size " + size;
        }
        if (h.getInt(16) != chunk) {
            return "rank " + peer + " uses chunks of " + h.getInt(16) + " bytes, rank " + rank + " of " + chunk
                + " (CommConfig.chunkBytes must be equal on every rank)";
        }
        return null;
    }

    /** @return this rank's hello for {@code peer}: where the peer writes its chunks */
    private byte[] hello(final int peer, final int slots, final int chunk) {
        return ByteBuffer.allocate(HELLO_BYTES).putInt(MAGIC).putInt(rank).putInt(size).putInt(slots).putInt(chunk)
            .putLong(staging.address() + (long) peer * slots * chunk).putInt(staging.rkey()).array();
    }

    private Link link(final int peer, final Connection c, final byte[] peerHello, final int slots, final int chunk) {
        final ByteBuffer h = ByteBuffer.wrap(peerHello);
        final String problem = checkHello(h, slots, chunk);
        if (problem != null || h.getInt(4) != peer) {
            throw new CollectiveException("setup of rank " + rank + ": bad hello from rank " + peer + ": "
                + (problem != null ? problem : "it says it is rank " + h.getInt(4)), "setup", peer, null);
        }
        final Link l = new Link(peer, c.queuePair(), h.getLong(20), h.getInt(28), h.getInt(12),
            staging.address() + (long) peer * slots * chunk, slots, sqDepth);
        connections[peer] = c;
        final int posts = rqDepth;
        l.controlBase = control.address() + (long) peer * rqDepth * Engine.CONTROL_BYTES;
        l.controlLkey = control.lkey();
        l.controlOutBase = control.address() + (long) size * rqDepth * Engine.CONTROL_BYTES
            + (long) peer * sqDepth * Engine.CONTROL_BYTES;
        device.call(ep -> {
            final RecvRequest rr = new RecvRequest(1);
            for (int i = 0; i < posts; i++) {
                // Receive i always uses buffer i: the engine reposts a completed receive with its buffer.
                final int status = c.queuePair().postRecv(rr.clear().wrId(Engine.recvWrId(peer, i))
                    .addSge(l.controlBase + (long) i * Engine.CONTROL_BYTES, Engine.CONTROL_BYTES, l.controlLkey));
                if (status != org.metaroce.core.verbs.PostStatus.OK) {
                    throw new IllegalStateException("postRecv for rank " + peer + " refused: "
                        + org.metaroce.core.verbs.PostStatus.describe(status));
                }
            }
            return null;
        });
        return l;
    }

    @Override
    public void close() {
        if (engine != null) {
            device.detachCounters(engine.counters);
        }
        final List<Connection> open = new ArrayList<>();
        for (final Connection c : connections) {
            if (c != null) {
                open.add(c);
            }
        }
        try {
            if (!device.isClosed()) {
                final List<java.util.concurrent.CompletableFuture<Void>> ending = new ArrayList<>();
                for (final Connection c : open) {
                    ending.add(service.disconnectAsync(c));
                }
                awaitDisconnects(ending);
            }
        } catch (final RuntimeException ex) {
            // Best effort: the peer may be gone.
        } finally {
            service.close();
        }
    }

    /**
     * Lets the disconnects reach the peers before the device may close [COLL-039, CM-032]: until
     * each peer has answered (DISCONNECT_REPLY) or DISCONNECT_TIMEOUT has passed, an INVOKER device
     * is driven here; a driver thread is waited for. A DISCONNECT_REQUEST leaves at the device's
     * next poll and is retransmitted only while it is driven, and the bootstrap closes its device
     * right after this: a peer that never hears of the disconnect retransmits its last chunks to a
     * closed port until its retry budget is spent, and its own close must then report them as
     * possibly lost. A peer whose connection is already over answers at once.
     */
    private void awaitDisconnects(final List<java.util.concurrent.CompletableFuture<Void>> ending) {
        final java.util.concurrent.CompletableFuture<Void> all = java.util.concurrent.CompletableFuture.allOf(
            ending.toArray(new java.util.concurrent.CompletableFuture<?>[0]));
        final long waitNs = CM_CONFIG.disconnectTimeoutNs() + TimeUnit.MILLISECONDS.toNanos(100);
        if (device.threadingMode() == ThreadingMode.INVOKER) {
            if (device.isOwningThread()) {
                final long deadline = System.nanoTime() + waitNs;
                Communicator.drive(device, () -> all.isDone() || System.nanoTime() - deadline >= 0);
            }
            return;
        }
        try {
            all.get(waitNs, TimeUnit.NANOSECONDS);
        } catch (final java.util.concurrent.ExecutionException | TimeoutException ex) {
            LOG.debug("rank {}: not every peer answered the disconnect: {}", rank, ex.toString());
        } catch (final InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
    }
}
