// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.util.Arrays;
import java.util.Optional;

import org.metaroce.netty.linux.NativeUdp;

/**
 * Which CPUs the calling thread runs on, and pinning it to one: {@code sched_getaffinity} and
 * {@code sched_setaffinity} through the JDK's foreign function API, on Linux with JDK 22 or newer
 * and native access granted ({@link NativeUdp}'s conditions). Collectives use it to spread rank
 * threads over the CPUs evenly (as MPI launchers bind ranks): on a host with fewer cores than busy
 * threads the scheduler's placement otherwise decides a small collective's speed for tens of
 * milliseconds at a time (docs/collectives.md, "What selects a run's speed").
 *
 * <p>Compiled for Java 17; the system calls are in {@code META-INF/versions/22} and reached
 * reflectively, as {@link NativeUdp} reaches the socket binding.
 */
public final class CpuAffinity {
    private static final String IMPL = "org.metaroce.netty.linux.NativeAffinity";
    private static final MethodHandle ALLOWED;
    private static final MethodHandle PIN;
    /** Why the handles are missing although {@link NativeUdp} is available (a broken jar), else null. */
    private static final String BROKEN;

    static {
        MethodHandle allowed = null;
        MethodHandle pin = null;
        String broken = null;
        if (NativeUdp.isAvailable()) {
            try {
                final Class<?> impl = Class.forName(IMPL, true, CpuAffinity.class.getClassLoader());
                final MethodHandles.Lookup lookup = MethodHandles.lookup();
                allowed = lookup.findStatic(impl, "allowed", MethodType.methodType(int[].class));
                pin = lookup.findStatic(impl, "pin", MethodType.methodType(void.class, int.class));
            } catch (final ReflectiveOperationException ex) {
                // NativeUdp found the versioned classes, so this one is there too unless the jar is broken.
                broken = "the native affinity class is missing from the multi-release jar: " + ex;
                allowed = null;
                pin = null;
            }
        }
        ALLOWED = allowed;
        PIN = pin;
        BROKEN = broken;
    }

    private CpuAffinity() {
    }

    /** @return whether this JVM can read and set thread affinity */
    public static boolean isAvailable() {
        return ALLOWED != null;
    }

    /** @return why it cannot (mostly {@link NativeUdp#unavailabilityReason()}), empty when it can */
    public static Optional<String> unavailabilityReason() {
        return BROKEN != null ? Optional.of(BROKEN) : NativeUdp.unavailabilityReason();
    }

    /**
     * @return the CPUs the calling thread may run on, ascending
     * @throws IllegalStateException when {@link #isAvailable()} is false (the message says why)
     */
    public static int[] allowedCpus() {
        requireAvailable();
        try {
            return (int[]) ALLOWED.invokeExact();
        } catch (final RuntimeException | Error ex) {
            throw ex;
        } catch (final Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    /**
     * Lets the calling thread run on {@code cpu} alone.
     *
     * @param cpu one of {@link #allowedCpus()}
     * @throws IllegalArgumentException when the thread may not run on {@code cpu} (the message lists
     *     the CPUs it may run on)
     * @throws IllegalStateException when {@link #isAvailable()} is false, or the system call fails
     */
    public static void pinCurrentThread(final int cpu) {
        final int[] allowed = allowedCpus();
        if (Arrays.binarySearch(allowed, cpu) < 0) {
            throw new IllegalArgumentException("CPU " + cpu + " is not one this thread may run on: "
                + Arrays.toString(allowed) + " (taskset, cgroups or the launcher's binding restrict it)");
        }
        try {
            PIN.invokeExact(cpu);
        } catch (final RuntimeException | Error ex) {
            throw ex;
        } catch (final Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    private static void requireAvailable() {
        if (!isAvailable()) {
            throw new IllegalStateException("thread affinity is not available: "
                + unavailabilityReason().orElse("unknown reason") + "; run without pinning");
        }
    }
}
