// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.testwire;

import org.agrona.DirectBuffer;

/**
 * Deterministic drop hook of an {@link InMemoryWire}, in the style of Aeron's LossGenerator: where
 * the random faults of a {@link LinkProfile} test behaviour statistically, a filter drops exactly
 * the packets a test names ("the third DATA packet", "the ACK for PSN 7"), so a test can assert an
 * exact recovery sequence. The wire consults the filter for every packet sent, before any random
 * fault, in send order; factories returning counting filters are stateful, so use a new one per
 * wire.
 */
@FunctionalInterface
public interface PacketFilter {
    /**
     * @param fromNode sending node id
     * @param toNode receiving node id
     * @param buf holds the UDP payload
     * @param off first byte of the payload
     * @param len payload length
     * @param nowNs virtual send time
     * @return true to drop the packet
     */
    boolean drop(int fromNode, int toNode, DirectBuffer buf, int off, int len, long nowNs);

    /** @return a filter that drops nothing */
    static PacketFilter none() {
        return (from, to, buf, off, len, now) -> false;
    }

    /**
     * @param n 1-based index among the packets selected by {@code matcher}
     * @param matcher which packets count
     * @return a stateful filter dropping exactly the {@code n}th selected packet
     */
    static PacketFilter dropNth(final int n, final PacketMatcher matcher) {
        if (n < 1) {
            throw new IllegalArgumentException("n is 1-based: " + n);
        }
        final long[] seen = new long[1];
        return (from, to, buf, off, len, now) -> matcher.matches(from, to, buf, off, len) && ++seen[0] == n;
    }

    /**
     * @param count how many selected packets to drop
     * @param matcher which packets count
     * @return a stateful filter dropping the first {@code count} selected packets, then nothing
     */
    static PacketFilter dropFirst(final int count, final PacketMatcher matcher) {
        final long[] seen = new long[1];
        return (from, to, buf, off, len, now) -> matcher.matches(from, to, buf, off, len) && ++seen[0] <= count;
    }

    /**
     * @param startNs first virtual send time of the window, inclusive
     * @param endNs end of the window, exclusive
     * @param matcher which packets are dropped inside the window
     * @return a filter dropping every selected packet sent in {@code [startNs, endNs)}
     */
    static PacketFilter dropInWindow(final long startNs, final long endNs, final PacketMatcher matcher) {
        return (from, to, buf, off, len, now) ->
            now >= startNs && now < endNs && matcher.matches(from, to, buf, off, len);
    }

    /** @return a filter dropping every packet with this opcode byte */
    static PacketFilter dropOpcode(final int opcode) {
        return dropMatching(PacketMatcher.opcode(opcode));
    }

    /** @return a filter dropping every packet with this opcode byte and PSN (retransmissions too) */
    static PacketFilter dropOpcodePsn(final int opcode, final int psn) {
        return dropMatching(PacketMatcher.opcodePsn(opcode, psn));
    }

    /** @return a filter dropping every packet {@code matcher} selects */
    static PacketFilter dropMatching(final PacketMatcher matcher) {
        return (from, to, buf, off, len, now) -> matcher.matches(from, to, buf, off, len);
    }

    /**
     * Combines two filters. Both are always consulted, so each counting filter sees every packet
     * and counts as if it were alone.
     *
     * @return a filter dropping what either filter drops
     */
    default PacketFilter or(final PacketFilter other) {
        return (from, to, buf, off, len, now) ->
            drop(from, to, buf, off, len, now) | other.drop(from, to, buf, off, len, now);
    }
}
