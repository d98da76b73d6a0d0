// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.bench.sim;

import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

import org.metaroce.sim.EventHandler;
import org.metaroce.sim.EventQueue;
import org.metaroce.sim.transport.TransportProfile;
import org.metaroce.sim.scenario.RunResult;
import org.metaroce.sim.scenario.Scenario;
import org.metaroce.sim.scenario.ScenarioConfig;
import org.metaroce.sim.scenario.ScenarioRunner;
import org.openjdk.jmh.annotations.AuxCounters;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Event rate of the fabric simulator on one core.
 *
 * <p>{@code kernel}: the event queue alone, 4096 pending events each rescheduling itself a random
 * 0..10 µs later (ops = events per second). {@code incast}: a whole 16:1 incast scenario of 256 KiB
 * per sender on a 17-host leaf-spine with the real engines on every host; ops = runs per second,
 * and the {@code events} counter is simulator events per second, the figure the issue asks for.
 * Run: {@code java -jar metaroce-bench/target/metaroce-benchmarks.jar SimulatorBenchmark}
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 2, time = 2)
@Measurement(iterations = 3, time = 2)
@Fork(value = 1, jvmArgsPrepend = "--add-exports=java.base/jdk.internal.misc=ALL-UNNAMED")
public class SimulatorBenchmark {
    /** The kernel's state: a heap kept at constant size. */
    @State(Scope.Thread)
    public static class Kernel implements EventHandler {
        final EventQueue queue = new EventQueue(8192);
        final SplittableRandom random = new SplittableRandom(1);
        long now;

        @Setup(Level.Trial)
        public void fill() {
            for (int i = 0; i < 4096; i++) {
                queue.add(random.nextInt(10_000), this, null, i);
            }
        }

        @Override
        public void onEvent(final long nowNs, final Object subject, final int arg) {
            now = nowNs;
            queue.add(nowNs + random.nextInt(10_000), this, null, arg);
        }
    }

    /** Simulator events of the scenario runs, reported per second. */
    @State(Scope.Thread)
    @AuxCounters(AuxCounters.Type.OPERATIONS)
    public static class Events {
        public long events;
    }

    @Benchmark
    public long kernel(final Kernel k) {
        k.queue.pollAndRun();
        return k.now;
    }

    @Benchmark
    public long incast(final Events counter) {
        final ScenarioConfig c = new ScenarioConfig();
        c.scenario = Scenario.INCAST;
        c.profile = TransportProfile.metaroce();
        c.hosts = 17;
        c.seed = 1;
        final RunResult r = ScenarioRunner.run(c);
        if (!r.completed) {
            throw new IllegalStateException("incast did not complete: " + r.incomplete);
        }
        counter.events += r.events;
        return r.endNs;
    }
}
