// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty.linux;

import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * How far {@code CLOCK_REALTIME} is ahead of {@code CLOCK_MONOTONIC}, the clock of
 * {@link System#nanoTime()} on Linux: the kernel stamps received datagrams on the realtime clock
 * only ({@code SO_TIMESTAMPNS}), the engine runs on the monotonic one. Reading it costs three vDSO
 * calls and allocates nothing. One owner thread at a time.
 */
public final class RealtimeClock implements AutoCloseable {
    private final Arena arena = Arena.ofShared();
    private final MemorySegment timespec = arena.allocate(16, 8);

    /**
     * @return {@code CLOCK_REALTIME − CLOCK_MONOTONIC} in ns, now (the realtime reading is taken
     *     between two monotonic ones and set against their midpoint)
     */
    public long realtimeMinusMonotonicNs() {
        final long before = read(Uapi.CLOCK_MONOTONIC);
        final long realtime = read(Uapi.CLOCK_REALTIME);
        final long after = read(Uapi.CLOCK_MONOTONIC);
        return realtime - (before + ((after - before) >> 1));
    }

    private long read(final int clock) {
        try {
            final int r = (int) Libc.CLOCK_GETTIME.invokeExact(clock, timespec);
            if (r != 0) {
                throw new IllegalStateException("clock_gettime(" + clock + ") failed");
            }
        } catch (final RuntimeException | Error ex) {
            throw ex;
        } catch (final Throwable t) {
            throw new IllegalStateException(t);
        }
        return timespec.get(JAVA_LONG, 0) * 1_000_000_000L + timespec.get(JAVA_LONG, 8);
    }

    /** Frees the native memory. */
    @Override
    public void close() {
        arena.close();
    }
}
