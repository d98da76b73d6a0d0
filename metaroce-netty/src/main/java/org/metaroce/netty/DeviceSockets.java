// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty;

import java.net.InetSocketAddress;

import io.netty.channel.ManualIoEventLoop;

/**
 * A device's sockets and the sink that writes to them: one endpoint socket, where everything for
 * the device arrives [ENC-002], and one send socket per entropy value, whose local port is that
 * value [ENC-006]. It opens them on the owning thread for the transport in use (Netty channels in
 * the device's event loop, or native sockets the owning thread reads and writes itself) and closes
 * them. Apart from the device because socket setup is the one place that knows the transports'
 * differences; the duty cycle only sees a sink and, on the POLLED path, a socket to read.
 *
 * <p>Owning thread only, except the accessors documented otherwise. Sockets are set one by one as
 * they open, so that {@link #close()} after a failed {@link #open} closes those that did.
 */
final class DeviceSockets {
    /** The ECN codepoint ECT(0) (RFC 3168), in the low two bits of IP_TOS / IPV6_TCLASS. */
    private static final int ECT_0 = 2;

    private final DeviceConfig config;
    private final Transport transport;
    private final ReceivePath receivePath;
    private final PeerTable peers;
    private final DriverCounters counters;
    private final DatagramReceiver receiver;

    private volatile boolean gsoActive;
    private volatile boolean groActive;
    private UdpSocket endpointSocket;
    /** The endpoint socket when the owning thread reads it itself (POLLED receive path), else null. */
    private PolledUdpSocket polledSocket;
    private UdpSocket[] sendSockets = new UdpSocket[0];
    private int[] entropyPorts = new int[0];
    private InetSocketAddress localAddress;
    private volatile NettySink sink;

    /**
     * @param config the device's configuration (addresses, ports, buffer sizes, DSCP, GSO)
     * @param transport the resolved transport
     * @param receivePath how the endpoint socket is read
     * @param peers the peer table the sink resolves destinations in
     * @param counters where the sink and the transports count
     * @param receiver where the endpoint socket delivers datagrams
     */
    DeviceSockets(final DeviceConfig config, final Transport transport, final ReceivePath receivePath,
                  final PeerTable peers, final DriverCounters counters, final DatagramReceiver receiver) {
        this.config = config;
        this.transport = transport;
        this.receivePath = receivePath;
        this.peers = peers;
        this.counters = counters;
        this.receiver = receiver;
    }

    /**
     * Owning thread: binds every socket and builds the sink.
     *
     * @param eventLoop the device's event loop (Netty transports register their channels with it)
     * @throws Exception if a socket cannot be opened (those already open stay for {@link #close()})
     */
    void open(final ManualIoEventLoop eventLoop) throws Exception {
        // Initialises the I/O handler on the owning thread before anything registers with it.
        eventLoop.runNow();
        if (transport == Transport.NATIVE) {
            openNative();
        } else {
            openNetty(eventLoop);
        }
    }

    private void openNetty(final ManualIoEventLoop eventLoop) throws Exception {
        // Writes that fail later in Netty's pipeline are the sink's to count (and may turn GSO off).
        final NettyUdpTransport netty = new NettyUdpTransport(eventLoop, transport, config, counters, failure -> {
            final NettySink current = sink;
            if (current != null) {
                current.sendFailed(failure);
            } else {
                counters.sendFailed(failure);
            }
        });
        final InetSocketAddress endpointBind = new InetSocketAddress(config.bindAddress(), config.endpointPort());
        // IP_TOS (IPV6_TCLASS on IPv6 sockets): DSCP in the upper six bits, ECN Not-ECT.
        final SocketOptions endpointOptions = new SocketOptions(endpointBind, config.receiveBufferBytes(),
            config.sendBufferBytes(), config.controlDscp() << 2);
        if (receivePath == ReceivePath.POLLED) {
            polledSocket = new JdkUdpTransport(config.maxDatagramBytes()).open(endpointOptions, receiver);
            endpointSocket = polledSocket;
        } else {
            endpointSocket = netty.open(endpointOptions, receiver);
        }
        localAddress = endpointSocket.localAddress();

        // Send sockets: never read (everything arrives on the endpoint port [ENC-002]).
        final int[] requested = config.requestedEntropyPorts();
        final int[] ports = new int[requested.length];
        sendSockets = new UdpSocket[requested.length];
        // GSO when asked for and every send socket can (there is at least one).
        boolean gso = config.gso();
        for (int i = 0; i < requested.length; i++) {
            final UdpSocket socket = netty.open(new SocketOptions(new InetSocketAddress(config.bindAddress(),
                requested[i]), 4096, config.sendBufferBytes(), config.dataDscp() << 2), null);
            sendSockets[i] = socket;
            ports[i] = socket.localAddress().getPort();
            gso &= socket.capabilities().gso();
        }
        entropyPorts = ports;
        sink = new NettySink(netty, config.sinkChunkBytes(), config.maxPacketsPerCycle(), peers, counters, sendSockets,
            entropyPorts, endpointSocket, gso, config.gsoMinSegments(), config.connectEntropySockets(),
            config.preserveSendOrder());
        gsoActive = gso;
        groActive = endpointSocket.capabilities().gro();
    }

    /**
     * The native transport: every socket a native one read or written by the owning thread, the
     * endpoint socket polled; packets leave ECT(0) [ENC-015] with the data or control DSCP
     * [ENC-012, ENC-013].
     */
    private void openNative() throws java.io.IOException {
        final UdpTransport nat = NativeTransportLoader.transport(config.maxDatagramBytes(), config.receiveBatch(),
            config.groFor(Transport.NATIVE), counters);
        final InetSocketAddress endpointBind = new InetSocketAddress(config.bindAddress(), config.endpointPort());
        polledSocket = (PolledUdpSocket) nat.open(new SocketOptions(endpointBind, config.receiveBufferBytes(),
            config.sendBufferBytes(), config.controlDscp() << 2 | ECT_0), receiver);
        endpointSocket = polledSocket;
        localAddress = endpointSocket.localAddress();
        final int[] requested = config.requestedEntropyPorts();
        final int[] ports = new int[requested.length];
        sendSockets = new UdpSocket[requested.length];
        for (int i = 0; i < requested.length; i++) {
            final UdpSocket socket = nat.open(new SocketOptions(new InetSocketAddress(config.bindAddress(),
                requested[i]), 4096, config.sendBufferBytes(), config.dataDscp() << 2 | ECT_0), null);
            sendSockets[i] = socket;
            ports[i] = socket.localAddress().getPort();
        }
        entropyPorts = ports;
        sink = new NettySink(nat, config.sinkChunkBytes(), config.maxPacketsPerCycle(), peers, counters, sendSockets,
            entropyPorts, endpointSocket, config.gso(), config.gsoMinSegments(), config.connectEntropySockets(),
            config.preserveSendOrder());
        gsoActive = config.gso();
        groActive = endpointSocket.capabilities().gro();
    }

    /** @return the sink, null until {@link #open} built it; any thread */
    NettySink sink() {
        return sink;
    }

    /** @return the endpoint socket when the owning thread reads it (POLLED path), else null */
    PolledUdpSocket polledSocket() {
        return polledSocket;
    }

    /** @return the bound endpoint socket address, null until open */
    InetSocketAddress localAddress() {
        return localAddress;
    }

    /** @return the entropy values (the send sockets' local ports), not a copy: do not change it */
    int[] entropyPorts() {
        return entropyPorts;
    }

    /** @return whether UDP GSO writes are in use; any thread */
    boolean gsoActive() {
        return gsoActive;
    }

    /** @return whether the endpoint socket reads with UDP GRO (coalesced datagrams); any thread */
    boolean groActive() {
        return groActive;
    }

    /** Owning thread: closes the endpoint socket, then every send socket (those that opened). */
    void close() {
        if (endpointSocket != null) {
            endpointSocket.close();
        }
        for (final UdpSocket socket : sendSockets) {
            if (socket != null) {
                socket.close();
            }
        }
    }
}
