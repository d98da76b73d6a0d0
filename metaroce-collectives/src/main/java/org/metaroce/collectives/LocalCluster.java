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

import org.metaroce.netty.DeviceConfig;
import org.metaroce.netty.EventLoopIdleStrategy;
import org.metaroce.netty.MetaRoceDevice;
import org.metaroce.netty.SharedDriver;
import org.metaroce.netty.ThreadingMode;
import org.metaroce.netty.Transport;

/**
 * Several ranks in one process over loopback UDP, for tests and the tools' {@code --ranks N}:
 * one device per rank on 127.0.0.1 (ephemeral ports), all driven by one {@link SharedDriver}
 * thread, and one application thread per rank that runs what {@link #run} hands it.
 */
public final class LocalCluster implements AutoCloseable {
    private final SharedDriver driver;
    private final List<MetaRoceDevice> devices = new ArrayList<>();
    private final List<Communicator> communicators = new ArrayList<>();
    private final ExecutorService threads;

    private LocalCluster(final int ranks, final CommConfig config, final DeviceConfig template,
                         final boolean sharedDriver) throws Exception {
        driver = sharedDriver ? new SharedDriver(Transport.AUTO, new EventLoopIdleStrategy()) : null;
        threads = Executors.newFixedThreadPool(ranks, r -> {
            final Thread t = new Thread(r, "metaroce-rank");
            t.setDaemon(true);
            return t;
        });
        try {
            final List<InetSocketAddress> endpoints = new ArrayList<>();
            for (int i = 0; i < ranks; i++) {
                final DeviceConfig dc = deviceConfig(template).threadName("metaroce-rank-" + i);
                final MetaRoceDevice d = new MetaRoceDevice(sharedDriver
                    ? dc.threadingMode(ThreadingMode.SHARED).sharedDriver(driver)
                    : dc.threadingMode(ThreadingMode.DEDICATED).sharedDriver(null));
                devices.add(d);
                endpoints.add(d.localAddress());
            }
            final List<Future<Communicator>> wiring = new ArrayList<>();
            for (int i = 0; i < ranks; i++) {
                final int rank = i;
                wiring.add(threads.submit(() -> Wiring.connect(devices.get(rank), rank, endpoints, config)));
            }
            Throwable failure = null;
            for (final Future<Communicator> f : wiring) {
                try {
                    communicators.add(f.get());
                } catch (final ExecutionException ex) {
                    failure = failure == null ? ex.getCause() : failure;
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
     * @param template device settings to start from, or null for the defaults: loopback,
     *     ephemeral ports, 4 entropy ports, {@link Bootstrap#softwareEndpoint()} timers
     * @return a device configuration for one rank (threading mode not yet set)
     */
    static DeviceConfig deviceConfig(final DeviceConfig template) {
        if (template != null) {
            return template;
        }
        return new DeviceConfig().bindAddress(InetAddress.getLoopbackAddress()).endpointPort(0)
            .entropyPortRange(4, 0).transport(Transport.AUTO)
            // An idle driver blocks in epoll_wait and wakes on a datagram or a posted request: no
            // CPU taken from the ranks, no parking delay on the latency path.
            .idleStrategy(new EventLoopIdleStrategy())
            // The drivers share the cores with the ranks' reductions, the JIT and the GC: a duty
            // cycle can take milliseconds under load (see Bootstrap.softwareEndpoint).
            .endpointConfig(Bootstrap.softwareEndpoint());
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
        return new LocalCluster(ranks, config, template, true);
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
        return new LocalCluster(ranks, config, template, false);
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
     * @throws Exception the first rank's failure (others attached as suppressed), or a timeout
     */
    public <T> List<T> run(final Function<Communicator, T> body, final java.time.Duration timeout) throws Exception {
        final List<Future<T>> futures = new ArrayList<>();
        for (final Communicator c : communicators) {
            futures.add(threads.submit(() -> body.apply(c)));
        }
        final long deadline = System.nanoTime() + timeout.toNanos();
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
            throw failure;
        }
        return results;
    }

    /** Closes every communicator, device, the driver and the rank threads. */
    @Override
    public void close() {
        for (final Communicator c : communicators) {
            try {
                c.close();
            } catch (final RuntimeException ex) {
                // Best effort: keep closing the rest.
            }
        }
        for (final MetaRoceDevice d : devices) {
            try {
                d.close();
            } catch (final RuntimeException ex) {
                // Best effort.
            }
        }
        if (driver != null) {
            driver.close();
        }
        threads.shutdownNow();
    }
}
