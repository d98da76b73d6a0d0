// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.conformance.proxy;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.DatagramChannel;
import java.util.SplittableRandom;
import java.util.concurrent.DelayQueue;
import java.util.concurrent.Delayed;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A seeded UDP fault proxy for one conversation: the first peer that sends to the proxy's listen
 * address is the client; its packets go to the target from the proxy's own socket, and whatever
 * comes back to that socket (from any port of the target host, e.g. entropy ports) goes to the
 * client. Each direction applies the {@link FaultProfile} with its own seeded random stream, then
 * the {@link PacketMutator}.
 */
public final class FaultProxy implements AutoCloseable {
    private final DatagramChannel front;
    private final DatagramChannel back;
    private final InetSocketAddress target;
    private final Direction toTarget;
    private final Direction toClient;
    private final PacketMutator mutator;
    private final DelayQueue<Scheduled> queue = new DelayQueue<>();
    private final long startNs = System.nanoTime();
    private final Thread[] threads;
    private volatile InetSocketAddress client;
    private volatile boolean closed;

    /** Counters of one direction. */
    public static final class Stats {
        public final AtomicLong received = new AtomicLong();
        public final AtomicLong forwarded = new AtomicLong();
        public final AtomicLong dropped = new AtomicLong();
        public final AtomicLong duplicated = new AtomicLong();
        public final AtomicLong corrupted = new AtomicLong();
        public final AtomicLong reordered = new AtomicLong();

        @Override
        public String toString() {
            return "received=" + received + " forwarded=" + forwarded + " dropped=" + dropped + " duplicated="
                + duplicated + " corrupted=" + corrupted + " reordered=" + reordered;
        }
    }

    private final class Direction {
        volatile FaultProfile profile;
        final SplittableRandom random;
        final boolean towardsTarget;
        final Stats stats = new Stats();
        int burstLeft;
        double tokens;
        long lastRefillNs = System.nanoTime();

        Direction(final FaultProfile profile, final long seed, final boolean towardsTarget) {
            this.profile = profile;
            this.random = new SplittableRandom(seed);
            this.towardsTarget = towardsTarget;
            this.tokens = profile.ratePps();
        }

        synchronized void handle(final byte[] datagram) {
            stats.received.incrementAndGet();
            final long now = System.nanoTime();
            final long sinceStartMs = (now - startNs) / 1_000_000L;
            for (final long[] w : profile.blackholes()) {
                if (sinceStartMs >= w[0] && sinceStartMs < w[1]) {
                    stats.dropped.incrementAndGet();
                    return;
                }
            }
            if (profile.ratePps() > 0) {
                tokens = Math.min(profile.ratePps(), tokens + (now - lastRefillNs) * profile.ratePps() / 1e9);
                lastRefillNs = now;
                if (tokens < 1) {
                    stats.dropped.incrementAndGet();
                    return;
                }
                tokens -= 1;
            }
            if (burstLeft > 0) {
                burstLeft--;
                stats.dropped.incrementAndGet();
                return;
            }
            if (chance(profile.lossPercent())) {
                burstLeft = profile.burst() - 1;
                stats.dropped.incrementAndGet();
                return;
            }
            if (chance(profile.corruptPercent())) {
                final int to = Math.min(datagram.length, profile.corruptTo());
                if (to > profile.corruptFrom()) {
                    datagram[profile.corruptFrom() + random.nextInt(to - profile.corruptFrom())]
                        ^= (byte) (1 << random.nextInt(8));
                    stats.corrupted.incrementAndGet();
                }
            }
            double delayMs = profile.delayMs() + (profile.jitterMs() > 0 ? random.nextDouble() * profile.jitterMs()
                : 0);
            if (chance(profile.reorderPercent())) {
                delayMs += profile.reorderMs();
                stats.reordered.incrementAndGet();
            }
            final int copies = chance(profile.duplicatePercent()) ? 2 : 1;
            if (copies == 2) {
                stats.duplicated.incrementAndGet();
            }
            for (final byte[] out : mutator.apply(towardsTarget, datagram)) {
                for (int c = 0; c < copies; c++) {
                    if (delayMs <= 0) {
                        send(this, out);
                    } else {
                        queue.add(new Scheduled(this, out, now + (long) (delayMs * 1_000_000L)));
                    }
                }
            }
        }

        private boolean chance(final double percent) {
            return percent > 0 && random.nextDouble() * 100 < percent;
        }
    }

    private record Scheduled(Direction dir, byte[] datagram, long dueNs) implements Delayed {
        @Override
        public long getDelay(final TimeUnit unit) {
            return unit.convert(dueNs - System.nanoTime(), TimeUnit.NANOSECONDS);
        }

        @Override
        public int compareTo(final Delayed o) {
            return Long.compare(dueNs, ((Scheduled) o).dueNs);
        }
    }

    /**
     * Starts the proxy.
     *
     * @param listen address the client sends to
     * @param target where the client's packets go
     * @param toTargetProfile faults on the way to the target
     * @param toClientProfile faults on the way back
     * @param seed seed of both directions' random streams
     * @param mutator rewrites packets after the faults ({@link PacketMutator#NONE} for none)
     */
    public FaultProxy(final InetSocketAddress listen, final InetSocketAddress target,
                      final FaultProfile toTargetProfile, final FaultProfile toClientProfile, final long seed,
                      final PacketMutator mutator) {
        this.target = target;
        this.mutator = mutator;
        this.toTarget = new Direction(toTargetProfile, seed, true);
        this.toClient = new Direction(toClientProfile, seed * 0x9E3779B97F4A7C15L + 1, false);
        try {
            front = DatagramChannel.open().bind(listen);
            back = DatagramChannel.open().bind(new InetSocketAddress(listen.getAddress(), 0));
        } catch (final IOException ex) {
            throw new UncheckedIOException("cannot bind the fault proxy on " + listen, ex);
        }
        threads = new Thread[] {
            new Thread(() -> pump(front, true), "fault-proxy-front"),
            new Thread(() -> pump(back, false), "fault-proxy-back"),
            new Thread(this::sendLoop, "fault-proxy-delay")};
        for (final Thread t : threads) {
            t.setDaemon(true);
            t.start();
        }
    }

    /**
     * Changes the faults from now on (for example: a clean handshake, then a lossy transfer).
     *
     * @param toTargetProfile faults on the way to the target
     * @param toClientProfile faults on the way back
     */
    public void profiles(final FaultProfile toTargetProfile, final FaultProfile toClientProfile) {
        toTarget.profile = toTargetProfile;
        toClient.profile = toClientProfile;
    }

    /**
     * Sends a datagram as if it had passed the proxy (for mutators that add packets of their own).
     *
     * @param towardsTarget direction
     * @param datagram the packet
     */
    public void inject(final boolean towardsTarget, final byte[] datagram) {
        send(towardsTarget ? toTarget : toClient, datagram);
    }

    /** @return the address clients send to */
    public InetSocketAddress listenAddress() {
        try {
            return (InetSocketAddress) front.getLocalAddress();
        } catch (final IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }

    /** @return counters of the client-to-target direction */
    public Stats toTargetStats() {
        return toTarget.stats;
    }

    /** @return counters of the target-to-client direction */
    public Stats toClientStats() {
        return toClient.stats;
    }

    private void pump(final DatagramChannel ch, final boolean fromClient) {
        final ByteBuffer buf = ByteBuffer.allocate(65536);
        while (!closed) {
            try {
                buf.clear();
                final InetSocketAddress from = (InetSocketAddress) ch.receive(buf);
                if (from == null) {
                    continue;
                }
                buf.flip();
                final byte[] d = new byte[buf.remaining()];
                buf.get(d);
                if (fromClient) {
                    client = from;
                    toTarget.handle(d);
                } else if (client != null) {
                    toClient.handle(d);
                }
            } catch (final ClosedChannelException ex) {
                return;
            } catch (final IOException ex) {
                if (closed) {
                    return;
                }
            }
        }
    }

    private void sendLoop() {
        while (!closed) {
            try {
                final Scheduled s = queue.poll(50, TimeUnit.MILLISECONDS);
                if (s != null) {
                    send(s.dir(), s.datagram());
                }
            } catch (final InterruptedException ex) {
                return;
            }
        }
    }

    private void send(final Direction dir, final byte[] datagram) {
        try {
            if (dir.towardsTarget) {
                back.send(ByteBuffer.wrap(datagram), target);
            } else {
                final InetSocketAddress c = client;
                if (c == null) {
                    return;
                }
                front.send(ByteBuffer.wrap(datagram), c);
            }
            dir.stats.forwarded.incrementAndGet();
        } catch (final IOException ex) {
            dir.stats.dropped.incrementAndGet();
        }
    }

    @Override
    public void close() {
        closed = true;
        try {
            front.close();
            back.close();
        } catch (final IOException ex) {
            // Closing.
        }
        for (final Thread t : threads) {
            t.interrupt();
            try {
                t.join(2000);
            } catch (final InterruptedException ex) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
