// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty;

import java.nio.file.Path;

import org.agrona.collections.Int2ObjectHashMap;
import org.agrona.concurrent.status.CountersManager;
import org.metaroce.core.connection.CmCounter;
import org.metaroce.core.connection.CmCounters;
import org.metaroce.core.connection.ConnectionManager;
import org.metaroce.core.engine.ConnectionManagerHandler;
import org.metaroce.core.engine.Endpoint;
import org.metaroce.core.engine.EndpointCounter;
import org.metaroce.core.engine.EndpointCounters;
import org.metaroce.core.engine.EventTrace;
import org.metaroce.core.engine.QueuePair;
import org.metaroce.core.wire.DropReason;
import org.metaroce.core.wire.WireCounters;

/**
 * Copies a device's counters (engine, wire, driver, connection manager, a block per queue pair,
 * and the {@link CounterGroup}s attached by layers above, e.g. the collectives) into its {@link CounterFile} on the owning thread, at most once per interval.
 *
 * <p>Why copy rather than count in the file: the engine is I/O-free and its counters are read by
 * tests and tools in the process; a copy keeps its data path exactly as it was (no extra store per
 * event) and samples per-QP values (state, window, RTT) that are no counters at all. A publication
 * is a few hundred ordered stores and allocates nothing; it allocates only when a queue pair
 * appears (its labels), which is setup, not the data path. Values in the file are at most one
 * interval old.
 */
final class CounterPublisher implements AutoCloseable {
    private static final EndpointCounter[] ENGINE = EndpointCounter.values();
    private static final DropReason[] DROPS = DropReason.values();
    private static final DriverCounter[] DRIVER = DriverCounter.values();
    private static final CmCounter[] CM = CmCounter.values();
    private static final QpCounter[] QP = QpCounter.values();
    /** The per-QP counters that split retransmissions by cause. */
    private static final QpCounter[] QP_CAUSES = java.util.Arrays.stream(QP).filter(c -> c.cause() != null)
        .toArray(QpCounter[]::new);

    private final CounterFile file;
    private final CountersManager manager;
    private final Endpoint endpoint;
    private final DriverCounters driver;
    private final int entropyPortCount;
    private final long intervalNs;
    private final int engineBase;
    private final int wireBase;
    private final int driverBase;
    private final int socketBase;
    private final int qpsLeftOut;
    private final Int2ObjectHashMap<QpBlock> qps = new Int2ObjectHashMap<>();
    /** Attached groups and their counter ids, index for index (indexed loops: no iterator garbage). */
    private final java.util.ArrayList<CounterGroup> groups = new java.util.ArrayList<>();
    private final java.util.ArrayList<int[]> groupIds = new java.util.ArrayList<>();
    private ConnectionManager cm;
    private int[] cmIds;
    private long lastPublishNs;
    private long traceCopied;
    private boolean dirty;
    private long epoch;
    private boolean closed;

    /** The counter ids of one queue pair, and when the publisher last saw it alive. */
    private static final class QpBlock {
        final int[] ids;
        long seenEpoch;

        QpBlock(final int[] ids) {
            this.ids = ids;
        }
    }

    /**
     * Creates the file and allocates the device-wide counters in it.
     *
     * @param path the device's counters file
     * @param capacity counters the file holds (device-wide ones take about 130; each QP {@link QpCounter} count)
     * @param description the device, for the file's header
     * @param endpoint the device's engine
     * @param driver the device's driver counters
     * @param entropyPorts the entropy sockets' ports (a datagram count each, labelled by port)
     * @param endpointPort the endpoint socket's port, for its label
     * @param intervalNs shortest time between publications
     */
    CounterPublisher(final Path path, final int capacity, final String description, final Endpoint endpoint,
                     final DriverCounters driver, final int[] entropyPorts, final int endpointPort,
                     final long intervalNs) {
        this.file = CounterFile.create(path, capacity, endpoint.trace().capacity(), description);
        this.manager = file.manager();
        this.endpoint = endpoint;
        this.driver = driver;
        this.entropyPortCount = entropyPorts.length;
        this.intervalNs = intervalNs;
        // Device-wide counters come first, into an empty file, so their ids are consecutive and
        // publish() addresses them as base + index.
        int first = -1;
        for (final EndpointCounter c : ENGINE) {
            final int id = manager.allocate("engine " + c.name(), CounterType.ENGINE.typeId());
            first = first < 0 ? id : first;
        }
        engineBase = first;
        wireBase = manager.allocate("wire ACCEPTED", CounterType.WIRE.typeId());
        manager.allocate("wire ACCEPTED_TRIMMED", CounterType.WIRE.typeId());
        for (final DropReason r : DROPS) {
            manager.allocate("wire DROPPED_" + r.name(), CounterType.WIRE.typeId());
        }
        driverBase = manager.allocate("driver " + DRIVER[0].name(), CounterType.DRIVER.typeId());
        for (int i = 1; i < DRIVER.length; i++) {
            manager.allocate("driver " + DRIVER[i].name(), CounterType.DRIVER.typeId());
        }
        socketBase = manager.allocate("driver DATAGRAMS_SENT_FROM_PORT " + endpointPort, CounterType.DRIVER.typeId());
        for (final int port : entropyPorts) {
            manager.allocate("driver DATAGRAMS_SENT_FROM_PORT " + port, CounterType.DRIVER.typeId());
        }
        qpsLeftOut = manager.allocate("stat QPS_LEFT_OUT", CounterType.STAT.typeId());
    }

    /** @return the file being written */
    CounterFile file() {
        return file;
    }

    /**
     * Owning thread, once per duty cycle: publishes when an interval has passed since the last
     * publication.
     *
     * @param nowNs {@link System#nanoTime()} of this cycle
     */
    void onDutyCycle(final long nowNs) {
        if (closed) {
            return;
        }
        if (nowNs - lastPublishNs >= intervalNs) {
            publish(nowNs);
        } else {
            dirty = true;
        }
    }

    /**
     * @return when the owning thread should run a cycle so that what changed since the last
     *     publication reaches the file, or {@link Long#MAX_VALUE} when nothing did
     */
    long nextDeadlineNs() {
        return dirty && !closed ? lastPublishNs + intervalNs : Long.MAX_VALUE;
    }

    /**
     * Owning thread: writes every value now.
     *
     * @param nowNs {@link System#nanoTime()}
     */
    void publish(final long nowNs) {
        lastPublishNs = nowNs;
        dirty = false;
        final EndpointCounters engine = endpoint.counters();
        for (int i = 0; i < ENGINE.length; i++) {
            manager.setCounterValue(engineBase + i, engine.get(ENGINE[i]));
        }
        final WireCounters wire = endpoint.wireCounters();
        manager.setCounterValue(wireBase, wire.accepted());
        manager.setCounterValue(wireBase + 1, wire.acceptedTrimmed());
        for (int i = 0; i < DROPS.length; i++) {
            manager.setCounterValue(wireBase + 2 + i, wire.dropped(DROPS[i]));
        }
        for (int i = 0; i < DRIVER.length; i++) {
            manager.setCounterValue(driverBase + i, driver.get(DRIVER[i]));
        }
        manager.setCounterValue(socketBase, driver.sentFromEndpointPort());
        for (int i = 0; i < entropyPortCount; i++) {
            manager.setCounterValue(socketBase + 1 + i, driver.sentFromEntropyPort(i));
        }
        publishConnectionManager();
        publishGroups();
        publishQueuePairs();
        publishTrace();
        file.heartbeat(System.currentTimeMillis());
    }

    /** Copies the engine's trace records written since the last publication (those not yet overwritten). */
    private void publishTrace() {
        final EventTrace trace = endpoint.trace();
        final long end = trace.position();
        if (end == traceCopied) {
            return;
        }
        final int capacity = trace.capacity();
        for (long n = Math.max(traceCopied, end - capacity); n < end; n++) {
            file.putTraceRecord(n, trace.buffer(), (int) (n & (capacity - 1)) * EventTrace.RECORD_BYTES);
        }
        traceCopied = end;
        file.publishTrace(end);
    }

    /**
     * Owning thread: allocates the group's counters (setup: their labels allocate) and publishes
     * them from now on. A file without room for them leaves them out, with a warning: observability
     * must not stop the layer that asked.
     *
     * @param group counters of a layer above the device
     * @return whether the file has them
     */
    boolean attach(final CounterGroup group) {
        if (closed || groups.contains(group)) {
            return !closed;
        }
        if (manager.available() < group.size()) {
            return false;
        }
        final int[] ids = new int[group.size()];
        for (int i = 0; i < ids.length; i++) {
            ids[i] = manager.allocate(group.label(i), group.type().typeId(), key -> key.putInt(0, group.key()));
        }
        groups.add(group);
        groupIds.add(ids);
        dirty = true;
        return true;
    }

    /**
     * Owning thread: frees the group's counters (their slots are reused).
     *
     * @param group a group given to {@link #attach}
     */
    void detach(final CounterGroup group) {
        final int at = groups.indexOf(group);
        if (closed || at < 0) {
            return;
        }
        groups.remove(at);
        for (final int id : groupIds.remove(at)) {
            manager.free(id);
        }
    }

    private void publishGroups() {
        for (int g = 0; g < groups.size(); g++) {
            final CounterGroup group = groups.get(g);
            final int[] ids = groupIds.get(g);
            for (int i = 0; i < ids.length; i++) {
                manager.setCounterValue(ids[i], group.get(i));
            }
        }
    }

    private void publishConnectionManager() {
        final ConnectionManagerHandler handler = endpoint.connectionManager();
        if (handler != cm && handler instanceof ConnectionManager) {
            cm = (ConnectionManager) handler;
            if (cmIds == null && manager.available() >= CM.length) {
                // Setup: a connection service installs its manager once, after the device opened.
                final int[] ids = new int[CM.length];
                for (int i = 0; i < CM.length; i++) {
                    ids[i] = manager.allocate("cm " + CM[i].name(), CounterType.CONNECTION_MANAGER.typeId());
                }
                cmIds = ids;
            }
        }
        if (cm != null && cmIds != null) {
            final CmCounters counters = cm.counters();
            for (int i = 0; i < CM.length; i++) {
                manager.setCounterValue(cmIds[i], counters.get(CM[i]));
            }
        }
    }

    private void publishQueuePairs() {
        final long e = ++epoch;
        final int count = endpoint.queuePairCount();
        long leftOut = 0;
        for (int i = 0; i < count; i++) {
            final QueuePair qp = endpoint.queuePairAt(i);
            QpBlock block = qps.get(qp.qpn());
            if (block == null) {
                block = allocateQp(qp.qpn());
                qps.put(qp.qpn(), block);
            }
            block.seenEpoch = e;
            if (block.ids == null) {
                leftOut++;
                continue;
            }
            final int[] ids = block.ids;
            manager.setCounterValue(ids[QpCounter.STATE.ordinal()], qp.state().ordinal());
            manager.setCounterValue(ids[QpCounter.PACKETS_SENT.ordinal()], qp.packetsSent());
            manager.setCounterValue(ids[QpCounter.RETRANSMITS.ordinal()], qp.retransmits());
            for (final QpCounter c : QP_CAUSES) {
                manager.setCounterValue(ids[c.ordinal()], qp.retransmits(c.cause()));
            }
            manager.setCounterValue(ids[QpCounter.OUTSTANDING_SENDS.ordinal()], qp.outstandingSends());
            manager.setCounterValue(ids[QpCounter.POSTED_RECEIVES.ordinal()], qp.postedReceives());
            manager.setCounterValue(ids[QpCounter.SEND_PSN.ordinal()], Integer.toUnsignedLong(qp.nextSendPsn()));
            manager.setCounterValue(ids[QpCounter.EXPECTED_PSN.ordinal()],
                Integer.toUnsignedLong(qp.expectedReceivePsn()));
            manager.setCounterValue(ids[QpCounter.CWND_PACKETS.ordinal()], qp.congestionControl().windowPackets());
            manager.setCounterValue(ids[QpCounter.SRTT_NS.ordinal()], qp.smoothedRttNs());
            manager.setCounterValue(ids[QpCounter.RTO_NS.ordinal()], qp.retransmitTimeoutNs());
        }
        manager.setCounterValue(qpsLeftOut, leftOut);
        if (qps.size() > count) {
            // Some QPs were destroyed: free their counters (the map's iterator is reused, no garbage).
            final Int2ObjectHashMap<QpBlock>.ValueIterator it = qps.values().iterator();
            while (it.hasNext()) {
                final QpBlock block = it.next();
                if (block.seenEpoch != e) {
                    if (block.ids != null) {
                        for (final int id : block.ids) {
                            manager.free(id);
                        }
                    }
                    it.remove();
                }
            }
        }
    }

    private QpBlock allocateQp(final int qpn) {
        if (manager.available() < QP.length) {
            return new QpBlock(null);
        }
        final String prefix = "qp 0x" + String.format("%06x", qpn) + " ";
        final int[] ids = new int[QP.length];
        for (int i = 0; i < QP.length; i++) {
            ids[i] = manager.allocate(prefix + QP[i].name(), QP[i].type().typeId(), key -> key.putInt(0, qpn));
        }
        return new QpBlock(ids);
    }

    /** Owning thread: unmaps the file and deletes it (and the process directory if it was the last). */
    @Override
    public void close() {
        if (!closed) {
            closed = true;
            file.close();
            CounterDirectory.deleteDeviceFile(file.path());
        }
    }
}
