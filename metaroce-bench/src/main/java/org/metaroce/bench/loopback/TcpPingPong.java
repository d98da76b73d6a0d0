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
 * TCP ping-pong over one loopback stream with Java NIO (TCP_NODELAY, non-blocking, both threads
 * spinning): the benchmark thread writes a message and reads until the whole echo is back; the
 * {@link PeerThread} writes back every byte it reads.
 */
public final class TcpPingPong implements PingPongHarness {
    private final int size;
    private final SocketChannel client;
    private final PeerThread<Echo> server;
    private final ByteBuffer ping;
    private final ByteBuffer pong;
    private final UnsafeBuffer pingView;
    private final UnsafeBuffer pongView;
    private final Guard guard;
    private final long verifyBelow;
    private long rounds;

    /**
     * @param size message bytes
     * @param verifyRounds the first rounds whose echo is compared with the ping byte for byte
     * @param idle how both threads wait when there is nothing to do
     */
    public TcpPingPong(final int size, final long verifyRounds, final Idle idle) {
        this.guard = new Guard(idle);
        this.size = size;
        this.verifyBelow = verifyRounds;
        final SocketChannel[] ends = TcpEnds.connect();
        client = ends[0];
        try {
            server = new PeerThread<>("tcp-echo", idle, () -> new Echo(ends[1]));
        } catch (final RuntimeException ex) {
            TcpEnds.close(ends[0]);
            TcpEnds.close(ends[1]);
            throw ex;
        }
        ping = BufferUtil.allocateDirectAligned(Math.max(64, size), 64);
        pong = BufferUtil.allocateDirectAligned(Math.max(64, size), 64);
        pingView = new UnsafeBuffer(ping);
        pongView = new UnsafeBuffer(pong);
        Payload.fill(pingView, 0, size);
    }

    @Override
    public void roundTrip() {
        final boolean verify = rounds < verifyBelow;
        if (verify) {
            Payload.stamp(pingView, 0, size, rounds);
        }
        ping.clear().limit(size);
        pong.clear().limit(size);
        guard.reset();
        try {
            while (ping.hasRemaining()) {
                if (guard.idle(client.write(ping))) {
                    throw Guard.stuck("TCP ping not written for 10 s");
                }
            }
            guard.reset();
            while (pong.hasRemaining()) {
                final int n = client.read(pong);
                if (n < 0) {
                    throw new IllegalStateException("TCP echo closed the connection");
                }
                if (guard.idle(n)) {
                    throw Guard.stuck("TCP pong " + rounds + " missing");
                }
            }
        } catch (final IOException ex) {
            throw new UncheckedIOException("TCP ping-pong failed", ex);
        }
        if (verify) {
            final String problem = Payload.check(pongView, 0, size, rounds);
            if (problem != null) {
                throw new IllegalStateException("TCP echo differs from the ping: " + problem);
            }
        }
        rounds++;
    }

    @Override
    public void close() {
        // The peer thread first: it must not take the closed connection for a failure.
        try {
            server.close();
        } finally {
            TcpEnds.close(client);
        }
    }

    /** Writes back whatever arrives. */
    static final class Echo implements PeerThread.Duty {
        private final SocketChannel channel;
        private final ByteBuffer buffer = BufferUtil.allocateDirectAligned(64 << 10, 64);

        Echo(final SocketChannel channel) {
            this.channel = channel;
        }

        @Override
        public int doWork() {
            buffer.clear();
            try {
                final int n = channel.read(buffer);
                if (n <= 0) {
                    return 0;
                }
                buffer.flip();
                while (buffer.hasRemaining()) {
                    channel.write(buffer);
                }
                return n;
            } catch (final IOException ex) {
                throw new UncheckedIOException("TCP echo failed", ex);
            }
        }

        @Override
        public void close() {
            TcpEnds.close(channel);
        }
    }
}
