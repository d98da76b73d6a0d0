// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.collectives;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.NetworkInterface;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.util.List;
import java.util.function.Function;

import org.metaroce.core.engine.EndpointConfig;
import org.metaroce.netty.DeviceConfig;
import org.metaroce.netty.EventLoopIdleStrategy;
import org.metaroce.netty.MetaRoceDevice;
import org.metaroce.netty.ThreadingMode;
import org.metaroce.netty.Transport;

/**
 * Builds a {@link Communicator} for a process started by a launcher (torchrun, Open MPI, Slurm)
 * or with explicit arguments [COLL-021..COLL-025]: opens a device (DEDICATED driver thread) on
 * the address this host uses to reach the master, exchanges endpoint addresses through the TCP
 * rendezvous at the master, and connects to every rank. The communicator owns the device and
 * closes it.
 */
public final class Bootstrap {
    private Bootstrap() {
    }

    /**
     * @param config communicator settings
     * @return the communicator described by this process's environment ({@link LaunchEnv#fromEnvironment()})
     * @throws IllegalArgumentException if the environment is incomplete or contradictory
     * @throws CollectiveException if the rendezvous or a connection fails or times out
     */
    public static Communicator fromEnvironment(final CommConfig config) {
        return connect(LaunchEnv.fromEnvironment(), config, null);
    }

    /**
     * Shortest run of datagrams to one peer that a rank's device sends as one UDP GSO write: 2,
     * where the device default is 3. Every rank's device turns GRO on, and on loopback a receiver
     * with GRO takes a GSO write whole, while two datagrams sent apart take the kernel's send and
     * receive paths twice. The default's 3 spares a receiver without
     * GRO the segmentation of a reply and its ACK. With it, a message of two packets (4 to 8 KiB at
     * path MTU 4096) went as two datagrams: a one-shot all-reduce of 4,112 B took 1.26-1.28x the
     * time of one of 4,096 B on 4 INVOKER ranks sharing 2 cores (8,208 B, three packets in one GSO
     * write, less than 8,192 B), about 2.7 us of kernel time per extra datagram on loopback
     * (docs/collectives.md, "The second packet of a message").
     */
    static final int GSO_MIN_SEGMENTS = 2;

    /**
     * @param bind the local address the device binds
     * @return the default device configuration: ephemeral endpoint port, {@link #entropyPorts} entropy ports,
     *     {@link #softwareEndpoint()} timers, DEDICATED threading idling in the event loop, UDP
     *     receive offload (GRO) where the transport has it, and UDP GSO from runs of two datagrams
     *     ({@link #GSO_MIN_SEGMENTS})
     */
    public static DeviceConfig defaultDeviceConfig(final InetAddress bind) {
        return new DeviceConfig().bindAddress(bind).endpointPort(0).entropyPortRange(entropyPorts(bind), 0)
            .transport(Transport.AUTO)
            .gro(true)
            .gsoMinSegments(GSO_MIN_SEGMENTS)
            .threadingMode(ThreadingMode.DEDICATED).idleStrategy(new EventLoopIdleStrategy())
            .endpointConfig(softwareEndpoint());
    }

    /**
     * @param bind the local address a rank's device binds
     * @return its entropy ports (paths, MP-001): 4 towards other hosts, whose fabric may spread
     *     them over several links, and 1 on a loopback address, which has one path: every port is a
     *     socket of its own, so a duty cycle that sends to three peers made up to three
     *     {@code sendmmsg} calls instead of one (8-byte all-reduce, 4 ranks: 4.6 -> 2.0 per rank and
     *     operation)
     */
    static int entropyPorts(final InetAddress bind) {
        return bind.isLoopbackAddress() ? 1 : 4;
    }

    /**
     * @param bind the local address the device binds
     * @return {@link #defaultDeviceConfig} for a rank whose calling thread drives its device (INVOKER
     *     mode, no driver thread, COLL-029), with {@link #invokerEndpoint()} timers. Pass it (as
     *     {@code Bootstrap::invokerDeviceConfig}) to {@link #connect} and run every operation and
     *     {@code close} on the thread that called it.
     */
    public static DeviceConfig invokerDeviceConfig(final InetAddress bind) {
        return defaultDeviceConfig(bind).threadingMode(ThreadingMode.INVOKER).endpointConfig(invokerEndpoint());
    }

    /**
     * Inline limit of an INVOKER rank's queue pairs, in bytes: every chunk of a one-shot all-reduce
     * (4 KiB by default, {@link CommConfig#ONE_SHOT_DEFAULT_BYTES}). A send whose chunks all fit is
     * posted inline and mostly unsignaled, and the operation returns without waiting for its
     * acknowledgements [COLL-038].
     */
    public static final int INVOKER_INLINE_BYTES = 4096;

    /**
     * @return endpoint settings for INVOKER ranks: {@link #softwareEndpoint()} with keepalive after
     *     10 s of silence and 5 probes 1 s apart, and an inline limit of {@link #INVOKER_INLINE_BYTES}.
     *     An INVOKER device answers only while its rank is
     *     inside an operation, and on a host with more runnable threads than cores a rank's thread
     *     can wait seconds for a core: with the 1 s + 5 x 200 ms default a waiting peer declared a
     *     live rank dead at load average 16. A rank that really hangs is still named by the
     *     operation timeout [COLL-027, COLL-029]. It offers DEFERRED_ACK, so that the ACK of an
     *     unsignaled inline chunk waits for the rank's next chunk to that peer [COLL-038, REL-073].
     */
    public static EndpointConfig invokerEndpoint() {
        return softwareEndpoint().keepaliveIdleNs(10_000_000_000L).keepaliveIntervalNs(1_000_000_000L)
            .keepaliveProbes(5).maxInlineData(INVOKER_INLINE_BYTES).deferredAck(true);
    }

    /**
     * @return endpoint settings for ranks of a software transport that share their cores: a
     *     10 ms retransmission floor (late acknowledgements from a descheduled driver are not
     *     loss) and a 1 s ceiling, so the seven retries of a queue pair outlast about 1.3 s of a
     *     peer's silence (a GC pause, a loaded host) before the peer is given up; and bursts of 16
     *     packets per path [MP-020], so that with segmentation offload a burst is one GSO send
     *     (per-packet spraying cost the collectives two thirds of their bandwidth on loopback)
     */
    public static EndpointConfig softwareEndpoint() {
        return new EndpointConfig().minRtoNs(10_000_000).maxRtoNs(1_000_000_000).pathBurstPackets(16);
    }

    /**
     * @param launch rank, world size and master
     * @param config communicator settings ({@link CommConfig#setupTimeout()} bounds the whole setup)
     * @param devices makes the device configuration for a local address, or null for {@link #defaultDeviceConfig}
     * @return the connected communicator, owning its device
     */
    public static Communicator connect(final LaunchEnv launch, final CommConfig config,
                                       final Function<InetAddress, DeviceConfig> devices) {
        final Function<InetAddress, DeviceConfig> make = devices != null ? devices : Bootstrap::defaultDeviceConfig;
        final long deadline = System.nanoTime() + config.setupTimeout().toNanos();
        final InetSocketAddress master;
        try {
            master = new InetSocketAddress(InetAddress.getByName(launch.masterAddress()), launch.masterPort());
        } catch (final IOException ex) {
            throw new IllegalArgumentException(launch.launcher() + ": cannot resolve the master address '"
                + launch.masterAddress() + "': " + ex.getMessage(), ex);
        }
        MetaRoceDevice device = null;
        try {
            final List<InetSocketAddress> table;
            if (launch.rank() == 0) {
                final InetAddress bind = master.getAddress();
                if (!isLocal(bind)) {
                    throw new IllegalArgumentException(launch.launcher() + ": this is rank 0, but the master address "
                        + launch.masterAddress() + " (" + bind.getHostAddress() + ") is not an address of this host");
                }
                try (ServerSocket server = new ServerSocket()) {
                    server.setReuseAddress(true);
                    server.bind(new InetSocketAddress(launch.masterPort()));
                    device = new MetaRoceDevice(make.apply(bind));
                    table = Rendezvous.master(server, launch.worldSize(), device.localAddress(), deadline);
                }
            } else {
                try (Socket s = Rendezvous.connect(master, launch.rank(), deadline)) {
                    // The address this host reaches the master from is the one the others can reach it on.
                    device = new MetaRoceDevice(make.apply(s.getLocalAddress()));
                    table = Rendezvous.join(s, launch.rank(), launch.worldSize(), device.localAddress(), deadline);
                }
            }
            final CommConfig remaining = copyWithSetupTimeout(config, deadline);
            final Communicator c = Wiring.connect(device, launch.rank(), table, remaining);
            c.ownDevice();
            return c;
        } catch (final IOException ex) {
            closeQuietly(device);
            throw new CollectiveException("rank " + launch.rank() + ": rendezvous failed: " + ex, "rendezvous", -1, ex);
        } catch (final InterruptedException ex) {
            closeQuietly(device);
            Thread.currentThread().interrupt();
            throw new CollectiveException("rank " + launch.rank() + ": interrupted during setup", "rendezvous", -1, ex);
        } catch (final RuntimeException | Error ex) {
            closeQuietly(device);
            throw ex;
        }
    }

    private static CommConfig copyWithSetupTimeout(final CommConfig config, final long deadline) {
        final long left = Math.max(1_000_000, deadline - System.nanoTime());
        return config.copy().setupTimeout(java.time.Duration.ofNanos(left));
    }

    private static boolean isLocal(final InetAddress address) {
        if (address.isLoopbackAddress() || address.isAnyLocalAddress()) {
            return true;
        }
        try {
            return NetworkInterface.getByInetAddress(address) != null;
        } catch (final SocketException ex) {
            return false;
        }
    }

    private static void closeQuietly(final MetaRoceDevice device) {
        if (device != null) {
            try {
                device.close();
            } catch (final RuntimeException ignored) {
                // Best effort.
            }
        }
    }
}
