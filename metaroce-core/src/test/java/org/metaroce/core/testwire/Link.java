// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.testwire;

import java.util.SplittableRandom;

/**
 * One direction of a node pair on an {@link InMemoryWire}: turns its {@link LinkProfile} into
 * per-packet decisions (when it arrives, whether it is lost, duplicated, held back, corrupted or
 * CE-marked) and holds the state those decisions need: the Gilbert–Elliott state, the sender's
 * serializer, the last in-order arrival time, and the link's own random stream.
 *
 * <p>Each link draws from its own {@link SplittableRandom}, seeded from the wire's seed and the node
 * pair, so traffic on one link never shifts the faults another link sees. A probability of zero
 * draws nothing, so a perfect link consumes no randomness at all.
 */
final class Link {
    private final SplittableRandom random;
    private LinkProfile profile;
    private boolean explicitProfile;
    private boolean bad;
    private long serializerFreeNs = Long.MIN_VALUE;
    private long lastInOrderArrivalNs = Long.MIN_VALUE;

    Link(final long wireSeed, final int from, final int to, final LinkProfile profile) {
        this.random = new SplittableRandom(linkSeed(wireSeed, from, to));
        this.profile = profile;
    }

    static long linkSeed(final long wireSeed, final int from, final int to) {
        final long pair = ((long) from << 32) | (to & 0xFFFF_FFFFL);
        return mix64(wireSeed ^ mix64(pair + 0x9E37_79B9_7F4A_7C15L));
    }

    /** Stafford variant 13 finaliser: spreads nearby inputs over the whole 64-bit space. */
    private static long mix64(final long value) {
        long z = value;
        z = (z ^ (z >>> 30)) * 0xBF58_476D_1CE4_E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D0_49BB_1331_11EBL;
        return z ^ (z >>> 31);
    }

    LinkProfile profile() {
        return profile;
    }

    boolean explicitProfile() {
        return explicitProfile;
    }

    /** Sets the profile; an explicit one is kept when the wire's default profile changes. */
    void profile(final LinkProfile profile, final boolean explicit) {
        this.profile = profile;
        this.explicitProfile = explicit;
    }

    /**
     * Puts a packet on the sender's serializer, which sends one packet at a time at the profile's
     * rate. Every packet committed occupies the serializer, even one that is lost afterwards.
     *
     * @return the time the packet's last bit leaves the sender
     */
    long serialize(final long nowNs, final int length) {
        final long rate = profile.rateBitsPerSecond();
        if (rate == 0) {
            return nowNs;
        }
        final long bits = (long) length * Byte.SIZE;
        final long transmitNs = Math.max(1, (Math.multiplyExact(bits, 1_000_000_000L) + rate - 1) / rate);
        serializerFreeNs = Math.max(nowNs, serializerFreeNs) + transmitNs;
        return serializerFreeNs;
    }

    /** Steps the Gilbert–Elliott chain, then decides burst and random loss. */
    boolean lose() {
        if (profile.hasBurstLoss()) {
            bad = bad ? !chance(profile.burstBadToGood()) : chance(profile.burstGoodToBad());
            if (bad && chance(profile.burstLossInBad())) {
                return true;
            }
        }
        return chance(profile.lossProbability());
    }

    boolean ceMark() {
        return chance(profile.ceMarkProbability());
    }

    boolean reorder() {
        return chance(profile.reorderProbability());
    }

    boolean duplicate() {
        return chance(profile.duplicateProbability());
    }

    boolean corrupt() {
        return chance(profile.corruptProbability());
    }

    /**
     * Arrival of a packet that keeps its place: delay plus jitter, but never before the previous
     * in-order packet, so jitter alone does not reorder (a real link is a FIFO).
     */
    long inOrderArrival(final long departNs) {
        final long arrival = Math.max(departNs + profile.delayNs() + uniform(0, profile.jitterNs()), lastInOrderArrivalNs);
        lastInOrderArrivalNs = arrival;
        return arrival;
    }

    /** Arrival of a held-back packet: like an in-order one plus the reorder delay, unclamped. */
    long heldBackArrival(final long departNs) {
        return departNs + profile.delayNs() + uniform(0, profile.jitterNs())
            + uniform(profile.reorderMinExtraNs(), profile.reorderMaxExtraNs());
    }

    /** @return how long after the original a duplicate copy arrives */
    long duplicateLag() {
        return uniform(0, profile.duplicateMaxDelayNs());
    }

    /** @return index of the bit to flip in a packet of {@code length} bytes */
    int bitToFlip(final int length) {
        return random.nextInt(length * Byte.SIZE);
    }

    private boolean chance(final double probability) {
        return probability > 0 && (probability >= 1 || random.nextDouble() < probability);
    }

    private long uniform(final long min, final long max) {
        return max > min ? min + random.nextLong(max - min + 1) : min;
    }
}
