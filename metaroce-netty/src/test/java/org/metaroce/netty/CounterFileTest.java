// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import org.agrona.concurrent.status.CountersReader;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.metaroce.core.engine.EndpointCounter;
import org.metaroce.core.verbs.PostStatus;
import org.metaroce.core.verbs.QpState;
import org.metaroce.core.verbs.SendFlags;
import org.metaroce.core.verbs.SendRequest;
import org.metaroce.core.verbs.WcStatus;
import org.metaroce.core.verbs.WrOpcode;

/** A device's counters file, read through a mapping of its own as {@code metaroce stat} reads it. */
class CounterFileTest {
    private static final long WAIT_NS = TimeUnit.SECONDS.toNanos(10);

    @TempDir
    Path base;

    private DevicePair open() {
        return new DevicePair(Transport.NIO, ThreadingMode.DEDICATED, 2,
            c -> c.observability(new ObservabilityConfig().countersBase(base).countersIntervalNs(1_000_000)),
            c -> c.observability(new ObservabilityConfig().countersBase(base).countersIntervalNs(1_000_000)));
    }

    @Test
    void anotherReaderSeesTheCountersMoveAndTheFileGoesAtClose() throws IOException {
        final Path file;
        try (DevicePair p = open()) {
            p.connect(4096);
            final long pid = ProcessHandle.current().pid();
            file = CounterDirectory.forProcess(base, pid).resolve("device-" + p.a.device.endpointPort() + ".counters");
            assertThat(CounterDirectory.processes(base)).containsExactly(pid);
            assertThat(CounterDirectory.files(CounterDirectory.forProcess(base, pid))).hasSize(2).contains(file);
            try (CounterFile reader = CounterFile.map(file)) {
                assertThat(reader.pid()).isEqualTo(pid);
                assertThat(reader.isWriterAlive()).isTrue();
                assertThat(reader.description()).contains(String.valueOf(p.a.device.endpointPort()));
                final CountersReader counters = reader.reader();
                final int qpn = p.a.device.call(ep -> p.a.qp.qpn());
                final String qpPrefix = "qp 0x" + String.format("%06x", qpn) + " ";
                // The QP appears with the next publication, in RTS.
                awaitValue(counters, qpPrefix + "STATE", QpState.RTS.ordinal());
                assertThat(value(counters, "engine REQUEST_PACKETS_OUT")).isZero();
                // The trace ring: A's QP went INIT, RTR, RTS.
                final java.util.List<String> events = new java.util.ArrayList<>();
                final long end = reader.readTrace(0, (n, buffer, offset) ->
                    events.add(org.metaroce.core.engine.EventTrace.describe(buffer, offset, 0)));
                assertThat(end).isEqualTo(events.size());
                assertThat(events).filteredOn(e -> e.contains(String.format("QP 0x%06x", qpn)))
                    .extracting(e -> e.substring(e.indexOf("STATE"))).containsExactly("STATE INIT", "STATE RTR", "STATE RTS");
                assertThat(reader.readTrace(end, (n, buffer, offset) -> events.add("more"))).isEqualTo(end);

                final int length = 1 << 20;
                final int status = p.a.device.call(ep -> p.a.qp.postSend(new SendRequest(1).wrId(9)
                    .opcode(WrOpcode.RDMA_WRITE).sendFlags(SendFlags.SIGNALED)
                    .addSge(p.a.address(0), length, p.a.mr.lkey()).remoteAddr(p.b.address(0)).rkey(p.b.mr.rkey())));
                assertThat(status).isEqualTo(PostStatus.OK);
                assertThat(p.awaitCompletions(1, 0)).as(p::describe).isTrue();
                assertThat(p.a.sendCompletions.get(0).status()).isEqualTo(WcStatus.SUCCESS);

                final long sentInProcess = p.a.device.endpoint().counters().get(EndpointCounter.REQUEST_PACKETS_OUT);
                assertThat(sentInProcess).isGreaterThanOrEqualTo(256);
                // The file catches up with the process within a publication interval of the next cycle.
                awaitValue(counters, "engine REQUEST_PACKETS_OUT", sentInProcess);
                assertThat(value(counters, "driver DATAGRAMS_SENT")).isGreaterThanOrEqualTo(256);
                assertThat(value(counters, "wire ACCEPTED")).isPositive();
                for (final SendFailure failure : SendFailure.values()) {
                    // Each send outcome is published under its own label (nothing failed here).
                    assertThat(value(counters, "driver " + DriverCounter.of(failure).name())).isZero();
                }
                for (final DriverCounter queued : java.util.EnumSet.range(DriverCounter.ICMP_PORT_UNREACHABLE,
                    DriverCounter.UNKNOWN_ERRORS)) {
                    // What a native socket's error queue held, by kind, published as well (none here).
                    assertThat(value(counters, "driver " + queued.name())).isZero();
                }
                assertThat(value(counters, qpPrefix + "PACKETS_SENT")).isGreaterThanOrEqualTo(256);
                assertThat(value(counters, qpPrefix + "SEND_PSN")).isEqualTo(0x12345 + sentInProcess);
                assertThat(typeOf(counters, qpPrefix + "PACKETS_SENT")).isEqualTo(CounterType.QP_COUNTER.typeId());
                assertThat(keyOf(counters, qpPrefix + "STATE")).isEqualTo(qpn);
                assertThat(reader.heartbeatMs()).isGreaterThanOrEqualTo(reader.startTimeMs());

                // A destroyed QP's counters are freed at the next publication.
                p.a.device.call(ep -> {
                    ep.destroyQueuePair(p.a.qp);
                    return null;
                });
                awaitGone(counters, qpPrefix + "STATE");
            }
        }
        assertThat(file).doesNotExist();
        assertThat(CounterDirectory.forProcess(base, ProcessHandle.current().pid())).doesNotExist();
    }

    @Test
    void aQueuePairsRetransmissionsAreSplitByCauseUnderLoss() throws IOException {
        final long seed = 2121;
        System.out.println("CounterFileTest seed=" + seed);
        try (DevicePair p = new DevicePair(Transport.NIO, ThreadingMode.DEDICATED, 4,
                c -> c.inboundFaults(new InboundFaults(0.05, 0.1, seed))
                    .observability(new ObservabilityConfig().countersBase(base).countersIntervalNs(1_000_000)),
                c -> c.inboundFaults(new InboundFaults(0.05, 0.1, seed + 1))
                    .observability(new ObservabilityConfig().countersBase(base).countersIntervalNs(1_000_000)));
             CounterFile reader = CounterFile.map(p.a.device.counterFile().path())) {
            p.connect(1024);
            final int length = 1 << 20;
            final int status = p.a.device.call(ep -> p.a.qp.postSend(new SendRequest(1).wrId(1)
                .opcode(WrOpcode.RDMA_WRITE).sendFlags(SendFlags.SIGNALED)
                .addSge(p.a.address(0), length, p.a.mr.lkey()).remoteAddr(p.b.address(0)).rkey(p.b.mr.rkey())));
            assertThat(status).isEqualTo(PostStatus.OK);
            assertThat(p.awaitCompletions(1, 0)).as(p::describe).isTrue();
            assertThat(p.a.sendCompletions.get(0).status()).isEqualTo(WcStatus.SUCCESS);
            final CountersReader counters = reader.reader();
            final int qpn = p.a.device.call(ep -> p.a.qp.qpn());
            final String qp = "qp 0x" + String.format("%06x", qpn) + " ";
            final long total = p.a.device.<Long>call(ep -> p.a.qp.retransmits());
            assertThat(total).as("retransmissions of 1 MiB at 5%% loss each way").isPositive();
            awaitValue(counters, qp + "RETRANSMITS", total);
            long sum = 0;
            for (final QpCounter c : QpCounter.values()) {
                if (c.cause() != null) {
                    // A's one QP sends every request A sends: its split is the endpoint's.
                    final long endpoint = p.a.device.endpoint().counters().get(c.cause());
                    awaitValue(counters, qp + c.name(), endpoint);
                    assertThat(c.name()).isEqualTo(c.cause().name());
                    sum += endpoint;
                }
            }
            assertThat(sum).as("the causes add up to RETRANSMITS").isEqualTo(total);
            assertThat(value(counters, qp + "RETRANSMITS_LOSS_DETECTED") + value(counters, qp + "RETRANSMITS_TIMEOUT")
                + value(counters, qp + "RETRANSMITS_TAIL_PROBE")).isPositive();
        }
    }

    @Test
    void countersOfALayerAboveAppearWhileAttachedAndTheirSlotsAreFreedWhenDetached() throws IOException {
        try (DevicePair p = open();
             CounterFile reader = CounterFile.map(p.a.device.counterFile().path())) {
            final CountersReader counters = reader.reader();
            final CounterGroup group = new CounterGroup(CounterType.COLLECTIVES, "coll rank 1/2", 1, "OPERATIONS", "CHUNKS_SENT");
            // Written by a thread that does not own the device, as a communicator's rank writes them.
            group.add(1, 41);
            group.increment(1);
            p.a.device.attachCounters(group);
            awaitValue(counters, "coll rank 1/2 CHUNKS_SENT", 42);
            assertThat(value(counters, "coll rank 1/2 OPERATIONS")).isZero();
            assertThat(typeOf(counters, "coll rank 1/2 OPERATIONS")).isEqualTo(CounterType.COLLECTIVES.typeId());
            assertThat(keyOf(counters, "coll rank 1/2 OPERATIONS")).isEqualTo(1);
            group.increment(0);
            awaitValue(counters, "coll rank 1/2 OPERATIONS", 1);
            // Attaching twice publishes once.
            p.a.device.attachCounters(group);
            p.a.device.detachCounters(group);
            awaitGone(counters, "coll rank 1/2 CHUNKS_SENT");
            assertThat(CounterFile.counterId(counters, "coll rank 1/2 OPERATIONS")).isNegative();
            // The other device's file never had them.
            try (CounterFile other = CounterFile.map(p.b.device.counterFile().path())) {
                assertThat(CounterFile.counterId(other.reader(), "coll rank 1/2 OPERATIONS")).isNegative();
            }
        }
    }

    @Test
    void aDeviceRemovesTheDirectoriesOfDeadProcesses() throws Exception {
        final Process gone = new ProcessBuilder("true").start();
        gone.waitFor();
        final Path stale = CounterDirectory.forProcess(base, gone.pid());
        Files.createDirectories(stale);
        Files.write(stale.resolve("device-4791.counters"), new byte[CounterFile.HEADER_LENGTH]);
        // A directory of this (live) process's parent stays.
        final long parent = ProcessHandle.current().parent().map(ProcessHandle::pid).orElse(1L);
        final Path live = CounterDirectory.forProcess(base, parent);
        Files.createDirectories(live);
        Files.write(live.resolve("device-4792.counters"), new byte[CounterFile.HEADER_LENGTH]);
        try (DevicePair p = open()) {
            assertThat(stale).doesNotExist();
            assertThat(live).exists();
            assertThat(CounterDirectory.processes(base)).contains(parent, ProcessHandle.current().pid())
                .doesNotContain(gone.pid());
        }
    }

    @Test
    void anIdleInvokerDevicePublishesWhatChangedJustBeforeItWentIdle() throws Exception {
        final java.util.concurrent.atomic.AtomicReference<MetaRoceDevice> ref = new java.util.concurrent.atomic.AtomicReference<>();
        final java.util.concurrent.atomic.AtomicBoolean stop = new java.util.concurrent.atomic.AtomicBoolean();
        final Thread owner = new Thread(() -> {
            try (MetaRoceDevice device = new MetaRoceDevice(DevicePair.config(Transport.NIO, ThreadingMode.INVOKER, 1, 3)
                .observability(new ObservabilityConfig().countersBase(base).countersIntervalNs(50_000_000L)))) {
                ref.set(device);
                while (!stop.get()) {
                    // Long waits: only a deadline (or a command) ends one.
                    device.awaitWork(TimeUnit.SECONDS.toNanos(10));
                    device.doWork();
                }
            }
        }, "invoker-owner");
        owner.start();
        try {
            final long deadline = System.nanoTime() + WAIT_NS;
            while (ref.get() == null && System.nanoTime() - deadline < 0) {
                Thread.sleep(5);
            }
            final MetaRoceDevice device = ref.get();
            assertThat(device).isNotNull();
            try (CounterFile reader = CounterFile.map(device.counterFile().path())) {
                Thread.sleep(200); // idle: everything so far is published
                final long ran = 5 + value(reader.reader(), "driver COMMANDS_RUN");
                for (int i = 0; i < 5; i++) {
                    assertThat(device.offer(() -> { })).isTrue();
                }
                // Within the publication interval after the last command, although nothing else happens.
                final long start = System.nanoTime();
                awaitValue(reader.reader(), "driver COMMANDS_RUN", ran);
                assertThat(System.nanoTime() - start).isLessThan(TimeUnit.SECONDS.toNanos(2));
            }
        } finally {
            stop.set(true);
            final MetaRoceDevice device = ref.get();
            if (device != null) {
                device.offer(() -> { });
            }
            owner.join(10_000);
        }
    }

    @Test
    void twoDevicesOfOneProcessWithOnePortNumberGetTwoFiles() {
        CounterDirectory.createProcessDirectory(base);
        final Path first = CounterDirectory.deviceFile(base, 4796);
        final Path second = CounterDirectory.deviceFile(base, 4796);
        assertThat(first.getFileName().toString()).isEqualTo("device-4796.counters");
        assertThat(second.getFileName().toString()).isEqualTo("device-4796-2.counters");
        CounterDirectory.deleteDeviceFile(first);
        CounterDirectory.deleteDeviceFile(second);
        assertThat(CounterDirectory.forProcess(base, ProcessHandle.current().pid())).doesNotExist();
    }

    @Test
    void aDeviceWithCountersOffWritesNoFile() {
        try (DevicePair p = new DevicePair(Transport.NIO, ThreadingMode.DEDICATED, 1,
            c -> c.observability(new ObservabilityConfig().countersBase(base).counters(false)),
            c -> c.observability(new ObservabilityConfig().countersBase(base).counters(false)))) {
            assertThat(p.a.device.counterFile()).isNull();
            assertThat(CounterDirectory.processes(base)).isEmpty();
        }
    }

    @Test
    void aFileThatIsNotReadyOrNotOursIsRefused() throws IOException {
        final Path notOurs = base.resolve("x.counters");
        Files.write(notOurs, new byte[CounterFile.HEADER_LENGTH]);
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> CounterFile.map(notOurs))
            .isInstanceOf(IllegalStateException.class).hasMessageContaining("not a MetaRoCE counters file");
    }

    static long value(final CountersReader counters, final String label) {
        final int id = CounterFile.counterId(counters, label);
        assertThat(id).as("counter '%s'", label).isNotNegative();
        return counters.getCounterValue(id);
    }

    private static int typeOf(final CountersReader counters, final String label) {
        return counters.getCounterTypeId(CounterFile.counterId(counters, label));
    }

    private static int keyOf(final CountersReader counters, final String label) {
        final int[] key = {-1};
        final int id = CounterFile.counterId(counters, label);
        counters.forEach((counterId, typeId, keyBuffer, l) -> {
            if (counterId == id) {
                key[0] = keyBuffer.getInt(0);
            }
        });
        return key[0];
    }


    private static void awaitValue(final CountersReader counters, final String label, final long expected) {
        final long deadline = System.nanoTime() + WAIT_NS;
        long seen = Long.MIN_VALUE;
        while (System.nanoTime() - deadline < 0) {
            final int id = CounterFile.counterId(counters, label);
            seen = id < 0 ? Long.MIN_VALUE : counters.getCounterValue(id);
            if (seen == expected) {
                return;
            }
            java.util.concurrent.locks.LockSupport.parkNanos(1_000_000);
        }
        assertThat(seen).as("counter '%s'", label).isEqualTo(expected);
    }

    private static void awaitGone(final CountersReader counters, final String label) {
        final long deadline = System.nanoTime() + WAIT_NS;
        while (System.nanoTime() - deadline < 0 && CounterFile.counterId(counters, label) >= 0) {
            java.util.concurrent.locks.LockSupport.parkNanos(1_000_000);
        }
        assertThat(CounterFile.counterId(counters, label)).as("counter '%s' after its owner went", label).isNegative();
    }
}
