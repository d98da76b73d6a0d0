// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.net.InetSocketAddress;

import org.agrona.DirectBuffer;
import org.junit.jupiter.api.Test;
import org.metaroce.netty.linux.NativeUdp;

/**
 * The native transport's data path through the seam allocates nothing: batches of separate
 * datagrams and GSO messages sent from four sockets (the source port changes from batch to batch,
 * as multipath entropy makes it) and lone datagrams to a connected peer ({@code send}) with
 * {@link NativeUdpSocket#send}, received with
 * {@link NativeUdpSocket#receive} into a receiver that reads source, ECN and bytes (each drain ends
 * with an empty read, {@code EAGAIN}), and a zero-timeout epoll wait per turn, on one thread.
 * Fails when the path starts allocating ({@code ThreadMXBean.getCurrentThreadAllocatedBytes}).
 */
class NativeDataPathAllocationTest {
    private static final int DATAGRAMS_PER_ROUND = 50_000;
    private static final int PAYLOAD = 256;
    private static final int PER_BATCH = 32;
    /** Warm-up rounds at most (about 0.1 s each); the loop stops after {@link #QUIET_ROUNDS} quiet ones in a row. */
    private static final int MAX_WARM_UP_ROUNDS = 200;
    /**
     * Rounds in a row that allocated nothing, which end the warm-up. The tiers' last compilations
     * and their deoptimisations reallocate a few hundred bytes now and then in the rounds after
     * the first that allocates nothing (304, 168, 1,144 B; gone by the sixth round here).
     */
    private static final int QUIET_ROUNDS = 5;

    /** Reads what a driver reads of each datagram; counts. */
    private static final class Reader implements DatagramReceiver {
        long datagrams;
        long checksum;
        long ect0;

        @Override
        public boolean onDatagram(final DirectBuffer data, final int offset, final int length,
                                  final SourceAddress source, final int ecn, final int segmentBytes) {
            datagrams++;
            checksum += data.getInt(offset) + source.port() + source.ipv4() + length;
            if (ecn == 2) {
                ect0++;
            }
            return true;
        }

        @Override
        public void onBatchEnd() {
        }
    }

    @Test
    void sendAndReceiveAllocateNothingInSteadyState() throws Exception {
        assumeTrue(NativeUdp.isAvailable(), () -> "native transport unavailable: " + NativeUdp.unavailabilityReason());
        final Measured m = measure();
        assertThat(m.ect0()).as("ECT(0) read on every datagram").isEqualTo(m.datagrams());
        assertThat(m.bytes()).as("bytes allocated by the native data path in steady state").isZero();
    }

    /**
     * What {@link #measure()} found.
     *
     * @param bytes allocated by the round measured after the warm-up
     * @param datagrams received in all rounds
     * @param ect0 of them, marked ECT(0)
     */
    record Measured(long bytes, long datagrams, long ect0) {
    }

    /**
     * Warms the path up and measures one round on this thread; prints the warm-up's history and
     * the round's figure ({@link NativeDataPathWorstCaseInliningTest} reads the last line).
     */
    static Measured measure() throws Exception {
        final com.sun.management.ThreadMXBean mx = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        final NativeUdpTransport transport = new NativeUdpTransport(2048, 64, false, new DriverCounters(0));
        final Reader reader = new Reader();
        final InetSocketAddress any = new InetSocketAddress(InetAddress.getLoopbackAddress(), 0);
        try (PolledUdpSocket receiving = transport.open(new SocketOptions(any, 8 << 20, 1 << 20, 26 << 2 | 2), reader)) {
            final PolledUdpSocket[] senders = new PolledUdpSocket[4];
            for (int i = 0; i < senders.length; i++) {
                senders[i] = transport.open(new SocketOptions(any, 4096, 1 << 20, 26 << 2 | 2), null);
            }
            final SendChunk chunk = transport.allocateChunk(PER_BATCH * PAYLOAD);
            final SendBatch batch = new SendBatch();
            final InetSocketAddress to = receiving.localAddress();
            // The lone datagram of a request-reply exchange goes to a connected peer with send().
            senders[0].connect(to);
            int quiet = 0;
            int rounds = 0;
            // Warm up until the JIT has compiled the path (QUIET_ROUNDS rounds in a row allocating
            // nothing), at most MAX_WARM_UP_ROUNDS. Until the data path's system calls returned the
            // negated errno themselves (Syscalls), now and then (one CI run of five, one local run
            // of seven) every round allocated 60,640 B, 40 B per loop turn: the FFM linker's slice
            // of the errno capture segment (SharedUtils.checkCaptureSegment), which escape analysis
            // removed only when C2 happened to inline the whole downcall into its caller;
            // NativeDataPathWorstCaseInliningTest forbids that inlining. The history is printed so
            // that a failure shows it.
            final StringBuilder warmUp = new StringBuilder();
            while (rounds < MAX_WARM_UP_ROUNDS && quiet < QUIET_ROUNDS) {
                final long allocated = round(mx, senders, receiving, chunk, batch, to, reader);
                quiet = allocated == 0 ? quiet + 1 : 0;
                warmUp.append(rounds == 0 ? "" : ", ").append(allocated);
                rounds++;
            }
            System.out.println("warm-up rounds, bytes allocated: " + warmUp);
            final long measured = round(mx, senders, receiving, chunk, batch, to, reader);
            System.out.println("native data path: " + measured + " B allocated for " + DATAGRAMS_PER_ROUND
                + " datagrams after " + rounds + " warm-up rounds; " + reader.datagrams + " received, " + reader.ect0
                + " ECT(0)");
            for (final PolledUdpSocket s : senders) {
                s.close();
            }
            chunk.release();
            return new Measured(measured, reader.datagrams, reader.ect0);
        }
    }

    /** @return bytes this thread allocated sending and receiving {@link #DATAGRAMS_PER_ROUND} datagrams */
    private static long round(final com.sun.management.ThreadMXBean mx, final PolledUdpSocket[] senders,
                              final PolledUdpSocket receiving, final SendChunk chunk, final SendBatch batch,
                              final InetSocketAddress to, final Reader reader) throws Exception {
        final long target = reader.datagrams + DATAGRAMS_PER_ROUND;
        final long before = mx.getCurrentThreadAllocatedBytes();
        int next = 0;
        while (reader.datagrams < target) {
            final PolledUdpSocket s = senders[next++ & 3];
            // Half the batch as separate datagrams, half as one GSO message (split for a receiver without GRO).
            batch.add(chunk, 0, PER_BATCH / 2 * PAYLOAD, PAYLOAD, false, to);
            batch.add(chunk, PER_BATCH / 2 * PAYLOAD, PER_BATCH / 2 * PAYLOAD, PAYLOAD, true, to);
            final int taken = s.send(batch);
            batch.takeStop();
            batch.clear();
            batch.add(chunk, 0, PAYLOAD, PAYLOAD, false, null);
            senders[0].send(batch);
            batch.takeStop();
            batch.clear();
            if (taken == 0) {
                Thread.onSpinWait();
            }
            while (receiving.receive(256) > 0) {
                // drain
            }
            // A driver with nothing to do waits in epoll: a wait that returns at once, every turn.
            receiving.awaitReadable(0);
        }
        return mx.getCurrentThreadAllocatedBytes() - before;
    }
}
