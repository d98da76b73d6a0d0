// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core;

import java.lang.management.ManagementFactory;
import java.util.function.IntConsumer;

/**
 * Bytes a piece of the data path allocates on the calling thread in steady state, for the
 * allocation tests: {@code rounds} warm-up calls, then three measured rounds of {@code rounds}
 * calls, of which the fewest bytes count. A round can see the JVM's own transient work on this
 * thread (a deoptimization re-materializes objects that compiled code had eliminated, then
 * recompiles); an allocation by the code under test shows in every round.
 */
public final class AllocationMeter {
    private static final com.sun.management.ThreadMXBean BEAN =
        (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();

    private AllocationMeter() {
    }

    /**
     * @param rounds calls per round
     * @param step one call; its argument counts the calls of a round from 0
     * @return the bytes of the round that allocated least, and every round's, e.g. "0 (0, 112, 0)"
     */
    public static Measurement fewestBytes(final int rounds, final IntConsumer step) {
        for (int i = 0; i < rounds; i++) {
            step.accept(i);
        }
        long fewest = Long.MAX_VALUE;
        final StringBuilder all = new StringBuilder();
        for (int round = 0; round < 3; round++) {
            final long before = BEAN.getCurrentThreadAllocatedBytes();
            for (int i = 0; i < rounds; i++) {
                step.accept(i);
            }
            final long bytes = BEAN.getCurrentThreadAllocatedBytes() - before;
            all.append(round == 0 ? "" : ", ").append(bytes);
            fewest = Math.min(fewest, bytes);
        }
        return new Measurement(fewest, all.toString());
    }

    /**
     * @param fewest the bytes of the round that allocated least
     * @param rounds every measured round's bytes, comma-separated
     */
    public record Measurement(long fewest, String rounds) {
        @Override
        public String toString() {
            return fewest + " B (rounds: " + rounds + ")";
        }
    }
}
