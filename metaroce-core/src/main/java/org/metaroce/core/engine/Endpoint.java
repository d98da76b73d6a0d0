// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.engine;

import java.util.ArrayList;
import java.util.List;

import org.agrona.DirectBuffer;
import org.agrona.collections.Int2ObjectHashMap;
import org.agrona.collections.IntHashSet;
import org.metaroce.core.JvmAccess;
import org.metaroce.core.RandomSource;
import org.metaroce.core.verbs.CompletionQueue;
import org.metaroce.core.verbs.MemoryKeySpace;
import org.metaroce.core.verbs.ProtectionDomain;
import org.metaroce.core.verbs.QpState;
import org.metaroce.core.wire.BaseHeader;
import org.metaroce.core.wire.DropReason;
import org.metaroce.core.wire.Opcode;
import org.metaroce.core.wire.PacketValidator;
import org.metaroce.core.wire.WireConstants;
import org.metaroce.core.wire.WireCounters;

/**
 * A MetaRoCE device in software: it owns protection domains, completion queues and queue pairs,
 * turns received datagrams into queue-pair events (demultiplexing on the destination QPN at its
 * fixed offset), and emits every packet that is due into a caller's {@link TransmitSink}.
 *
 * <p>Sans-I/O: the endpoint never reads a clock, opens a socket or starts a thread. The same
 * object runs under the Netty driver, the fabric simulator and the in-memory test wire. One thread
 * owns it; setup calls ({@code create*}) and the data path must come from that thread.
 */
public final class Endpoint implements DatagramEndpoint {
    /** Completion queues created here (see {@link #completionsPushed()}). */
    private final org.metaroce.core.verbs.OwningThread owningThread = new org.metaroce.core.verbs.OwningThread();
    private CompletionQueue[] completionQueues = new CompletionQueue[0];
    private final EndpointConfig config;
    private final RandomSource random;
    private final EndpointCounters counters = new EndpointCounters();
    private final AsyncEvents asyncEvents = new AsyncEvents(1024);
    private final WireCounters wireCounters = new WireCounters();
    private final EventTrace trace;
    private final PacketValidator validator = new PacketValidator(wireCounters);
    private final PacketWriter writer = new PacketWriter();
    private final MemoryKeySpace keySpace;
    private final Int2ObjectHashMap<QueuePair> queuePairs = new Int2ObjectHashMap<>();
    private final List<QueuePair> pollOrder = new ArrayList<>();
    /** Which queue pairs the next poll must visit, and their cached deadlines. */
    private final PollSchedule schedule = new PollSchedule();
    /** Which queue pairs send to this endpoint, for the credit and the Sender Count [CC-018, CC-038]. */
    private final SenderCensus census = new SenderCensus();
    private final IntHashSet quarantinedQpns = new IntHashSet();
    /** Destroyed QPNs in destruction order with their destruction time, for the time-based quarantine. */
    private int[] quarantineQpn = new int[64];
    private long[] quarantineSince = new long[64];
    private int quarantineHead;
    private int quarantineCount;
    /** The latest time the endpoint was given (by onDatagram or poll): its notion of now. */
    private long latestNs = Long.MIN_VALUE;
    private int nextPdHandle = 1;
    private int pollCursor;
    private boolean sinkFull;
    private long lastPollNs;
    private ConnectionManagerHandler connectionManager;
    private PeerDirectory peerDirectory = PeerDirectory.IDENTITY;

    /**
     * @param config protocol parameters (copied by reference; do not change after this call)
     * @param random source of rkeys, QPNs and other unpredictable values; seeded in tests
     * @throws IllegalStateException if the JVM lacks the export Agrona needs (the message names the
     *     flag: {@link JvmAccess})
     */
    public Endpoint(final EndpointConfig config, final RandomSource random) {
        this(config, random, JvmAccess.requireUnsafeExport());
    }

    /** The constructor proper: {@code jvmChecked} is the flag check, run before the field initialisers. */
    private Endpoint(final EndpointConfig config, final RandomSource random, final boolean jvmChecked) {
        this.config = config;
        this.random = random;
        this.trace = new EventTrace(config.eventTraceRecords());
        this.keySpace = new MemoryKeySpace(random);
    }

    /** @return the protocol parameters */
    public EndpointConfig config() {
        return config;
    }

    /** @return counters of the queue-pair engine */
    public EndpointCounters counters() {
        return counters;
    }

    /** @return the asynchronous event queue (verbs ibv_get_async_event) */
    public AsyncEvents asyncEvents() {
        return asyncEvents;
    }

    void raise(final AsyncEventType type, final QueuePair qp) {
        asyncEvents.raise(type, qp == null ? 0 : qp.qpn());
        if (connectionManager != null && qp != null) {
            connectionManager.onQueuePairEvent(qp, type);
        }
    }

    /** A completion queue overflowed: CQ_ERR once, and every QP that uses it fails [QP-021]. */
    void onCompletionQueueOverflow(final CompletionQueue cq) {
        raise(AsyncEventType.CQ_ERR, null);
        for (int i = 0; i < pollOrder.size(); i++) {
            final QueuePair qp = pollOrder.get(i);
            if (qp.sendCq() == cq || qp.recvCq() == cq) {
                qp.recordFailure("its completion queue overflowed: poll it faster or make it larger [QP-021]");
                qp.enterError(AsyncEventType.QP_FATAL);
            }
        }
    }

    /** @return the trace of what the queue pairs did (owning thread) */
    public EventTrace trace() {
        return trace;
    }

    /** @return the latest time the endpoint was given: its notion of now */
    long nowNs() {
        return latestNs;
    }

    /** @return counters of the wire-format checks, per drop reason */
    public WireCounters wireCounters() {
        return wireCounters;
    }

    /** @return the device-wide key space of memory regions */
    public MemoryKeySpace keySpace() {
        return keySpace;
    }

    /** @return the injected randomness (for components such as the connection manager) */
    public RandomSource random() {
        return random;
    }

    PacketWriter writer() {
        return writer;
    }

    /**
     * Installs the handler for connection-manager packets (destination QPN 0 and handshake
     * opcodes). Without one they are counted and dropped.
     *
     * @param handler the connection manager, or null
     */
    public void connectionManager(final ConnectionManagerHandler handler) {
        this.connectionManager = handler;
    }

    /**
     * Tells the endpoint how the driver's peer ids map to hosts (see {@link PeerDirectory}).
     *
     * @param directory the mapping; {@link PeerDirectory#IDENTITY} by default
     */
    public void peerDirectory(final PeerDirectory directory) {
        if (directory == null) {
            throw new IllegalArgumentException("peer directory must not be null");
        }
        this.peerDirectory = directory;
    }

    int hostOf(final int peerId) {
        return peerDirectory.hostOf(peerId);
    }

    /** @return a new protection domain (verbs ibv_alloc_pd) */
    public ProtectionDomain allocateProtectionDomain() {
        owningThread.check("allocateProtectionDomain");
        return new ProtectionDomain(nextPdHandle++, keySpace, owningThread);
    }

    /**
     * @return the thread allowed to call this endpoint and its queue pairs and protection domains;
     *     a driver names it, and until then nothing is checked. Completion queues are exempt: another
     *     thread may consume them (single producer, single consumer)
     */
    public org.metaroce.core.verbs.OwningThread owningThread() {
        return owningThread;
    }

    /**
     * @param capacity completions it holds (verbs ibv_create_cq)
     * @return a new completion queue
     */
    public CompletionQueue createCompletionQueue(final int capacity) {
        owningThread.check("createCompletionQueue");
        final CompletionQueue cq = new CompletionQueue(capacity);
        final CompletionQueue[] now = java.util.Arrays.copyOf(completionQueues, completionQueues.length + 1);
        now[now.length - 1] = cq;
        completionQueues = now;
        return cq;
    }

    /**
     * @return completions ever pushed to the completion queues this endpoint created (owning thread):
     *     a driver that compares two readings learns whether the application has something to reap
     */
    public long completionsPushed() {
        long total = 0;
        for (final CompletionQueue cq : completionQueues) {
            total += cq.completionsPushed();
        }
        return total;
    }

    /**
     * Creates a queue pair in RESET with a random QPN (never 0, never live, never recently destroyed).
     *
     * @param pd protection domain of the memory it will use
     * @param sendCq completion queue for sends
     * @param recvCq completion queue for receives
     * @param caps queue sizes
     * @return the new queue pair
     */
    public QueuePair createQueuePair(final ProtectionDomain pd, final CompletionQueue sendCq,
                                     final CompletionQueue recvCq, final QueuePairCapabilities caps) {
        owningThread.check("createQueuePair");
        if (pd == null || sendCq == null || recvCq == null || caps == null) {
            throw new IllegalArgumentException("pd, sendCq, recvCq and caps are all required");
        }
        if (pd.isClosed()) {
            throw new IllegalArgumentException("protection domain " + pd.handle() + " is closed");
        }
        releaseExpiredQuarantine();
        int qpn;
        int attempts = 0;
        do {
            qpn = random.nextInt() & WireConstants.MAX_QPN;
            if (++attempts > 100_000) {
                throw new IllegalStateException("no free QPN found; too many live or quarantined queue pairs");
            }
        } while (qpn == WireConstants.CONNECTION_MANAGER_QPN || queuePairs.containsKey(qpn)
            || quarantinedQpns.contains(qpn));
        final Link link = new Link();
        final QueuePair qp = new QueuePair(link, qpn, pd, sendCq, recvCq, caps);
        link.qp = qp;
        link.census = new SenderCensus.Entry(qp);
        // The domain cannot close while the QP exists [MEM-002].
        pd.attachQueuePair();
        queuePairs.put(qpn, qp);
        pollOrder.add(qp);
        schedule.add(qp);
        return qp;
    }

    /**
     * Destroys a queue pair (verbs ibv_destroy_qp): outstanding requests are dropped without
     * completions, what it preallocated is released (the object stays readable, and refuses work),
     * and its QPN is quarantined so late packets for it are dropped as UNKNOWN_QPN [QP-022].
     *
     * @param qp the queue pair
     */
    public void destroyQueuePair(final QueuePair qp) {
        owningThread.check("destroyQueuePair");
        if (queuePairs.remove(qp.qpn()) == null) {
            throw new IllegalArgumentException("queue pair " + qp.qpn() + " does not belong to this endpoint");
        }
        pollOrder.remove(qp);
        schedule.remove(qp);
        qp.onDestroyed();
        qp.pd().detachQueuePair();
        if (connectionManager != null) {
            connectionManager.onQueuePairDestroyed(qp);
        }
        if (config.qpnQuarantineNs() > 0) {
            if (quarantineCount == quarantineQpn.length) {
                // Setup path, not the data path: grow the queue of quarantined QPNs.
                final int[] q = new int[quarantineQpn.length * 2];
                final long[] t = new long[q.length];
                for (int i = 0; i < quarantineCount; i++) {
                    q[i] = quarantineQpn[(quarantineHead + i) % quarantineQpn.length];
                    t[i] = quarantineSince[(quarantineHead + i) % quarantineQpn.length];
                }
                quarantineQpn = q;
                quarantineSince = t;
                quarantineHead = 0;
            }
            final int tailIndex = (quarantineHead + quarantineCount) % quarantineQpn.length;
            quarantineQpn[tailIndex] = qp.qpn();
            quarantineSince[tailIndex] = latestNs;
            quarantineCount++;
            quarantinedQpns.add(qp.qpn());
        }
    }

    /** Ends the quarantine of QPNs destroyed at least QPN_QUARANTINE ago [CM-035]. */
    private void releaseExpiredQuarantine() {
        // A QP destroyed before the endpoint ever saw a time sent nothing: its QPN is free at once.
        while (quarantineCount > 0 && latestNs != Long.MIN_VALUE
            && (quarantineSince[quarantineHead] == Long.MIN_VALUE
                || latestNs - quarantineSince[quarantineHead] >= config.qpnQuarantineNs())) {
            quarantinedQpns.remove(quarantineQpn[quarantineHead]);
            quarantineHead = (quarantineHead + 1) % quarantineQpn.length;
            quarantineCount--;
        }
    }

    /** @return QPNs currently in quarantine */
    public int quarantinedQpnCount() {
        return quarantineCount;
    }

    /**
     * @param qpn a queue pair number
     * @return the live queue pair with that number, or null
     */
    public QueuePair queuePair(final int qpn) {
        return queuePairs.get(qpn);
    }

    @Override
    public void onDatagram(final long nowNs, final DirectBuffer buffer, final int offset, final int length,
                           final int peerId, final int ecn) {
        onDatagram(nowNs, nowNs, buffer, offset, length, peerId, ecn);
    }

    @Override
    public void onDatagram(final long nowNs, final long arrivalNs, final DirectBuffer buffer, final int offset,
                           final int length, final int peerId, final int ecn) {
        if (nowNs > latestNs) {
            latestNs = nowNs;
        }
        counters.increment(EndpointCounter.PACKETS_IN);
        counters.add(EndpointCounter.BYTES_IN, length);
        final DropReason reason = validator.validate(buffer, offset, length);
        if (reason != null) {
            counters.increment(EndpointCounter.MALFORMED);
            return;
        }
        final Opcode opcode = Opcode.of(BaseHeader.opcode(buffer, offset));
        if (opcode.isConnectionManagement()) {
            if (connectionManager != null) {
                connectionManager.onPacket(nowNs, buffer, offset, length, peerId);
                // The packet is fully processed: only now may the application hear of it. (A
                // packet for a queue pair raises no connection-manager event: what it does to
                // the QP reaches the manager as a queue-pair event, acted on at its next poll.)
                connectionManager.deliverEvents();
            } else {
                counters.increment(EndpointCounter.NO_CONNECTION_MANAGER);
            }
            return;
        }
        final QueuePair qp = queuePairs.get(BaseHeader.destQpn(buffer, offset));
        if (qp == null) {
            // No answer: replying to unknown QPNs would make us an amplifier [QP spec].
            counters.increment(EndpointCounter.UNKNOWN_QPN);
            return;
        }
        // A transport's timestamp is never later than now; a clock that stepped is not trusted.
        final long arrival = arrivalNs - nowNs <= 0 ? arrivalNs : nowNs;
        qp.onPacket(nowNs, arrival, buffer, offset, length, peerId, opcode, ecn);
    }

    private long queuePairPolls;

    /** @return queue-pair polls run so far (each visit of one QP by {@link #poll}); for tests of the schedule */
    long queuePairPolls() {
        return queuePairPolls;
    }

    /**
     * Something happened to a queue pair (a packet, a verb, a state change): the next poll visits
     * it and its deadline is recomputed.
     */
    void touched(final QueuePair qp) {
        schedule.touched(qp);
    }

    @Override
    public int poll(final long nowNs, final TransmitSink sink) {
        lastPollNs = nowNs;
        if (nowNs > latestNs) {
            latestNs = nowNs;
        }
        if (quarantineCount > 0) {
            // Forget expired quarantine entries even when no QP is created, so that a burst of
            // destroyed QPs does not stay in memory until the next createQueuePair.
            releaseExpiredQuarantine();
        }
        final SinkRoomWatch watched = roomWatch.wrap(sink);
        int emitted = 0;
        if (connectionManager != null) {
            emitted += connectionManager.poll(nowNs, watched);
            // Between the two steps of the poll, the engine is consistent: the application hears
            // of what the manager's poll did, and what it posts or creates in response is polled
            // below. Nothing calls out of the queue-pair loop, so the set of queue pairs stays
            // fixed while it runs.
            connectionManager.deliverEvents();
        }
        schedule.refreshNotReady();
        schedule.collectDue(nowNs);
        final int n = schedule.size();
        if (n > 0) {
            // Round robin over the queue pairs that have something to send [CC-032]: the poll
            // starts where the previous one stopped, so each QP that is held back by the sink gets
            // its turn before any QP gets a second. Only the ready queue pairs are visited;
            // polling any other one before its deadline would do nothing (see PollSchedule).
            final int start = pollCursor % n;
            final int budget = config.maxPacketsPerPoll();
            int index = schedule.nextReady(start, n);
            int resume = start;
            boolean wrapped = false;
            while (!watched.full) {
                if (index < 0) {
                    if (wrapped || start == 0) {
                        break;
                    }
                    wrapped = true;
                    index = schedule.nextReady(0, start);
                    continue;
                }
                final QueuePair qp = schedule.at(index);
                schedule.clearReady(index);
                queuePairPolls++;
                final int sent = qp.poll(nowNs, watched, budget);
                emitted += sent;
                schedule.markStale(qp);
                if (watched.full || sent >= budget) {
                    schedule.keepReady(qp);
                }
                // The next poll starts after this QP if it had its turn, or at it if the sink was
                // already full when it came. (Advancing the start by one position per poll, as
                // before, gave a QP the sink in proportion to the run of idle positions in front
                // of it: a new QP behind a recently created busy one got one turn in n.)
                resume = watched.full && sent == 0 ? index : index + 1;
                index = schedule.nextReady(index + 1, wrapped ? start : n);
            }
            pollCursor = resume % n;
        }
        sinkFull = watched.full;
        return emitted;
    }

    @Override
    public long nextDeadlineNs() {
        if (sinkFull) {
            return lastPollNs;
        }
        long deadline = connectionManager != null ? connectionManager.nextDeadlineNs() : Long.MAX_VALUE;
        schedule.refresh();
        deadline = Math.min(deadline, schedule.earliestDeadlineNs());
        return deadline == Long.MIN_VALUE ? lastPollNs : deadline;
    }

    /** The largest Sender Count an ACK carries (one byte) [CC-038]. */
    private static final int SENDER_COUNT_MAX = 255;

    /**
     * The n of [CC-018]: queue pairs that received a request packet in the last {@code windowNs}
     * (at least 1). Costs one step per queue pair counted ({@link SenderCensus}).
     */
    int activeRequestSenders(final long nowNs, final long windowNs) {
        return Math.max(1, census.recentRequesters(nowNs, windowNs, Integer.MAX_VALUE));
    }

    /**
     * The Sender Count of [CC-038]: the queue pairs that accepted a request packet in the last
     * {@code windowNs} (the n of [CC-018]) and those that, with SENDER_COUNT negotiated, are in RTS
     * and have neither accepted nor sent a request packet nor work posted to send, clamped to
     * [1, 255]. The two sets are disjoint; counting stops at 255 ({@link SenderCensus}).
     */
    int receivingSenders(final long nowNs, final long windowNs) {
        final int waiting = census.waitingForFirstRequest();
        final int n = waiting + census.recentRequesters(nowNs, windowNs, SENDER_COUNT_MAX - waiting);
        return Math.min(SENDER_COUNT_MAX, Math.max(1, n));
    }

    /** Every queue pair waiting for its first request announces the Sender Count once more [CC-038]. */
    void senderCountChanged() {
        for (int i = 0, size = pollOrder.size(); i < size; i++) {
            final QueuePair qp = pollOrder.get(i);
            if (qp.waitsForFirstRequest()) {
                qp.announceSenderCount();
            }
        }
    }

    /**
     * The live queue pair at {@code index} in creation order, for tools that visit every QP without
     * allocating (observability samplers); indexes shift when a QP is destroyed. Owning thread.
     *
     * @param index 0 to {@link #queuePairCount()} - 1
     * @return the queue pair
     */
    public QueuePair queuePairAt(final int index) {
        return pollOrder.get(index);
    }

    /** @return the installed connection-manager handler, or null (see {@link #connectionManager(ConnectionManagerHandler)}) */
    public ConnectionManagerHandler connectionManager() {
        return connectionManager;
    }

    /** @return number of live queue pairs */
    public int queuePairCount() {
        return queuePairs.size();
    }

    /** @return number of queue pairs currently in {@code state} */
    public int queuePairCount(final QpState state) {
        int count = 0;
        for (final QueuePair qp : pollOrder) {
            if (qp.state() == state) {
                count++;
            }
        }
        return count;
    }

    private final SinkRoomWatch roomWatch = new SinkRoomWatch();

    /**
     * The endpoint as one queue pair sees it ({@link QueuePairContext}), bound to that queue pair:
     * what it reports needs no pointer back to the endpoint and names no queue pair.
     */
    private final class Link implements QueuePairContext {
        /** Set once, right after the queue pair is built (it reports nothing while being built). */
        QueuePair qp;
        /** Set with {@link #qp}. */
        SenderCensus.Entry census;

        @Override
        public EndpointConfig config() {
            return config;
        }

        @Override
        public EndpointCounters counters() {
            return counters;
        }

        @Override
        public PacketWriter writer() {
            return writer;
        }

        @Override
        public EventTrace trace() {
            return trace;
        }

        @Override
        public org.metaroce.core.verbs.OwningThread owningThread() {
            return owningThread;
        }

        @Override
        public long nowNs() {
            return latestNs;
        }

        @Override
        public int hostOf(final int peerId) {
            return Endpoint.this.hostOf(peerId);
        }

        @Override
        public int activeRequestSenders(final long nowNs, final long windowNs) {
            return Endpoint.this.activeRequestSenders(nowNs, windowNs);
        }

        @Override
        public int receivingSenders(final long nowNs, final long windowNs) {
            return Endpoint.this.receivingSenders(nowNs, windowNs);
        }

        @Override
        public void senderCountChanged() {
            Endpoint.this.senderCountChanged();
        }

        @Override
        public void requestAccepted() {
            Endpoint.this.census.requestAccepted(census);
        }

        @Override
        public void firstRequestWaitMayChange() {
            Endpoint.this.census.changed(census);
        }

        @Override
        public void destroyed() {
            Endpoint.this.census.remove(census);
        }

        @Override
        public void touched() {
            schedule.touched(qp);
        }

        @Override
        public void raise(final AsyncEventType type) {
            Endpoint.this.raise(type, qp);
        }

        @Override
        public void onCompletionQueueOverflow(final CompletionQueue cq) {
            Endpoint.this.onCompletionQueueOverflow(cq);
        }
    }
}
