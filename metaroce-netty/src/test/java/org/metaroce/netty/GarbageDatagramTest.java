// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.util.Arrays;
import java.util.Random;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.metaroce.core.engine.EndpointCounter;
import org.metaroce.core.verbs.PostStatus;
import org.metaroce.core.verbs.RecvRequest;
import org.metaroce.core.verbs.SendFlags;
import org.metaroce.core.verbs.SendRequest;
import org.metaroce.core.verbs.WcStatus;
import org.metaroce.core.verbs.WrOpcode;

/**
 * Datagrams of garbage sent with a plain {@link DatagramSocket} to a device's endpoint port are
 * counted as malformed and dropped; nothing crashes and the device keeps working.
 */
class GarbageDatagramTest {
    private DevicePair pair;

    @AfterEach
    void closeDevices() {
        if (pair != null) {
            pair.close();
        }
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("org.metaroce.netty.EndToEndTest#combinations")
    void garbageIsCountedAsMalformedAndTheDeviceKeepsWorking(final Transport transport, final ThreadingMode mode)
        throws Exception {
        EndToEndTest.assumeTransport(transport);
        pair = new DevicePair(transport, mode, 2).connect(1024);
        final MetaRoceDevice b = pair.b.device;
        final Random random = new Random(7);
        final byte[] noise = new byte[200];
        random.nextBytes(noise);
        final byte[] big = new byte[6000];
        Arrays.fill(big, (byte) 0xFF);
        final byte[][] datagrams = {noise, {1}, new byte[0], big, Arrays.copyOf(noise, 40)};
        try (DatagramSocket socket = new DatagramSocket(0, InetAddress.getLoopbackAddress())) {
            for (final byte[] d : datagrams) {
                socket.send(new DatagramPacket(d, d.length, b.localAddress()));
            }
        }
        assertThat(pair.pump(() -> b.endpoint().counters().get(EndpointCounter.MALFORMED) >= datagrams.length))
            .as("malformed drops counted on " + pair + ": " + b.endpoint().counters() + " " + b.counters())
            .isTrue();
        assertThat(b.endpoint().counters().get(EndpointCounter.MALFORMED)).isEqualTo(datagrams.length);
        assertThat(b.endpoint().wireCounters().droppedTotal()).isEqualTo(datagrams.length);
        assertThat(b.counters().get(DriverCounter.DATAGRAMS_RECEIVED)).isEqualTo(datagrams.length);
        assertThat(b.counters().get(DriverCounter.ENGINE_ERRORS)).isZero();
        // The garbage sender got a transient id; the pinned peer is still A alone.
        final int[] peerCounts = b.call(ep -> new int[] {b.peers().pinnedCount(), b.peers().transientCount()});
        assertThat(peerCounts[0]).isEqualTo(1);
        assertThat(peerCounts[1]).isEqualTo(1);

        // Still alive: a SEND goes through.
        EndToEndTest.fill(pair.a.mr.buffer(), 0, 3000, 1);
        assertThat((int) b.call(ep -> pair.b.qp.postRecv(new RecvRequest(1).wrId(5)
            .addSge(pair.b.address(0), 4096, pair.b.mr.lkey())))).isEqualTo(PostStatus.OK);
        assertThat((int) pair.a.device.call(ep -> pair.a.qp.postSend(new SendRequest(1).wrId(6).opcode(WrOpcode.SEND)
            .sendFlags(SendFlags.SIGNALED).addSge(pair.a.address(0), 3000, pair.a.mr.lkey())))).isEqualTo(PostStatus.OK);
        assertThat(pair.awaitCompletions(1, 1)).isTrue();
        assertThat(pair.b.recvCompletions.get(0).status()).isEqualTo(WcStatus.SUCCESS);
        EndToEndTest.assertSameBytes(pair.a.mr.buffer(), 0, pair.b.mr.buffer(), 0, 3000);
    }
}
