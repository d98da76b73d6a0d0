// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.bench;

import java.util.concurrent.TimeUnit;

import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The run settings every MetaRoCE benchmark inherits, so that all suites run the same way: forks,
 * warm-up, measurement and the forked JVM's flags. JMH reads these class-level annotations from
 * the superclass; a suite overrides only what its unit of work needs (mode, time unit).
 *
 * <p>JVM flags of every fork, prepended so that {@code -jvmArgsAppend} stays free for profilers
 * and for {@link #NO_BOUNDS_CHECKS}:
 * <ul>
 *   <li>{@code --add-exports java.base/jdk.internal.misc}: Agrona 2.x reaches {@code Unsafe} through it;</li>
 *   <li>{@code --enable-native-access=ALL-UNNAMED}: the native UDP sockets (JDK 22+) call libc
 *       through {@code java.lang.foreign}; JDK 17 accepts the flag;</li>
 *   <li>{@code -Dio.netty.leakDetection.level=disabled}: leak tracking samples buffers and records
 *       stack traces, a cost the driver does not have in production;</li>
 *   <li>{@code -Dio.netty.allocator.maxCachedBufferCapacity=524288}: as the {@code metaroce} command
 *       sets it, so the device's 266 KB receive batches come from the per-thread pool cache;</li>
 *   <li>{@code -Djmh.executor=CUSTOM} with {@link NettyThreadExecutor}: benchmark threads are Netty
 *       {@code FastThreadLocalThread}s, as the tools' and the driver's threads are, so Netty's object
 *       pools work on the INVOKER-mode devices the benchmark thread drives;</li>
 *   <li>a fixed 1 GiB heap (no resizing during a measurement), and direct memory for the
 *       registered regions and the driver's chunks.</li>
 * </ul>
 *
 * <p>Quick run of one suite: {@code java -jar metaroce-bench/target/metaroce-benchmarks.jar
 * LoopbackBandwidth -f 1 -wi 2 -i 3}. Agrona bounds checks off (as a tuned deployment runs):
 * append {@code -jvmArgsAppend -Dagrona.disable.bounds.checks=true}.
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = BenchmarkBase.WARMUP_ITERATIONS, time = 1)
@Measurement(iterations = BenchmarkBase.MEASUREMENT_ITERATIONS, time = 1)
@Fork(value = BenchmarkBase.FORKS, jvmArgsPrepend = {
    "--add-exports=java.base/jdk.internal.misc=ALL-UNNAMED", "--enable-native-access=ALL-UNNAMED",
    "-Dio.netty.leakDetection.level=disabled",
    "-Dio.netty.allocator.maxCachedBufferCapacity=524288",
    "-Djmh.executor=CUSTOM", "-Djmh.executor.class=org.metaroce.bench.NettyThreadExecutor",
    "-Xms1g", "-Xmx1g", "-XX:MaxDirectMemorySize=2g"})
public abstract class BenchmarkBase {
    /** Forks per benchmark (each a fresh JVM). */
    public static final int FORKS = 2;
    /** Warm-up iterations of one second. */
    public static final int WARMUP_ITERATIONS = 3;
    /** Measured iterations of one second. */
    public static final int MEASUREMENT_ITERATIONS = 5;
    /** The JVM flag that turns Agrona's bounds checks off (pass with {@code -jvmArgsAppend}). */
    public static final String NO_BOUNDS_CHECKS = "-Dagrona.disable.bounds.checks=true";
}
