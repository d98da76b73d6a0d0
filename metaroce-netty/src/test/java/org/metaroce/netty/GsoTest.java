// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.netty.channel.epoll.EpollDatagramChannel;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.metaroce.core.verbs.PostStatus;
import org.metaroce.core.verbs.RecvRequest;
import org.metaroce.core.verbs.WorkCompletion;
import org.metaroce.core.verbs.SendFlags;
import org.metaroce.core.verbs.SendRequest;
import org.metaroce.core.verbs.WcStatus;
import org.metaroce.core.verbs.WrOpcode;

/**
 * UDP GSO (and GRO) on the epoll transport: a single-path QP writes runs of equal-sized packets
 * back to back in the sink, which go out as segmented writes; the receiver gets every datagram
 * (split again by the kernel, or by Netty when GRO coalesced them).
 */
class GsoTest {
    private DevicePair pair;

    @AfterEach
    void closeDevices() {
        if (pair != null) {
            pair.close();
        }
    }

    @ParameterizedTest(name = "gso={0} gro={1} {2}")
    @CsvSource({"true,false,INVOKER", "true,true,INVOKER", "true,true,DEDICATED", "false,false,INVOKER"})
    void singlePathWriteGoesOutInSegmentedWrites(final boolean gso, final boolean gro, final ThreadingMode mode) {
        EndToEndTest.assumeTransport(Transport.EPOLL);
        assumeTrue(!gso || EpollDatagramChannel.isSegmentedDatagramPacketSupported(),
            "UDP GSO (UDP_SEGMENT with sendmmsg) is not supported on this kernel");
        pair = new DevicePair(Transport.EPOLL, mode, 1, c -> c.gso(gso), c -> c.gro(gro)).connect(4096);
        assertThat(pair.a.device.gsoActive()).isEqualTo(gso);

        final int length = 1 << 20;
        EndToEndTest.fill(pair.a.mr.buffer(), 0, length, 11);
        assertThat((int) pair.a.device.call(ep -> pair.a.qp.postSend(new SendRequest(1).wrId(1).opcode(WrOpcode.RDMA_WRITE)
            .sendFlags(SendFlags.SIGNALED).addSge(pair.a.address(0), length, pair.a.mr.lkey())
            .remoteAddr(pair.b.address(4096)).rkey(pair.b.mr.rkey())))).isEqualTo(PostStatus.OK);
        final boolean completed = pair.awaitCompletions(1, 0);
        System.out.println("GSO " + gso + " GRO " + gro + " " + mode + ": sender " + pair.a.device.counters()
            + " " + pair.a.device.endpoint().counters() + ", receiver " + pair.b.device.counters() + " "
            + pair.b.device.endpoint().counters() + " " + pair.b.device.endpoint().wireCounters());
        assertThat(completed).as("completion").isTrue();
        assertThat(pair.a.sendCompletions.get(0).status()).isEqualTo(WcStatus.SUCCESS);
        pair.b.device.call(ep -> {
            EndToEndTest.assertSameBytes(pair.a.mr.buffer(), 0, pair.b.mr.buffer(), 4096, length);
            return null;
        });

        final DriverCounters sent = pair.a.device.counters();
        if (gso) {
            assertThat(sent.get(DriverCounter.GSO_WRITES)).as("segmented writes").isPositive();
            assertThat(sent.get(DriverCounter.GSO_SEGMENTS)).isGreaterThan(sent.get(DriverCounter.GSO_WRITES));
        } else {
            assertThat(sent.get(DriverCounter.GSO_WRITES)).isZero();
        }
        assertThat(sent.get(DriverCounter.SEND_ERRORS)).isZero();
        // Every datagram sent was received as a datagram of its own (GRO coalescing undone).
        assertThat(pair.b.device.counters().get(DriverCounter.DATAGRAMS_RECEIVED))
            .isGreaterThanOrEqualTo(256);
    }

    /**
     * Request-reply: each side posts its reply on the request's completion within the duty cycle,
     * so the reply and the acknowledgement of the request leave together, a run of two datagrams.
     * Below {@code gsoMinSegments} (3 by default) such a run goes as two datagrams, sent straight to
     * the socket; with a minimum of 2 it is one GSO write.
     */
    @ParameterizedTest(name = "gsoMinSegments={0}")
    @CsvSource({"3", "2"})
    void shortRunsGoAsSeparateDatagramsStraightToTheSocket(final int gsoMinSegments) {
        EndToEndTest.assumeTransport(Transport.EPOLL);
        assumeTrue(EpollDatagramChannel.isSegmentedDatagramPacketSupported(),
            "UDP GSO (UDP_SEGMENT with sendmmsg) is not supported on this kernel");
        pair = new DevicePair(Transport.EPOLL, ThreadingMode.INVOKER, 1, c -> c.gsoMinSegments(gsoMinSegments),
            c -> c.gsoMinSegments(gsoMinSegments)).connect(4096);
        final int rounds = 50;
        final DevicePair.Node[] nodes = {pair.a, pair.b};
        for (final DevicePair.Node node : nodes) {
            for (int i = 0; i < rounds; i++) {
                assertThat(node.qp.postRecv(new RecvRequest(1).wrId(i).addSge(node.address(64L * i), 64,
                    node.mr.lkey()))).isEqualTo(PostStatus.OK);
            }
        }
        final WorkCompletion[] wcs = {new WorkCompletion()};
        final int[] replies = new int[2];
        assertThat(postSend(pair.a, 0)).isEqualTo(PostStatus.OK);
        final long deadline = System.nanoTime() + DevicePair.TIMEOUT_NS;
        while (replies[0] < rounds && System.nanoTime() - deadline < 0) {
            for (int side = 0; side < 2; side++) {
                final int me = side;
                final DevicePair.Node node = nodes[me];
                node.device.doWork(() -> {
                    int n = 0;
                    while (node.recvCq.poll(wcs, 1) > 0) {
                        assertThat(wcs[0].status()).isEqualTo(WcStatus.SUCCESS);
                        replies[me]++;
                        n++;
                        if (me == 1 || replies[0] < rounds) {
                            assertThat(postSend(node, replies[me])).isEqualTo(PostStatus.OK);
                        }
                    }
                    while (node.sendCq.poll(wcs, 1) > 0) {
                        assertThat(wcs[0].status()).isEqualTo(WcStatus.SUCCESS);
                        n++;
                    }
                    return n;
                });
            }
        }
        assertThat(replies[0]).as("round trips").isEqualTo(rounds);
        for (final DevicePair.Node node : nodes) {
            final DriverCounters c = node.device.counters();
            System.out.println("gsoMinSegments " + gsoMinSegments + ": " + c);
            assertThat(c.get(DriverCounter.SEND_ERRORS)).isZero();
            if (gsoMinSegments == 2) {
                assertThat(c.get(DriverCounter.GSO_WRITES)).as("reply and ACK in one GSO write").isPositive();
            } else {
                assertThat(c.get(DriverCounter.CONNECTED_SOCKETS)).as("the entropy socket connected to its one peer")
                    .isEqualTo(1);
                assertThat(c.get(DriverCounter.GSO_SEGMENTS)).as("no GSO write shorter than the minimum")
                    .isGreaterThanOrEqualTo(3 * c.get(DriverCounter.GSO_WRITES));
                assertThat(c.get(DriverCounter.DIRECT_SENDS)).as("datagrams sent straight to the socket")
                    .isPositive().isLessThanOrEqualTo(c.get(DriverCounter.DATAGRAMS_SENT));
            }
        }
    }

    private static int postSend(final DevicePair.Node node, final int number) {
        return node.qp.postSend(new SendRequest(1).wrId(number).opcode(WrOpcode.SEND).sendFlags(SendFlags.SIGNALED)
            .addSge(node.address(1 << 20), 64, node.mr.lkey()));
    }

    @Test
    void gsoMinSegmentsOutsideTwoToSixtyFourIsRefused() {
        assertThatThrownBy(() -> new DeviceConfig().gsoMinSegments(1)).isInstanceOf(IllegalArgumentException.class)
            .hasMessage("gsoMinSegments must be in 2..64, got 1");
        assertThatThrownBy(() -> new DeviceConfig().gsoMinSegments(65)).isInstanceOf(IllegalArgumentException.class)
            .hasMessage("gsoMinSegments must be in 2..64, got 65");
        assertThat(new DeviceConfig().gsoMinSegments()).isEqualTo(DeviceConfig.DEFAULT_GSO_MIN_SEGMENTS);
    }
}
