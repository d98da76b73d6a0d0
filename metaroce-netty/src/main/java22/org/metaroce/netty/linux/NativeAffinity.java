// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty.linux;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Arrays;

/**
 * The calling thread's CPU affinity through {@code sched_getaffinity}/{@code sched_setaffinity}
 * (pid 0: the calling thread). Reached from {@code org.metaroce.netty.CpuAffinity} reflectively, since this class
 * exists only in {@code META-INF/versions/22}. Not on any data path: it allocates freely.
 */
public final class NativeAffinity {
    /** Bytes of the CPU mask: 1,024 CPUs, glibc's {@code cpu_set_t}; larger machines fail with EINVAL. */
    private static final long MASK_BYTES = 128;

    private NativeAffinity() {
    }

    /** @return the CPUs the calling thread may run on, ascending */
    public static int[] allowed() {
        try (Arena arena = Arena.ofConfined()) {
            final MemorySegment mask = arena.allocate(MASK_BYTES, 8);
            final MemorySegment capture = Libc.allocateCapture(arena);
            final int r = (int) Libc.SCHED_GETAFFINITY.invokeExact(capture, 0, MASK_BYTES, mask);
            if (r != 0) {
                throw new IllegalStateException("sched_getaffinity failed: " + Errno.name(Libc.errno(capture)));
            }
            int[] cpus = new int[64];
            int n = 0;
            for (int cpu = 0; cpu < MASK_BYTES * 8; cpu++) {
                if ((mask.get(ValueLayout.JAVA_BYTE, cpu >>> 3) & (1 << (cpu & 7))) != 0) {
                    if (n == cpus.length) {
                        cpus = Arrays.copyOf(cpus, n * 2);
                    }
                    cpus[n++] = cpu;
                }
            }
            return Arrays.copyOf(cpus, n);
        } catch (final RuntimeException | Error ex) {
            throw ex;
        } catch (final Throwable t) {
            throw new IllegalStateException("sched_getaffinity failed", t);
        }
    }

    /** Lets the calling thread run on {@code cpu} alone. */
    public static void pin(final int cpu) {
        try (Arena arena = Arena.ofConfined()) {
            final MemorySegment mask = arena.allocate(MASK_BYTES, 8);
            mask.set(ValueLayout.JAVA_BYTE, cpu >>> 3, (byte) (1 << (cpu & 7)));
            final MemorySegment capture = Libc.allocateCapture(arena);
            final int r = (int) Libc.SCHED_SETAFFINITY.invokeExact(capture, 0, MASK_BYTES, mask);
            if (r != 0) {
                throw new IllegalStateException("sched_setaffinity to CPU " + cpu + " failed: "
                    + Errno.name(Libc.errno(capture)));
            }
        } catch (final RuntimeException | Error ex) {
            throw ex;
        } catch (final Throwable t) {
            throw new IllegalStateException("sched_setaffinity failed", t);
        }
    }
}
