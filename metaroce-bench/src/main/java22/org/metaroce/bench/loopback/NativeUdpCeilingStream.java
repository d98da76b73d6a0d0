// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.bench.loopback;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetAddress;
import java.net.InetSocketAddress;

import org.agrona.concurrent.UnsafeBuffer;
import org.metaroce.netty.linux.Epoll;
import org.metaroce.netty.linux.ErrnoException;
import org.metaroce.netty.linux.LinuxUdpSocket;
import org.metaroce.netty.linux.ReceiveBatch;
import org.metaroce.netty.linux.SendBatch;
import org.metaroce.netty.linux.UdpOutcome;

/**
 * The UDP ceiling: plain 4 KiB datagrams, no protocol, through the native sockets
 * ({@code org.metaroce.netty.linux}) on loopback, shaped as {@code udpblast.c} (the same ceiling
 * in C) shapes them: the benchmark thread sends {@code sendmmsg} calls of 32 messages of 15 GSO
 * segments each on a connected socket; the {@link PeerThread} receives with {@code recvmmsg},
 * 32 datagrams of 4 KiB per call, GRO off, and when nothing is waiting sleeps in
 * {@code epoll_wait} (udpblast blocks in {@code recvmmsg}); 8 MiB socket buffers asked for. Delivered bytes are
 * what the receiver counted (datagrams the receive buffer had no room for are lost, as in C).
 *
 * <p>A message of the harness is {@code size} bytes (a multiple of 4096) of datagrams; they are
 * sent whenever a full batch (32 × 15 datagrams) has been handed over, so the physical path is
 * the same for every message size. The self-check sends each message alone, stamped per
 * datagram, and the receiver compares those datagrams byte for byte.
 */
public final class NativeUdpCeilingStream implements StreamHarness {
    /** Payload bytes per datagram. */
    static final int DATAGRAM = 4096;
    /** GSO segments per sendmmsg message (udpblast's 15). */
    static final int SEGMENTS = 15;
    /** Messages per sendmmsg and datagrams per recvmmsg (udpblast's BATCH). */
    static final int BATCH = 32;
    /** Bytes the sockets ask for: udpblast's 8 MiB (the kernel caps them at net.core.*mem_max). */
    static final int SOCKET_BUFFER = 8 << 20;

    private final int size;
    private final int datagramsPerMessage;
    private final Arena arena = Arena.ofShared();
    private final LinuxUdpSocket socket;
    private final SendBatch batch;
    private final SendBatch single;
    private final MemorySegment checked;
    private final PeerThread<Receiver> receiver;
    private final Guard guard;
    private long pendingDatagrams;
    /** The next self-check datagram's stamp: far from 0, the stamp of the bulk batches' zero payload. */
    private long stamped = 1L << 40;

    /**
     * @param size message bytes, a multiple of 4096 up to 64 datagrams
     * @param idle how both threads wait when there is nothing to do
     */
    public NativeUdpCeilingStream(final int size, final Idle idle) {
        if (size < DATAGRAM || size % DATAGRAM != 0 || size / DATAGRAM > 64) {
            throw new IllegalArgumentException("the UDP ceiling sends 4 KiB datagrams: size must be 4096..262144 "
                + "in steps of 4096, got " + size);
        }
        this.size = size;
        this.datagramsPerMessage = size / DATAGRAM;
        this.guard = new Guard(idle);
        PeerThread<Receiver> peer = null;
        LinuxUdpSocket tx = null;
        try {
            peer = new PeerThread<>("udp-ceiling-receiver", idle, Receiver::new);
            tx = LinuxUdpSocket.open(false);
            tx.setSendBufferSize(SOCKET_BUFFER);
            tx.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), peer.state().port));
        } catch (final ErrnoException | RuntimeException ex) {
            if (tx != null) {
                tx.close();
            }
            if (peer != null) {
                peer.close();
            }
            arena.close();
            throw ex instanceof RuntimeException r ? r : new IllegalStateException(ex.getMessage(), ex);
        }
        receiver = peer;
        socket = tx;
        // One payload of 15 datagrams that every message of the batch points at (as udpblast's).
        final MemorySegment payload = arena.allocate((long) SEGMENTS * DATAGRAM, 4096);
        batch = new SendBatch(BATCH);
        for (int m = 0; m < BATCH; m++) {
            batch.segmentSize(batch.add(payload), DATAGRAM);
        }
        checked = arena.allocate((long) datagramsPerMessage * DATAGRAM, 4096);
        final UnsafeBuffer view = new UnsafeBuffer(checked.address(), (int) checked.byteSize());
        for (int d = 0; d < datagramsPerMessage; d++) {
            Payload.fill(view, d * DATAGRAM, DATAGRAM);
        }
        single = new SendBatch((datagramsPerMessage + SEGMENTS - 1) / SEGMENTS);
    }

    @Override
    public int messageBytes() {
        return size;
    }

    @Override
    public long deliveredBytes() {
        return receiver.state().bytes;
    }

    @Override
    public void send() {
        pendingDatagrams += datagramsPerMessage;
        while (pendingDatagrams >= (long) BATCH * SEGMENTS) {
            sendBatch();
            pendingDatagrams -= (long) BATCH * SEGMENTS;
        }
    }

    /** One sendmmsg of the full batch, resumed after partial sends. */
    private void sendBatch() {
        int first = 0;
        guard.reset();
        while (first < BATCH) {
            final int r = socket.send(batch, first);
            if (r > 0) {
                first += r;
                guard.reset();
                continue;
            }
            final UdpOutcome outcome = UdpOutcome.of(r);
            if (outcome != UdpOutcome.WOULD_BLOCK && outcome != UdpOutcome.NO_BUFFERS
                && outcome != UdpOutcome.INTERRUPTED) {
                throw new IllegalStateException("sendmmsg failed: " + outcome + " (errno " + -r + ")");
            }
            if (guard.idle(0)) {
                throw Guard.stuck("UDP ceiling: the socket took no datagram (" + outcome + ")");
            }
        }
    }

    /**
     * Sends each message alone, its datagrams stamped with sequence numbers, and waits until the
     * receiver has verified that many stamped datagrams byte for byte. Without a protocol a
     * datagram can be lost (the loopback backlog is shared with whatever else runs): a message
     * not verified within a second is sent again, up to 5 times.
     */
    @Override
    public void sendAndAwait(final int messages) {
        receiver.checkHealthy();
        final Receiver r = receiver.state();
        final UnsafeBuffer view = new UnsafeBuffer(checked.address(), (int) checked.byteSize());
        for (int i = 0; i < messages; i++) {
            final long target = r.verified + datagramsPerMessage;
            for (int d = 0; d < datagramsPerMessage; d++) {
                Payload.stamp(view, d * DATAGRAM, DATAGRAM, stamped + d);
            }
            r.expectStamps(stamped, stamped + datagramsPerMessage);
            int attempt = 0;
            while (r.verified < target) {
                if (++attempt > 5) {
                    throw new IllegalStateException("UDP ceiling self-check: " + (target - r.verified) + " of "
                        + datagramsPerMessage + " datagrams of a paced message did not arrive in 5 attempts");
                }
                sendChecked();
                final long deadline = System.nanoTime() + 1_000_000_000L;
                while (r.verified < target && System.nanoTime() < deadline) {
                    receiver.checkHealthy();
                    Thread.onSpinWait();
                }
            }
            stamped += datagramsPerMessage;
            final String bad = r.failure;
            if (bad != null) {
                throw new IllegalStateException("UDP ceiling self-check: " + bad);
            }
        }
        r.expectStamps(0, 0);   // the bulk batches that follow are only counted
    }

    /**
     * Sends the stamped message as GSO messages of at most 15 segments, as the batch sends them:
     * 16 × 4 KiB in one message would exceed the 65507 bytes a UDP datagram, and so a GSO
     * message, can carry.
     */
    private void sendChecked() {
        single.clear();
        for (int d = 0; d < datagramsPerMessage; d += SEGMENTS) {
            final int n = Math.min(SEGMENTS, datagramsPerMessage - d);
            single.segmentSize(single.add(checked.address() + (long) d * DATAGRAM, n * DATAGRAM), DATAGRAM);
        }
        int first = 0;
        guard.reset();
        while (first < single.count()) {
            final int sent = socket.send(single, first);
            if (sent < 0 && UdpOutcome.of(sent) != UdpOutcome.NO_BUFFERS) {
                throw new IllegalStateException("UDP ceiling self-check: sendmmsg failed: " + UdpOutcome.of(sent)
                    + " (errno " + -sent + ")");
            }
            first += Math.max(0, sent);
            if (guard.idle(sent)) {
                throw Guard.stuck("UDP ceiling: a self-check message was not taken");
            }
        }
    }

    @Override
    public void close() {
        try {
            receiver.close();
        } finally {
            socket.close();
            batch.close();
            single.close();
            arena.close();
        }
    }

    /** The receiving end: recvmmsg into 32 slots of 4 KiB, counting; checking while asked to. */
    static final class Receiver implements PeerThread.Duty {
        final LinuxUdpSocket socket;
        final ReceiveBatch batch = new ReceiveBatch(BATCH, DATAGRAM);
        final Epoll epoll;
        final int port;
        volatile long bytes;
        volatile long datagrams;
        volatile String failure;
        private final UnsafeBuffer view = new UnsafeBuffer(0, 0);
        /** Stamped datagrams that arrived intact. */
        volatile long verified;
        /** Stamps [stampFrom, stampTo) are the self-check's; others (the bulk batches) are only counted. */
        private long stampFrom;
        private volatile long stampTo;

        Receiver() {
            try {
                socket = LinuxUdpSocket.open(false);
                socket.setReceiveBufferSize(SOCKET_BUFFER);
                socket.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
                port = socket.localAddress().getPort();
                epoll = new Epoll(1);
                epoll.add(socket, 0L);
            } catch (final ErrnoException ex) {
                batch.close();
                throw new IllegalStateException("UDP ceiling receiver: " + ex.getMessage(), ex);
            }
        }

        /** Datagrams stamped {@code from} (inclusive) to {@code to} (exclusive) are to be verified. */
        void expectStamps(final long from, final long to) {
            stampFrom = from;
            stampTo = to;   // volatile: publishes stampFrom too
        }

        @Override
        public int doWork() {
            int n = socket.receive(batch);
            if (n == 0) {
                // Nothing waiting: sleep in the kernel until a datagram arrives, as udpblast's
                // blocking recvmmsg does (a park of the idle strategy would let the receive buffer
                // overflow before the thread runs again); the timeout keeps close() responsive.
                epoll.await(10);
                n = socket.receive(batch);
            }
            if (n <= 0) {
                if (n < 0 && UdpOutcome.of(n) != UdpOutcome.INTERRUPTED) {
                    throw new IllegalStateException("recvmmsg failed: " + UdpOutcome.of(n) + " (errno " + -n + ")");
                }
                return 0;
            }
            long b = 0;
            final long to = stampTo;
            for (int i = 0; i < n; i++) {
                final int length = batch.length(i);
                b += length;
                if (to > 0) {
                    verify(batch.address(i), length, to);
                }
            }
            bytes += b;
            datagrams += n;
            return n;
        }

        private void verify(final long address, final int length, final long to) {
            if (length != DATAGRAM) {
                return;   // not a self-check datagram (those are all 4 KiB)
            }
            view.wrap(address, length);
            final long stamp = view.getLong(0);
            if (stamp < stampFrom || stamp >= to) {
                return;   // a bulk datagram, or a duplicate of an earlier message's resend
            }
            final String bad = Payload.check(view, 0, length, stamp);
            if (bad != null) {
                if (failure == null) {
                    failure = bad;
                }
            } else {
                verified++;
            }
        }

        @Override
        public void close() {
            epoll.close();
            socket.close();
            batch.close();
        }
    }
}
