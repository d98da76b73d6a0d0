// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty.linux;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.foreign.Arena;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * SO_TIMESTAMPNS: the kernel stamps each datagram with the time it reached the host, on the
 * realtime clock, and {@link RealtimeClock} maps it onto the clock of {@link System#nanoTime()}
 * [REL-066]. A datagram left unread for 50 ms is stamped 50 ms before it is read.
 */
class ReceiveTimestampTest {
    private static final long UNREAD_NS = 50_000_000L;

    @BeforeEach
    void nativeSockets() {
        Loopback.assumeNative();
    }

    @Test
    void aDatagramLeftInTheSocketCarriesTheTimeItArrived() throws Exception {
        try (LinuxUdpSocket rx = Loopback.bound(false); LinuxUdpSocket tx = Loopback.bound(false);
             Arena arena = Arena.ofConfined(); SendBatch send = new SendBatch(1);
             ReceiveBatch receive = new ReceiveBatch(1, 2048); RealtimeClock clock = new RealtimeClock()) {
            rx.setReceiveTimestamps(true);
            // The kernel turns receive timestamping on for the host in deferred work: a datagram
            // arriving in the same instant may still be stamped only when read.
            Thread.sleep(200);
            send.destinationIpv4(send.add(Loopback.pattern(arena, 100, 0)), Loopback.IPV4, rx.localAddress().getPort());
            final long sentNs = System.nanoTime();
            assertThat(tx.send(send, 0)).isEqualTo(1);
            Thread.sleep(UNREAD_NS / 1_000_000);
            final long[] arrival = new long[1];
            final long[] readNs = new long[1];
            assertThat(Loopback.receive(rx, receive, 1, (b, slot, index) -> {
                readNs[0] = System.nanoTime();
                assertThat(b.arrivalRealtimeNs(slot)).isNotEqualTo(ReceiveBatch.NO_TIMESTAMP);
                arrival[0] = b.arrivalRealtimeNs(slot) - clock.realtimeMinusMonotonicNs();
            })).isEqualTo(1);
            System.out.printf("sent %d ns, arrived +%d ns, read +%d ns (monotonic)%n", sentNs, arrival[0] - sentNs,
                readNs[0] - sentNs);
            // Loopback delivers within the send call; allow for a clock step of the conversion (µs).
            assertThat(arrival[0]).isBetween(sentNs - 1_000_000L, sentNs + 20_000_000L);
            assertThat(readNs[0] - arrival[0]).isGreaterThanOrEqualTo(UNREAD_NS - 20_000_000L);
        }
    }

    @Test
    void withoutTheOptionNothingIsStamped() throws Exception {
        try (LinuxUdpSocket rx = Loopback.bound(false); LinuxUdpSocket tx = Loopback.bound(false);
             Arena arena = Arena.ofConfined(); SendBatch send = new SendBatch(1);
             ReceiveBatch receive = new ReceiveBatch(1, 2048)) {
            send.destinationIpv4(send.add(Loopback.pattern(arena, 100, 0)), Loopback.IPV4, rx.localAddress().getPort());
            assertThat(tx.send(send, 0)).isEqualTo(1);
            assertThat(Loopback.receive(rx, receive, 1, (b, slot, index) ->
                assertThat(b.arrivalRealtimeNs(slot)).isEqualTo(ReceiveBatch.NO_TIMESTAMP))).isEqualTo(1);
        }
    }
}
