// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core;

/**
 * The only way randomness enters the core: R_Keys, initial PSNs and entropy choices all come
 * from an injected source so that a test, a simulation or a bug report can be replayed from a
 * seed. Production drivers inject a {@link SecureRandomSource} because R_Keys and initial PSNs
 * are the only barrier against off-path guessing attacks (ReDMArk).
 *
 * <p>Implementations need not be thread-safe; a source belongs to the thread that owns the
 * objects drawing from it.
 */
public interface RandomSource {
    /**
     * @return a uniformly distributed int over the whole 32-bit range
     */
    int nextInt();

    /**
     * @return a uniformly distributed long over the whole 64-bit range
     */
    long nextLong();

    /**
     * @param bound exclusive upper bound, must be positive
     * @return a uniformly distributed int in {@code [0, bound)}
     * @throws IllegalArgumentException if {@code bound <= 0}
     */
    int nextInt(int bound);

    /**
     * Shared argument check so every implementation rejects a bad bound with the same message.
     *
     * @param bound the bound passed to {@link #nextInt(int)}
     * @return {@code bound}
     * @throws IllegalArgumentException if {@code bound <= 0}
     */
    static int checkBound(final int bound) {
        if (bound <= 0) {
            throw new IllegalArgumentException("bound must be positive, was " + bound);
        }
        return bound;
    }
}
