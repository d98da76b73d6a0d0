// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.collectives;

import java.nio.ByteBuffer;

import org.agrona.BufferUtil;
import org.metaroce.core.verbs.AccessFlags;
import org.metaroce.core.verbs.MemoryRegion;
import org.metaroce.netty.MetaRoceDevice;

/**
 * A group of {@link #size()} ranks, each connected to every other by a reliable queue pair, that
 * run collective operations together (the NCCL/MPI model): every rank calls the same operations
 * in the same order with matching arguments, and each call returns when this rank's part is
 * done and its buffers may be reused.
 *
 * <p>Data moves by RDMA WRITE with immediate data into slots of registered memory the peer
 * announced at connection time; the immediate tells the receiver which chunk arrived. A sender
 * writes a chunk only into a slot the receiver has granted, and the receiver grants a slot back
 * once it has consumed (copied or reduced) the chunk in it: receiver-driven admission, with
 * {@link CommConfig#slots()} chunks pipelined per peer and direction [COLL-005..COLL-011].
 * Data that is final at the receiver (all-gather, broadcast, all-to-all, recv, the all-reduce's
 * all-gather pass) and longer than {@link CommConfig#smallAllReduceBytes()} skips the slots: the
 * receiver grants regions of its output buffer and the chunks are written straight there, with
 * nothing to copy [COLL-033, COLL-034].
 *
 * <p>Buffers are direct {@link ByteBuffer}s; an operation uses the bytes from each buffer's
 * position (which it does not change). Buffers that are sent from or placed into are registered
 * with the device on first use and stay registered (a small cache) until {@link #close()}; a
 * buffer placed into is writable by the peers for that time (they write only regions granted
 * during an operation). Input and
 * output may be the same buffer (in place) where the operation allows it.
 *
 * <p>One thread at a time per communicator: operations run on the calling thread, which polls
 * the completion queue and reduces. A failed operation ({@link CollectiveException}: a peer died,
 * timed out, or disagreed on the arguments) breaks the communicator; later calls fail at once.
 * Build one with {@link Bootstrap} (launchers and environment variables) or {@link LocalCluster}
 * (several ranks in one process).
 */
public final class Communicator implements AutoCloseable {
    private final int rank;
    private final int size;
    private final CommConfig config;
    private final Wiring wiring;
    private final Engine engine;
    private final Registrations registrations;
    private final MetaRoceDevice device;
    private MemoryRegion scratch;
    private final MemoryRegion tiny;
    private final Mem[] result = new Mem[1];
    /**
     * The plan and the memory ranges of the operation being planned, set again by every operation
     * (flyweights: an operation in steady state allocates nothing, see {@link Plan}).
     */
    private final Plan plan = new Plan();
    private final Mem planIn = new Mem();
    private final Mem planOut = new Mem();
    private final Mem planA = new Mem();
    private final Mem planB = new Mem();
    private final Mem planScratch = new Mem();
    private volatile Thread user;
    private boolean closed;
    private boolean ownsDevice;

    Communicator(final Wiring wiring, final CommConfig config) {
        this.wiring = wiring;
        this.rank = wiring.rank;
        this.size = wiring.size;
        this.config = config;
        this.engine = wiring.engine;
        this.device = wiring.device;
        this.registrations = new Registrations(device, wiring.pd, 32);
        this.tiny = registerScratch(64);
    }

    /** Makes {@link #close()} close the device too (the bootstrap opened it). */
    void ownDevice() {
        ownsDevice = true;
    }

    /** @return this rank, 0..size-1 */
    public int rank() {
        return rank;
    }

    /** @return number of ranks */
    public int size() {
        return size;
    }

    /** @return the device this rank's queue pairs live on */
    public MetaRoceDevice device() {
        return device;
    }

    /** @return the configuration */
    public CommConfig config() {
        return config;
    }

    // ----------------------------------------------------------------------------------- operations

    /**
     * All-reduce: every rank's {@code recv} gets the element-wise reduction of all ranks'
     * {@code send}. One-shot up to {@link CommConfig#oneShotAllReduceBytes()}, recursive doubling
     * up to {@link CommConfig#smallAllReduceBytes()}, Rabenseifner's halving and doubling up to
     * {@link CommConfig#rabenseifnerAllReduceBytes()} on 4 ranks or more, the ring above
     * [COLL-012, COLL-013, COLL-036, COLL-037]. {@code send == recv} works in place.
     *
     * @param send {@code count} elements
     * @param recv room for {@code count} elements
     * @param count elements, >= 0 (any value: segments need not be equal)
     * @param type element type
     * @param op reduction
     */
    public void allReduce(final ByteBuffer send, final ByteBuffer recv, final long count, final DataType type,
                          final ReduceOp op) {
        final String name = "all_reduce";
        enter(name);
        try {
            final long bytes = checkCount(name, count, type);
            final long in = address(name, "send", send, bytes, false);
            final long out = address(name, "recv", recv, bytes, true);
            checkOrder(name, "send", send, type);
            checkOrder(name, "recv", recv, type);
            if (count == 0) {
                return;
            }
            if (size == 1) {
                Reductions.copy(in, out, bytes);
                return;
            }
            final int chunk = chunk(type);
            if (bytes <= config.oneShotAllReduceBytes()) {
                // One hop: each hop costs every rank a wake-up, which on shared cores is the time [COLL-036].
                final long stage = scratch(size * bytes).address();
                final Mem inMem = planIn.set(in, registrations.lkey(send, bytes), 0);
                engine.run(name, Plans.oneShotAllReduce(plan, rank, size, bytes, inMem, stage, chunk));
                Plans.reduceInRankOrder(rank, size, count, type, op, in, stage, out);
            } else if ((bytes <= config.smallAllReduceBytes() && !rabenseifner(bytes)) || count < size) {
                final MemoryRegion s = scratch(2 * bytes);
                final Mem a = planA.set(s.address(), s.lkey(), 0);
                final Mem b = planB.set(s.address() + bytes, s.lkey(), 0);
                engine.run(name, Plans.recursiveDoubling(plan, rank, size, count, type, op,
                    planIn.set(in, registrations.lkey(send, bytes), 0), planOut.set(out, 0, 0), a, b, chunk, result));
                Reductions.copy(result[0].address(), out, bytes);
            } else if (rabenseifner(bytes)) {
                // 2 log2(p) hops instead of the ring's 2(n-1), the ring's bytes [COLL-037]; blocks are
                // placed like the ring's all-gather segments [COLL-033]. On 2 and 3 ranks it saves no
                // hop (on 3 its fold moves the whole vector twice), so the ring runs there.
                final int p = Integer.highestOneBit(size);
                final boolean placed = Plans.segmentLength(count, p, 0) * type.size() > placeAbove();
                final Mem outMem = outMem(recv, out, bytes, placed);
                final Mem inMem = in == out ? outMem : planIn.set(in, registrations.lkey(send, bytes), 0);
                engine.run(name, Plans.rabenseifnerAllReduce(plan, rank, size, count, type, op, inMem, outMem, chunk,
                    placeAbove()), Engine.IN_CYCLE_SEND_BYTES_HALVING);
            } else {
                // The all-gather pass's segments are placed [COLL-033]: the output is writable by peers.
                // (Output first: registering it for remote writes may replace a region covering the input.)
                final boolean placed = Plans.segmentLength(count, size, 0) * type.size() > placeAbove();
                final Mem outMem = outMem(recv, out, bytes, placed);
                final Mem inMem = in == out ? outMem : planIn.set(in, registrations.lkey(send, bytes), 0);
                engine.run(name, Plans.ringAllReduce(plan, rank, size, count, type, op, inMem, outMem, chunk, placeAbove()));
            }
        } finally {
            leave();
        }
    }

    /**
     * All-reduce in place.
     *
     * @param buffer {@code count} elements, replaced by the reduction
     * @param count elements
     * @param type element type
     * @param op reduction
     */
    public void allReduce(final ByteBuffer buffer, final long count, final DataType type, final ReduceOp op) {
        allReduce(buffer, buffer, count, type, op);
    }

    /**
     * Reduce-scatter (NCCL semantics): {@code send} holds {@code size * recvCount} elements; rank
     * i's {@code recv} gets block i of the reduction [COLL-014]. In place when {@code recv} is
     * block {@code rank} of {@code send}.
     *
     * @param send {@code size * recvCount} elements
     * @param recv room for {@code recvCount} elements
     * @param recvCount elements per rank, >= 0
     * @param type element type
     * @param op reduction
     */
    public void reduceScatter(final ByteBuffer send, final ByteBuffer recv, final long recvCount,
                              final DataType type, final ReduceOp op) {
        final String name = "reduce_scatter";
        enter(name);
        try {
            final long block = checkCount(name, recvCount, type);
            final long total = checkCount(name, recvCount * size, type);
            final long in = address(name, "send", send, total, false);
            final long out = address(name, "recv", recv, block, true);
            checkOrder(name, "send", send, type);
            checkOrder(name, "recv", recv, type);
            if (recvCount == 0) {
                return;
            }
            if (size == 1) {
                Reductions.copy(in, out, block);
                return;
            }
            final MemoryRegion s = scratch(total);
            engine.run(name, Plans.ringReduceScatter(plan, rank, size, recvCount, type, op,
                planIn.set(in, registrations.lkey(send, total), 0), planOut.set(out, 0, 0),
                planScratch.set(s.address(), s.lkey(), 0),
                chunk(type)));
        } finally {
            leave();
        }
    }

    /**
     * All-gather (NCCL semantics): rank i's {@code send} ({@code sendCount} elements) lands in
     * block i of every rank's {@code recv} [COLL-015]. In place when {@code send} is block
     * {@code rank} of {@code recv}.
     *
     * @param send {@code sendCount} elements
     * @param recv room for {@code size * sendCount} elements
     * @param sendCount elements per rank, >= 0
     * @param type element type
     */
    public void allGather(final ByteBuffer send, final ByteBuffer recv, final long sendCount, final DataType type) {
        final String name = "all_gather";
        enter(name);
        try {
            final long block = checkCount(name, sendCount, type);
            final long total = checkCount(name, sendCount * size, type);
            final long in = address(name, "send", send, block, false);
            final long out = address(name, "recv", recv, total, true);
            if (sendCount == 0) {
                return;
            }
            Reductions.copy(in, out + rank * block, block);
            if (size == 1) {
                return;
            }
            // Output first: registering it for remote writes may replace a region covering the input.
            final Mem outMem = outMem(recv, out, total, block > placeAbove());
            engine.run(name, Plans.ringAllGather(plan, rank, size, sendCount, type,
                planIn.set(in, registrations.lkey(send, block), 0), outMem, chunk(type), placeAbove()));
        } finally {
            leave();
        }
    }

    /**
     * Broadcast: {@code root}'s {@code send} lands in every rank's {@code recv}: a binomial tree up
     * to {@link CommConfig#smallAllReduceBytes()} on more than two ranks [COLL-032], a pipelined
     * chain above [COLL-016]. {@code send} is read at the root only; {@code send == recv} works in place.
     *
     * @param send {@code count} elements (root)
     * @param recv room for {@code count} elements
     * @param count elements, >= 0
     * @param type element type
     * @param root the rank whose data is broadcast
     */
    public void broadcast(final ByteBuffer send, final ByteBuffer recv, final long count, final DataType type,
                          final int root) {
        final String name = "broadcast";
        enter(name);
        try {
            checkRank(name, "root", root);
            final long bytes = checkCount(name, count, type);
            final long in = rank == root ? address(name, "send", send, bytes, false) : 0;
            final long out = address(name, "recv", recv, bytes, true);
            if (count == 0) {
                return;
            }
            if (rank == root) {
                Reductions.copy(in, out, bytes);
            }
            if (size == 1) {
                return;
            }
            final Mem inMem = rank == root ? planIn.set(in, registrations.lkey(send, bytes), 0) : null;
            final int v = Plans.mod(rank - root, size);
            final boolean tree = useTree(bytes);
            final boolean forwards = v != 0 && (tree ? Plans.treeChildCount(v, size) > 0 : v < size - 1);
            final boolean placed = v != 0 && bytes > placeAbove();
            final Mem outMem = forwards || placed ? outMem(recv, out, bytes, placed) : planOut.set(out, 0, 0);
            engine.run(name, tree ? Plans.treeBroadcast(plan, rank, size, root, bytes, inMem, outMem, chunk(type),
                placeAbove()) : Plans.chainBroadcast(plan, rank, size, root, bytes, inMem, outMem, chunk(type),
                placeAbove()));
        } finally {
            leave();
        }
    }

    /**
     * Broadcast in place.
     *
     * @param buffer {@code count} elements: read at the root, written elsewhere
     * @param count elements
     * @param type element type
     * @param root the rank whose data is broadcast
     */
    public void broadcast(final ByteBuffer buffer, final long count, final DataType type, final int root) {
        broadcast(buffer, buffer, count, type, root);
    }

    /**
     * Reduce: {@code root}'s {@code recv} gets the reduction of all ranks' {@code send}
     * (a binomial tree up to {@link CommConfig#smallAllReduceBytes()} on more than two ranks
     * [COLL-032], a pipelined chain above [COLL-017]); {@code recv} is ignored (may be null) elsewhere.
     *
     * @param send {@code count} elements
     * @param recv room for {@code count} elements at the root
     * @param count elements, >= 0
     * @param type element type
     * @param op reduction
     * @param root the rank that gets the result
     */
    public void reduce(final ByteBuffer send, final ByteBuffer recv, final long count, final DataType type,
                       final ReduceOp op, final int root) {
        final String name = "reduce";
        enter(name);
        try {
            checkRank(name, "root", root);
            final long bytes = checkCount(name, count, type);
            final long in = address(name, "send", send, bytes, false);
            final long out = rank == root ? address(name, "recv", recv, bytes, true) : 0;
            checkOrder(name, "send", send, type);
            if (rank == root) {
                checkOrder(name, "recv", recv, type);
            }
            if (count == 0) {
                return;
            }
            if (size == 1) {
                Reductions.copy(in, out, bytes);
                return;
            }
            final MemoryRegion s = scratch(bytes);
            final Mem inMem = planIn.set(in, registrations.lkey(send, bytes), 0);
            final Mem scratchMem = planScratch.set(s.address(), s.lkey(), 0);
            engine.run(name, useTree(bytes)
                ? Plans.treeReduce(plan, rank, size, root, count, type, op, inMem, planOut.set(out, 0, 0), scratchMem,
                    chunk(type))
                : Plans.chainReduce(plan, rank, size, root, count, type, op, inMem, planOut.set(out, 0, 0), scratchMem,
                    chunk(type)));
        } finally {
            leave();
        }
    }

    /**
     * Ends a rank's work before {@link #close()}: a barrier, so every rank has finished its
     * operations, and then, on an INVOKER device, {@code linger} of driving the device [COLL-029]. A
     * peer whose last acknowledgement from this rank was lost retransmits, and only a driven device
     * answers (otherwise the peer ends in RETRY_EXC_ERR); choose a linger of a few of the queue
     * pairs' retransmission floors. Ranks with driver threads only take the barrier.
     *
     * @param linger how long an INVOKER rank keeps driving its device after the barrier
     */
    public void finish(final java.time.Duration linger) {
        barrier();
        if (device.threadingMode() == org.metaroce.netty.ThreadingMode.INVOKER) {
            final long end = System.nanoTime() + linger.toNanos();
            drive(device, () -> System.nanoTime() - end >= 0);
        }
    }

    /**
     * Drives an INVOKER device from the calling (owning) thread until {@code done} or the device
     * closes, parking 20 us whenever a cycle found nothing to do.
     */
    static void drive(final MetaRoceDevice device, final java.util.function.BooleanSupplier done) {
        while (!done.getAsBoolean() && !device.isClosed()) {
            if (device.doWork() == 0) {
                java.util.concurrent.locks.LockSupport.parkNanos(20_000);
            }
        }
    }

    /** Barrier: returns once every rank has called it (an all-reduce of one integer) [COLL-019]. */
    public void barrier() {
        final String name = "barrier";
        enter(name);
        try {
            if (size == 1) {
                return;
            }
            final Mem in = planIn.set(tiny.address(), tiny.lkey(), 0);
            final Mem a = planA.set(tiny.address() + 8, tiny.lkey(), 0);
            final Mem b = planB.set(tiny.address() + 16, tiny.lkey(), 0);
            tiny.buffer().putInt(0, 1);
            engine.run(name, Plans.recursiveDoubling(plan, rank, size, 1, DataType.INT32, ReduceOp.SUM, in,
                planOut.set(tiny.address() + 24, 0, 0), a, b, chunk(DataType.INT32), result));
            final int arrived = tiny.buffer().getInt((int) (result[0].address() - tiny.address()));
            if (arrived != size) {
                throw new CollectiveException("barrier on rank " + rank + ": counted " + arrived + " ranks of " + size,
                    name, -1, null);
            }
        } finally {
            leave();
        }
    }

    /**
     * All-to-all: block j of rank i's {@code send} lands in block i of rank j's {@code recv}
     * (pairwise exchange) [COLL-018]. {@code send == recv} works in place.
     *
     * @param send {@code size * countPerPeer} elements
     * @param recv room for {@code size * countPerPeer} elements
     * @param countPerPeer elements per block, >= 0
     * @param type element type
     */
    public void allToAll(final ByteBuffer send, final ByteBuffer recv, final long countPerPeer,
                         final DataType type) {
        final String name = "all_to_all";
        enter(name);
        try {
            final long block = checkCount(name, countPerPeer, type);
            final long total = checkCount(name, countPerPeer * size, type);
            final long in = address(name, "send", send, total, false);
            final long out = address(name, "recv", recv, total, true);
            if (countPerPeer == 0) {
                return;
            }
            Reductions.copy(in + rank * block, out + rank * block, block);
            if (size == 1) {
                return;
            }
            final boolean placed = block > placeAbove();
            final Mem inMem;
            final Mem outMem;
            Mem staging = null;
            if (in == out) {
                // In place, placed blocks land in staging memory (COLL-034): see Transfer.stagedAt.
                inMem = planIn.set(in, registrations.lkey(send, total), 0);
                outMem = planOut.set(out, 0, 0);
                if (placed) {
                    final MemoryRegion s = scratch(total);
                    staging = planScratch.set(s.address(), s.lkey(), s.rkey());
                }
            } else {
                // Output first: registering it for remote writes may replace a region covering the input.
                outMem = placed ? outMem(recv, out, total, true) : planOut.set(out, 0, 0);
                inMem = planIn.set(in, registrations.lkey(send, total), 0);
            }
            engine.run(name, Plans.allToAll(plan, rank, size, countPerPeer, type, inMem, outMem, staging, chunk(type),
                placeAbove()));
        } finally {
            leave();
        }
    }

    /**
     * Sends {@code count} elements to {@code peer}, which must call {@link #recv} with the same
     * count; messages between two ranks are received in the order they were sent [COLL-020].
     * Returns once the data is in the peer's memory. A message longer than
     * {@link CommConfig#smallAllReduceBytes()} is placed straight into the peer's buffer, so it
     * waits for the peer to call {@code recv} (rendezvous, COLL-033); a shorter one may complete
     * before, into the slots the peer granted in advance (eager). Two ranks that both send a long
     * message to each other before receiving wait for each other until the operation times out.
     *
     * @param buffer {@code count} elements
     * @param count elements, >= 0
     * @param type element type
     * @param peer destination rank (not this rank)
     */
    public void send(final ByteBuffer buffer, final long count, final DataType type, final int peer) {
        final String name = "send";
        enter(name);
        try {
            checkPeer(name, peer);
            final long bytes = checkCount(name, count, type);
            final long in = address(name, "buffer", buffer, bytes, false);
            if (count == 0) {
                return;
            }
            plan.clear().send(peer, in, registrations.lkey(buffer, bytes), bytes, chunk(type))
                .placedAbove(placeAbove());
            engine.run(name, plan);
        } finally {
            leave();
        }
    }

    /**
     * Receives {@code count} elements from {@code peer}'s matching {@link #send} [COLL-020].
     *
     * @param buffer room for {@code count} elements
     * @param count elements, >= 0
     * @param type element type
     * @param peer source rank (not this rank)
     */
    public void recv(final ByteBuffer buffer, final long count, final DataType type, final int peer) {
        final String name = "recv";
        enter(name);
        try {
            checkPeer(name, peer);
            final long bytes = checkCount(name, count, type);
            final long out = address(name, "buffer", buffer, bytes, true);
            if (count == 0) {
                return;
            }
            final int rkey = bytes > placeAbove() ? registrations.region(buffer, bytes, true).rkey() : 0;
            plan.clear().copy(peer, out, bytes, chunk(type)).placedAbove(placeAbove(), rkey);
            engine.run(name, plan);
        } finally {
            leave();
        }
    }

    /**
     * Wire baseline for benchmarks: moves exactly the bytes a ring all-reduce of {@code bytes}
     * bytes moves (2(n-1) segments of about {@code bytes / n} to the next rank, as many from the
     * previous one), in the same chunks with the same slot grants, but with no dependency between
     * steps and no reduction or copy: every chunk is sent as soon as a slot is granted and dropped
     * on arrival [COLL-030]. Its bus bandwidth ({@code 2(n-1)/n * bytes / time}) bounds what the ring
     * all-reduce can reach over the same links, threads and cores. Every rank calls it with the same
     * size.
     *
     * @param buffer the data sent ({@code bytes} bytes, contents irrelevant); nothing is written
     * @param bytes all-reduce size to mimic, >= 0
     */
    public void ringBaseline(final ByteBuffer buffer, final long bytes) {
        final String name = "ring_baseline";
        enter(name);
        try {
            if (bytes < 0 || bytes > Integer.MAX_VALUE) {
                throw new IllegalArgumentException(name + ": bytes must be in 0.." + Integer.MAX_VALUE + ", got " + bytes);
            }
            final long total = bytes;
            final long in = address(name, "buffer", buffer, total, false);
            if (bytes == 0 || size == 1) {
                return;
            }
            final Mem inMem = planIn.set(in, registrations.lkey(buffer, bytes), 0);
            engine.run(name, Plans.ringBaseline(plan, rank, size, bytes, inMem, config.chunkBytes()));
        } finally {
            leave();
        }
    }

    // -------------------------------------------------------------------------------------- helpers

    /**
     * @return whether an all-reduce of {@code bytes} (at least one element per rank) runs
     *     Rabenseifner's algorithm: on 4 ranks or more, above the lower of the latency threshold and
     *     its own lower threshold, and up to its upper one [COLL-037]. On 2 and 3 ranks it saves no hop.
     */
    boolean rabenseifner(final long bytes) { // package-private: the defaults' tests
        return size >= 4
            && bytes > config.rabenseifnerAllReduceFromBytes()
            && bytes <= config.rabenseifnerAllReduceBytes();
    }

    /**
     * @return whether broadcast and reduce use the binomial tree: messages up to the latency
     *     threshold, where log2(n) hops beat the chain's n-1, on more than two ranks [COLL-032]
     */
    private boolean useTree(final long bytes) {
        return size > 2 && bytes <= config.smallAllReduceBytes();
    }

    /**
     * @return the length above which a copy receive is placed into its destination instead of a
     *     slot [COLL-033]: the latency threshold, on which every rank agrees (COLL-013). Shorter
     *     messages keep the slots, which the sender may fill without waiting for the receiver.
     */
    private long placeAbove() {
        return config.smallAllReduceBytes();
    }

    /**
     * @return memory of the application buffer the operation writes ({@link #planOut}): with the keys
     *     of a cached region, registered for remote writes when chunks are placed into it [COLL-033]
     */
    private Mem outMem(final ByteBuffer buffer, final long address, final long bytes, final boolean placed) {
        final MemoryRegion mr = registrations.region(buffer, bytes, placed);
        return planOut.set(address, mr.lkey(), placed ? mr.rkey() : 0);
    }

    /**
     * @return what this rank's operations did, indexed by {@link CollectiveCounter} ordinal; the
     *     device's counters file holds the same values ({@code metaroce stat})
     */
    public org.metaroce.netty.CounterGroup counters() {
        return engine.counters;
    }

    /** @return the engine (tests read its chunk counts) */
    Engine engine() {
        return engine;
    }

    /** @return application buffers registered since the communicator was created (tests: reuse registers once) */
    long registrationsMade() {
        return registrations.registered();
    }

    private int chunk(final DataType type) {
        return config.chunkBytes() - config.chunkBytes() % type.size();
    }

    private void enter(final String name) {
        final Thread me = Thread.currentThread();
        if (device.threadingMode() == org.metaroce.netty.ThreadingMode.INVOKER && !device.isOwningThread()) {
            throw new IllegalStateException(name + ": rank " + rank + "'s device is in INVOKER mode, so its "
                + "operations must run on the thread that built the device, not " + me.getName() + " [COLL-029]");
        }
        synchronized (this) {
            if (closed) {
                throw new IllegalStateException(name + ": the communicator of rank " + rank + " is closed");
            }
            if (user != null) {
                throw new IllegalStateException(name + ": rank " + rank + "'s communicator is in use by thread "
                    + user.getName() + "; one thread at a time may run operations");
            }
            user = me;
        }
    }

    private synchronized void leave() {
        user = null;
    }

    private long checkCount(final String name, final long count, final DataType type) {
        if (type == null) {
            throw new NullPointerException(name + ": type");
        }
        if (count < 0 || count > Integer.MAX_VALUE) {
            throw new IllegalArgumentException(name + ": count must be in 0.." + Integer.MAX_VALUE + ", got " + count);
        }
        return count * type.size();
    }

    private void checkRank(final String name, final String what, final int r) {
        if (r < 0 || r >= size) {
            throw new IllegalArgumentException(name + ": " + what + " must be a rank in 0.." + (size - 1) + ", got " + r);
        }
    }

    private void checkPeer(final String name, final int peer) {
        checkRank(name, "peer", peer);
        if (peer == rank) {
            throw new IllegalArgumentException(name + ": peer must be another rank, not this rank (" + rank + ")");
        }
    }

    private static long address(final String name, final String what, final ByteBuffer buffer, final long bytes,
                                final boolean written) {
        if (buffer == null) {
            throw new NullPointerException(name + ": " + what + " buffer");
        }
        if (!buffer.isDirect()) {
            throw new IllegalArgumentException(name + ": the " + what + " buffer must be direct (off-heap): "
                + "allocate it with ByteBuffer.allocateDirect");
        }
        if (written && buffer.isReadOnly()) {
            throw new IllegalArgumentException(name + ": the " + what + " buffer is read-only");
        }
        if (buffer.remaining() < bytes) {
            throw new IllegalArgumentException(name + ": the " + what + " buffer has " + buffer.remaining()
                + " bytes remaining, " + bytes + " needed");
        }
        return BufferUtil.address(buffer) + buffer.position();
    }

    /**
     * Reductions read and write elements in the platform's byte order; a buffer whose view is in the
     * other order was filled (and will be read) byte-swapped, which gives wrong results silently
     * (a sum of 4.0f became -2.6e36 with a BIG_ENDIAN buffer on x86). Single-byte types have no order.
     */
    private static void checkOrder(final String name, final String what, final ByteBuffer buffer, final DataType type) {
        if (type.size() > 1 && buffer.order() != java.nio.ByteOrder.nativeOrder()) {
            throw new IllegalArgumentException(name + ": the " + what + " buffer is in " + buffer.order()
                + " order, but elements are reduced in the platform's order (" + java.nio.ByteOrder.nativeOrder()
                + "): call " + what + ".order(ByteOrder.nativeOrder()) before writing or reading its elements");
        }
    }

    private MemoryRegion registerScratch(final long bytes) {
        final ByteBuffer memory = BufferUtil.allocateDirectAligned((int) Math.max(64, bytes), 64);
        // Peers write into it too: the staging of an in-place all-to-all's placed blocks (COLL-034).
        return device.call(ep -> wiring.pd.registerMemory(memory, AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE));
    }

    /** @return registered scratch memory of at least {@code bytes}, grown (and re-registered) when needed */
    private MemoryRegion scratch(final long bytes) {
        if (bytes > Integer.MAX_VALUE - 64) {
            throw new IllegalArgumentException("operation needs " + bytes + " bytes of scratch memory: at most 2 GiB");
        }
        if (scratch == null || scratch.length() < bytes) {
            final MemoryRegion old = scratch;
            if (old != null) {
                device.call(ep -> {
                    wiring.pd.deregister(old);
                    return null;
                });
            }
            scratch = registerScratch(Math.max(bytes, scratch == null ? 0 : 2L * scratch.length()));
        }
        return scratch;
    }

    /**
     * Waits until every chunk this rank's operations posted has reached its peer, then disconnects
     * from every peer and releases the memory; the device stays open unless the bootstrap opened
     * it. Idempotent. On an INVOKER device, call it on the device's owning thread, which drives the
     * device meanwhile: an operation there may return before the peers have acknowledged its
     * inline chunks ([COLL-038]), and closing must not lose them [COLL-039]. The wait ends when
     * each peer has acknowledged, closed its own communicator, or failed; it takes at most
     * {@link CommConfig#operationTimeout()}. A peer that does not drive its device meanwhile (an
     * INVOKER rank between operations) delays it. Nothing is waited for on a communicator that an
     * earlier failure broke.
     *
     * @throws IllegalStateException if the device is in INVOKER mode and this is another thread
     * @throws CollectiveException naming the peer, after everything is released, when chunks
     *     posted to it may not have arrived: its connection failed (other than by the peer's
     *     disconnect) or it did not acknowledge them within the operation timeout [COLL-039]
     */
    @Override
    public void close() {
        if (device.threadingMode() == org.metaroce.netty.ThreadingMode.INVOKER && !device.isOwningThread()
            && !device.isClosed()) {
            throw new IllegalStateException("close: rank " + rank + "'s device is in INVOKER mode: close its "
                + "communicator on the thread that built the device, not " + Thread.currentThread().getName()
                + " [COLL-029]");
        }
        final boolean idle;
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            idle = user == null;
        }
        CollectiveException lost = null;
        // Before the connections go, what the last operations posted and did not wait for (inline
        // chunks, COLL-038) must reach the peers [COLL-039]. A broken communicator has failed
        // already: its application knows, and waiting could only add the same failure again. An
        // operation still running on another thread is cut short by the close, as before.
        if (idle && engine.broken() == null && !device.isClosed()) {
            try {
                engine.drainSends(config.operationTimeout().toNanos());
            } catch (final CollectiveException ex) {
                lost = ex;
            }
        }
        engine.breakWith(new CollectiveException("the communicator of rank " + rank + " is closed", null, -1, null));
        try {
            registrations.clear();
        } finally {
            try {
                wiring.close();
            } finally {
                if (ownsDevice) {
                    device.close();
                }
            }
        }
        if (lost != null) {
            throw lost; // after the resources are released: close releases them whatever happened
        }
    }

    @Override
    public String toString() {
        return "Communicator{rank=" + rank + ", size=" + size + ", device=" + device.localAddress() + '}';
    }
}
