// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.bench.loopback;

import io.aeron.ExclusivePublication;
import io.aeron.Publication;
import io.aeron.Subscription;
import io.aeron.logbuffer.FragmentHandler;
import org.agrona.BufferUtil;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * Aeron ping-pong over UDP loopback between two embedded INVOKER-mode drivers, as Aeron's own
 * Ping/Pong samples (one stream each way): the benchmark thread offers a ping and invokes its
 * driver and client while polling the pong subscription; the {@link PeerThread} invokes its driver
 * and offers every ping back on the pong stream. Both threads busy-spin, the comparable idle
 * strategy to MetaRoCE's spinning INVOKER threads.
 */
public final class AeronPingPong implements PingPongHarness {
    private static final int PING_STREAM = 1002;
    private static final int PONG_STREAM = 1003;

    private final int size;
    private final AeronEnd client;
    private final ExclusivePublication ping;
    private final Subscription pong;
    private final PeerThread<Echo> server;
    private final UnsafeBuffer message;
    private final Guard guard;
    private final long verifyBelow;
    private final FragmentHandler onPong;
    private long rounds;
    private boolean back;
    private String failure;

    /**
     * @param size message bytes
     * @param verifyRounds the first rounds whose pong is compared with the ping byte for byte
     * @param idle how both threads wait when there is nothing to do
     */
    public AeronPingPong(final int size, final long verifyRounds, final Idle idle) {
        this.guard = new Guard(idle);
        this.size = size;
        this.verifyBelow = verifyRounds;
        final int pingPort = AeronEnd.freePort();
        final int pongPort = AeronEnd.freePort();
        client = new AeronEnd(AeronEnd.DEFAULT_MTU);
        PeerThread<Echo> peer = null;
        try {
            peer = new PeerThread<>("aeron-pong", idle, () -> new Echo(pingPort, pongPort));
            ping = client.aeron.addExclusivePublication(client.channel(pingPort), PING_STREAM);
            pong = client.aeron.addSubscription(client.channel(pongPort), PONG_STREAM);
            guard.reset();
            final Echo e = peer.state();
            while (!ping.isConnected() || !pong.isConnected() || !e.connected) {
                client.invoke();
                peer.checkHealthy();
                if (guard.idle(0)) {
                    throw Guard.stuck("Aeron ping/pong streams never connected");
                }
            }
        } catch (final RuntimeException ex) {
            if (peer != null) {
                peer.close();
            }
            client.close();
            throw ex;
        }
        server = peer;
        message = new UnsafeBuffer(BufferUtil.allocateDirectAligned(Math.max(64, size), 64));
        Payload.fill(message, 0, size);
        onPong = (buffer, offset, length, header) -> {
            if (rounds < verifyBelow && failure == null) {
                failure = length != this.size ? "pong of " + length + " bytes, not " + this.size
                    : Payload.check(buffer, offset, length, rounds);
            }
            back = true;
        };
    }

    @Override
    public void roundTrip() {
        if (rounds < verifyBelow) {
            Payload.stamp(message, 0, size, rounds);
        }
        guard.reset();
        long result;
        while ((result = ping.offer(message, 0, size)) < 0) {
            if (result == Publication.CLOSED || result == Publication.MAX_POSITION_EXCEEDED) {
                throw new IllegalStateException("Aeron ping failed: " + Publication.errorString(result));
            }
            client.invoke();
            if (guard.idle(0)) {
                throw Guard.stuck("Aeron ping refused for 10 s");
            }
        }
        back = false;
        guard.reset();
        while (!back) {
            if (guard.idle(client.invoke() + pong.poll(onPong, 1))) {
                throw Guard.stuck("Aeron pong " + rounds + " missing");
            }
        }
        if (failure != null) {
            throw new IllegalStateException("Aeron pong differs from the ping: " + failure);
        }
        rounds++;
    }

    @Override
    public void close() {
        try {
            server.close();
        } finally {
            client.close();
        }
    }

    /** Offers every ping back. */
    static final class Echo implements PeerThread.Duty {
        final AeronEnd end = new AeronEnd(AeronEnd.DEFAULT_MTU);
        final Subscription pings;
        final ExclusivePublication pongs;
        final FragmentHandler echo;
        volatile boolean connected;

        Echo(final int pingPort, final int pongPort) {
            pings = end.aeron.addSubscription(end.channel(pingPort), PING_STREAM);
            pongs = end.aeron.addExclusivePublication(end.channel(pongPort), PONG_STREAM);
            echo = (buffer, offset, length, header) -> {
                long result;
                while ((result = pongs.offer(buffer, offset, length)) < 0) {
                    if (result == Publication.CLOSED || result == Publication.MAX_POSITION_EXCEEDED) {
                        throw new IllegalStateException("Aeron pong failed: " + Publication.errorString(result));
                    }
                    end.invoke();
                }
            };
        }

        @Override
        public int doWork() {
            if (!connected && pongs.isConnected() && pings.isConnected()) {
                connected = true;
            }
            return end.invoke() + pings.poll(echo, 16);
        }

        @Override
        public void close() {
            end.close();
        }
    }
}
