// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty.linux;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.management.ManagementFactory;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The data path allocates nothing: after a warm-up, 100,000 datagrams sent with sendmmsg from
 * four sockets (so the source port changes from batch to batch, as multipath entropy makes it)
 * and received with recvmmsg, their sources, ECN and lengths read, allocate less than one byte
 * per datagram on the calling thread (in practice 0 once the JIT has compiled the path).
 */
class AllocationTest {
    private static final int BATCH = 32;
    private static final int SENDERS = 4;
    private static final int DATAGRAMS = 100_000;
    /** A warmed-up round allocates less than this (the counter's own reads included). */
    private static final long WARM_SLACK_BYTES = 4096;

    @BeforeEach
    void nativeSockets() {
        Loopback.assumeNative();
    }

    @Test
    void sendingAndReceivingAllocateNothing() throws Exception {
        final java.lang.management.ThreadMXBean plain = ManagementFactory.getThreadMXBean();
        assumeTrue(plain instanceof com.sun.management.ThreadMXBean, "no per-thread allocation counter");
        final com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) plain;
        final LinuxUdpSocket[] senders = new LinuxUdpSocket[SENDERS];
        try (LinuxUdpSocket rx = Loopback.bound(false); Arena arena = Arena.ofConfined();
             SendBatch send = new SendBatch(BATCH); ReceiveBatch receive = new ReceiveBatch(BATCH, 2048)) {
            rx.setReceiveTrafficClass(true);
            rx.setReceiveBufferSize(1 << 20);
            for (int s = 0; s < SENDERS; s++) {
                senders[s] = Loopback.bound(false);
                senders[s].setTrafficClass(LinuxUdpSocket.ECT_0);
            }
            final MemorySegment payload = Loopback.pattern(arena, 256, 0);
            final int port = rx.localAddress().getPort();
            final int[] ports = new int[SENDERS];
            for (int s = 0; s < SENDERS; s++) {
                ports[s] = senders[s].localAddress().getPort();
            }
            // datagrams, sum of source ports seen, sum of source ports sent, ECN or length mismatches
            final long[] tally = new long[4];
            // Warm-up until the JIT has compiled the path (C2 removes what the interpreter and
            // C1 allocate around the downcalls): rounds of 100,000 until one allocates less than
            // a small fixed slack, at most 30. A path that allocates by itself never gets there.
            int warmUpRounds = 0;
            long roundBytes = Long.MAX_VALUE;
            while (warmUpRounds < 30 && roundBytes >= WARM_SLACK_BYTES) {
                final long t0 = threads.getCurrentThreadAllocatedBytes();
                exchange(senders, ports, rx, send, receive, payload.address(), port, DATAGRAMS, tally);
                roundBytes = threads.getCurrentThreadAllocatedBytes() - t0;
                warmUpRounds++;
            }
            System.out.println("warm-up: " + warmUpRounds + " rounds of " + DATAGRAMS + " datagrams, the last "
                + roundBytes + " B");

            java.util.Arrays.fill(tally, 0);
            final long before = threads.getCurrentThreadAllocatedBytes();
            exchange(senders, ports, rx, send, receive, payload.address(), port, DATAGRAMS, tally);
            final long allocated = threads.getCurrentThreadAllocatedBytes() - before;

            System.out.printf("%d datagrams from %d source ports: %d bytes allocated (%.4f B/datagram)%n",
                tally[0], SENDERS, allocated, (double) allocated / tally[0]);
            assertThat(tally[0]).isEqualTo(DATAGRAMS);
            assertThat(tally[1]).as("the source ports seen are those sent from").isEqualTo(tally[2]);
            assertThat(tally[3]).as("datagrams without ECT(0) or of another length").isZero();
            assertThat((double) allocated / tally[0]).isLessThan(1.0);
        } finally {
            for (final LinuxUdpSocket s : senders) {
                if (s != null) {
                    s.close();
                }
            }
        }
    }

    /**
     * Sends {@code datagrams} in batches, each from the next sender, and receives each batch
     * before the next: no lambdas, no boxing, no assertions inside (those allocate).
     */
    private static void exchange(final LinuxUdpSocket[] senders, final int[] ports, final LinuxUdpSocket rx, final SendBatch send,
                                 final ReceiveBatch receive, final long payload, final int port,
                                 final int datagrams, final long[] tally) {
        int sender = 0;
        for (int sent = 0; sent < datagrams; sent += BATCH) {
            send.clear();
            for (int m = 0; m < BATCH; m++) {
                send.destinationIpv4(send.add(payload, 256), Loopback.IPV4, port);
            }
            int first = 0;
            while (first < BATCH) {
                final int r = senders[sender].send(send, first);
                if (r < 0) {
                    throw new IllegalStateException("send: " + Errno.name(-r));
                }
                first += r;
            }
            tally[2] += (long) ports[sender] * BATCH;
            sender = (sender + 1) % senders.length;
            int received = 0;
            long spins = 0;
            while (received < BATCH) {
                final int n = rx.receive(receive);
                if (n < 0) {
                    throw new IllegalStateException("receive: " + Errno.name(-n));
                }
                for (int i = 0; i < n; i++) {
                    tally[1] += receive.sourcePort(i);
                    if (receive.ecn(i) != LinuxUdpSocket.ECT_0 || receive.length(i) != 256) {
                        tally[3]++;
                    }
                }
                received += n;
                if (n == 0 && ++spins > 100_000_000L) {
                    throw new IllegalStateException("datagrams lost on loopback: " + received + " of " + BATCH);
                }
            }
            tally[0] += received;
        }
    }
}
