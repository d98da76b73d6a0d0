// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.collectives;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The plans of Rabenseifner's all-reduce [COLL-037] for 2..8 ranks, without a network: the sends
 * on every link match the peer's receives one for one with equal lengths, a rank sends the ring's
 * bytes, and the longest chain of dependent hops is 2 log2(p) (+2 when ranks are folded), against
 * the ring's 2(n-1) [COLL-012].
 */
class RabenseifnerPlanTest {
    private static final int CHUNK = 4096;
    private static final long COUNT = 1 << 16; // floats: 256 KiB, a multiple of every p

    private static List<List<Transfer>> plans(final int n, final boolean rabenseifner, final boolean inPlace) {
        final List<List<Transfer>> plans = new ArrayList<>();
        for (int r = 0; r < n; r++) {
            final Mem in = new Mem().set(1L << 32, 1, 0);
            final Mem out = inPlace ? new Mem().set(1L << 32, 1, 7) : new Mem().set(1L << 33, 2, 7);
            final Plan plan = new Plan();
            plans.add((rabenseifner
                ? Plans.rabenseifnerAllReduce(plan, r, n, COUNT, DataType.FLOAT32, ReduceOp.SUM, in, out, CHUNK, 1024)
                : Plans.ringAllReduce(plan, r, n, COUNT, DataType.FLOAT32, ReduceOp.SUM, in, out, CHUNK, 1024)).toList());
        }
        return plans;
    }

    /** @return for every receive, the send of the peer that feeds it (the k-th send r to q feeds the k-th receive of q from r) */
    private static Map<Transfer, Transfer> match(final List<List<Transfer>> plans) {
        final int n = plans.size();
        final Map<Transfer, Transfer> fedBy = new HashMap<>();
        for (int r = 0; r < n; r++) {
            for (int q = 0; q < n; q++) {
                final int from = r;
                final int to = q;
                final List<Transfer> sends = plans.get(from).stream().filter(t -> t.isSend() && t.peer == to).toList();
                final List<Transfer> recvs = plans.get(to).stream().filter(t -> !t.isSend() && t.peer == from).toList();
                assertThat(recvs).as("receives of %d from %d", to, from).hasSameSizeAs(sends);
                for (int k = 0; k < sends.size(); k++) {
                    assertThat(recvs.get(k).bytes).as("length of message %d from %d to %d", k, from, to)
                        .isEqualTo(sends.get(k).bytes);
                    assertThat(recvs.get(k).placed).isEqualTo(sends.get(k).placed);
                    fedBy.put(recvs.get(k), sends.get(k));
                }
            }
        }
        return fedBy;
    }

    /** @return the longest chain of hops: a receive is one hop after the send feeding it, a send waits for its dependency */
    private static int hops(final List<List<Transfer>> plans) {
        final Map<Transfer, Transfer> fedBy = match(plans);
        final Map<Transfer, Integer> depth = new HashMap<>();
        boolean changed = true;
        int rounds = 0;
        while (changed) {
            changed = false;
            assertThat(rounds++).as("the dependencies form no cycle").isLessThan(100);
            for (final List<Transfer> plan : plans) {
                for (final Transfer t : plan) {
                    int d = t.dependsOn == null ? 0 : depth.getOrDefault(t.dependsOn, 0);
                    if (t.isSend()) {
                        d = Math.max(d, 0);
                    } else {
                        d = Math.max(d, depth.getOrDefault(fedBy.get(t), 0) + 1);
                        if (t.guard != null) {
                            d = Math.max(d, depth.getOrDefault(t.guard, 0));
                        }
                    }
                    if (depth.getOrDefault(t, -1) != d) {
                        depth.put(t, d);
                        changed = true;
                    }
                }
            }
        }
        return depth.values().stream().mapToInt(Integer::intValue).max().orElse(0);
    }

    @ParameterizedTest(name = "{0} ranks")
    @ValueSource(ints = {2, 3, 4, 5, 6, 7, 8})
    void twoLog2pHopsInsteadOfTheRingsTwoNMinusOne(final int n) {
        final int p = Integer.highestOneBit(n);
        final int log2p = Integer.numberOfTrailingZeros(p);
        for (final boolean inPlace : new boolean[] {false, true}) {
            assertThat(hops(plans(n, true, inPlace))).as("Rabenseifner, %d ranks", n)
                .isEqualTo(2 * log2p + (n == p ? 0 : 2));
            assertThat(hops(plans(n, false, inPlace))).as("ring, %d ranks", n).isEqualTo(2 * (n - 1));
        }
    }

    @ParameterizedTest(name = "{0} ranks")
    @ValueSource(ints = {2, 3, 4, 5, 6, 7, 8})
    void eachRankSendsTheRingsBytes(final int n) {
        final int p = Integer.highestOneBit(n);
        final long bytes = COUNT * 4;
        final List<List<Transfer>> plans = plans(n, true, false);
        for (int r = 0; r < n; r++) {
            final long sent = plans.get(r).stream().filter(Transfer::isSend).mapToLong(t -> t.bytes).sum();
            final long fold = r >= p || r < n - p ? bytes : 0;
            assertThat(sent).as("bytes sent by rank %d of %d", r, n)
                .isEqualTo(r >= p ? bytes : 2 * (p - 1) * (bytes / p) + fold);
        }
    }

    @ParameterizedTest(name = "{0} ranks")
    @ValueSource(ints = {2, 3, 5, 8})
    void blocksAreReducedOnceAtTheirOwner(final int n) {
        // A rank's last reduce is of its own block, and every other block reaches it by one copy:
        // each block's result is computed at one rank only (bit-identical results everywhere).
        final int p = Integer.highestOneBit(n);
        final List<List<Transfer>> plans = plans(n, true, false);
        for (int r = 0; r < p; r++) {
            final List<Transfer> reduces = plans.get(r).stream().filter(t -> t.kind == Transfer.Kind.RECV_REDUCE).toList();
            final long reducedAt = reduces.get(reduces.size() - 1).address;
            assertThat(reducedAt).as("the last reduce of rank %d is its own block", r)
                .isEqualTo((1L << 33) + Plans.segmentOffset(COUNT, p, r) * 4);
            final long copies = plans.get(r).stream().filter(t -> t.kind == Transfer.Kind.RECV_COPY).count();
            assertThat(copies).as("rank %d copies every other block once", r).isEqualTo(p - 1);
        }
    }
}
