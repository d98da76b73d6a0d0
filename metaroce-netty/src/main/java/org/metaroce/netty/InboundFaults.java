// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty;

/**
 * A seeded fault profile for the datagrams a device's endpoint socket receives, to test that
 * what runs over MetaRoCE is correct on a lossy, reordering network without a special network:
 * each datagram is dropped with probability {@link #dropProbability()}, or else held back with
 * probability {@link #reorderProbability()} and delivered after the next datagram (or at the end
 * of the read batch), so it arrives out of order. Decisions come from a
 * {@link java.util.SplittableRandom} seeded with {@link #seed()} per device, so a device that
 * receives the same datagrams in the same order makes the same decisions. Dropped and held
 * datagrams are counted ({@link DriverCounter#FAULT_DROPPED}, {@link DriverCounter#FAULT_REORDERED}).
 * For tests and experiments; leave unset in production.
 *
 * @param dropProbability probability a datagram is discarded, 0..1
 * @param reorderProbability probability a datagram that is not dropped is delivered after the next one, 0..1
 * @param seed seed of the decisions
 */
public record InboundFaults(double dropProbability, double reorderProbability, long seed) {
    /** Validates the probabilities. */
    public InboundFaults {
        if (!(dropProbability >= 0 && dropProbability < 1)) {
            throw new IllegalArgumentException("dropProbability must be in [0, 1), got " + dropProbability);
        }
        if (!(reorderProbability >= 0 && reorderProbability <= 1)) {
            throw new IllegalArgumentException("reorderProbability must be in [0, 1], got " + reorderProbability);
        }
    }
}
