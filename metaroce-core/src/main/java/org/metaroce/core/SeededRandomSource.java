// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core;

import java.util.SplittableRandom;

/**
 * Deterministic randomness for tests, the simulator and replaying bugs: the same seed yields
 * the same R_Keys, PSNs and path choices on every run. Never use it in production; its output
 * is predictable by anyone who learns the seed.
 */
public final class SeededRandomSource implements RandomSource {
    private final long seed;
    private final SplittableRandom random;

    /**
     * @param seed the seed; print it in test output so a failure can be reproduced
     */
    public SeededRandomSource(final long seed) {
        this.seed = seed;
        this.random = new SplittableRandom(seed);
    }

    /**
     * @return the seed this source was created with
     */
    public long seed() {
        return seed;
    }

    @Override
    public int nextInt() {
        return random.nextInt();
    }

    @Override
    public long nextLong() {
        return random.nextLong();
    }

    @Override
    public int nextInt(final int bound) {
        return random.nextInt(RandomSource.checkBound(bound));
    }

    @Override
    public String toString() {
        return "SeededRandomSource{seed=" + seed + "}";
    }
}
