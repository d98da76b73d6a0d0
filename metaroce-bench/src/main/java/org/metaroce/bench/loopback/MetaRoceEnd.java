// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.bench.loopback;

import java.net.InetAddress;

import org.agrona.BufferUtil;
import org.metaroce.core.engine.EndpointConfig;
import org.metaroce.core.engine.QueuePair;
import org.metaroce.core.engine.QueuePairCapabilities;
import org.metaroce.core.verbs.AccessFlags;
import org.metaroce.core.verbs.CompletionQueue;
import org.metaroce.core.verbs.MemoryRegion;
import org.metaroce.core.verbs.ProtectionDomain;
import org.metaroce.core.verbs.QpAttributes;
import org.metaroce.core.verbs.QpState;
import org.metaroce.core.wire.ConnectHeader;
import org.metaroce.netty.DeviceConfig;
import org.metaroce.netty.MetaRoceDevice;
import org.metaroce.netty.ThreadingMode;
import org.metaroce.netty.Transport;

/**
 * One end of a MetaRoCE loopback contender: an INVOKER-mode device on 127.0.0.1 built (and later
 * driven) by the calling thread, with one queue pair, its completion queues and a registered
 * region. The device is configured as {@code metaroce write_bw --loopback} configures it: the
 * transport the system property {@code metaroce.bench.transport} names, 4 entropy ports, GSO on, bursts of one GSO write per
 * path (15 packets at path MTU 4096), GRO as the transport's default, a 1 ms retransmission floor.
 */
public final class MetaRoceEnd {
    /** Path MTU of the ping-pong contenders and the bandwidth default (the tools' loopback default). */
    public static final int PATH_MTU = 4096;
    /** Entropy ports (paths) per device. */
    public static final int PATHS = 4;

    final MetaRoceDevice device;
    final ProtectionDomain pd;
    final CompletionQueue sendCq;
    final CompletionQueue recvCq;
    final QueuePair qp;
    final MemoryRegion mr;
    final int pathMtu;

    /**
     * @param regionBytes bytes of the registered region
     * @param handler optional raw-datagram hook installed in front of the (absent) connection
     *     manager; null for none
     */
    /** System property naming the transport of the devices (native, epoll, nio, auto); set by the benchmarks. */
    static final String TRANSPORT_PROPERTY = "metaroce.bench.transport";
    /** System property: "off" builds the devices without a counters file (to measure what publishing costs). */
    static final String COUNTERS_PROPERTY = "metaroce.bench.counters";
    /**
     * System property: "false" connects the queue pairs without ATTACHED_ACK, as a v1.0.14 peer
     * would (to measure what attaching saves in the same jar) [REL-071].
     */
    static final String ATTACHED_ACK_PROPERTY = "metaroce.bench.attachedAck";

    MetaRoceEnd(final int regionBytes, final RawDatagrams.Factory handler) {
        this(regionBytes, handler, Link.DEFAULT);
    }

    /**
     * @param regionBytes bytes of the registered region
     * @param handler optional raw-datagram hook (see above); null for none
     * @param link path MTU and GRO
     */
    MetaRoceEnd(final int regionBytes, final RawDatagrams.Factory handler, final Link link) {
        this.pathMtu = link.pathMtu();
        final DeviceConfig config = new DeviceConfig().bindAddress(InetAddress.getLoopbackAddress()).endpointPort(0)
            .entropyPortRange(PATHS, 0).transport(Transport.parse(System.getProperty(TRANSPORT_PROPERTY, "auto")))
            .threadingMode(ThreadingMode.INVOKER)
            .gso(true).threadName("bench-" + Thread.currentThread().getName())
            .endpointConfig(new EndpointConfig().minRtoNs(1_000_000).pathBurstPackets(DeviceConfig.packetsPerGsoWrite(link.pathMtu()))
                .attachedAck(!"false".equals(System.getProperty(ATTACHED_ACK_PROPERTY, "true"))))
            .observability(new org.metaroce.netty.ObservabilityConfig()
                .counters(!"off".equals(System.getProperty(COUNTERS_PROPERTY, "on"))));
        if (link.gro() != null) {
            config.gro(link.gro());
        }
        device = new MetaRoceDevice(config);
        pd = device.endpoint().allocateProtectionDomain();
        sendCq = device.endpoint().createCompletionQueue(4096);
        recvCq = device.endpoint().createCompletionQueue(4096);
        qp = device.endpoint().createQueuePair(pd, sendCq, recvCq, new QueuePairCapabilities(1024, 1024, 1, 1, 16));
        mr = pd.registerMemory(BufferUtil.allocateDirectAligned(Math.max(4096, regionBytes), 4096), AccessFlags.ALL);
        if (handler != null) {
            device.endpoint().connectionManager(handler.create(device));
        }
    }

    /** @return the QPN (any thread: fixed at creation) */
    int qpn() {
        return qp.qpn();
    }

    /**
     * Owning thread: INIT, RTR, RTS towards {@code remote}.
     *
     * @param remote the other end (its address and QPN are fixed at creation)
     * @param rqPsn the remote's first PSN
     * @param sqPsn this end's first PSN
     */
    void connect(final MetaRoceEnd remote, final int rqPsn, final int sqPsn) {
        final int peer = device.peerId(remote.device.localAddress());
        qp.modify(QpState.INIT, new QpAttributes().port(1).accessFlags(AccessFlags.ALL));
        // ATTACHED_ACK as two reference ends negotiate it by default (both offer it) [REL-071].
        final boolean attach = device.endpoint().config().attachedAck() && remote.device.endpoint().config().attachedAck();
        qp.modify(QpState.RTR, new QpAttributes().pathMtu(pathMtu).destQpn(remote.qpn()).rqPsn(rqPsn)
            .maxDestRdAtomic(16).minRnrTimerNs(20_000).paths(device.entropyPorts()).remotePeer(peer)
            .capabilities(attach ? ConnectHeader.CAP_ATTACHED_ACK : 0));
        // The connection manager's defaults, as the tools run (QpParams): 1 ms, 7 retries, RNR forever.
        qp.modify(QpState.RTS, new QpAttributes().sqPsn(sqPsn).timeoutNs(1_000_000).retryCount(7)
            .rnrRetry(QpAttributes.RNR_RETRY_INFINITE).maxRdAtomic(16));
    }

    /** @return the peer id under which this end's device knows {@code remote} (owning thread) */
    int peerIdOf(final MetaRoceEnd remote) {
        return device.peerId(remote.device.localAddress());
    }

    /** Closes the device (owning thread). */
    void close() {
        device.close();
    }

    /** Connects two ends: each side's owning thread runs its half through {@link MetaRoceDevice#call}. */
    static void connect(final MetaRoceEnd a, final MetaRoceEnd b) {
        final int psnA = 0x12345;
        final int psnB = 0xABCDE;
        a.device.call(ep -> {
            a.connect(b, psnB, psnA);
            return null;
        });
        b.device.call(ep -> {
            b.connect(a, psnA, psnB);
            return null;
        });
    }
}
