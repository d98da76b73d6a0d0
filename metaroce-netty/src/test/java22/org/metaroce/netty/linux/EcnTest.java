// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty.linux;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.foreign.Arena;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The receiver reads the ECN field of every datagram: ECT(0) as sent with IP_TOS / IPV6_TCLASS,
 * and CE when a real marker (an nftables rule on the input hook, as root) sets it on the way.
 * And a netfilter drop on the output hook comes back to the sender as EPERM, an outcome.
 */
class EcnTest {
    /** DSCP 46 (EF) with ECT(0): both parts of the byte must arrive. */
    private static final int EF_ECT0 = 46 << 2 | LinuxUdpSocket.ECT_0;

    @BeforeEach
    void nativeSockets() {
        Loopback.assumeNative();
    }

    @Test
    void ect0SentIsEct0ReceivedOverIpv4() throws Exception {
        assertThat(receivedTrafficClass(false)).isEqualTo(EF_ECT0);
    }

    @Test
    void ect0SentIsEct0ReceivedOverIpv6() throws Exception {
        assertThat(receivedTrafficClass(true)).isEqualTo(EF_ECT0);
    }

    /**
     * One batch reused across calls of different sizes, with empty calls between and the traffic
     * class reported in some calls only: the kernel shrinks each filled slot's control length to
     * what it wrote (nothing, when the class is not asked for), so a slot must get its full control
     * space back before it is filled again, or a later call's traffic class does not fit and goes
     * missing. The batch resets only the slots the previous call filled.
     */
    @Test
    void aBatchReusedAcrossCallsOfEverySizeReadsEachSlotsSourceAndTrafficClass() throws Exception {
        final int slots = 8;
        try (LinuxUdpSocket rx = Loopback.bound(false); LinuxUdpSocket tx = Loopback.bound(false);
             Arena arena = Arena.ofConfined(); SendBatch send = new SendBatch(slots);
             ReceiveBatch receive = new ReceiveBatch(slots, 2048)) {
            final int port = rx.localAddress().getPort();
            final int txPort = tx.localAddress().getPort();
            tx.setTrafficClass(EF_ECT0);
            // (datagrams, traffic class reported): filled without the class, then with it, in every order.
            final int[][] calls = {{8, 0}, {8, 1}, {3, 0}, {0, 1}, {8, 1}, {1, 0}, {5, 1}, {0, 0}, {8, 1}};
            for (final int[] call : calls) {
                final int n = call[0];
                final boolean reported = call[1] == 1;
                rx.setReceiveTrafficClass(reported);
                send.clear();
                for (int m = 0; m < n; m++) {
                    send.destinationIpv4(send.add(Loopback.pattern(arena, 64 + m, m)), Loopback.IPV4, port);
                }
                if (n > 0) {
                    assertThat(tx.send(send, 0)).isEqualTo(n);
                }
                assertThat(Loopback.receive(rx, receive, n, (b, slot, index) -> {
                    assertThat(b.trafficClass(slot)).as("traffic class of slot %d in a call of %d", slot, n)
                        .isEqualTo(reported ? EF_ECT0 : ReceiveBatch.NOT_REPORTED);
                    assertThat(b.sourcePort(slot)).as("source port of slot %d in a call of %d", slot, n)
                        .isEqualTo(txPort);
                    assertThat(b.length(slot)).isEqualTo(64 + index);
                })).isEqualTo(n);
                assertThat(rx.receive(receive)).as("nothing more after %d", n).isZero();
            }
        }
    }

    /**
     * A single read ({@code recvmsg} into slot 0) between batch reads on the same batch: each gets
     * its datagram's length, source and traffic class, whatever the batch read before it filled,
     * and a single read with nothing waiting reports none.
     */
    @Test
    void singleReadsBetweenBatchReadsReadLengthSourceAndTrafficClass() throws Exception {
        final int slots = 8;
        try (LinuxUdpSocket rx = Loopback.bound(false); LinuxUdpSocket tx = Loopback.bound(false);
             Arena arena = Arena.ofConfined(); SendBatch send = new SendBatch(slots);
             ReceiveBatch receive = new ReceiveBatch(slots, 2048)) {
            final int port = rx.localAddress().getPort();
            final int txPort = tx.localAddress().getPort();
            tx.setTrafficClass(EF_ECT0);
            rx.setReceiveTrafficClass(true);
            assertThat(rx.receiveOne(receive)).as("nothing waiting").isZero();
            for (int round = 0; round < 3; round++) {
                send.clear();
                for (int m = 0; m < 6; m++) {
                    send.destinationIpv4(send.add(Loopback.pattern(arena, 100 + m, m)), Loopback.IPV4, port);
                }
                assertThat(tx.send(send, 0)).isEqualTo(6);
                // One by one for the first two, then the other four in batch reads.
                for (int m = 0; m < 2; m++) {
                    int r;
                    final long deadline = System.nanoTime() + 2_000_000_000L;
                    while ((r = rx.receiveOne(receive)) == 0 && System.nanoTime() < deadline) {
                        Thread.onSpinWait();
                    }
                    assertThat(r).isEqualTo(1);
                    assertThat(receive.length(0)).as("round %d, single read %d", round, m).isEqualTo(100 + m);
                    assertThat(receive.sourcePort(0)).isEqualTo(txPort);
                    assertThat(receive.trafficClass(0)).isEqualTo(EF_ECT0);
                    assertThat(receive.buffer(0).get(0)).isEqualTo(Loopback.pattern(arena, 100 + m, m).get(
                        java.lang.foreign.ValueLayout.JAVA_BYTE, 0));
                }
                assertThat(Loopback.receive(rx, receive, 4, (b, slot, index) -> {
                    assertThat(b.length(slot)).isEqualTo(102 + index);
                    assertThat(b.trafficClass(slot)).isEqualTo(EF_ECT0);
                })).isEqualTo(4);
                assertThat(rx.receiveOne(receive)).isZero();
            }
        }
    }

    @Test
    void anNftablesRuleMarksCongestionExperienced() throws Exception {
        Nft.assumeUsable();
        final String table = Nft.table("ecn");
        try (LinuxUdpSocket rx = Loopback.bound(false); LinuxUdpSocket tx = Loopback.bound(false);
             Arena arena = Arena.ofConfined(); SendBatch send = new SendBatch(1);
             ReceiveBatch receive = new ReceiveBatch(1, 2048)) {
            final int port = rx.localAddress().getPort();
            try {
                assertThat(Nft.addRule(table, "input", "udp", "dport", Integer.toString(port), "ip", "ecn", "set", "ce"))
                    .isTrue();
                tx.setTrafficClass(EF_ECT0);
                rx.setReceiveTrafficClass(true);
                send.destinationIpv4(send.add(Loopback.pattern(arena, 100, 0)), Loopback.IPV4, port);
                assertThat(tx.send(send, 0)).isEqualTo(1);
                assertThat(Loopback.receive(rx, receive, 1, (b, slot, index) -> {
                    assertThat(b.ecn(slot)).isEqualTo(LinuxUdpSocket.CE);
                    assertThat(b.trafficClass(slot) >> 2).as("DSCP kept").isEqualTo(46);
                })).isEqualTo(1);
            } finally {
                Nft.deleteTable(table);
            }
        }
    }

    @Test
    void aDatagramDroppedOnTheOutputHookIsNotPermitted() throws Exception {
        Nft.assumeUsable();
        final String table = Nft.table("eperm");
        try (LinuxUdpSocket rx = Loopback.bound(false); LinuxUdpSocket tx = Loopback.bound(false);
             Arena arena = Arena.ofConfined(); SendBatch send = new SendBatch(1)) {
            final int port = rx.localAddress().getPort();
            try {
                assertThat(Nft.addRule(table, "output", "udp", "dport", Integer.toString(port), "drop")).isTrue();
                send.destinationIpv4(send.add(Loopback.pattern(arena, 100, 0)), Loopback.IPV4, port);
                final int r = tx.send(send, 0);
                assertThat(UdpOutcome.of(r)).as("result %d", r).isEqualTo(UdpOutcome.NOT_PERMITTED);
            } finally {
                Nft.deleteTable(table);
            }
        }
    }

    private static int receivedTrafficClass(final boolean ipv6) throws Exception {
        try (LinuxUdpSocket rx = Loopback.bound(ipv6); LinuxUdpSocket tx = Loopback.bound(ipv6);
             Arena arena = Arena.ofConfined(); SendBatch send = new SendBatch(2);
             ReceiveBatch receive = new ReceiveBatch(2, 2048)) {
            tx.setTrafficClass(EF_ECT0);
            rx.setReceiveTrafficClass(true);
            final int port = rx.localAddress().getPort();
            for (int m = 0; m < 2; m++) {
                final int i = send.add(Loopback.pattern(arena, 100, m));
                if (ipv6) {
                    send.destinationIpv6(i, 0L, 1L, port);
                } else {
                    send.destinationIpv4(i, Loopback.IPV4, port);
                }
            }
            assertThat(tx.send(send, 0)).isEqualTo(2);
            final int[] tc = {-1};
            assertThat(Loopback.receive(rx, receive, 2, (b, slot, index) -> {
                assertThat(b.ecn(slot)).isEqualTo(LinuxUdpSocket.ECT_0);
                tc[0] = b.trafficClass(slot);
            })).isEqualTo(2);
            return tc[0];
        }
    }
}
