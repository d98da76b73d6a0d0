// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.bench.loopback;

import java.util.concurrent.TimeUnit;

import org.metaroce.bench.BenchmarkBase;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * Ping-pong latency over loopback: MetaRoCE SEND (as {@code metaroce send_lat}), Aeron (its
 * Ping/Pong samples' shape), raw UDP through the MetaRoCE device and one TCP stream, each with the
 * benchmark thread pinging and one {@link PeerThread} echoing, both waiting with the same
 * {@link Idle} strategy. One operation is one
 * full round trip (perftest's {@code t_typical} is half of it); sample mode reports the
 * percentiles ({@code p0.50} is the median round trip). The first 1000 round trips of each trial
 * compare the echo with the ping byte for byte (raw UDP: counted).
 *
 * <p>Run: {@code java -jar metaroce-bench/target/metaroce-benchmarks.jar LoopbackPingPong -prof gc}.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class LoopbackPingPongBenchmark extends BenchmarkBase {
    /** Round trips whose echo is verified at the start of each trial. */
    static final int VERIFIED_ROUNDS = 1000;

    /** Which transport. */
    @Param({"metaroce-send", "aeron", "raw-udp", "tcp"})
    public String contender;

    /** Message bytes. */
    @Param({"64"})
    public int size;

    /** How both threads wait: {@code spin}, {@code backoff}, or {@code auto} (spin while 2 threads fit). */
    @Param({"auto"})
    public String idle;

    /**
     * Datagram transport of the MetaRoCE devices: {@code auto} (native on JDK 22+), {@code native},
     * {@code epoll} or {@code nio}; handed to {@link MetaRoceEnd} through
     * {@value MetaRoceEnd#TRANSPORT_PROPERTY} (every device of the fork uses it).
     */
    @Param({"auto"})
    public String transport;

    private PingPongHarness harness;

    @Setup(Level.Trial)
    public void setUp() {
        System.setProperty(MetaRoceEnd.TRANSPORT_PROPERTY, transport);
        harness = Contender.of(contender).pingPong(size, VERIFIED_ROUNDS, Idle.resolve(idle, false));
        for (int i = 0; i < VERIFIED_ROUNDS; i++) {
            harness.roundTrip();
        }
        System.out.println("\n[" + contender + "] self-check: " + VERIFIED_ROUNDS + " echoes of " + size
            + " B verified; idle strategy " + Idle.resolve(idle, false));
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        if (harness != null) {
            harness.close();
        }
    }

    /** One round trip. */
    @Benchmark
    public void roundTrip() {
        harness.roundTrip();
    }
}
