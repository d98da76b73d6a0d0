// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty.linux;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.Random;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** sendmmsg/recvmmsg on loopback, IPv4 and IPv6, and the errors the data path reports as outcomes. */
class LinuxUdpSocketTest {
    @BeforeEach
    void nativeSockets() {
        Loopback.assumeNative();
    }

    /**
     * Don't Fragment [ENC-021] on both families: an IPv6 socket (which also sends to IPv4-mapped
     * addresses) sets IPV6_PMTUDISC_DO and IP_PMTUDISC_DO; off restores the kernel's default
     * (the PMTUDISC_WANT of both levels).
     */
    @Test
    void dontFragmentSetsPathMtuDiscoveryToDoOnBothFamilies() throws Exception {
        for (final boolean ipv6 : new boolean[] {false, true}) {
            try (LinuxUdpSocket s = LinuxUdpSocket.open(ipv6)) {
                s.setDontFragment(true);
                assertThat(s.getOption(0 /* IPPROTO_IP */, 10 /* IP_MTU_DISCOVER */)).as("IP_PMTUDISC_DO, ipv6 " + ipv6)
                    .isEqualTo(2);
                if (ipv6) {
                    assertThat(s.getOption(41 /* IPPROTO_IPV6 */, 23 /* IPV6_MTU_DISCOVER */)).as("IPV6_PMTUDISC_DO")
                        .isEqualTo(2);
                }
                s.setDontFragment(false);
                assertThat(s.getOption(0, 10)).as("IP_PMTUDISC_WANT, ipv6 " + ipv6).isEqualTo(1);
                if (ipv6) {
                    assertThat(s.getOption(41, 23)).as("IPV6_PMTUDISC_WANT").isEqualTo(1);
                }
            }
        }
    }

    @Test
    void aBatchArrivesIntactWithItsSource() throws Exception {
        batchRoundTrip(false);
    }

    @Test
    void aBatchArrivesOverIpv6Loopback() throws Exception {
        batchRoundTrip(true);
    }

    private static void batchRoundTrip(final boolean ipv6) throws Exception {
        final long seed = System.nanoTime();
        System.out.println("seed " + seed + " (ipv6 " + ipv6 + ")");
        final Random random = new Random(seed);
        final int messages = 16;
        try (LinuxUdpSocket rx = Loopback.bound(ipv6); LinuxUdpSocket tx = Loopback.bound(ipv6);
             Arena arena = Arena.ofConfined(); SendBatch send = new SendBatch(messages);
             ReceiveBatch receive = new ReceiveBatch(messages, 2048)) {
            final int port = rx.localAddress().getPort();
            final int[] sizes = new int[messages];
            final MemorySegment[] payloads = new MemorySegment[messages];
            for (int m = 0; m < messages; m++) {
                sizes[m] = 1 + random.nextInt(1500);
                payloads[m] = Loopback.pattern(arena, sizes[m], m * 7);
                final int i = send.add(payloads[m]);
                if (ipv6) {
                    send.destinationIpv6(i, 0L, 1L, port);
                } else {
                    send.destinationIpv4(i, Loopback.IPV4, port);
                }
            }
            assertThat(tx.send(send, 0)).isEqualTo(messages);
            assertThat(send.sentBytes(3)).isEqualTo(sizes[3]);
            final int txPort = tx.localAddress().getPort();
            final int got = Loopback.receive(rx, receive, messages, (b, slot, index) -> {
                assertThat(b.length(slot)).isEqualTo(sizes[index]);
                assertThat(b.segment(slot).asSlice(0, b.length(slot)).mismatch(payloads[index])).isEqualTo(-1);
                final ByteBuffer view = b.buffer(slot);
                assertThat(view.remaining()).isEqualTo(sizes[index]);
                assertThat(view.get(sizes[index] - 1)).isEqualTo(payloads[index].get(JAVA_BYTE, sizes[index] - 1));
                assertThat(b.sourcePort(slot)).isEqualTo(txPort);
                assertThat(b.sourceIsIpv6(slot)).isEqualTo(ipv6);
                if (ipv6) {
                    assertThat(b.sourceIpv6High(slot)).isZero();
                    assertThat(b.sourceIpv6Low(slot)).isEqualTo(1L);
                } else {
                    assertThat(b.sourceIpv4(slot)).isEqualTo(Loopback.IPV4);
                }
                assertThat(b.sourceAddress(slot)).isEqualTo(new InetSocketAddress(Loopback.address(ipv6), txPort));
                assertThat(b.ecn(slot)).isEqualTo(ReceiveBatch.NOT_REPORTED);
                assertThat(b.segmentSize(slot)).isZero();
                assertThat(b.truncated(slot)).isFalse();
            });
            assertThat(got).isEqualTo(messages);
            assertThat(rx.receive(receive)).as("nothing more waiting").isZero();
            assertThat(UdpOutcome.of(rx.receive(receive))).isEqualTo(UdpOutcome.WOULD_BLOCK);
        }
    }

    @Test
    void aGsoMessageTheKernelCannotSegmentForTheSocketIsAnIoError() throws Exception {
        // udp_send_skb, the send path UDP and UDP-Lite share, refuses a GSO message with EIO on a
        // UDP-Lite socket or through an IPsec transform. This kernel has no ESP, AH or IPComp, so
        // UDP-Lite is the way to get the real errno here.
        final LinuxUdpSocket lite;
        try {
            lite = LinuxUdpSocket.open(false, Uapi.IPPROTO_UDPLITE);
        } catch (final ErrnoException ex) {
            org.junit.jupiter.api.Assumptions.abort("no UDP-Lite in this kernel: " + ex.getMessage());
            return;
        }
        try (LinuxUdpSocket tx = lite; LinuxUdpSocket rx = Loopback.bound(false); Arena arena = Arena.ofConfined();
             SendBatch send = new SendBatch(2)) {
            tx.bind(new InetSocketAddress(Loopback.address(false), 0));
            final int port = rx.localAddress().getPort();
            final int gso = send.add(Loopback.pattern(arena, 3000, 3));
            send.segmentSize(gso, 1000);
            send.destinationIpv4(gso, Loopback.IPV4, port);
            send.destinationIpv4(send.add(Loopback.pattern(arena, 1000, 4)), Loopback.IPV4, port);
            final int r = tx.send(send, 0);
            assertThat(UdpOutcome.of(r)).as("result %d", r).isEqualTo(UdpOutcome.IO_ERROR);
            assertThat(-r).isEqualTo(Errno.EIO);
            assertThat(tx.send(send, 1)).as("the same bytes as one datagram go").isEqualTo(1);
        }
    }

    /**
     * {@code send} of one datagram to the connected peer (the reply of a request-reply exchange):
     * it arrives intact from the socket's port, on both families; to a closed port the ICMP error
     * is reported to the next call as {@code ECONNREFUSED}, an outcome.
     */
    @Test
    void oneDatagramGoesToTheConnectedPeerWithSend() throws Exception {
        for (final boolean ipv6 : new boolean[] {false, true}) {
            try (LinuxUdpSocket rx = Loopback.bound(ipv6); LinuxUdpSocket tx = Loopback.bound(ipv6);
                 Arena arena = Arena.ofConfined(); ReceiveBatch receive = new ReceiveBatch(2, 2048)) {
                tx.connect(rx.localAddress());
                final MemorySegment payload = Loopback.pattern(arena, 173, 5);
                assertThat(tx.sendConnected(payload.address(), 173)).isEqualTo(1);
                final int txPort = tx.localAddress().getPort();
                assertThat(Loopback.receive(rx, receive, 1, (b, slot, index) -> {
                    assertThat(b.length(slot)).isEqualTo(173);
                    assertThat(b.segment(slot).asSlice(0, 173).mismatch(payload)).isEqualTo(-1);
                    assertThat(b.sourcePort(slot)).isEqualTo(txPort);
                })).isEqualTo(1);
            }
        }
        try (LinuxUdpSocket tx = Loopback.connectedToClosedPort(); Arena arena = Arena.ofConfined()) {
            final MemorySegment payload = Loopback.pattern(arena, 10, 1);
            assertThat(tx.sendConnected(payload.address(), 10)).isEqualTo(1);
            int r = 1;
            final long deadline = System.nanoTime() + 2_000_000_000L;
            while (r == 1 && System.nanoTime() < deadline) {
                Thread.sleep(1); // the ICMP port unreachable comes back and is pending for the next call
                r = tx.sendConnected(payload.address(), 10);
            }
            assertThat(UdpOutcome.of(r)).as("result %d", r).isEqualTo(UdpOutcome.CONNECTION_REFUSED);
        }
    }

    @Test
    void aConnectedSocketSendsWithoutDestinationAndLearnsThatThePortIsClosed() throws Exception {
        try (LinuxUdpSocket tx = Loopback.connectedToClosedPort(); Arena arena = Arena.ofConfined();
             SendBatch send = new SendBatch(4); ReceiveBatch receive = new ReceiveBatch(4, 2048)) {
            send.add(Loopback.pattern(arena, 100, 1));
            assertThat(tx.send(send, 0)).isEqualTo(1);
            // The ICMP port unreachable comes back through loopback and is pending on the socket:
            // the next call reports it, as an outcome.
            int r = 0;
            final long deadline = System.nanoTime() + 2_000_000_000L;
            while (r == 0 && System.nanoTime() < deadline) {
                r = tx.receive(receive);
            }
            assertThat(UdpOutcome.of(r)).as("result %d", r).isEqualTo(UdpOutcome.CONNECTION_REFUSED);
            assertThat(-r).isEqualTo(Errno.ECONNREFUSED);

            tx.disconnect();
            send.clear();
            send.add(Loopback.pattern(arena, 10, 2));
            // Not connected any more and no destination: EDESTADDRREQ, an outcome, not an exception.
            assertThat(UdpOutcome.of(tx.send(send, 0))).isEqualTo(UdpOutcome.OTHER);
        }
    }

    @Test
    void anOverLongDatagramIsMessageTooLongAndTheRestOfTheBatchGoesOn() throws Exception {
        try (LinuxUdpSocket rx = Loopback.bound(false); LinuxUdpSocket tx = Loopback.bound(false);
             Arena arena = Arena.ofConfined(); SendBatch send = new SendBatch(4);
             ReceiveBatch receive = new ReceiveBatch(4, 2048)) {
            final int port = rx.localAddress().getPort();
            final MemorySegment big = arena.allocate(65_508);   // IPv4's UDP payload limit is 65507
            send.destinationIpv4(send.add(big), Loopback.IPV4, port);
            send.destinationIpv4(send.add(Loopback.pattern(arena, 64, 3)), Loopback.IPV4, port);
            final int r = tx.send(send, 0);
            assertThat(UdpOutcome.of(r)).as("result %d", r).isEqualTo(UdpOutcome.MESSAGE_TOO_LONG);
            assertThat(tx.send(send, 1)).isEqualTo(1);
            assertThat(Loopback.receive(rx, receive, 1, (b, slot, index) ->
                assertThat(b.length(slot)).isEqualTo(64))).isEqualTo(1);
        }
    }

    @Test
    void aDatagramLargerThanItsSlotIsMarkedTruncated() throws Exception {
        try (LinuxUdpSocket rx = Loopback.bound(false); LinuxUdpSocket tx = Loopback.bound(false);
             Arena arena = Arena.ofConfined(); SendBatch send = new SendBatch(1);
             ReceiveBatch receive = new ReceiveBatch(1, 100)) {
            send.destinationIpv4(send.add(Loopback.pattern(arena, 300, 0)), Loopback.IPV4, rx.localAddress().getPort());
            assertThat(tx.send(send, 0)).isEqualTo(1);
            assertThat(Loopback.receive(rx, receive, 1, (b, slot, index) -> {
                assertThat(b.truncated(slot)).isTrue();
                assertThat(b.buffer(slot).remaining()).isEqualTo(100);
            })).isEqualTo(1);
        }
    }

    @Test
    void setupFailuresThrowWithTheErrno() throws Exception {
        try (LinuxUdpSocket a = Loopback.bound(false); LinuxUdpSocket b = LinuxUdpSocket.open(false)) {
            final InetSocketAddress taken = a.localAddress();
            assertThatThrownBy(() -> b.bind(taken)).isInstanceOfSatisfying(ErrnoException.class, ex -> {
                assertThat(ex.errno()).isEqualTo(Errno.EADDRINUSE);
                assertThat(ex).hasMessage("bind(" + taken + ") failed: EADDRINUSE");
            });
            assertThatThrownBy(() -> b.setOption(Uapi.SOL_UDP, 999, 1))
                .isInstanceOf(ErrnoException.class).hasMessageContaining("setsockopt(level 17 option 999, 1) failed");
            b.setReceiveBufferSize(1 << 20);
            assertThat(b.receiveBufferSize()).isGreaterThanOrEqualTo(1 << 20);   // the kernel doubles it
        }
    }
}
