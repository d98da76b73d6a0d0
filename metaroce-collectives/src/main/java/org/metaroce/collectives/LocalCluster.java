// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.collectives;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;

import org.metaroce.netty.CpuAffinity;
import org.metaroce.netty.DeviceConfig;
import org.metaroce.netty.EventLoopIdleStrategy;
import org.metaroce.netty.MetaRoceDevice;
import org.metaroce.netty.SharedDriver;
import org.metaroce.netty.ThreadingMode;
import org.metaroce.netty.Transport;

/**
 * Several ranks in one process over loopback UDP, for tests and the tools' {@code --ranks N}:
 * one device per rank on 127.0.0.1 (ephemeral ports) and one application thread per rank that
 * runs what {@link #run} hands it. The devices are driven by one {@link SharedDriver} thread
 * ({@link #start}), by a driver thread each ({@link #startDedicated}), or by the rank threads
 * themselves ({@link #startInvoker}: no driver threads at all) [COLL-029].
 */
public final class LocalCluster implements AutoCloseable {
    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(LocalCluster.class);
    private final ThreadingMode mode;
    private final SharedDriver driver;
    private final List<MetaRoceDevice> devices = new ArrayList<>();
    private final List<Communicator> communicators = new ArrayList<>();
    /** One thread per rank, so a rank always runs on the same thread (INVOKER: its device's owner). */
    private final List<ExecutorService> threads = new ArrayList<>();

    private LocalCluster(final int ranks, final CommConfig config, final DeviceConfig template,
                         final ThreadingMode mode) throws Exception {
        this.mode = mode;
        driver = mode == ThreadingMode.SHARED ? new SharedDriver(Transport.AUTO, new EventLoopIdleStrategy()) : null;
        for (int i = 0; i < ranks; i++) {
            final String name = "metaroce-rank-" + i;
            threads.add(Executors.newSingleThreadExecutor(r -> {
                // A Netty thread: INVOKER ranks run Netty's send path here, and Netty pools its
                // per-write objects only on FastThreadLocalThreads.
                final Thread t = new io.netty.util.concurrent.FastThreadLocalThread(r, name);
                t.setDaemon(true);
                return t;
            }));
        }
        try {
            final List<InetSocketAddress> endpoints = new ArrayList<>();
            final List<Future<MetaRoceDevice>> opened = new ArrayList<>();
            final List<DeviceConfig> configs = new ArrayList<>();
            for (int i = 0; i < ranks; i++) {
                // (A template is one object for every rank: it is complete before any device reads it.)
                final DeviceConfig dc = deviceConfig(template).threadName("metaroce-driver-" + i).threadingMode(mode)
                    .sharedDriver(driver);
                if (template == null && mode == ThreadingMode.INVOKER) {
                    dc.endpointConfig(Bootstrap.invokerEndpoint());
                }
                configs.add(dc);
            }
            for (int i = 0; i < ranks; i++) {
                final DeviceConfig dc = configs.get(i);
                // INVOKER: the thread that builds a device owns it, so each rank's thread builds its own.
                opened.add(threads.get(i).submit(() -> new MetaRoceDevice(dc)));
            }
            Throwable failure = null;
            for (final Future<MetaRoceDevice> f : opened) {
                try {
                    devices.add(f.get());
                } catch (final ExecutionException ex) {
                    failure = failure == null ? ex.getCause() : failure;
                }
            }
            if (failure == null) {
                for (final MetaRoceDevice d : devices) {
                    endpoints.add(d.localAddress());
                }
                final CommConfig rankConfig = rankConfig(config, ranks, mode, Runtime.getRuntime().availableProcessors());
                final java.util.concurrent.atomic.AtomicInteger wired = new java.util.concurrent.atomic.AtomicInteger();
                final List<Future<Communicator>> wiring = new ArrayList<>();
                for (int i = 0; i < ranks; i++) {
                    final int rank = i;
                    wiring.add(threads.get(i).submit(() -> {
                        final MetaRoceDevice d = devices.get(rank);
                        try {
                            return Wiring.connect(d, rank, endpoints, rankConfig);
                        } finally {
                            wired.incrementAndGet();
                            // INVOKER: keep answering the handshakes of ranks still connecting to this one.
                            if (mode == ThreadingMode.INVOKER) {
                                lingerUntil(d, wired, ranks, System.nanoTime() + config.setupTimeout().toNanos());
                            }
                        }
                    }));
                }
                for (final Future<Communicator> f : wiring) {
                    try {
                        communicators.add(f.get());
                    } catch (final ExecutionException ex) {
                        failure = failure == null ? ex.getCause() : failure;
                    }
                }
            }
            if (failure != null) {
                throw failure instanceof Exception e ? e : new IllegalStateException(failure);
            }
        } catch (final Exception ex) {
            close();
            throw ex;
        }
    }

    /**
     * Busy-polls only when every thread has a core [COLL-029]: unless the caller chose how ranks
     * wait, ranks spin when the cluster's threads (rank threads, plus a driver thread each in
     * DEDICATED mode or one in SHARED mode) fit in {@code cores}; otherwise INVOKER ranks block in
     * their devices ({@link CommConfig#blockWait(boolean)}) and ranks with driver threads back off,
     * since a spinning rank takes the core the thread it waits for needs.
     *
     * @return the configuration the ranks use
     */
    static CommConfig rankConfig(final CommConfig config, final int ranks, final ThreadingMode mode, final int cores) {
        if (config.waitChosen()) {
            return config;
        }
        final int threads = switch (mode) {
            case INVOKER -> ranks;
            case DEDICATED -> 2 * ranks;
            case SHARED -> ranks + 1;
        };
        if (threads <= cores) {
            return config.copy().spinWait(true);
        }
        // INVOKER ranks that share cores block in their devices when waiting: measured on 2 cores
        // with 4 ranks (64 MiB float32 all-reduce, 5 alternations) 0.80-0.91 GB/s busbw against
        // 0.56-0.83 with the spin-yield-park backoff, and half its average small-message time.
        return mode == ThreadingMode.INVOKER ? config.copy().blockWait(true) : config;
    }

    /**
     * @param template device settings to start from, or null for the defaults: loopback,
     *     ephemeral ports, 1 entropy port, {@link Bootstrap#softwareEndpoint()} timers
     * @return a device configuration for one rank (threading mode not yet set)
     */
    static DeviceConfig deviceConfig(final DeviceConfig template) {
        if (template != null) {
            return template;
        }
        return new DeviceConfig().bindAddress(InetAddress.getLoopbackAddress()).endpointPort(0)
            // One entropy port: loopback has one path, and every port is a socket of its own, so a
            // duty cycle that sends to three peers made up to three sendmmsg calls instead of one
            // (8-byte all-reduce, 4 ranks: 4.6 -> 2.0 sendmmsg per rank and operation).
            .entropyPortRange(1, 0).transport(Transport.AUTO)
            // UDP receive offload: one recvmsg takes a run of datagrams (up to 64 KiB), about a
            // quarter less CPU per byte for the ranks' 4 KiB packets on loopback.
            .gro(true)
            // Every rank receives with GRO, so two datagrams to one peer (a message of two
            // packets, a WRITE and an ACK) go as one GSO write (Bootstrap.GSO_MIN_SEGMENTS).
            .gsoMinSegments(Bootstrap.GSO_MIN_SEGMENTS)
            // An idle driver blocks in epoll_wait and wakes on a datagram or a posted request: no
            // CPU taken from the ranks, no parking delay on the latency path.
            .idleStrategy(new EventLoopIdleStrategy())
            // The drivers share the cores with the ranks' reductions, the JIT and the GC: a duty
            // cycle can take milliseconds under load (see Bootstrap.softwareEndpoint).
            .endpointConfig(Bootstrap.softwareEndpoint());
    }

    /**
     * @param mode how the ranks' devices will be driven
     * @return the device configuration a rank gets without a template in {@code mode} (INVOKER
     *     ranks get {@link Bootstrap#invokerEndpoint()} timers): a template to change one setting of
     */
    public static DeviceConfig defaultDeviceConfig(final ThreadingMode mode) {
        final DeviceConfig dc = deviceConfig(null);
        return mode == ThreadingMode.INVOKER ? dc.endpointConfig(Bootstrap.invokerEndpoint()) : dc;
    }

    /**
     * Starts {@code ranks} ranks and connects them.
     *
     * @param ranks 1..64
     * @param config communicator settings, shared by every rank
     * @return the connected cluster
     * @throws Exception if a device cannot be opened or the ranks cannot connect
     */
    public static LocalCluster start(final int ranks, final CommConfig config) throws Exception {
        return start(ranks, config, null);
    }

    /**
     * Starts ranks with a device template (each rank gets a fresh copy made by
     * {@code template}'s caller; pass null for the loopback defaults).
     *
     * @param ranks 1..64
     * @param config communicator settings
     * @param template device configuration for every rank (bind address, ports, endpoint config), or null
     * @return the connected cluster
     * @throws Exception if a device cannot be opened or the ranks cannot connect
     */
    public static LocalCluster start(final int ranks, final CommConfig config, final DeviceConfig template)
        throws Exception {
        if (ranks < 1 || ranks > 64) {
            throw new IllegalArgumentException("ranks must be in 1..64, got " + ranks);
        }
        return new LocalCluster(ranks, config, template, ThreadingMode.SHARED);
    }

    /**
     * Starts ranks whose devices each have a driver thread of their own (DEDICATED) instead of one
     * shared driver thread: more parallelism when there are cores to spare.
     *
     * @param ranks 1..64
     * @param config communicator settings
     * @param template device configuration for every rank, or null for the loopback defaults
     * @return the connected cluster
     * @throws Exception if a device cannot be opened or the ranks cannot connect
     */
    public static LocalCluster startDedicated(final int ranks, final CommConfig config, final DeviceConfig template)
        throws Exception {
        if (ranks < 1 || ranks > 64) {
            throw new IllegalArgumentException("ranks must be in 1..64, got " + ranks);
        }
        return new LocalCluster(ranks, config, template, ThreadingMode.DEDICATED);
    }

    /**
     * Starts ranks that drive their own devices (INVOKER mode): each rank's thread builds its
     * device and runs its duty cycles inside every operation, so there are no driver threads and
     * no hand-off between threads [COLL-029]. A device makes progress only while its rank is in an
     * operation, which suits ranks that call operations back to back (benchmarks, tests).
     *
     * @param ranks 1..64
     * @param config communicator settings
     * @param template device configuration for every rank, or null for the loopback defaults
     * @return the connected cluster
     * @throws Exception if a device cannot be opened or the ranks cannot connect
     */
    public static LocalCluster startInvoker(final int ranks, final CommConfig config, final DeviceConfig template)
        throws Exception {
        if (ranks < 1 || ranks > 64) {
            throw new IllegalArgumentException("ranks must be in 1..64, got " + ranks);
        }
        return new LocalCluster(ranks, config, template, ThreadingMode.INVOKER);
    }

    /**
     * Pins rank {@code i}'s thread to the {@code i}-th CPU, round robin, of those this thread may
     * run on, as MPI launchers bind ranks: 4 ranks on CPUs 0 and 1 run as 0, 1, 0, 1. Where ranks
     * outnumber cores and never sleep, the scheduler moves them only at its periodic balancing, and
     * a placement of three ranks on one core held a small all-reduce at 91-112 us instead of 70-84
     * for tens of milliseconds at a time (docs/collectives.md, "What selects a run's speed"). In
     * INVOKER mode the rank threads are all the cluster's threads; driver threads of the other
     * modes are left where they are.
     *
     * @return the CPU each rank's thread now runs on, by rank
     * @throws IllegalStateException when this JVM cannot set thread affinity (Linux with JDK 22 or
     *     newer and native access are needed; the message says which is missing)
     * @throws Exception when a rank's thread could not be pinned
     */
    public int[] pinRanks() throws Exception {
        final int[] allowed = CpuAffinity.allowedCpus();
        final int[] cpus = new int[threads.size()];
        final List<Future<?>> pinned = new ArrayList<>();
        for (int i = 0; i < cpus.length; i++) {
            final int cpu = allowed[i % allowed.length];
            cpus[i] = cpu;
            pinned.add(threads.get(i).submit(() -> CpuAffinity.pinCurrentThread(cpu)));
        }
        for (final Future<?> f : pinned) {
            try {
                f.get();
            } catch (final ExecutionException ex) {
                throw ex.getCause() instanceof Exception e ? e : new IllegalStateException(ex.getCause());
            }
        }
        return cpus;
    }

    /** @return how the ranks' devices are driven */
    public ThreadingMode threadingMode() {
        return mode;
    }

    /** @return number of ranks */
    public int size() {
        return communicators.size();
    }

    /** @return rank {@code i}'s communicator */
    public Communicator communicator(final int i) {
        return communicators.get(i);
    }

    /**
     * Runs {@code body} on every rank at once, each on its own thread, and waits for all.
     *
     * @param body what each rank does with its communicator
     * @param timeout bound on the whole run
     * @param <T> result type
     * @return the results, by rank
     * @throws Exception a rank's disagreement on the arguments when one failed so, else the first
     *     rank's failure (the others attached as suppressed), or a timeout
     */
    public <T> List<T> run(final Function<Communicator, T> body, final java.time.Duration timeout) throws Exception {
        final List<Future<T>> futures = new ArrayList<>();
        final long deadline = System.nanoTime() + timeout.toNanos();
        final int ranks = communicators.size();
        final java.util.concurrent.atomic.AtomicInteger finished = new java.util.concurrent.atomic.AtomicInteger();
        for (int i = 0; i < ranks; i++) {
            final Communicator c = communicators.get(i);
            futures.add(threads.get(i).submit(() -> {
                try {
                    return body.apply(c);
                } finally {
                    finished.incrementAndGet();
                    if (mode == ThreadingMode.INVOKER) {
                        lingerUntil(c.device(), finished, ranks, deadline);
                    }
                }
            }));
        }
        final List<T> results = new ArrayList<>();
        Exception failure = null;
        for (int i = 0; i < futures.size(); i++) {
            try {
                results.add(futures.get(i).get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS));
            } catch (final ExecutionException ex) {
                final Throwable cause = ex.getCause();
                final Exception e = cause instanceof Exception x ? x : new IllegalStateException("rank " + i, cause);
                if (failure == null) {
                    failure = e;
                } else {
                    failure.addSuppressed(e);
                }
                results.add(null);
            } catch (final TimeoutException ex) {
                final Exception e = new TimeoutException("rank " + i + " did not finish within " + timeout);
                if (failure == null) {
                    failure = e;
                } else {
                    failure.addSuppressed(e);
                }
                results.add(null);
            }
        }
        if (failure != null) {
            throw rootCauseFirst(failure);
        }
        return results;
    }

    /**
     * @return the failure to report: a rank's {@link RankDisagreementException} when there is one (the
     *     others only timed out waiting for that rank), with every other failure attached as
     *     suppressed; else {@code first} as it is
     */
    static Exception rootCauseFirst(final Exception first) {
        if (first instanceof RankDisagreementException) {
            return first;
        }
        for (final Throwable t : first.getSuppressed()) {
            if (t instanceof RankDisagreementException root) {
                root.addSuppressed(first);
                for (final Throwable other : first.getSuppressed()) {
                    if (other != root) {
                        root.addSuppressed(other);
                    }
                }
                return root;
            }
        }
        return first;
    }

    /**
     * INVOKER ranks [COLL-029]: a rank that has finished (its wiring, or its part of a run) keeps
     * driving its device until every rank has, or {@code deadline}. Its peers may still be inside their last operation waiting for an acknowledgement of
     * theirs that was lost: they retransmit, and a device nobody drives would never answer (the
     * peer would end in RETRY_EXC_ERR, seen in about 1 of 10 runs on a lossy wire).
     */
    private static void lingerUntil(final MetaRoceDevice device, final java.util.concurrent.atomic.AtomicInteger finished,
                                    final int ranks, final long deadline) {
        Communicator.drive(device, () -> finished.get() >= ranks || System.nanoTime() - deadline >= 0);
    }

    /**
     * Closes every communicator, device, the driver and the rank threads. A communicator whose close
     * fails ({@link Communicator#close()}: chunks that may not have reached a peer, COLL-039) is
     * logged as a warning and the rest are closed all the same.
     */
    @Override
    public void close() {
        final List<Future<?>> closing = new ArrayList<>();
        for (int i = 0; i < threads.size(); i++) {
            final Communicator c = i < communicators.size() ? communicators.get(i) : null;
            final MetaRoceDevice d = i < devices.size() ? devices.get(i) : null;
            final Runnable closeRank = () -> {
                try {
                    if (c != null) {
                        c.close();
                    }
                } catch (final RuntimeException ex) {
                    // Keep closing the rest; but a close that could not deliver what the rank's
                    // operations posted says so (COLL-039), and must not vanish here.
                    LOG.warn("closing rank {}: {}", c.rank(), ex.getMessage());
                } finally {
                    try {
                        if (d != null) {
                            d.close();
                        }
                    } catch (final RuntimeException ex) {
                        // Best effort.
                    }
                }
            };
            if (mode == ThreadingMode.INVOKER) {
                // An INVOKER device is closed by its owning thread.
                try {
                    closing.add(threads.get(i).submit(closeRank));
                } catch (final java.util.concurrent.RejectedExecutionException ex) {
                    // The thread is gone: so is the device's owner.
                }
            } else {
                closeRank.run();
            }
        }
        for (final Future<?> f : closing) {
            try {
                f.get(30, TimeUnit.SECONDS);
            } catch (final ExecutionException | TimeoutException ex) {
                // Best effort.
            } catch (final InterruptedException ex) {
                Thread.currentThread().interrupt();
            }
        }
        if (driver != null) {
            driver.close();
        }
        for (final ExecutorService t : threads) {
            t.shutdownNow();
        }
    }
}
