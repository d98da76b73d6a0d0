// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.testwire;

/**
 * The real-socket rig's bottleneck (metaroce incast: nftables on the receiver's input hook) in
 * front of one node of an {@link InMemoryWire}: an ECN marker that CE-marks what exceeds
 * {@code markRate} beyond {@code markBurst} bytes, then a policer that drops what exceeds
 * {@code rate} beyond {@code burst} bytes. Both are token buckets, kept as phantom queues (a
 * backlog draining at the bucket's rate); a packet that is marked or dropped takes no tokens, as
 * nftables' {@code limit rate over} does. Unlike {@link Bottleneck} nothing queues: a packet that
 * passes is not delayed, so congestion shows as marks and drops only, never as delay.
 */
final class Policer {
    private final long rateBitsPerSecond;
    private final long burstBytes;
    private final long markRateBitsPerSecond;
    private final long markBurstBytes;
    private long dropFreeAtNs = Long.MIN_VALUE;
    private long markFreeAtNs = Long.MIN_VALUE;

    Policer(final long rateBitsPerSecond, final long burstBytes, final long markRateBitsPerSecond,
            final long markBurstBytes) {
        if (rateBitsPerSecond <= 0 || burstBytes <= 0 || markRateBitsPerSecond <= 0 || markBurstBytes <= 0) {
            throw new IllegalArgumentException("rates and bursts must be > 0");
        }
        this.rateBitsPerSecond = rateBitsPerSecond;
        this.burstBytes = burstBytes;
        this.markRateBitsPerSecond = markRateBitsPerSecond;
        this.markBurstBytes = markBurstBytes;
    }

    /** @return whether the marker CE-marks a packet of {@code length} passing at {@code atNs} */
    boolean marks(final long atNs, final int length) {
        final long backlog = backlog(markFreeAtNs, atNs, markRateBitsPerSecond);
        if (backlog + length > markBurstBytes) {
            return true;
        }
        markFreeAtNs = Math.max(atNs, markFreeAtNs) + transmitNs(length, markRateBitsPerSecond);
        return false;
    }

    /** @return whether the policer drops a packet of {@code length} passing at {@code atNs} */
    boolean drops(final long atNs, final int length) {
        final long backlog = backlog(dropFreeAtNs, atNs, rateBitsPerSecond);
        if (backlog + length > burstBytes) {
            return true;
        }
        dropFreeAtNs = Math.max(atNs, dropFreeAtNs) + transmitNs(length, rateBitsPerSecond);
        return false;
    }

    private static long backlog(final long freeAtNs, final long atNs, final long rate) {
        return freeAtNs <= atNs ? 0 : (freeAtNs - atNs) * rate / 8_000_000_000L;
    }

    private static long transmitNs(final int length, final long rate) {
        return Math.max(1, ((long) length * 8 * 1_000_000_000L + rate - 1) / rate);
    }
}
