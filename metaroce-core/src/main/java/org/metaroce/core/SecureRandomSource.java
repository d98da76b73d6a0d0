// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core;

import java.security.SecureRandom;

/**
 * Production randomness: R_Keys and initial PSNs must not be guessable by an off-path attacker
 * (ReDMArk showed predictable RoCE R_Keys let an attacker read and write remote memory), so
 * they come from a cryptographically strong generator.
 */
public final class SecureRandomSource implements RandomSource {
    private final SecureRandom random;

    /** Uses the platform's default strong generator. */
    public SecureRandomSource() {
        this(new SecureRandom());
    }

    /**
     * @param random the generator to draw from, e.g. a specific provider's instance
     */
    public SecureRandomSource(final SecureRandom random) {
        if (random == null) {
            throw new NullPointerException("random");
        }
        this.random = random;
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
        return "SecureRandomSource{" + random.getAlgorithm() + "}";
    }
}
