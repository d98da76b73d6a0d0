// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.Arrays;

import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.PooledByteBufAllocator;
import org.agrona.concurrent.BackoffIdleStrategy;
import org.agrona.concurrent.IdleStrategy;
import org.metaroce.core.RandomSource;
import org.metaroce.core.SecureRandomSource;
import org.metaroce.core.engine.EndpointConfig;
import org.metaroce.core.wire.WireConstants;

/**
 * Everything a {@link MetaRoceDevice} is built from. Mutable until the device is built (the device
 * keeps a reference: do not change it afterwards); each setter validates and names what it
 * rejects.
 *
 * <p>Defaults: bind 0.0.0.0, endpoint port 4796 [ENC-002], 4 ephemeral entropy ports,
 * {@link Transport#AUTO}, {@link ThreadingMode#DEDICATED} with a {@link BackoffIdleStrategy},
 * secure randomness, UDP GSO when the platform has it, UDP GRO on the native transport and off on
 * Netty's ({@link #groFor(Transport)}).
 */
public final class DeviceConfig {
    /** DSCP of packets sent from entropy sockets: AF31, as RoCEv2 deployments mark RDMA data [ENC-012]. */
    public static final int DEFAULT_DATA_DSCP = 26;
    /** DSCP of packets sent from the endpoint socket (connection manager): CS6 [ENC-013]. */
    public static final int DEFAULT_CONTROL_DSCP = 48;

    /** Largest MetaRoCE datagram: PMTU 8192 + 72 header bytes + 4 integrity bytes, rounded up. */
    public static final int DEFAULT_MAX_DATAGRAM_BYTES = 8192 + 128;
    /** With UDP GRO the kernel may hand over up to 64 KiB at once: receive slots must hold that. */
    public static final int GRO_SLOT_BYTES = 65536;
    /** Bytes a data packet adds to its payload, at most: 72 header bytes and the 4-byte integrity check. */
    private static final int MAX_PACKET_OVERHEAD = 72 + 4;
    /** The burst the tools used before {@link #packetsPerGsoWrite(int)}, and its upper bound. */
    private static final int MAX_BURST_PER_GSO_WRITE = 16;

    /**
     * How many full-sized packets of {@code pathMtu} one UDP GSO write carries (a GSO write is one
     * IP datagram before segmentation, at most 64 KiB), capped at 16: the path burst
     * ({@code EndpointConfig.pathBurstPackets}, MP-020) with which every burst of a queue pair is
     * exactly one segmented send. A burst one packet longer adds a lone datagram per burst, which
     * costs the kernel a whole send and receive of its own: at path MTU 4096 a burst of 16 packets of
     * 4,155 B (66,480 B) went as a GSO write of 15 and one datagram.
     *
     * @param pathMtu payload bytes per packet
     * @return packets per GSO write, 1..16 (15 at 4096, 7 at 8192)
     */
    public static int packetsPerGsoWrite(final int pathMtu) {
        return Math.max(1, Math.min(MAX_BURST_PER_GSO_WRITE, NettySink.MAX_GSO_BYTES / (pathMtu + MAX_PACKET_OVERHEAD)));
    }

    private InetAddress bindAddress = anyLocal();
    private int endpointPort = WireConstants.DEFAULT_UDP_PORT;
    private int[] entropyPorts;
    private int entropyPortCount = 4;
    private int entropyBasePort;
    private Transport transport = Transport.AUTO;
    private ThreadingMode threadingMode = ThreadingMode.DEDICATED;
    private IdleStrategy idleStrategy;
    private long deadlineSpinNs = 50_000;
    private EndpointConfig endpointConfig = new EndpointConfig();
    private RandomSource randomSource;
    private ByteBufAllocator allocator = PooledByteBufAllocator.DEFAULT;
    private int sinkChunkBytes = 256 * 1024;
    private int maxPacketsPerCycle = 1024;
    private int maxDatagramBytes = DEFAULT_MAX_DATAGRAM_BYTES;
    private int receiveBatch = 32;
    private int maxDatagramsPerRead = 256;
    private boolean gso = true;
    private int gsoMinSegments = DEFAULT_GSO_MIN_SEGMENTS;
    private boolean connectEntropySockets = true;
    private boolean preserveSendOrder = true;
    private int dataDscp = DEFAULT_DATA_DSCP;
    private int controlDscp = DEFAULT_CONTROL_DSCP;
    private GroChoice gro = GroChoice.TRANSPORT_DEFAULT;
    private boolean ownerThreadChecks = true;
    private ReceivePath receivePath = ReceivePath.AUTO;
    private int receiveBufferBytes = 4 * 1024 * 1024;
    private int sendBufferBytes = 1024 * 1024;
    private int writeBufferHighWaterMark = 4 * 1024 * 1024;
    private int commandQueueCapacity = 1024;
    private int transientPeers = PeerTable.DEFAULT_TRANSIENT_CAPACITY;
    private String threadName;
    private SharedDriver sharedDriver;
    private long callTimeoutNs = 30_000_000_000L;
    private InboundFaults inboundFaults;
    private InboundDropRule inboundDropRule;
    private ObservabilityConfig observability = new ObservabilityConfig();

    private static InetAddress anyLocal() {
        try {
            return InetAddress.getByAddress(new byte[4]);
        } catch (final UnknownHostException ex) {
            throw new IllegalStateException(ex);
        }
    }

    public InetAddress bindAddress() {
        return bindAddress;
    }

    /**
     * @param address local address every socket binds to (0.0.0.0 by default); its family (IPv4 or
     *     IPv6) is the family of every socket
     * @return this
     */
    public DeviceConfig bindAddress(final InetAddress address) {
        if (address == null) {
            throw new IllegalArgumentException("bindAddress must not be null");
        }
        this.bindAddress = address;
        return this;
    }

    public int endpointPort() {
        return endpointPort;
    }

    /**
     * @param port the endpoint port every packet arrives on [ENC-002]; 0 = ephemeral
     * @return this
     */
    public DeviceConfig endpointPort(final int port) {
        this.endpointPort = checkPort("endpointPort", port);
        return this;
    }

    /**
     * Binds {@code count} send sockets, at {@code basePort, basePort + 1, ...}, or each on an
     * ephemeral port when {@code basePort} is 0. Their local ports are the entropy values.
     *
     * @param count number of entropy ports, 1..255
     * @param basePort first port, or 0 for ephemeral ports
     * @return this
     */
    public DeviceConfig entropyPortRange(final int count, final int basePort) {
        if (count < 1 || count > 255) {
            throw new IllegalArgumentException("entropy port count must be in 1..255, got " + count);
        }
        checkPort("entropy basePort", basePort);
        if (basePort != 0 && basePort + count - 1 > 65535) {
            throw new IllegalArgumentException("entropy ports " + basePort + ".." + (basePort + count - 1)
                + " exceed 65535");
        }
        this.entropyPortCount = count;
        this.entropyBasePort = basePort;
        this.entropyPorts = null;
        return this;
    }

    /**
     * Binds one send socket per listed port (0 = ephemeral for that one).
     *
     * @param ports 1..255 ports, the non-zero ones distinct
     * @return this
     */
    public DeviceConfig entropyPorts(final int... ports) {
        if (ports == null || ports.length < 1 || ports.length > 255) {
            throw new IllegalArgumentException("entropy ports must list 1..255 ports");
        }
        for (int i = 0; i < ports.length; i++) {
            checkPort("entropyPorts[" + i + "]", ports[i]);
            for (int j = 0; j < i; j++) {
                if (ports[i] != 0 && ports[i] == ports[j]) {
                    throw new IllegalArgumentException("entropy port " + ports[i] + " is listed twice");
                }
            }
        }
        this.entropyPorts = ports.clone();
        this.entropyPortCount = ports.length;
        this.entropyBasePort = 0;
        return this;
    }

    /** @return the number of entropy ports */
    public int entropyPortCount() {
        return entropyPortCount;
    }

    /** @return the requested entropy ports (0 = ephemeral), one per send socket */
    public int[] requestedEntropyPorts() {
        if (entropyPorts != null) {
            return entropyPorts.clone();
        }
        final int[] ports = new int[entropyPortCount];
        for (int i = 0; i < ports.length; i++) {
            ports[i] = entropyBasePort == 0 ? 0 : entropyBasePort + i;
        }
        return ports;
    }

    public Transport transport() {
        return transport;
    }

    /**
     * @param transport EPOLL, NIO or AUTO (default)
     * @return this
     */
    public DeviceConfig transport(final Transport transport) {
        if (transport == null) {
            throw new IllegalArgumentException("transport must not be null");
        }
        this.transport = transport;
        return this;
    }

    public ThreadingMode threadingMode() {
        return threadingMode;
    }

    /**
     * @param mode DEDICATED (default), INVOKER or SHARED (then also set {@link #sharedDriver})
     * @return this
     */
    public DeviceConfig threadingMode(final ThreadingMode mode) {
        if (mode == null) {
            throw new IllegalArgumentException("threadingMode must not be null");
        }
        this.threadingMode = mode;
        return this;
    }

    /** @return the idle strategy of a DEDICATED driver thread (a new BackoffIdleStrategy if none was set) */
    public IdleStrategy idleStrategy() {
        return idleStrategy != null ? idleStrategy : new BackoffIdleStrategy(100, 10, 1_000, 100_000);
    }

    /**
     * @param strategy how a DEDICATED driver thread idles when a duty cycle found no work: any Agrona
     *     {@link IdleStrategy} (busy spin, backoff, sleeping...), or {@link EventLoopIdleStrategy} to
     *     block in the event loop until I/O, a command or the next deadline; one instance per device
     * @return this
     */
    public DeviceConfig idleStrategy(final IdleStrategy strategy) {
        if (strategy == null) {
            throw new IllegalArgumentException("idleStrategy must not be null");
        }
        this.idleStrategy = strategy;
        return this;
    }

    public long deadlineSpinNs() {
        return deadlineSpinNs;
    }

    /**
     * @param ns when the endpoint's next deadline is nearer than this, a DEDICATED driver yields
     *     instead of calling the idle strategy, so that no strategy sleeps past a timer
     *     (50 µs by default; strategies should not sleep much longer than this in one call)
     * @return this
     */
    public DeviceConfig deadlineSpinNs(final long ns) {
        if (ns < 0) {
            throw new IllegalArgumentException("deadlineSpinNs must be >= 0, got " + ns);
        }
        this.deadlineSpinNs = ns;
        return this;
    }

    public EndpointConfig endpointConfig() {
        return endpointConfig;
    }

    /**
     * @param config protocol parameters of the device's endpoint. The device sets its
     *     {@code datagramEcn} from the transport (true only where received ECN fields are read), so
     *     do not share one instance between devices of different transports
     * @return this
     */
    public DeviceConfig endpointConfig(final EndpointConfig config) {
        if (config == null) {
            throw new IllegalArgumentException("endpointConfig must not be null");
        }
        this.endpointConfig = config;
        return this;
    }

    /** @return the randomness of the endpoint (a new {@link SecureRandomSource} if none was set) */
    public RandomSource randomSource() {
        return randomSource != null ? randomSource : new SecureRandomSource();
    }

    /**
     * @param random source of R_Keys, QPNs and PSNs; seed it only in tests
     * @return this
     */
    public DeviceConfig randomSource(final RandomSource random) {
        if (random == null) {
            throw new IllegalArgumentException("randomSource must not be null");
        }
        this.randomSource = random;
        return this;
    }

    public ByteBufAllocator allocator() {
        return allocator;
    }

    /**
     * @param allocator where send chunks and receive buffers come from (pooled direct by default)
     * @return this
     */
    public DeviceConfig allocator(final ByteBufAllocator allocator) {
        if (allocator == null) {
            throw new IllegalArgumentException("allocator must not be null");
        }
        this.allocator = allocator;
        return this;
    }

    public int sinkChunkBytes() {
        return sinkChunkBytes;
    }

    /**
     * @param bytes size of each off-heap chunk the engine writes packets into (packets are sent
     *     straight from it); at least two largest datagrams, at most 16 MiB
     * @return this
     */
    public DeviceConfig sinkChunkBytes(final int bytes) {
        if (bytes < 2 * 1024 || bytes > 16 * 1024 * 1024) {
            throw new IllegalArgumentException("sinkChunkBytes must be in 2 KiB..16 MiB, got " + bytes);
        }
        this.sinkChunkBytes = bytes;
        return this;
    }

    public int maxPacketsPerCycle() {
        return maxPacketsPerCycle;
    }

    /**
     * @param packets the sink's capacity: most packets the endpoint may emit in one duty cycle
     *     before the driver flushes (then claims return NO_ROOM until the next cycle)
     * @return this
     */
    public DeviceConfig maxPacketsPerCycle(final int packets) {
        if (packets < 1 || packets > 65536) {
            throw new IllegalArgumentException("maxPacketsPerCycle must be in 1..65536, got " + packets);
        }
        this.maxPacketsPerCycle = packets;
        return this;
    }

    public int maxDatagramBytes() {
        return maxDatagramBytes;
    }

    /**
     * @param bytes largest UDP payload received (one recvmmsg slot); larger datagrams are truncated
     *     and then dropped as malformed
     * @return this
     */
    public DeviceConfig maxDatagramBytes(final int bytes) {
        if (bytes < 512 || bytes > 65536) {
            throw new IllegalArgumentException("maxDatagramBytes must be in 512..65536, got " + bytes);
        }
        this.maxDatagramBytes = bytes;
        return this;
    }

    public int receiveBatch() {
        return receiveBatch;
    }

    /**
     * @param datagrams datagrams read by one recvmmsg call (epoll); 1 disables recvmmsg
     * @return this
     */
    public DeviceConfig receiveBatch(final int datagrams) {
        if (datagrams < 1 || datagrams > 1024) {
            throw new IllegalArgumentException("receiveBatch must be in 1..1024, got " + datagrams);
        }
        this.receiveBatch = datagrams;
        return this;
    }

    public int maxDatagramsPerRead() {
        return maxDatagramsPerRead;
    }

    /**
     * @param datagrams most datagrams read per socket-readiness event, so one flood cannot keep a
     *     duty cycle from emitting acknowledgements
     * @return this
     */
    public DeviceConfig maxDatagramsPerRead(final int datagrams) {
        if (datagrams < 1 || datagrams > 65536) {
            throw new IllegalArgumentException("maxDatagramsPerRead must be in 1..65536, got " + datagrams);
        }
        this.maxDatagramsPerRead = datagrams;
        return this;
    }

    public boolean gso() {
        return gso;
    }

    /**
     * @param enabled send runs of equal-sized datagrams to one destination as one UDP GSO write when
     *     the platform supports it (epoll, Linux 4.18+); ignored elsewhere. On by default
     * @return this
     */
    public DeviceConfig gso(final boolean enabled) {
        this.gso = enabled;
        return this;
    }

    /** Default {@link #gsoMinSegments(int)}: a run of two goes as two datagrams. */
    public static final int DEFAULT_GSO_MIN_SEGMENTS = 3;

    public int gsoMinSegments() {
        return gsoMinSegments;
    }

    /**
     * @param segments shortest run of datagrams sent as one UDP GSO write (2..64, default
     *     {@value #DEFAULT_GSO_MIN_SEGMENTS}); shorter runs go as separate datagrams. A two-datagram
     *     GSO write (typically a reply and the acknowledgement behind it) costs more than two plain
     *     datagrams: on loopback a receiver without GRO must segment it before it can read the
     *     first one, which added about 1 µs to a 64-byte SEND round trip of 8–9 µs
     * @return this
     */
    public DeviceConfig gsoMinSegments(final int segments) {
        if (segments < 2 || segments > NettySink.MAX_GSO_SEGMENTS) {
            throw new IllegalArgumentException("gsoMinSegments must be in 2.." + NettySink.MAX_GSO_SEGMENTS
                + ", got " + segments);
        }
        this.gsoMinSegments = segments;
        return this;
    }

    public boolean connectEntropySockets() {
        return connectEntropySockets;
    }

    /**
     * @param enabled connect each entropy socket (epoll, bound to a specific address, not the
     *     wildcard) to the first peer it sends a lone datagram to, so that datagrams to that peer
     *     go without an address: the kernel keeps the route (about 0.35 µs less per send on
     *     loopback, 0.7 µs per request-reply round trip) and nothing is allocated for the address.
     *     Sends to other peers are unaffected, except that a connected peer whose port closes makes
     *     the kernel report its ICMP error on the socket's next send, whatever its destination (a
     *     lone datagram is then sent again; a datagram in a batch is lost and retransmitted). On
     *     by default
     * @return this
     */
    public DeviceConfig connectEntropySockets(final boolean enabled) {
        this.connectEntropySockets = enabled;
        return this;
    }

    public boolean preserveSendOrder() {
        return preserveSendOrder;
    }

    /**
     * @param enabled hand datagrams to the kernel in the order the engine produced them, flushing a
     *     socket whenever the next datagram leaves from another one (one send call per run of
     *     datagrams from one socket; with burst spraying and GSO, one per burst). Off, each socket is
     *     flushed once per duty cycle (fewest system calls), which groups a cycle's datagrams by
     *     socket: a QP spraying over several sockets then reorders itself by up to a cycle's worth
     *     of packets, beyond what the SACK bitmap covers. On by default
     * @return this
     */
    public DeviceConfig preserveSendOrder(final boolean enabled) {
        this.preserveSendOrder = enabled;
        return this;
    }

    public int dataDscp() {
        return dataDscp;
    }

    /**
     * @param dscp DiffServ code point (0..63) of every packet sent from an entropy socket: the data
     *     packets, and also the ACKs, NACKs and responses the endpoint sends on its paths
     *     [ENC-012]. Default 26 (AF31). The ECN field stays Not-ECT: the driver cannot read CE marks
     *     on receive, so it must not claim to react to them (ENC-015, ENC-016)
     * @return this
     */
    public DeviceConfig dataDscp(final int dscp) {
        this.dataDscp = checkDscp(dscp, "dataDscp");
        return this;
    }

    public int controlDscp() {
        return controlDscp;
    }

    /**
     * @param dscp DiffServ code point (0..63) of packets sent from the endpoint socket, i.e. the
     *     connection manager's [ENC-013]. Default 48 (CS6)
     * @return this
     */
    public DeviceConfig controlDscp(final int dscp) {
        this.controlDscp = checkDscp(dscp, "controlDscp");
        return this;
    }

    private static int checkDscp(final int dscp, final String name) {
        if (dscp < 0 || dscp > 63) {
            throw new IllegalArgumentException(name + " must be a 6-bit DSCP in 0..63, got " + dscp);
        }
        return dscp;
    }

    /** @return how the endpoint socket is read, as configured ({@link ReceivePath#AUTO} by default) */
    public ReceivePath receivePath() {
        return receivePath;
    }

    /**
     * @param path how the endpoint socket is read; {@link ReceivePath#POLLED} cannot be combined with
     *     {@link #gro(boolean) GRO} or with an {@link EventLoopIdleStrategy} (checked when the device opens)
     * @return this
     */
    public DeviceConfig receivePath(final ReceivePath path) {
        if (path == null) {
            throw new IllegalArgumentException("receivePath must not be null");
        }
        this.receivePath = path;
        return this;
    }

    /**
     * The receive path a device with this configuration uses.
     *
     * @param blockingIdle whether the device's driver thread idles by blocking in the event loop
     * @return POLLED or BATCHED
     * @throws IllegalArgumentException if POLLED was asked for together with GRO or blocking idle
     */
    ReceivePath resolveReceivePath(final boolean blockingIdle) {
        switch (receivePath) {
            case POLLED:
                if (gro == GroChoice.ON) {
                    throw new IllegalArgumentException("receivePath POLLED cannot use UDP GRO: GRO needs the BATCHED "
                        + "path (Netty's epoll channel)");
                }
                if (blockingIdle) {
                    throw new IllegalArgumentException("receivePath POLLED cannot wake a driver that blocks in the "
                        + "event loop (EventLoopIdleStrategy): use BATCHED or another idle strategy");
                }
                return ReceivePath.POLLED;
            case BATCHED:
                return ReceivePath.BATCHED;
            default:
                return gro == GroChoice.ON || blockingIdle ? ReceivePath.BATCHED : ReceivePath.POLLED;
        }
    }

    /**
     * @return whether UDP GRO was turned on with {@link #gro(boolean)}; when it was never set, the
     *     transport decides ({@link #groFor(Transport)})
     */
    public boolean gro() {
        return gro == GroChoice.ON;
    }

    /**
     * Whether a device on {@code transport} turns UDP GRO on for its endpoint socket: as set with
     * {@link #gro(boolean)}, else on for {@link Transport#NATIVE} (its polled reader takes coalesced
     * datagrams whole, so the kernel neither splits a GSO write for it nor queues one buffer per
     * datagram) and off for Netty's transports (where GRO needs the BATCHED receive path).
     *
     * @param transport the resolved transport
     * @return whether the endpoint socket asks for GRO
     */
    public boolean groFor(final Transport transport) {
        return gro == GroChoice.TRANSPORT_DEFAULT ? transport == Transport.NATIVE : gro == GroChoice.ON;
    }

    /**
     * @param enabled ask the kernel for UDP GRO on the endpoint socket (native and epoll): it may
     *     then coalesce datagrams, which the device splits again. On epoll this replaces recvmmsg
     *     (Netty splits coalesced datagrams only on its single-recvmsg path): each read takes one
     *     64 KiB buffer. Not set: on for the native transport, off for Netty's ({@link #groFor(Transport)})
     * @return this
     */
    public DeviceConfig gro(final boolean enabled) {
        this.gro = enabled ? GroChoice.ON : GroChoice.OFF;
        return this;
    }

    public boolean ownerThreadChecks() {
        return ownerThreadChecks;
    }

    /**
     * @param enabled whether the endpoint's queue pairs, protection domains and the endpoint itself
     *     refuse calls from any thread but the device's owning thread (IllegalStateException naming
     *     both threads), instead of corrupting the single-threaded engine silently. On by default; a
     *     reference comparison per call, so turn it off only to measure that
     * @return this
     */
    public DeviceConfig ownerThreadChecks(final boolean enabled) {
        this.ownerThreadChecks = enabled;
        return this;
    }

    public int receiveBufferBytes() {
        return receiveBufferBytes;
    }

    /**
     * @param bytes SO_RCVBUF of the endpoint socket (the kernel caps it at net.core.rmem_max)
     * @return this
     */
    public DeviceConfig receiveBufferBytes(final int bytes) {
        if (bytes < 4096) {
            throw new IllegalArgumentException("receiveBufferBytes must be >= 4096, got " + bytes);
        }
        this.receiveBufferBytes = bytes;
        return this;
    }

    public int sendBufferBytes() {
        return sendBufferBytes;
    }

    /**
     * @param bytes SO_SNDBUF of every socket (the kernel caps it at net.core.wmem_max)
     * @return this
     */
    public DeviceConfig sendBufferBytes(final int bytes) {
        if (bytes < 4096) {
            throw new IllegalArgumentException("sendBufferBytes must be >= 4096, got " + bytes);
        }
        this.sendBufferBytes = bytes;
        return this;
    }

    public int writeBufferHighWaterMark() {
        return writeBufferHighWaterMark;
    }

    /**
     * @param bytes queued-but-unsent bytes on one socket above which the sink refuses new packets
     *     until the socket drains (backpressure instead of unbounded queueing)
     * @return this
     */
    public DeviceConfig writeBufferHighWaterMark(final int bytes) {
        if (bytes < 64 * 1024) {
            throw new IllegalArgumentException("writeBufferHighWaterMark must be >= 64 KiB, got " + bytes);
        }
        this.writeBufferHighWaterMark = bytes;
        return this;
    }

    public int commandQueueCapacity() {
        return commandQueueCapacity;
    }

    /**
     * @param capacity commands that may wait for the owning thread (bounded, lock-free)
     * @return this
     */
    public DeviceConfig commandQueueCapacity(final int capacity) {
        if (capacity < 2 || capacity > (1 << 20)) {
            throw new IllegalArgumentException("commandQueueCapacity must be in 2..2^20, got " + capacity);
        }
        this.commandQueueCapacity = capacity;
        return this;
    }

    public int transientPeers() {
        return transientPeers;
    }

    /**
     * @param capacity transient peer ids for unknown senders (a power of two, 16..2^20)
     * @return this
     */
    public DeviceConfig transientPeers(final int capacity) {
        if (capacity < 16 || capacity > (1 << 20) || Integer.bitCount(capacity) != 1) {
            throw new IllegalArgumentException("transientPeers must be a power of two in 16..2^20, got " + capacity);
        }
        this.transientPeers = capacity;
        return this;
    }

    public SharedDriver sharedDriver() {
        return sharedDriver;
    }

    /**
     * @param driver the driver a {@link ThreadingMode#SHARED} device attaches to (its transport and
     *     idle strategy apply; this configuration's transport must be AUTO or the same)
     * @return this
     */
    public DeviceConfig sharedDriver(final SharedDriver driver) {
        this.sharedDriver = driver;
        return this;
    }

    public String threadName() {
        return threadName;
    }

    /**
     * @param name name of the DEDICATED driver thread (default metaroce-driver-N)
     * @return this
     */
    public DeviceConfig threadName(final String name) {
        this.threadName = name;
        return this;
    }

    public long callTimeoutNs() {
        return callTimeoutNs;
    }

    /**
     * @param ns longest {@link MetaRoceDevice#call} waits for the owning thread (30 s by default)
     * @return this
     */
    public DeviceConfig callTimeoutNs(final long ns) {
        if (ns <= 0) {
            throw new IllegalArgumentException("callTimeoutNs must be > 0, got " + ns);
        }
        this.callTimeoutNs = ns;
        return this;
    }

    /** Cross-field checks, run when a device is built. */
    void validate() {
        if (threadingMode == ThreadingMode.SHARED) {
            if (sharedDriver == null) {
                throw new IllegalArgumentException("threadingMode SHARED needs sharedDriver(...)");
            }
            if (transport != Transport.AUTO && transport.resolve() != sharedDriver.transport()) {
                throw new IllegalArgumentException("transport " + transport + " differs from the shared driver's "
                    + sharedDriver.transport());
            }
        }
        final int slot = gro == GroChoice.ON ? GRO_SLOT_BYTES : maxDatagramBytes;
        if (sinkChunkBytes < 2 * maxDatagramBytes) {
            throw new IllegalArgumentException("sinkChunkBytes (" + sinkChunkBytes
                + ") must hold at least two datagrams of maxDatagramBytes (" + maxDatagramBytes + ")");
        }
        if (gro != GroChoice.ON && (long) slot * receiveBatch > 64L * 1024 * 1024) {
            throw new IllegalArgumentException("receiveBatch x slot size exceeds 64 MiB");
        }
    }

    @Override
    public String toString() {
        return "DeviceConfig{bind=" + bindAddress.getHostAddress() + ", endpointPort=" + endpointPort
            + ", entropyPorts=" + Arrays.toString(requestedEntropyPorts()) + ", transport=" + transport
            + ", mode=" + threadingMode + ", gso=" + gso + (gso ? "(min " + gsoMinSegments + ")" : "") + ", gro=" + gro.label
            + ", receivePath=" + receivePath + ", maxDatagram=" + maxDatagramBytes
            + ", receiveBatch=" + receiveBatch + ", chunk=" + sinkChunkBytes + ", perCycle=" + maxPacketsPerCycle + '}';
    }

    private static int checkPort(final String name, final int port) {
        if (port < 0 || port > 65535) {
            throw new IllegalArgumentException(name + " must be in 0..65535, got " + port);
        }
        return port;
    }

    /** @return the fault profile applied to received datagrams, or null (none: the default) */
    public InboundFaults inboundFaults() {
        return inboundFaults;
    }

    /**
     * Injects seeded loss and reordering into what the endpoint socket receives (tests and
     * experiments; see {@link InboundFaults}).
     *
     * @param faults the profile, or null for none
     * @return this
     */
    public DeviceConfig inboundFaults(final InboundFaults faults) {
        this.inboundFaults = faults;
        return this;
    }

    /** @return the rule that picks received datagrams to drop, or null (none: the default) */
    public InboundDropRule inboundDropRule() {
        return inboundDropRule;
    }

    /**
     * Drops the received datagrams {@code rule} picks (tests that need one particular packet lost;
     * see {@link InboundDropRule}).
     *
     * @param rule the rule, or null for none
     * @return this
     */
    public DeviceConfig inboundDropRule(final InboundDropRule rule) {
        this.inboundDropRule = rule;
        return this;
    }

    /** @return counters-file and capture settings (see {@link ObservabilityConfig}) */
    public ObservabilityConfig observability() {
        return observability;
    }

    /**
     * @param config counters-file and capture settings (by default: a counters file under
     *     {@link CounterDirectory#base()}, no capture)
     * @return this
     */
    public DeviceConfig observability(final ObservabilityConfig config) {
        if (config == null) {
            throw new IllegalArgumentException("observability config must not be null");
        }
        this.observability = config;
        return this;
    }

    /** UDP GRO as configured: never set (the transport decides), or set on or off. */
    private enum GroChoice {
        TRANSPORT_DEFAULT("transport default"), ON("true"), OFF("false");

        private final String label;

        GroChoice(final String label) {
            this.label = label;
        }
    }
}
