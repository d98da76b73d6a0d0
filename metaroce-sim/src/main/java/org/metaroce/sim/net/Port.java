// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.sim.net;

import java.util.SplittableRandom;

import org.metaroce.sim.EventHandler;

/**
 * One end of a full-duplex link: an output queue that serializes packets at the line rate and
 * delivers them to the peer port after the propagation delay. Trimmed headers wait in a strict
 * priority queue ahead of data, as trimming switches do. A port may be paused by its peer (PFC),
 * taken down (link failure: everything it sends is lost), or lose packets at random.
 *
 * <p>Serialization is tracked in picoseconds so that back-to-back packets leave at exactly the
 * line rate even when a packet's time on the wire is not a whole number of nanoseconds; events
 * themselves fire on the next whole nanosecond.
 */
public final class Port implements EventHandler {
    private static final int TX_DONE = 0;
    private static final int ARRIVAL = 1;
    private static final int PAUSE = 2;
    private static final int RESUME = 3;

    final Node owner;
    final int index;
    final long rateBps;
    final long propagationNs;
    private final long psPerByte;
    Port peer;
    private final PacketRing data = new PacketRing();
    private final PacketRing priority = new PacketRing();
    long queuedBytes;
    private boolean busy;
    private long lineFreePs;
    private boolean paused;
    private long pausedSinceNs;
    boolean up = true;
    private double lossProbability;
    private SplittableRandom lossRandom;
    /** Bytes that entered the owning switch through this port and are still queued there (PFC). */
    long ingressBytes;
    /** Whether this port has told its peer to pause (PFC XOFF sent, XON not yet). */
    boolean pauseSent;

    long txPackets;
    long txBytes;
    long tailDrops;
    long trims;
    long ecnMarks;
    long randomLosses;
    long linkDownLosses;
    long pausesSent;
    long pausesReceived;
    long pausedNs;
    long maxQueuedBytes;

    Port(final Node owner, final int index, final long rateBps, final long propagationNs) {
        if (rateBps <= 0 || 8_000_000_000_000L % rateBps != 0) {
            throw new IllegalArgumentException("link rate must divide 8 Tb/s exactly (e.g. 25, 50, 100, 200, 400 Gb/s), got "
                + rateBps + " b/s");
        }
        if (propagationNs < 0) {
            throw new IllegalArgumentException("propagation delay must be >= 0 ns, got " + propagationNs);
        }
        this.owner = owner;
        this.index = index;
        this.rateBps = rateBps;
        this.propagationNs = propagationNs;
        this.psPerByte = 8_000_000_000_000L / rateBps;
    }

    /** @return line rate in bits per second */
    public long rateBps() {
        return rateBps;
    }

    /** @return one-way propagation delay to the peer */
    public long propagationNs() {
        return propagationNs;
    }

    /** @return the node owning this port */
    public Node owner() {
        return owner;
    }

    /** @return the port at the other end of the link */
    public Port peer() {
        return peer;
    }

    /** @return bytes waiting (not counting the packet on the wire) */
    public long queuedBytes() {
        return queuedBytes;
    }

    /** @return packets waiting (not counting the packet on the wire) */
    public int queuedPackets() {
        return data.size() + priority.size();
    }

    /** @return whether the link is up */
    public boolean isUp() {
        return up;
    }

    /**
     * Serialization time of {@code bytes} on this port, rounded up to whole nanoseconds: the time
     * a lone packet takes to leave an idle port.
     *
     * @param bytes wire bytes
     * @return nanoseconds
     */
    public long serializationNs(final int bytes) {
        return (bytes * psPerByte + 999) / 1000;
    }

    void lossProbability(final double p, final SplittableRandom random) {
        this.lossProbability = p;
        this.lossRandom = random;
    }

    /** Queues a packet and starts sending if the line is idle; admission is the owner's job. */
    void enqueue(final long nowNs, final Packet p, final boolean highPriority) {
        (highPriority ? priority : data).add(p);
        queuedBytes += p.wireBytes();
        if (queuedBytes > maxQueuedBytes) {
            maxQueuedBytes = queuedBytes;
        }
        tryStart(nowNs);
    }

    private void tryStart(final long nowNs) {
        if (busy || paused || (data.isEmpty() && priority.isEmpty())) {
            return;
        }
        final Packet p = priority.isEmpty() ? data.poll() : priority.poll();
        final int bytes = p.wireBytes();
        queuedBytes -= bytes;
        busy = true;
        final long startPs = Math.max(nowNs * 1000, lineFreePs);
        lineFreePs = startPs + bytes * psPerByte;
        owner.onDequeued(nowNs, p, this);
        owner.network.simulator.schedule((lineFreePs + 999) / 1000, this, p, TX_DONE);
    }

    @Override
    public void onEvent(final long nowNs, final Object subject, final int arg) {
        switch (arg) {
            case TX_DONE -> onTransmitted(nowNs, (Packet) subject);
            case ARRIVAL -> owner.receive(nowNs, (Packet) subject, this);
            case PAUSE -> {
                if (!paused) {
                    paused = true;
                    pausedSinceNs = nowNs;
                    pausesReceived++;
                }
            }
            case RESUME -> {
                if (paused) {
                    paused = false;
                    pausedNs += nowNs - pausedSinceNs;
                    tryStart(nowNs);
                }
            }
            default -> throw new IllegalStateException("unknown port event " + arg);
        }
    }

    private void onTransmitted(final long nowNs, final Packet p) {
        busy = false;
        txPackets++;
        txBytes += p.wireBytes();
        if (!up) {
            linkDownLosses++;
            owner.network.pool.release(p);
        } else if (lossProbability > 0 && lossRandom.nextDouble() < lossProbability) {
            randomLosses++;
            owner.network.pool.release(p);
        } else {
            owner.network.simulator.schedule(nowNs + propagationNs, peer, p, ARRIVAL);
        }
        tryStart(nowNs);
    }

    /** Sends PFC XOFF (or XON) to the peer; it takes effect after the propagation delay. */
    void signalPeer(final long nowNs, final boolean pause) {
        pauseSent = pause;
        if (pause) {
            pausesSent++;
        }
        owner.network.simulator.schedule(nowNs + propagationNs, peer, null, pause ? PAUSE : RESUME);
    }

    /** @return total time this port spent paused by its peer, up to {@code nowNs} */
    public long pausedNs(final long nowNs) {
        return pausedNs + (paused ? nowNs - pausedSinceNs : 0);
    }

    /** @return packets put on the wire */
    public long txPackets() {
        return txPackets;
    }

    /** @return wire bytes sent */
    public long txBytes() {
        return txBytes;
    }

    /** @return packets dropped because the buffer was full */
    public long tailDrops() {
        return tailDrops;
    }

    /** @return packets trimmed to their header */
    public long trims() {
        return trims;
    }

    /** @return packets marked CE */
    public long ecnMarks() {
        return ecnMarks;
    }

    /** @return packets lost to random loss injection */
    public long randomLosses() {
        return randomLosses;
    }

    /** @return packets lost because the link was down */
    public long linkDownLosses() {
        return linkDownLosses;
    }

    /** @return PFC pause frames this port sent to its peer */
    public long pausesSent() {
        return pausesSent;
    }

    /** @return PFC pause frames this port received */
    public long pausesReceived() {
        return pausesReceived;
    }

    /** @return largest queue seen, in bytes */
    public long maxQueuedBytes() {
        return maxQueuedBytes;
    }

    @Override
    public String toString() {
        return owner.name + "[" + index + "]->" + (peer == null ? "?" : peer.owner.name);
    }
}
