// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.bench.loopback;

import org.metaroce.bench.BenchmarkBase;
import org.openjdk.jmh.annotations.AuxCounters;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * Bandwidth over UDP loopback (TCP for the TCP stream), end to end, for MetaRoCE WRITE/SEND/READ
 * through {@code MetaRoceDevice} and for the peers, with the same thread budget: the benchmark
 * thread drives the sender, one {@link PeerThread} the receiver, both waiting with the same
 * {@link Idle} strategy.
 *
 * <p>One operation is one message handed to the transport (for MetaRoCE: posted while fewer than
 * 128 work requests are outstanding, else after a completion). The primary score is messages per
 * second; the secondary {@code deliveredBytes} is the rate of bytes that reached the other end
 * (acknowledged or read, for MetaRoCE; counted by the receiver, for the peers): Gb/s =
 * deliveredBytes × 8 / 10⁹. With {@code -prof gc}, {@code gc.alloc.rate.norm} is bytes allocated per
 * message (by the sending thread's JVM, both threads included).
 *
 * <p>Every trial starts with a self-check: 16 messages (fewer for very large ones) are stamped
 * with sequence numbers and compared byte for byte where they landed (raw UDP: counted).
 *
 * <p>Run: {@code java -jar metaroce-bench/target/metaroce-benchmarks.jar LoopbackBandwidth -prof gc},
 * one contender: {@code -p contender=metaroce-write -p size=65536}.
 */
@State(Scope.Thread)
public class LoopbackBandwidthBenchmark extends BenchmarkBase {
    /** Messages of the self-check at the start of each trial. */
    static final int SELF_CHECK_MESSAGES = 16;

    /** Which transport. */
    @Param({"metaroce-write", "metaroce-send", "metaroce-read", "aeron", "raw-udp", "tcp", "udp-ceiling"})
    public String contender;

    /** Message bytes. */
    @Param({"4096", "65536"})
    public int size;

    /**
     * How both threads wait: {@code spin}, {@code backoff}, or {@code auto} (the tools' default:
     * spin only when a processor stays free for the kernel's loopback processing).
     */
    @Param({"auto"})
    public String idle;

    /**
     * Datagram transport of the MetaRoCE devices: {@code auto} (native on JDK 22+), {@code native},
     * {@code epoll} or {@code nio}; handed to {@link MetaRoceEnd} through
     * {@value MetaRoceEnd#TRANSPORT_PROPERTY} (every device of the fork uses it).
     */
    @Param({"auto"})
    public String transport;

    /** Path MTU of the MetaRoCE devices (MetaRoCE and raw UDP): 4096 is the tools' loopback default. */
    @Param({"4096"})
    public int pathMtu;

    /**
     * UDP GRO on the MetaRoCE devices' receiving sockets: {@code auto} (the tools' default: on with
     * the native transport, off with Netty's), {@code true} or {@code false}.
     */
    @Param({"auto"})
    public String gro;

    /**
     * Whether the MetaRoCE devices publish a counters file ({@code on}, the default of every
     * device, or {@code off}); handed over through {@value MetaRoceEnd#COUNTERS_PROPERTY}.
     */
    @Param({"on"})
    public String counters;

    /** Aeron's MTU (Aeron only). */
    @Param({"8192"})
    public int aeronMtu;

    private StreamHarness harness;

    /** Bytes that reached the other end, reported as a rate. */
    @State(Scope.Thread)
    @AuxCounters(AuxCounters.Type.OPERATIONS)
    public static class Delivery {
        /** Bytes delivered in this iteration. */
        public long deliveredBytes;
        private long base = -1;

        @Setup(Level.Iteration)
        public void reset() {
            deliveredBytes = 0;
            base = -1;
        }
    }

    @Setup(Level.Trial)
    public void setUp() {
        System.setProperty(MetaRoceEnd.TRANSPORT_PROPERTY, transport);
        System.setProperty(MetaRoceEnd.COUNTERS_PROPERTY, counters);
        final Boolean groChoice = "auto".equals(gro) ? null : Boolean.valueOf(gro);
        harness = Contender.of(contender).stream(size, aeronMtu, Idle.resolve(idle, true), new Link(pathMtu, groChoice));
        final int messages = Math.max(1, Math.min(SELF_CHECK_MESSAGES, (16 << 20) / size));
        harness.sendAndAwait(messages);
        System.out.println("\n[" + contender + "] self-check: " + messages + " messages of " + size
            + " B delivered intact; idle strategy " + Idle.resolve(idle, true));
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        if (harness != null) {
            harness.close();
        }
    }

    /** Hands one message to the transport. */
    @Benchmark
    public void transfer(final Delivery delivery) {
        harness.send();
        final long delivered = harness.deliveredBytes();
        if (delivery.base < 0) {
            delivery.base = delivered;
        }
        delivery.deliveredBytes = delivered - delivery.base;
    }
}
