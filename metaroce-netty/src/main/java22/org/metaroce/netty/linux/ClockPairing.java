// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty.linux;

/**
 * Pairs CLOCK_REALTIME, the clock of the kernel's receive timestamps, with
 * {@link System#nanoTime()}'s clock, the engine's, so that a datagram's arrival can be given on the
 * engine's clock [REL-066].
 *
 * <p>The two clocks cannot be read at one instant. A thread descheduled between the reads made
 * the wall clock look later than it was by the length of the pause, every arrival of that batch
 * earlier by as much, and an RTT sample short by as much: on a loaded two-core host the driver
 * saw samples as short as 55 ns on a veth pair whose round trip is about 20 µs (this is their
 * likely source: after the change the smallest seen was 2.5 µs), and the minimum filter of
 * the congestion control kept that baseRTT for the rest of the connection. So the wall clock is
 * read between two reads of the monotonic clock, up to {@link #ATTEMPTS} times, and the tightest
 * bracket wins: its error is at most half its width.
 */
final class ClockPairing {
    /** Reads of the pair at most per pairing. */
    static final int ATTEMPTS = 3;
    /** A bracket this tight is taken at once: its error is at most half of it. */
    static final long GOOD_ENOUGH_NS = 2_000;
    /** Returned when the wall clock cannot be read: {@link Libc#realtimeNs}'s own failure value. */
    static final long UNAVAILABLE = Long.MIN_VALUE;

    /** The two clocks, read by {@link #realMinusMonotonicNs}. */
    interface Clocks {
        /** @return the monotonic clock in ns ({@link System#nanoTime()}) */
        long monotonicNs();

        /** @return CLOCK_REALTIME in ns, or {@link #UNAVAILABLE} */
        long realtimeNs();
    }

    private ClockPairing() {
    }

    /**
     * @return CLOCK_REALTIME minus the monotonic clock, from the tightest of up to
     *     {@link #ATTEMPTS} brackets, or {@link #UNAVAILABLE}; a wall-clock stamp {@code t} is then
     *     {@code t - offset} on the monotonic clock
     */
    static long realMinusMonotonicNs(final Clocks clocks) {
        long bestWidth = Long.MAX_VALUE;
        long offset = UNAVAILABLE;
        for (int attempt = 0; attempt < ATTEMPTS && bestWidth > GOOD_ENOUGH_NS; attempt++) {
            final long before = clocks.monotonicNs();
            final long real = clocks.realtimeNs();
            final long after = clocks.monotonicNs();
            if (real == UNAVAILABLE) {
                return UNAVAILABLE;
            }
            final long width = after - before;
            if (width < bestWidth) {
                bestWidth = width;
                offset = real - (before + width / 2);
            }
        }
        return offset;
    }
}
