// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayDeque;
import java.util.SplittableRandom;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

/**
 * The send queue's storage of INLINE payloads on its own [OPS-041]: nothing until a payload needs
 * room, doubling to what is in flight at most, payloads that wrap around the end, growth that keeps
 * every payload where its request finds it, and room freed in post order.
 */
class InlineArenaTest {
    private static final long SEED = Long.getLong("metaroce.seed", 20261205L);

    private static UnsafeBuffer pattern(final int length, final int salt) {
        final UnsafeBuffer b = new UnsafeBuffer(new byte[Math.max(1, length)]);
        for (int i = 0; i < length; i++) {
            b.putByte(i, (byte) (i * 31 + salt));
        }
        return b;
    }

    private static void assertPayload(final InlineArena arena, final long at, final int length, final int salt) {
        final UnsafeBuffer out = new UnsafeBuffer(new byte[Math.max(1, length)]);
        arena.get(at, 0, out, 0, length);
        for (int i = 0; i < length; i++) {
            assertThat(out.getByte(i)).as("byte %d of the payload at %d (salt %d)", i, at, salt)
                .isEqualTo((byte) (i * 31 + salt));
        }
    }

    @Test
    void nothingIsAllocatedUntilAPayloadNeedsRoom() {
        final InlineArena arena = new InlineArena(24, 4096);
        assertThat(arena.capacity()).isZero();
        final long empty = arena.reserve(0);
        assertThat(arena.capacity()).as("a zero-length inline post").isZero();
        arena.release(empty, 0);
        final long at = arena.reserve(8);
        arena.put(at, 0, pattern(8, 1), 0, 8);
        assertThat(arena.capacity()).isEqualTo(InlineArena.MIN_CAPACITY);
        assertPayload(arena, at, 8, 1);
    }

    @Test
    void growsByDoublingToWhatIsInFlightAndNeverBeyondDepthTimesTheLimit() {
        final InlineArena arena = new InlineArena(3, 4096);
        final long a = arena.reserve(4096);
        assertThat(arena.capacity()).isEqualTo(4096);
        final long b = arena.reserve(4096);
        assertThat(arena.capacity()).isEqualTo(8192);
        final long c = arena.reserve(4096);
        assertThat(arena.capacity()).as("capped at depth x limit").isEqualTo(3 * 4096);
        assertThat(arena.used()).isEqualTo(3 * 4096);
        assertThatThrownBy(() -> arena.reserve(1)).isInstanceOf(IllegalStateException.class)
            .hasMessageContaining("depth x inline limit (12288 bytes)");
        arena.release(a, 4096);
        arena.release(b, 4096);
        arena.release(c, 4096);
        for (int i = 0; i < 100; i++) {
            arena.release(arena.reserve(4096), 4096);
        }
        assertThat(arena.capacity()).as("steady state: no more growth").isEqualTo(3 * 4096);
    }

    @Test
    void roomIsFreedInPostOrderOnly() {
        final InlineArena arena = new InlineArena(4, 64);
        final long a = arena.reserve(10);
        final long b = arena.reserve(20);
        assertThatThrownBy(() -> arena.release(b, 20)).isInstanceOf(IllegalStateException.class)
            .hasMessageContaining("post order");
        arena.release(a, 10);
        arena.release(b, 20);
        assertThat(arena.used()).isZero();
        arena.reserve(30);
        arena.clear();
        assertThat(arena.used()).as("discarded").isZero();
    }

    @Test
    void payloadsSurviveWrapAroundAndGrowthWhileInFlight() {
        System.out.println("InlineArenaTest.payloadsSurviveWrapAroundAndGrowthWhileInFlight seed=" + SEED);
        final SplittableRandom random = new SplittableRandom(SEED);
        final int depth = 16;
        final int limit = 1000;
        final InlineArena arena = new InlineArena(depth, limit);
        // In flight, oldest first: position, length, salt.
        final ArrayDeque<long[]> inFlight = new ArrayDeque<>();
        int grown = 0;
        int wrapped = 0;
        int lastCapacity = 0;
        for (int step = 0; step < 20_000; step++) {
            final boolean post = inFlight.size() < depth && (inFlight.isEmpty() || random.nextInt(3) != 0);
            if (post) {
                final int length = random.nextInt(limit + 1);
                final int salt = random.nextInt(256);
                final long at = arena.reserve(length);
                // Written in two pieces, as a post copies one scatter/gather entry after another.
                final int half = length / 2;
                final UnsafeBuffer src = pattern(length, salt);
                arena.put(at, 0, src, 0, half);
                arena.put(at, half, src, half, length - half);
                if (arena.capacity() > 0 && at % arena.capacity() + length > arena.capacity()) {
                    wrapped++;
                }
                inFlight.addLast(new long[] {at, length, salt});
            } else {
                final long[] oldest = inFlight.pollFirst();
                assertPayload(arena, oldest[0], (int) oldest[1], (int) oldest[2]);
                arena.release(oldest[0], (int) oldest[1]);
            }
            if (arena.capacity() != lastCapacity) {
                grown++;
                lastCapacity = arena.capacity();
                for (final long[] f : inFlight) {
                    assertPayload(arena, f[0], (int) f[1], (int) f[2]);
                }
            }
            assertThat(arena.capacity()).isLessThanOrEqualTo(depth * limit);
        }
        // A retransmission reads a payload from any offset: the last one, piece by piece.
        final long[] last = inFlight.peekLast();
        if (last != null && last[1] > 3) {
            final UnsafeBuffer out = new UnsafeBuffer(new byte[(int) last[1]]);
            arena.get(last[0], 3, out, 3, (int) last[1] - 3);
            arena.get(last[0], 0, out, 0, 3);
            for (int i = 0; i < last[1]; i++) {
                assertThat(out.getByte(i)).isEqualTo((byte) (i * 31 + last[2]));
            }
        }
        System.out.println("capacity " + arena.capacity() + " after " + grown + " growths; " + wrapped
            + " payloads wrapped around the end");
        assertThat(wrapped).as("payloads that wrapped around the end").isPositive();
        assertThat(grown).as("growths").isBetween(2, 8);
    }
}
