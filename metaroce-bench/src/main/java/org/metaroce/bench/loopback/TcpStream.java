// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.bench.loopback;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;

import org.agrona.BufferUtil;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * One TCP stream over loopback with Java NIO: the benchmark thread writes whole messages from a
 * direct buffer to a non-blocking channel, spinning while the socket buffer is full; the
 * {@link PeerThread} reads into a 256 KiB direct buffer, spinning while nothing is there.
 * Delivered bytes are what the reader read. The first messages of {@link #sendAndAwait} are
 * compared byte for byte across read boundaries.
 */
public final class TcpStream implements StreamHarness {
    private static final int READ_BUFFER_BYTES = 256 << 10;

    private final int size;
    private final SocketChannel client;
    private final PeerThread<Reader> reader;
    private final ByteBuffer message;
    private final UnsafeBuffer view;
    private final Guard guard;
    private long sent;

    /**
     * @param size message bytes
     * @param idle how both threads wait when there is nothing to do
     */
    public TcpStream(final int size, final Idle idle) {
        this.guard = new Guard(idle);
        this.size = size;
        final SocketChannel[] ends = TcpEnds.connect();
        client = ends[0];
        try {
            reader = new PeerThread<>("tcp-reader", idle, () -> new Reader(ends[1], size));
        } catch (final RuntimeException ex) {
            TcpEnds.close(ends[0]);
            TcpEnds.close(ends[1]);
            throw ex;
        }
        message = BufferUtil.allocateDirectAligned(Math.max(64, size), 64);
        view = new UnsafeBuffer(message);
        Payload.fill(view, 0, size);
    }

    @Override
    public int messageBytes() {
        return size;
    }

    @Override
    public long deliveredBytes() {
        return reader.state().bytes;
    }

    @Override
    public void send() {
        message.clear().limit(size);
        guard.reset();
        try {
            while (message.hasRemaining()) {
                if (guard.idle(client.write(message))) {
                    throw Guard.stuck("TCP socket buffer full for 10 s");
                }
            }
        } catch (final IOException ex) {
            throw new UncheckedIOException("TCP write failed", ex);
        }
        sent++;
    }

    @Override
    public void sendAndAwait(final int messages) {
        final Reader r = reader.state();
        awaitRead(r, sent * size);
        final long base = sent * size;
        final long first = sent;
        r.verifyFrom = first;
        r.verifyUntil = first + messages;
        for (int i = 0; i < messages; i++) {
            Payload.stamp(view, 0, size, first + i);
            send();
        }
        Payload.fill(view, 0, Math.min(size, Long.BYTES));
        awaitRead(r, base + (long) messages * size);
        if (r.failure != null) {
            throw new IllegalStateException("TCP delivered corrupt data: " + r.failure);
        }
    }

    private void awaitRead(final Reader r, final long bytes) {
        guard.reset();
        while (r.bytes < bytes) {
            reader.checkHealthy();
            if (guard.idle(0)) {
                throw Guard.stuck("TCP delivered " + r.bytes + " of " + bytes + " bytes");
            }
        }
    }

    @Override
    public void close() {
        // The peer thread first: it must not take the closed connection for a failure.
        try {
            reader.close();
        } finally {
            TcpEnds.close(client);
        }
    }

    /** Reads and counts; checks the messages of a self-check across read boundaries. */
    static final class Reader implements PeerThread.Duty {
        private final SocketChannel channel;
        private final ByteBuffer buffer = BufferUtil.allocateDirectAligned(READ_BUFFER_BYTES, 64);
        private final UnsafeBuffer view = new UnsafeBuffer(buffer);
        private final UnsafeBuffer assembled;
        private final int size;
        private long total;
        volatile long bytes;
        volatile long verifyFrom;
        volatile long verifyUntil;
        volatile String failure;

        Reader(final SocketChannel channel, final int size) {
            this.channel = channel;
            this.size = size;
            this.assembled = new UnsafeBuffer(BufferUtil.allocateDirectAligned(Math.max(64, size), 64));
        }

        @Override
        public int doWork() {
            buffer.clear();
            final int n;
            try {
                n = channel.read(buffer);
            } catch (final IOException ex) {
                throw new UncheckedIOException("TCP read failed", ex);
            }
            if (n < 0) {
                throw new IllegalStateException("TCP sender closed the connection after " + total + " bytes");
            }
            if (n == 0) {
                return 0;
            }
            final long seqAfter = (total + n) / size;
            if (seqAfter >= verifyFrom && total / size < verifyUntil) {
                verify(n);
            }
            total += n;
            bytes = total;
            return n;
        }

        /** Copies the bytes of messages being verified into a message buffer; checks each full one. */
        private void verify(final int n) {
            long position = total;
            for (int i = 0; i < n; i++, position++) {
                final long seq = position / size;
                final int inMessage = (int) (position % size);
                assembled.putByte(inMessage, view.getByte(i));
                if (inMessage == size - 1 && seq >= verifyFrom && seq < verifyUntil && failure == null) {
                    failure = Payload.check(assembled, 0, size, seq);
                }
            }
        }

        @Override
        public void close() {
            TcpEnds.close(channel);
        }
    }
}
