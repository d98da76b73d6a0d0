// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.management.ManagementFactory;
import java.nio.file.Path;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.metaroce.core.SeededRandomSource;
import org.metaroce.core.engine.Endpoint;
import org.metaroce.core.engine.EndpointConfig;
import org.metaroce.core.engine.QueuePairCapabilities;
import org.metaroce.core.verbs.CompletionQueue;
import org.metaroce.core.verbs.ProtectionDomain;

/**
 * Publishing a device's counters allocates nothing once its queue pairs have their counters: the
 * owning thread can publish on any duty cycle without producing garbage.
 */
class CounterPublisherAllocationTest {
    private static final int PUBLICATIONS = 20_000;

    @TempDir
    Path dir;

    @Test
    void publishingAllocatesNothingInSteadyState() {
        final com.sun.management.ThreadMXBean mx = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        final Endpoint endpoint = new Endpoint(new EndpointConfig(), new SeededRandomSource(7));
        final ProtectionDomain pd = endpoint.allocateProtectionDomain();
        final CompletionQueue cq = endpoint.createCompletionQueue(64);
        for (int i = 0; i < 8; i++) {
            endpoint.createQueuePair(pd, cq, cq, QueuePairCapabilities.defaults());
        }
        final DriverCounters driver = new DriverCounters(4);
        try (CounterPublisher publisher = new CounterPublisher(dir.resolve("device-1.counters"), 1024, "test",
            endpoint, driver, new int[] {1, 2, 3, 4}, 5, 1)) {
            // A layer's counters (the collectives') are copied with the device's own.
            final CounterGroup group = new CounterGroup(CounterType.COLLECTIVES, "coll rank 0/2", 0, "OPERATIONS");
            assertThat(publisher.attach(group)).isTrue();
            long now = 0;
            // Warm up: the first publication allocates the QPs' counters, then the JIT compiles.
            for (int i = 0; i < PUBLICATIONS; i++) {
                driver.increment(DriverCounter.DUTY_CYCLES);
                publisher.onDutyCycle(now += 10);
            }
            // Steady state: the fewest bytes of three measured rounds, as CongestionControlAllocationTest
            // does. A round can see the JVM's own transient work on this thread (112 B once in a full
            // JDK 17 build: a deoptimization re-materializes what compiled code had eliminated);
            // an allocation per publication shows in every round, 20,000 times over.
            long fewest = Long.MAX_VALUE;
            final StringBuilder rounds = new StringBuilder();
            for (int round = 0; round < 3; round++) {
                final long before = mx.getCurrentThreadAllocatedBytes();
                for (int i = 0; i < PUBLICATIONS; i++) {
                    driver.increment(DriverCounter.DUTY_CYCLES);
                    group.increment(0);
                    publisher.onDutyCycle(now += 10);
                }
                final long allocated = mx.getCurrentThreadAllocatedBytes() - before;
                rounds.append(allocated).append(' ');
                fewest = Math.min(fewest, allocated);
            }
            assertThat(fewest).as("bytes allocated by %d publications of 8 QPs and a group, per round: %s",
                PUBLICATIONS, rounds).isZero();
            assertThat(publisher.file().reader().getCounterValue(CounterFile.counterId(publisher.file().reader(),
                "coll rank 0/2 OPERATIONS"))).isEqualTo(3L * PUBLICATIONS);
            final int id = CounterFile.counterId(publisher.file().reader(), "driver DUTY_CYCLES");
            assertThat(publisher.file().reader().getCounterValue(id)).isEqualTo(4L * PUBLICATIONS);
            assertThat(CounterFile.counterId(publisher.file().reader(), "stat QPS_LEFT_OUT")).isNotNegative();
        }
    }

    @Test
    void queuePairsBeyondTheCapacityAreCountedNotPublished() {
        final Endpoint endpoint = new Endpoint(new EndpointConfig(), new SeededRandomSource(8));
        final ProtectionDomain pd = endpoint.allocateProtectionDomain();
        final CompletionQueue cq = endpoint.createCompletionQueue(64);
        // 256 counters: the device's own take about 130, leaving room for 7 QPs of 17.
        for (int i = 0; i < 20; i++) {
            endpoint.createQueuePair(pd, cq, cq, QueuePairCapabilities.defaults());
        }
        try (CounterPublisher publisher = new CounterPublisher(dir.resolve("device-2.counters"), 256, "test",
            endpoint, new DriverCounters(1), new int[] {1}, 2, 1)) {
            publisher.publish(1);
            final org.agrona.concurrent.status.CountersReader reader = publisher.file().reader();
            final long leftOut = reader.getCounterValue(CounterFile.counterId(reader, "stat QPS_LEFT_OUT"));
            final int[] states = {0};
            reader.forEach((id, label) -> states[0] += label.endsWith(" STATE") ? 1 : 0);
            assertThat(leftOut).isPositive();
            assertThat(states[0] + leftOut).isEqualTo(20);
        }
    }
}
