// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.collectives;

import java.time.Duration;

import org.agrona.concurrent.BackoffIdleStrategy;
import org.agrona.concurrent.IdleStrategy;
import org.metaroce.netty.InvokerIdleStrategy;
import org.metaroce.netty.MetaRoceDevice;

/**
 * Tuning of a {@link Communicator}. Every rank of a communicator must use the same chunk size
 * (checked at connection time); the other settings are local.
 */
public final class CommConfig {
    private int chunkBytes = 256 << 10;
    private int slots = 4;
    private long smallAllReduceBytes = 64 << 10;
    private long oneShotAllReduceBytes = ONE_SHOT_DEFAULT_BYTES;
    private long rabenseifnerAllReduceBytes = RABENSEIFNER_DEFAULT_BYTES;
    private long rabenseifnerAllReduceAboveBytes = RABENSEIFNER_ABOVE_DEFAULT_BYTES;
    /**
     * Default of {@link #rabenseifnerAllReduceAboveBytes()}: 32 KiB. On 4 ranks sharing 2 cores,
     * pinned, Rabenseifner took 0.62-0.67 of recursive doubling's median at 64 KiB and 0.91-1.08 at
     * 32 KiB (three alternated rounds, docs/collectives.md, 2026-12-05); on 3 ranks, where it does
     * not run, recursive doubling keeps 64 KiB (the ring took 1.3-1.5 times as long there).
     */
    public static final long RABENSEIFNER_ABOVE_DEFAULT_BYTES = 32 << 10;
    /**
     * Default of {@link #rabenseifnerAllReduceBytes()}: 1 GiB, so that on 4 ranks or more every size
     * above {@link #rabenseifnerAllReduceFromBytes()} takes 2 log2(p) hops instead of the ring's
     * 2(n-1) (the ring keeps 2 and 3 ranks, and vectors above 1 GiB, which were not measured). Up to
     * 1 MiB, 4 ranks on 2 cores, pinned, medians of three alternated rounds: Rabenseifner / ring
     * 0.59-0.72 at 128 KiB, 0.60-0.98 at 1 MiB. Above it the ranks' placement decides
     * (docs/collectives.md, "The host's slow mode"): pinned round robin, Rabenseifner keeps its
     * largest exchanges on one CPU where every hop of the ring crosses, 0.44-0.70 of the ring's time
     * at 2-32 MiB with the CPUs far apart, and against Open MPI TCP in the same rounds 0.59-0.83
     * where the ring took 0.85-1.08; unpinned with the CPUs close, 0.85-0.94 of the ring's at 2 MiB,
     * alike at 8-32 MiB; unpinned with the CPUs far apart it lost at 2 MiB (1.30-1.78) and won at
     * 8-32 MiB (0.73-1.06). (1 MiB in v1.0.17, off before.)
     */
    public static final long RABENSEIFNER_DEFAULT_BYTES = 1L << 30;
    /** Default of {@link #oneShotAllReduceBytes()}. */
    public static final long ONE_SHOT_DEFAULT_BYTES = 4096;
    private Duration operationTimeout = Duration.ofSeconds(60);
    private Duration setupTimeout = Duration.ofSeconds(60);
    private int pathMtu = 4096;
    private long qpTimeoutNs = 10_000_000;
    private IdleStrategy idleStrategy;
    private boolean spinWait;
    private boolean parkWait;
    private boolean blockWait;
    /** Whether the caller chose how ranks wait (else LocalCluster may pick by cores, COLL-029). */
    private boolean waitChosen;

    /** Default settings: 256 KiB chunks, 4 slots, 60 s operation and setup timeouts, MTU 4096. */
    public CommConfig() {
    }

    /** @return a copy of these settings (the idle strategy is shared only if one was set) */
    public CommConfig copy() {
        final CommConfig c = new CommConfig();
        c.chunkBytes = chunkBytes;
        c.slots = slots;
        c.smallAllReduceBytes = smallAllReduceBytes;
        c.oneShotAllReduceBytes = oneShotAllReduceBytes;
        c.rabenseifnerAllReduceBytes = rabenseifnerAllReduceBytes;
        c.rabenseifnerAllReduceAboveBytes = rabenseifnerAllReduceAboveBytes;
        c.operationTimeout = operationTimeout;
        c.setupTimeout = setupTimeout;
        c.pathMtu = pathMtu;
        c.qpTimeoutNs = qpTimeoutNs;
        c.idleStrategy = idleStrategy;
        c.spinWait = spinWait;
        c.parkWait = parkWait;
        c.blockWait = blockWait;
        c.waitChosen = waitChosen;
        return c;
    }

    /** @return bytes per pipelined chunk (one slot, one RDMA WRITE with immediate) */
    public int chunkBytes() {
        return chunkBytes;
    }

    /**
     * @param bytes bytes per chunk: a multiple of 8 in 8..{@value Engine#MAX_CHUNK_BYTES}
     *     (under 8 MiB: the immediate carries the length next to a grant, COLL-007, COLL-035)
     * @return this
     */
    public CommConfig chunkBytes(final int bytes) {
        if (bytes < 8 || bytes > Engine.MAX_CHUNK_BYTES || (bytes & 7) != 0) {
            throw new IllegalArgumentException("chunkBytes must be a multiple of 8 in 8.." + Engine.MAX_CHUNK_BYTES
                + ", got " + bytes);
        }
        this.chunkBytes = bytes;
        return this;
    }

    /** @return slots this rank grants each peer (chunks in flight per direction and peer) */
    public int slots() {
        return slots;
    }

    /**
     * @param count receive slots per peer, 1..64
     * @return this
     */
    public CommConfig slots(final int count) {
        if (count < 1 || count > 64) {
            throw new IllegalArgumentException("slots must be in 1..64, got " + count);
        }
        this.slots = count;
        return this;
    }

    /**
     * @return message size (bytes) up to which the latency-optimised algorithms run: recursive
     *     doubling instead of the ring for all-reduce, a binomial tree instead of the chain for
     *     broadcast and reduce (every rank must use the same value)
     */
    public long smallAllReduceBytes() {
        return smallAllReduceBytes;
    }

    /**
     * @param bytes threshold, >= 0
     * @return this
     */
    public CommConfig smallAllReduceBytes(final long bytes) {
        if (bytes < 0) {
            throw new IllegalArgumentException("smallAllReduceBytes must be >= 0, got " + bytes);
        }
        this.smallAllReduceBytes = bytes;
        return this;
    }

    /**
     * @return message size (bytes) up to which all-reduce is one-shot: every rank sends its vector
     *     to every other and reduces all of them in rank order, one network hop instead of
     *     recursive doubling's log2(n) [COLL-036] (every rank must use the same value)
     */
    public long oneShotAllReduceBytes() {
        return oneShotAllReduceBytes;
    }

    /**
     * @param bytes threshold, >= 0 (0: never one-shot)
     * @return this
     */
    public CommConfig oneShotAllReduceBytes(final long bytes) {
        if (bytes < 0) {
            throw new IllegalArgumentException("oneShotAllReduceBytes must be >= 0, got " + bytes);
        }
        this.oneShotAllReduceBytes = bytes;
        return this;
    }

    /**
     * @return message size (bytes) up to which all-reduce above {@link #smallAllReduceBytes()} runs
     *     Rabenseifner's algorithm (reduce-scatter by recursive halving, all-gather by recursive
     *     doubling: 2 log2(p) hops) instead of the ring (2(n-1) hops, the same bytes) [COLL-037]
     *     (every rank must use the same value)
     */
    public long rabenseifnerAllReduceBytes() {
        return rabenseifnerAllReduceBytes;
    }

    /**
     * @param bytes threshold, >= 0 (0, the default, or anything up to {@link #smallAllReduceBytes()}:
     *     never)
     * @return this
     */
    public CommConfig rabenseifnerAllReduceBytes(final long bytes) {
        if (bytes < 0) {
            throw new IllegalArgumentException("rabenseifnerAllReduceBytes must be >= 0, got " + bytes);
        }
        this.rabenseifnerAllReduceBytes = bytes;
        return this;
    }

    /**
     * @return message size (bytes) above which Rabenseifner's all-reduce may run, when that is below
     *     {@link #smallAllReduceBytes()}: on 4 ranks or more it then takes the sizes above it and up to
     *     {@link #rabenseifnerAllReduceBytes()} from recursive doubling [COLL-037] (every rank must use
     *     the same value)
     */
    public long rabenseifnerAllReduceAboveBytes() {
        return rabenseifnerAllReduceAboveBytes;
    }

    /**
     * @return the size above which Rabenseifner's all-reduce runs on 4 ranks or more: the smaller
     *     of {@link #smallAllReduceBytes()} and {@link #rabenseifnerAllReduceAboveBytes()} [COLL-037]
     */
    public long rabenseifnerAllReduceFromBytes() {
        return Math.min(smallAllReduceBytes, rabenseifnerAllReduceAboveBytes);
    }

    /**
     * @param bytes lower threshold, >= 0 (at or above {@link #smallAllReduceBytes()}: Rabenseifner
     *     starts above that one)
     * @return this
     */
    public CommConfig rabenseifnerAllReduceAboveBytes(final long bytes) {
        if (bytes < 0) {
            throw new IllegalArgumentException("rabenseifnerAllReduceAboveBytes must be >= 0, got " + bytes);
        }
        this.rabenseifnerAllReduceAboveBytes = bytes;
        return this;
    }

    /** @return how long one operation may take before it fails */
    public Duration operationTimeout() {
        return operationTimeout;
    }

    /**
     * @param timeout bound on one operation, after which it fails naming the ranks it waits for
     * @return this
     */
    public CommConfig operationTimeout(final Duration timeout) {
        if (timeout.isNegative() || timeout.isZero()) {
            throw new IllegalArgumentException("operationTimeout must be positive, got " + timeout);
        }
        this.operationTimeout = timeout;
        return this;
    }

    /** @return bound on connecting to every peer */
    public Duration setupTimeout() {
        return setupTimeout;
    }

    /**
     * @param timeout bound on connecting to every peer, after which setup fails naming the missing ranks
     * @return this
     */
    public CommConfig setupTimeout(final Duration timeout) {
        if (timeout.isNegative() || timeout.isZero()) {
            throw new IllegalArgumentException("setupTimeout must be positive, got " + timeout);
        }
        this.setupTimeout = timeout;
        return this;
    }

    /** @return path MTU proposed for the queue pairs */
    public int pathMtu() {
        return pathMtu;
    }

    /**
     * @param mtu 256, 512, 1024, 2048, 4096 or 8192
     * @return this
     */
    public CommConfig pathMtu(final int mtu) {
        if (mtu < 256 || mtu > 8192 || Integer.bitCount(mtu) != 1) {
            throw new IllegalArgumentException("pathMtu must be one of 256, 512, 1024, 2048, 4096, 8192, got " + mtu);
        }
        this.pathMtu = mtu;
        return this;
    }

    /** @return the queue pairs' TIMEOUT: the initial retransmission timeout, which also caps the device's floor */
    public long qpTimeoutNs() {
        return qpTimeoutNs;
    }

    /**
     * @param ns queue pair TIMEOUT in ns (> 0); the retransmission floor is the smaller of this and
     *     the device's {@code EndpointConfig.minRtoNs}
     * @return this
     */
    public CommConfig qpTimeoutNs(final long ns) {
        if (ns <= 0) {
            throw new IllegalArgumentException("qpTimeoutNs must be > 0, got " + ns);
        }
        this.qpTimeoutNs = ns;
        return this;
    }

    /**
     * @return how the calling thread waits for progress; unless set, a new backoff strategy that
     *     parks almost at once (1 us doubling to 50 us): spinning ranks steal the cores the
     *     driver threads need when ranks outnumber cores
     */
    public IdleStrategy idleStrategy() {
        if (idleStrategy != null) {
            return idleStrategy;
        }
        if (spinWait) {
            return new org.agrona.concurrent.BusySpinIdleStrategy();
        }
        if (parkWait) {
            return new org.agrona.concurrent.SleepingIdleStrategy(50_000);
        }
        return new BackoffIdleStrategy(1, 1, 1_000, 50_000);
    }

    /**
     * @param cq the completion queue the rank's driver thread fills
     * @return how a rank served by a driver thread waits: unless the caller chose a strategy, spin
     *     or backoff ({@link #spinWait}, {@link #parkWait}, {@link #idleStrategy(IdleStrategy)}), it
     *     yields the processor and then parks until the driver pushes a completion
     *     ({@link InvokerIdleStrategy#untilCompletion}); an explicit {@code spinWait(false)} keeps the backoff of
     *     {@link #idleStrategy()}
     */
    IdleStrategy driverRankIdleStrategy(final org.metaroce.core.verbs.CompletionQueue cq) {
        if (blocksWhenIdle()) {
            return InvokerIdleStrategy.untilCompletion(cq);
        }
        return idleStrategy();
    }

    /**
     * @return how a rank that drives its own INVOKER device waits when a loop found nothing to do
     *     (the configured {@link #idleStrategy(IdleStrategy)} if one was set): it must keep calling
     *     the device, so it spins while it has a core to itself and otherwise yields it to the other
     *     ranks for up to about a millisecond before parking for at most 20 us at a time
     */
    public IdleStrategy invokerIdleStrategy() {
        return invokerIdleStrategy(null);
    }

    /**
     * @param device the rank's INVOKER device
     * @return as {@link #invokerIdleStrategy()}, except that with {@link #blockWait(boolean)}, or when
     *     no way of waiting was chosen ({@link #waitChosen()}), the rank yields the processor and then
     *     blocks in the device's {@link MetaRoceDevice#awaitWork(long)} ({@link InvokerIdleStrategy}),
     *     as ranks with driver threads wait on their doorbell: four launched INVOKER ranks on 2 cores
     *     took a median of 124&ndash;131 &micro;s per 8-byte all-reduce this way against 209&ndash;219
     *     with the timed backoff (docs/collectives.md); where a core is free the yields return at once,
     *     so the rank polls for about a millisecond before it blocks
     */
    public IdleStrategy invokerIdleStrategy(final MetaRoceDevice device) {
        if (blocksWhenIdle() && device != null) {
            return new InvokerIdleStrategy(device);
        }
        return timedInvokerIdleStrategy();
    }

    private IdleStrategy timedInvokerIdleStrategy() {
        if (idleStrategy != null) {
            return idleStrategy;
        }
        if (spinWait) {
            return new org.agrona.concurrent.BusySpinIdleStrategy();
        }
        if (parkWait) {
            return new org.agrona.concurrent.SleepingIdleStrategy(20_000);
        }
        return new BackoffIdleStrategy(20, 1_000, 1_000, 20_000);
    }

    /**
     * @return whether {@link #spinWait}, {@link #parkWait} or {@link #idleStrategy(IdleStrategy)} was
     *     called; if not, {@link LocalCluster} busy-spins its ranks when its threads fit the cores
     */
    public boolean waitChosen() {
        return waitChosen;
    }

    /** @return whether waiting threads busy-spin */
    public boolean spinWaits() {
        return spinWait && idleStrategy == null;
    }

    /**
     * @param spin whether waiting threads busy-spin (a new strategy per communicator; lowest
     *     latency, a core per rank)
     * @return this
     */
    public CommConfig spinWait(final boolean spin) {
        this.spinWait = spin;
        this.parkWait = false;
        this.blockWait = false;
        this.waitChosen = true;
        return this;
    }

    /**
     * @param park whether waiting threads park 50 us at a time (leaves the cores to the drivers)
     * @return this
     */
    public CommConfig parkWait(final boolean park) {
        this.parkWait = park;
        this.spinWait = false;
        this.blockWait = false;
        this.waitChosen = true;
        return this;
    }

    /**
     * @param block whether ranks that drive their own INVOKER device block in its
     *     {@link MetaRoceDevice#awaitWork(long)} when a loop found nothing to do, after yielding the
     *     processor ({@link InvokerIdleStrategy}): no processor time while waiting, and woken by the
     *     next datagram rather than by a timer. Ranks served by driver threads wait as by default
     * @return this
     */
    public CommConfig blockWait(final boolean block) {
        this.blockWait = block;
        this.spinWait = false;
        this.parkWait = false;
        this.waitChosen = true;
        return this;
    }

    /** @return whether INVOKER ranks block in their device's awaitWork when waiting */
    public boolean blockWaits() {
        return blockWait && idleStrategy == null;
    }

    /**
     * @return whether a waiting rank with this configuration yields and then blocks: an INVOKER rank
     *     in its device's awaitWork ({@link #invokerIdleStrategy(MetaRoceDevice)}), a rank with a
     *     driver thread on its completion queue's doorbell; true when {@link #blockWait(boolean)} or
     *     no way of waiting was chosen (the spin, park and backoff setters clear {@code blockWait})
     */
    public boolean blocksWhenIdle() {
        return (blockWait || !waitChosen) && idleStrategy == null;
    }

    /**
     * @param strategy how the calling thread waits; not shared between communicators
     * @return this
     */
    public CommConfig idleStrategy(final IdleStrategy strategy) {
        this.idleStrategy = strategy;
        this.waitChosen = strategy != null || waitChosen;
        return this;
    }
}
