// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty.linux;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static org.assertj.core.api.Assertions.assertThat;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * One sendmmsg message with a UDP_SEGMENT control message leaves as N datagrams: a receiver
 * without GRO gets N, one with UDP_GRO gets them back coalesced with the segment size (on
 * loopback the GSO packet is never split: lo takes UDP GSO packets as they are, and the kernel
 * splits them only for a socket that cannot take them whole).
 */
class GsoGroTest {
    private static final int SEGMENT = 1200;
    private static final int SEGMENTS = 10;
    /** The last segment is shorter: GSO allows that, and GRO must report it in the length. */
    private static final int PAYLOAD = (SEGMENTS - 1) * SEGMENT + 700;

    @BeforeEach
    void nativeSockets() {
        Loopback.assumeNative();
    }

    @Test
    void withoutGroTheReceiverGetsEverySegmentAsADatagram() throws Exception {
        try (LinuxUdpSocket rx = Loopback.bound(false); LinuxUdpSocket tx = Loopback.bound(false);
             Arena arena = Arena.ofConfined(); SendBatch send = new SendBatch(2);
             ReceiveBatch receive = new ReceiveBatch(32, 2048)) {
            final MemorySegment payload = Loopback.pattern(arena, PAYLOAD, 5);
            sendGso(tx, send, payload, rx.localAddress().getPort());
            final int got = Loopback.receive(rx, receive, SEGMENTS, (b, slot, index) -> {
                final int expected = index < SEGMENTS - 1 ? SEGMENT : 700;
                assertThat(b.length(slot)).isEqualTo(expected);
                assertThat(b.segmentSize(slot)).isZero();
                assertThat(b.segment(slot).asSlice(0, expected)
                    .mismatch(payload.asSlice((long) index * SEGMENT, expected))).isEqualTo(-1);
            });
            assertThat(got).isEqualTo(SEGMENTS);
        }
    }

    @Test
    void withGroTheReceiverGetsThemCoalescedWithTheSegmentSize() throws Exception {
        try (LinuxUdpSocket rx = Loopback.bound(false); LinuxUdpSocket tx = Loopback.bound(false);
             Arena arena = Arena.ofConfined(); SendBatch send = new SendBatch(2);
             ReceiveBatch receive = new ReceiveBatch(4, 65535)) {
            rx.setGro(true);
            final MemorySegment payload = Loopback.pattern(arena, PAYLOAD, 9);
            sendGso(tx, send, payload, rx.localAddress().getPort());
            final int[] bytes = {0};
            final int got = Loopback.receive(rx, receive, 1, (b, slot, index) -> {
                System.out.println("GRO receive: " + b.length(slot) + " B, segment size " + b.segmentSize(slot));
                assertThat(b.length(slot)).isEqualTo(PAYLOAD);
                assertThat(b.segmentSize(slot)).isEqualTo(SEGMENT);
                assertThat(b.segment(slot).asSlice(0, PAYLOAD).mismatch(payload)).isEqualTo(-1);
                assertThat(b.buffer(slot).get(PAYLOAD - 1)).isEqualTo(payload.get(JAVA_BYTE, PAYLOAD - 1));
                bytes[0] += b.length(slot);
            });
            assertThat(got).isEqualTo(1);
            assertThat(bytes[0]).isEqualTo(PAYLOAD);
        }
    }

    private static void sendGso(final LinuxUdpSocket tx, final SendBatch send, final MemorySegment payload,
                                final int port) {
        final int i = send.add(payload);
        send.destinationIpv4(i, Loopback.IPV4, port);
        send.segmentSize(i, SEGMENT);
        assertThat(tx.send(send, 0)).isEqualTo(1);
        assertThat(send.sentBytes(i)).isEqualTo(PAYLOAD);
    }
}
