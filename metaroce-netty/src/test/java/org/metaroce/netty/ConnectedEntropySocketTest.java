// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.util.concurrent.TimeUnit;

import io.netty.channel.epoll.EpollDatagramChannel;
import org.junit.jupiter.api.Test;
import org.metaroce.core.verbs.PostStatus;
import org.metaroce.core.verbs.RecvRequest;
import org.metaroce.core.verbs.SendFlags;
import org.metaroce.core.verbs.SendRequest;
import org.metaroce.core.verbs.WcStatus;
import org.metaroce.core.verbs.WrOpcode;

/**
 * Entropy sockets connect to the first peer they send a lone datagram to (epoll, bound to a
 * specific address): datagrams to that peer then go without an address. A device with several
 * peers keeps sending to the others through the same sockets, and a connected peer that dies (its
 * port answers with ICMP "port unreachable", reported on the connected sockets) disturbs neither
 * the other peers' transfers nor segmentation offload.
 */
class ConnectedEntropySocketTest {
    @Test
    void aDeadConnectedPeerDoesNotDisturbTransfersToAnother() throws Exception {
        EndToEndTest.assumeTransport(Transport.EPOLL);
        assumeTrue(EpollDatagramChannel.isSegmentedDatagramPacketSupported(), "no UDP GSO on this kernel");
        // Bursts of 16 packets per path, so that the WRITE to B leaves in GSO runs.
        try (MetaRoceDevice a = new MetaRoceDevice(DevicePair.config(Transport.EPOLL, ThreadingMode.INVOKER, 2, 1)
                 .endpointConfig(new org.metaroce.core.engine.EndpointConfig().minRtoNs(DevicePair.MIN_RTO_NS)
                     .pathBurstPackets(16)));
             MetaRoceDevice b = new MetaRoceDevice(DevicePair.config(Transport.EPOLL, ThreadingMode.INVOKER, 2, 2))) {
            final MetaRoceDevice c = new MetaRoceDevice(DevicePair.config(Transport.EPOLL, ThreadingMode.INVOKER, 2, 3));
            try {
                run(a, b, c);
            } finally {
                c.close(); // idempotent
            }
        }
    }

    private static void run(final MetaRoceDevice a, final MetaRoceDevice b, final MetaRoceDevice c) throws Exception {
        {
            final DevicePair.Node toC = DevicePair.node(a);
            final DevicePair.Node toB = DevicePair.node(a);
            final DevicePair.Node nodeB = DevicePair.node(b);
            final DevicePair.Node nodeC = DevicePair.node(c);
            DevicePair.connect(toC, nodeC, 4096);
            DevicePair.connect(toB, nodeB, 4096);
            final MetaRoceDevice[] all = {a, b, c};

            // 1. SENDs to C first, one at a time (lone datagrams): A's entropy sockets connect to C.
            for (int i = 0; i < 4; i++) {
                assertThat(nodeC.qp.postRecv(new RecvRequest(1).wrId(i).addSge(nodeC.address(64L * i), 64,
                    nodeC.mr.lkey()))).isEqualTo(PostStatus.OK);
                assertThat(toC.qp.postSend(new SendRequest(1).wrId(i).opcode(WrOpcode.SEND)
                    .sendFlags(SendFlags.SIGNALED).addSge(toC.address(0), 64, toC.mr.lkey()))).isEqualTo(PostStatus.OK);
                final int sent = i + 1;
                assertThat(pump(all, () -> {
                    toC.drain();
                    nodeC.drain();
                    return toC.sendCompletions.size() == sent && nodeC.recvCompletions.size() == sent;
                })).as("SEND " + i + " to C").isTrue();
            }
            assertThat(a.counters().get(DriverCounter.CONNECTED_SOCKETS)).as("entropy sockets connected to C")
                .isPositive();

            // 2. C dies with a SEND of A's still unacknowledged: its retransmissions meet a closed port.
            c.close();
            assertThat(toC.qp.postSend(new SendRequest(1).wrId(9).opcode(WrOpcode.SEND).sendFlags(SendFlags.SIGNALED)
                .addSge(toC.address(0), 64, toC.mr.lkey()))).isEqualTo(PostStatus.OK);

            // 3. Meanwhile 2 MiB to B (GSO runs), through the same sockets.
            final int length = 2 << 20;
            EndToEndTest.fill(toB.mr.buffer(), 0, length, 5);
            assertThat(toB.qp.postSend(new SendRequest(1).wrId(1).opcode(WrOpcode.RDMA_WRITE).sendFlags(SendFlags.SIGNALED)
                .addSge(toB.address(0), length, toB.mr.lkey()).remoteAddr(nodeB.address(4096)).rkey(nodeB.mr.rkey())))
                .isEqualTo(PostStatus.OK);
            final MetaRoceDevice[] live = {a, b};
            assertThat(pump(live, () -> {
                toB.drain();
                return !toB.sendCompletions.isEmpty();
            })).as("WRITE to B; A: " + a.counters()).isTrue();
            assertThat(toB.sendCompletions.get(0).status()).isEqualTo(WcStatus.SUCCESS);
            EndToEndTest.assertSameBytes(toB.mr.buffer(), 0, nodeB.mr.buffer(), 4096, length);
            // Keep retransmitting to the dead C for a while: every ICMP error lands on A's sockets.
            final long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(300);
            while (System.nanoTime() - until < 0) {
                a.doWork();
                b.doWork();
            }
            System.out.println("A after C died: " + a.counters() + " " + a.endpoint().counters());
            assertThat(a.sinkForTest().gsoEnabled()).as("GSO still on after the dead peer's ICMP errors").isTrue();
            assertThat(a.counters().get(DriverCounter.GSO_WRITES)).isPositive();
            assertThat(a.counters().get(DriverCounter.ENGINE_ERRORS)).isZero();
        }
    }

    @Test
    void connectingCanBeTurnedOff() {
        EndToEndTest.assumeTransport(Transport.EPOLL);
        try (DevicePair pair = new DevicePair(Transport.EPOLL, ThreadingMode.INVOKER, 2,
            c -> c.connectEntropySockets(false), c -> { }).connect(1024)) {
            assertThat(pair.b.qp.postRecv(new RecvRequest(1).wrId(1).addSge(pair.b.address(0), 64, pair.b.mr.lkey())))
                .isEqualTo(PostStatus.OK);
            assertThat(pair.a.qp.postSend(new SendRequest(1).wrId(1).opcode(WrOpcode.SEND).sendFlags(SendFlags.SIGNALED)
                .addSge(pair.a.address(0), 64, pair.a.mr.lkey()))).isEqualTo(PostStatus.OK);
            assertThat(pair.awaitCompletions(1, 1)).isTrue();
            assertThat(pair.a.device.counters().get(DriverCounter.DIRECT_SENDS)).isPositive();
            assertThat(pair.a.device.counters().get(DriverCounter.CONNECTED_SOCKETS)).isZero();
            assertThat(pair.b.device.counters().get(DriverCounter.CONNECTED_SOCKETS)).as("B's default").isPositive();
        }
    }

    private static boolean pump(final MetaRoceDevice[] devices, final java.util.function.BooleanSupplier done) {
        final long deadline = System.nanoTime() + DevicePair.TIMEOUT_NS;
        while (System.nanoTime() - deadline < 0) {
            for (final MetaRoceDevice d : devices) {
                d.doWork();
            }
            if (done.getAsBoolean()) {
                return true;
            }
        }
        return false;
    }
}
