// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.testwire;

import java.util.ArrayList;
import java.util.List;
import java.util.PriorityQueue;
import java.util.function.BooleanSupplier;

import org.agrona.DirectBuffer;
import org.metaroce.core.engine.DatagramEndpoint;

/**
 * A deterministic, single-threaded network for protocol-engine tests: it connects any number of
 * {@link DatagramEndpoint}s in virtual time and injects seeded faults, so a test of loss recovery
 * runs in milliseconds, never flakes, and replays exactly from its seed.
 *
 * <p>The wire is the only clock. Endpoints get the current virtual time in every call and never
 * read one. A node id returned by {@link #attach} is also the {@code peerId} an endpoint commits
 * packets to, and the {@code peerId} its peers see in {@code onDatagram}.
 *
 * <p>Each step of the event loop, at one virtual instant: deliver every packet due now, poll every
 * endpoint in attach order, and repeat until no endpoint emits anything and nothing more is due
 * (a guard throws if an instant never settles); then jump to the earliest pending delivery or
 * endpoint deadline. Deliveries due at the same instant go in the order they were scheduled.
 *
 * <p>Randomness comes only from the seed: each directional link draws from its own stream derived
 * from the seed and the node pair (see {@link LinkProfile} for the faults). The same seed and the
 * same endpoint behaviour give exactly the same {@link Trace}. Print {@link #toString()}, which
 * includes the seed, in tests.
 */
public final class InMemoryWire {
    /** Bytes an endpoint can claim from its sink in one poll call. */
    public static final int SINK_CAPACITY = 64 * 1024;
    /** Default most poll rounds at one virtual instant before the wire declares a livelock. */
    public static final int DEFAULT_MAX_POLL_ROUNDS = 100_000;

    private final long seed;
    private final List<DatagramEndpoint> endpoints = new ArrayList<>();
    private final List<NodeSink> sinks = new ArrayList<>();
    private final PriorityQueue<PacketSlot> queue = new PriorityQueue<>(PacketSlot::compare);
    private final SlotPool pool = new SlotPool();
    private final Trace trace = new Trace();
    private final WireStats stats = new WireStats();
    private Link[][] links = new Link[0][0];
    private LinkProfile defaultProfile;
    private PacketFilter filter;
    private Bottleneck[] bottlenecks = new Bottleneck[0];
    private Policer[] policers = new Policer[0];
    private PacketMatcher ceMarker;
    private long now;
    private long nextSequence;
    private int maxPollRounds = DEFAULT_MAX_POLL_ROUNDS;
    private boolean running;

    /**
     * A wire with perfect links starting at virtual time 0.
     *
     * @param seed the seed of every random fault; print it so a failure can be replayed
     */
    public InMemoryWire(final long seed) {
        this(seed, LinkProfile.perfect());
    }

    /**
     * @param seed the seed of every random fault
     * @param defaultProfile profile of every link without one of its own
     */
    public InMemoryWire(final long seed, final LinkProfile defaultProfile) {
        this(seed, defaultProfile, 0);
    }

    /**
     * @param seed the seed of every random fault
     * @param defaultProfile profile of every link without one of its own
     * @param startTimeNs initial virtual time; a large one flushes out code that treats 0 as special
     */
    public InMemoryWire(final long seed, final LinkProfile defaultProfile, final long startTimeNs) {
        this.seed = seed;
        this.defaultProfile = requireProfile(defaultProfile);
        this.now = startTimeNs;
    }

    /**
     * Connects an endpoint. It is polled from the next step on.
     *
     * @param endpoint the endpoint
     * @return its node id, which peers use as {@code peerId}; ids count up from 0
     */
    public int attach(final DatagramEndpoint endpoint) {
        if (endpoint == null) {
            throw new NullPointerException("endpoint");
        }
        final int node = endpoints.size();
        endpoints.add(endpoint);
        sinks.add(new NodeSink(this, node, SINK_CAPACITY));
        final Link[][] grown = new Link[node + 1][node + 1];
        for (int i = 0; i < node; i++) {
            System.arraycopy(links[i], 0, grown[i], 0, node);
        }
        links = grown;
        return node;
    }

    /** @return number of attached endpoints */
    public int nodeCount() {
        return endpoints.size();
    }

    /** @return the endpoint attached as {@code node} */
    public DatagramEndpoint endpoint(final int node) {
        return endpoints.get(checkNode(node));
    }

    /** @return the seed this wire was created with */
    public long seed() {
        return seed;
    }

    /** @return the current virtual time in nanoseconds */
    public long now() {
        return now;
    }

    /** @return the profile of links without one of their own */
    public LinkProfile defaultProfile() {
        return defaultProfile;
    }

    /** @param profile new profile of every link without one of its own, effective for the next packet */
    public void defaultProfile(final LinkProfile profile) {
        defaultProfile = requireProfile(profile);
        for (final Link[] row : links) {
            for (final Link link : row) {
                if (link != null && !link.explicitProfile()) {
                    link.profile(profile, false);
                }
            }
        }
    }

    /**
     * Gives one direction of a node pair its own profile, effective for the next packet sent on it.
     * The link keeps its state (burst-loss state, serializer backlog).
     */
    public void link(final int from, final int to, final LinkProfile profile) {
        link(from, to).profile(requireProfile(profile), true);
    }

    /** Gives both directions between {@code a} and {@code b} the same profile. */
    public void linkBoth(final int a, final int b, final LinkProfile profile) {
        link(a, b, profile);
        link(b, a, profile);
    }

    /** @return the profile in force from {@code from} to {@code to} */
    public LinkProfile profile(final int from, final int to) {
        return link(from, to).profile();
    }

    /**
     * Puts a switch egress port in front of {@code node}: every packet to it, from any sender, then
     * shares one FIFO drained at {@code rateBitsPerSecond}, tail-dropped beyond {@code bufferBytes}
     * and CE-marked when it finds more than {@code markThresholdBytes} queued. The port sits after
     * the sender's own link serialization; the link's delay applies after the port.
     */
    public void bottleneck(final int node, final long rateBitsPerSecond, final long bufferBytes,
                           final long markThresholdBytes) {
        bottleneck(node, rateBitsPerSecond, bufferBytes, markThresholdBytes, false);
    }

    /**
     * As {@link #bottleneck(int, long, long, long)}; with {@code trim} a data packet that does not
     * fit is trimmed to its headers (TRIMMED set, Payload Length 0, no Integrity Check, [WIRE-042])
     * and forwarded regardless of the buffer, instead of dropped.
     */
    public void bottleneck(final int node, final long rateBitsPerSecond, final long bufferBytes,
                           final long markThresholdBytes, final boolean trim) {
        checkNode(node);
        bottlenecks = withRoom(bottlenecks, node);
        bottlenecks[node] = new Bottleneck(rateBitsPerSecond, bufferBytes, markThresholdBytes, trim);
    }

    /**
     * Puts the real-socket rig's bottleneck in front of {@code node} ({@link Policer}): a marker
     * that CE-marks ECN-capable packets above {@code markRateBitsPerSecond} beyond
     * {@code markBurstBytes}, then a policer that drops packets above {@code rateBitsPerSecond}
     * beyond {@code burstBytes}; no queue, no delay.
     */
    public void policer(final int node, final long rateBitsPerSecond, final long burstBytes,
                        final long markRateBitsPerSecond, final long markBurstBytes) {
        checkNode(node);
        policers = withRoom(policers, node);
        policers[node] = new Policer(rateBitsPerSecond, burstBytes, markRateBitsPerSecond, markBurstBytes);
    }

    /** @return {@code ports}, or a copy long enough to hold an entry for {@code node} */
    private static <T> T[] withRoom(final T[] ports, final int node) {
        return ports.length <= node ? java.util.Arrays.copyOf(ports, node + 1) : ports;
    }

    /** @param marker CE-marks exactly the packets it selects (besides random and port marks), or null */
    public void ceMark(final PacketMatcher marker) {
        this.ceMarker = marker;
    }

    /** @param filter the drop hook consulted for every packet sent, or null for none */
    public void filter(final PacketFilter filter) {
        this.filter = filter;
    }

    /** @return the record of packet events */
    public Trace trace() {
        return trace;
    }

    /** @return the packet counters */
    public WireStats stats() {
        return stats;
    }

    /** @return packet copies scheduled but not yet delivered */
    public int inFlight() {
        return queue.size();
    }

    /** @param maxPollRounds most poll rounds at one instant before a livelock is reported */
    public void maxPollRoundsPerInstant(final int maxPollRounds) {
        if (maxPollRounds < 1) {
            throw new IllegalArgumentException("maxPollRounds must be >= 1: " + maxPollRounds);
        }
        this.maxPollRounds = maxPollRounds;
    }

    /**
     * Runs the network up to and including virtual time {@code timeNs}, then leaves the clock there.
     *
     * @param timeNs absolute virtual time, not before {@link #now()}
     */
    public void runUntil(final long timeNs) {
        if (timeNs < now) {
            throw new IllegalArgumentException("cannot run back in time: " + timeNs + " < now " + now);
        }
        runUntil(() -> false, timeNs - now);
    }

    /** Runs the network for {@code durationNs} of virtual time. */
    public void runFor(final long durationNs) {
        runUntil(() -> false, durationNs);
    }

    /**
     * Runs the network until {@code condition} holds, checking it after every settled instant.
     * Returns as soon as it holds, leaving the clock at that instant; otherwise stops at the
     * timeout with the clock there.
     *
     * @param condition checked after each instant, typically reads the endpoints' state
     * @param timeoutNs most virtual time to run, relative to {@link #now()}
     * @return whether the condition held before or at the timeout
     */
    public boolean runUntil(final BooleanSupplier condition, final long timeoutNs) {
        if (timeoutNs < 0) {
            throw new IllegalArgumentException("timeoutNs must be >= 0: " + timeoutNs);
        }
        if (running) {
            throw new IllegalStateException("the wire is not re-entrant: runUntil called from an endpoint");
        }
        running = true;
        try {
            final long limit = now + timeoutNs < now ? Long.MAX_VALUE : now + timeoutNs;
            settle();
            while (!condition.getAsBoolean()) {
                final long next = nextEventTimeNs();
                if (next == Long.MAX_VALUE || next > limit) {
                    if (limit != Long.MAX_VALUE) {
                        now = limit;
                    }
                    return condition.getAsBoolean();
                }
                now = next;
                settle();
            }
            return true;
        } finally {
            running = false;
        }
    }

    /**
     * Settles the current instant, then advances to the next pending delivery or deadline and
     * settles that one.
     *
     * @return false if nothing was pending, so the clock did not move
     */
    public boolean step() {
        if (running) {
            throw new IllegalStateException("the wire is not re-entrant: step called from an endpoint");
        }
        running = true;
        try {
            settle();
            final long next = nextEventTimeNs();
            if (next == Long.MAX_VALUE) {
                return false;
            }
            now = next;
            settle();
            return true;
        } finally {
            running = false;
        }
    }

    /** @return the earliest pending delivery or endpoint deadline, {@link Long#MAX_VALUE} if none */
    public long nextEventTimeNs() {
        long next = queue.isEmpty() ? Long.MAX_VALUE : queue.peek().timeNs;
        for (final DatagramEndpoint endpoint : endpoints) {
            next = Math.min(next, endpoint.nextDeadlineNs());
        }
        return next;
    }

    private void settle() {
        int rounds = 0;
        while (true) {
            deliverDue();
            final int emitted = pollAll();
            final int staleNode = staleDeadlineNode();
            if (emitted == 0 && !deliveryDue() && staleNode < 0) {
                return;
            }
            if (++rounds >= maxPollRounds) {
                throw new IllegalStateException("livelock: virtual instant " + now + " did not settle after "
                    + rounds + " poll rounds (last round emitted " + emitted + " packets"
                    + (staleNode >= 0 ? ", node " + staleNode + " keeps a deadline <= now" : "")
                    + "); " + this);
            }
        }
    }

    private void deliverDue() {
        while (deliveryDue()) {
            final PacketSlot packet = queue.poll();
            stats.delivered++;
            trace.record(now, packet, PacketFate.DELIVERED);
            try {
                if (packet.hostArrivalNs >= 0) {
                    endpoints.get(packet.to).onDatagram(now, Math.min(packet.hostArrivalNs, now), packet.buffer, 0,
                        packet.length, packet.from, packet.ecn);
                } else {
                    endpoints.get(packet.to).onDatagram(now, packet.buffer, 0, packet.length, packet.from,
                        packet.ecn);
                }
            } finally {
                pool.release(packet);
            }
        }
    }

    private boolean deliveryDue() {
        return !queue.isEmpty() && queue.peek().timeNs <= now;
    }

    private int pollAll() {
        int emitted = 0;
        for (int node = 0; node < endpoints.size(); node++) {
            final NodeSink sink = sinks.get(node);
            sink.reset();
            endpoints.get(node).poll(now, sink);
            emitted += sink.commits();
        }
        return emitted;
    }

    private int staleDeadlineNode() {
        for (int node = 0; node < endpoints.size(); node++) {
            if (endpoints.get(node).nextDeadlineNs() <= now) {
                return node;
            }
        }
        return -1;
    }

    /** Called by a node's sink on commit: copies the packet out and decides its fate. */
    void transmit(final int from, final DirectBuffer buffer, final int offset, final int sentLength, final int to,
                  final int entropy) {
        int length = sentLength;
        if (to < 0 || to >= endpoints.size()) {
            throw new IllegalArgumentException("node " + from + " sent to unknown peerId " + to
                + " (nodes 0.." + (endpoints.size() - 1) + ")");
        }
        final PacketSlot packet = pool.acquire(length);
        packet.buffer.putBytes(0, buffer, offset, length);
        packet.length = length;
        packet.sentNs = now;
        packet.packetId = ++stats.sent;
        packet.from = from;
        packet.to = to;
        packet.entropy = entropy;
        packet.opcode = PacketMatcher.opcodeOf(buffer, offset, length);
        packet.psn = PacketMatcher.psnOf(buffer, offset, length);

        final Link link = link(from, to);
        final LinkProfile profile = link.profile();
        packet.ecn = profile.ecn();
        long departNs = link.serialize(profile.pausedUntil(now), length);

        if (filter != null && filter.drop(from, to, packet.buffer, 0, length, now)) {
            stats.droppedFilter++;
            drop(packet, PacketFate.DROPPED_FILTER);
            return;
        }
        if (profile.blackholed(now)) {
            stats.droppedBlackhole++;
            drop(packet, PacketFate.DROPPED_BLACKHOLE);
            return;
        }
        if (link.lose()) {
            stats.droppedLoss++;
            drop(packet, PacketFate.DROPPED_LOSS);
            return;
        }
        final Bottleneck port = to < bottlenecks.length ? bottlenecks[to] : null;
        boolean portMark = false;
        final Policer policer = to < policers.length ? policers[to] : null;
        if (policer != null) {
            portMark = packet.ecn != DatagramEndpoint.ECN_NOT_ECT && policer.marks(departNs, length);
            if (policer.drops(departNs, length)) {
                stats.droppedQueue++;
                drop(packet, PacketFate.DROPPED_QUEUE);
                return;
            }
        }
        if (port != null) {
            final long backlog = port.backlogBytes(departNs);
            if (port.overflows(backlog, length)) {
                final org.metaroce.core.wire.Opcode op = org.metaroce.core.wire.Opcode.of(packet.opcode);
                if (!port.trims() || op == null || !op.isTrimmable() || length <= op.headerLength()) {
                    stats.droppedQueue++;
                    drop(packet, PacketFate.DROPPED_QUEUE);
                    return;
                }
                // Trim [WIRE-042]: TRIMMED set, Payload Length 0, cut after the extension headers.
                packet.buffer.putShort(org.metaroce.core.wire.BaseHeader.FLAGS_OFFSET,
                    (short) (org.metaroce.core.wire.BaseHeader.flags(packet.buffer, 0)
                        | org.metaroce.core.wire.Flags.TRIMMED), java.nio.ByteOrder.BIG_ENDIAN);
                packet.buffer.putShort(org.metaroce.core.wire.BaseHeader.PAYLOAD_LENGTH_OFFSET, (short) 0,
                    java.nio.ByteOrder.BIG_ENDIAN);
                length = op.headerLength();
                packet.length = length;
                stats.trimmed++;
                trace.record(now, packet, PacketFate.TRIMMED);
            } else {
                stats.maxQueueBytes = Math.max(stats.maxQueueBytes, backlog + length);
            }
            portMark = port.marks(backlog);
            departNs = port.enqueue(departNs, length);
        }
        if (link.ceMark() | portMark
            | (ceMarker != null && ceMarker.matches(from, to, packet.buffer, 0, length))) {
            packet.ecn = DatagramEndpoint.ECN_CE;
            stats.ceMarked++;
            trace.record(now, packet, PacketFate.CE_MARKED);
        }
        final long arrivalNs;
        if (link.reorder()) {
            arrivalNs = link.heldBackArrival(departNs);
            stats.reordered++;
            trace.record(now, packet, PacketFate.REORDERED);
        } else {
            arrivalNs = link.inOrderArrival(departNs);
        }
        // The jitter as a wait in the receiving host: the datagram arrived before it, unjittered.
        packet.hostArrivalNs = link.profile().jitterIsReceiverWait() ? departNs + link.profile().delayNs() : -1;
        PacketSlot copy = null;
        if (link.duplicate()) {
            copy = pool.acquire(length);
            packet.copyTo(copy);
            stats.duplicated++;
            trace.record(now, packet, PacketFate.DUPLICATED);
        }
        schedule(link, packet, arrivalNs);
        if (copy != null) {
            schedule(link, copy, arrivalNs + link.duplicateLag());
        }
    }

    private void schedule(final Link link, final PacketSlot packet, final long arrivalNs) {
        if (packet.length > 0 && link.corrupt()) {
            final int bit = link.bitToFlip(packet.length);
            final int index = bit >>> 3;
            packet.buffer.putByte(index, (byte) (packet.buffer.getByte(index) ^ (1 << (bit & 7))));
            stats.corrupted++;
            trace.record(now, packet, PacketFate.CORRUPTED);
        }
        packet.timeNs = arrivalNs;
        packet.sequence = nextSequence++;
        queue.add(packet);
    }

    private void drop(final PacketSlot packet, final PacketFate fate) {
        trace.record(now, packet, fate);
        pool.release(packet);
    }

    private Link link(final int from, final int to) {
        checkNode(from);
        checkNode(to);
        Link link = links[from][to];
        if (link == null) {
            link = new Link(seed, from, to, defaultProfile);
            links[from][to] = link;
        }
        return link;
    }

    private int checkNode(final int node) {
        if (node < 0 || node >= endpoints.size()) {
            throw new IllegalArgumentException("no node " + node + " (nodes 0.." + (endpoints.size() - 1) + ")");
        }
        return node;
    }

    private static LinkProfile requireProfile(final LinkProfile profile) {
        if (profile == null) {
            throw new NullPointerException("profile");
        }
        return profile;
    }

    @Override
    public String toString() {
        return "InMemoryWire{seed=" + seed + ", now=" + now + ", nodes=" + endpoints.size()
            + ", inFlight=" + queue.size() + ", " + stats + '}';
    }
}
