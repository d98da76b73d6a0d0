package org.metaroce.netty;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.netty.channel.epoll.EpollDatagramChannel;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.metaroce.core.verbs.PostStatus;
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
}
