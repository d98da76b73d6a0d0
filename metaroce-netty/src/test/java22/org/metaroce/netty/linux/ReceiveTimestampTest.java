// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty.linux;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.foreign.Arena;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * [REL-066] With {@code SO_TIMESTAMPNS} the kernel stamps each datagram when it reaches the host,
 * and the batch converts the stamp to {@link System#nanoTime()}'s clock: a datagram that waited in
 * the socket before it was read shows that wait as the difference between its arrival and the
 * time of the read. Without the option there is no stamp. (For the first milliseconds after a host's
 * first socket asks, the kernel stamps a datagram when it is read: the stamp is then the time of the
 * read, never later.)
 */
class ReceiveTimestampTest {
    private static final long WAIT_NS = 30_000_000L;

    @BeforeEach
    void nativeSockets() {
        Loopback.assumeNative();
    }

    @Test
    void aDatagramThatWaitedInTheSocketArrivedWhenTheKernelSaysSo() throws Exception {
        try (LinuxUdpSocket rx = Loopback.bound(false); LinuxUdpSocket tx = Loopback.bound(false);
             Arena arena = Arena.ofConfined(); SendBatch send = new SendBatch(2);
             ReceiveBatch receive = new ReceiveBatch(2, 2048)) {
            rx.setReceiveTimestamps(true);
            final int port = rx.localAddress().getPort();
            // The kernel turns receive stamping on for the host in deferred work (a static key):
            // until then a datagram is stamped when it is read. Let that work run first.
            Thread.sleep(100);
            final long before = System.nanoTime();
            send.destinationIpv4(send.add(Loopback.pattern(arena, 100, 0)), Loopback.IPV4, port);
            assertThat(tx.send(send, 0)).isEqualTo(1);
            // The datagram waits in rx's socket, as for a reader that is busy or descheduled.
            Thread.sleep(WAIT_NS / 1_000_000L);
            final long[] seen = new long[3];
            final long readFrom = System.nanoTime();
            assertThat(Loopback.receive(rx, receive, 1, (b, slot, index) -> {
                seen[0] = b.arrivalNanoTime(slot);
                seen[1] = System.nanoTime();
                seen[2] = b.receivedNanoTime();
            })).isEqualTo(1);
            final long arrival = seen[0];
            final String what = "arrival " + (arrival - before) + " ns after the send began, read "
                + (seen[1] - arrival) + " ns after it arrived";
            System.out.println("ReceiveTimestampTest: " + what);
            assertThat(arrival).as(what).isNotEqualTo(ReceiveBatch.NO_TIMESTAMP);
            // Loopback delivers at once: the stamp falls between the send and the sleep's end
            // (5 ms of slack for the clocks' conversion and a loaded host).
            assertThat(arrival - before).as(what).isBetween(0L, WAIT_NS - 5_000_000L);
            assertThat(seen[1] - arrival).as(what).isGreaterThanOrEqualTo(WAIT_NS - 1_000_000L);
            // The batch's own clock reading, which the driver takes for the datagrams' time instead
            // of reading the clock once more: after the receive call began, no earlier than the
            // arrival, no later than the datagram was looked at.
            assertThat(seen[2]).as(what).isBetween(Math.max(readFrom, arrival), seen[1]);
        }
    }

    @Test
    void withoutTheOptionThereIsNoStamp() throws Exception {
        try (LinuxUdpSocket rx = Loopback.bound(false); LinuxUdpSocket tx = Loopback.bound(false);
             Arena arena = Arena.ofConfined(); SendBatch send = new SendBatch(1);
             ReceiveBatch receive = new ReceiveBatch(1, 2048)) {
            send.destinationIpv4(send.add(Loopback.pattern(arena, 100, 0)), Loopback.IPV4, rx.localAddress().getPort());
            assertThat(tx.send(send, 0)).isEqualTo(1);
            assertThat(Loopback.receive(rx, receive, 1, (b, slot, index) -> {
                assertThat(b.arrivalNanoTime(slot)).isEqualTo(ReceiveBatch.NO_TIMESTAMP);
                assertThat(b.receivedNanoTime()).isEqualTo(ReceiveBatch.NO_TIMESTAMP);
            })).isEqualTo(1);
        }
    }
}
