// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.collectives;

/**
 * The algorithms, as plans: each fills a {@link Plan} for one rank with the ordered transfers to
 * and from its peers [COLL-012..COLL-019], allocating nothing once the plan has grown. Every rank
 * builds its plan from the same arguments, so the sends on a link match the peer's receives one
 * for one, with equal lengths. Local copies are not part of the plan; the caller does them. A copy
 * receive longer than {@code placeAbove} bytes (the latency threshold) is placed, and so is the
 * send that matches it: its chunks go straight into regions of the destination the receiver
 * grants [COLL-033, COLL-034].
 */
final class Plans {
    private Plans() {
    }

    static int mod(final int a, final int n) {
        final int m = a % n;
        return m < 0 ? m + n : m;
    }

    /** @return element offset of segment {@code i} when {@code count} elements are cut into {@code n} segments */
    static long segmentOffset(final long count, final int n, final int i) {
        final long base = count / n;
        final long rem = count % n;
        return i * base + Math.min(i, rem);
    }

    /** @return element count of segment {@code i} (the first {@code count % n} segments hold one more) */
    static long segmentLength(final long count, final int n, final int i) {
        return count / n + (i < count % n ? 1 : 0);
    }

    /**
     * One-shot all-reduce [COLL-036]: rank r sends its whole vector to every other rank and copies
     * each peer's vector into {@code stage + q * bytes}; the caller then reduces the n vectors in
     * rank order ({@link #reduceInRankOrder}). One hop, no dependencies between the transfers.
     */
    static Plan oneShotAllReduce(final Plan plan, final int r, final int n, final long bytes, final Mem in,
                                 final long stage, final int chunk) {
        plan.clear();
        for (int k = 1; k < n; k++) {
            plan.send(mod(r + k, n), in.address(), in.lkey(), bytes, chunk);
        }
        for (int k = 1; k < n; k++) {
            final int q = mod(r - k, n);
            plan.copy(q, stage + q * bytes, bytes, chunk);
        }
        return plan;
    }

    /**
     * Reduces the n vectors of a one-shot all-reduce as ((v0 op v1) op v2) ... op v(n-1), the same
     * order on every rank, so that results are bit-identical everywhere whatever the operator's
     * associativity [COLL-036]. Rank r's own vector is {@code in}; the others are staged at
     * {@code stage + q * bytes}. Accumulates in rank r's own stage slot (free: nothing is received
     * there), so {@code out} may be {@code in}.
     */
    static void reduceInRankOrder(final int r, final int n, final long count, final DataType type,
                                  final ReduceOp op, final long in, final long stage, final long out) {
        final long bytes = count * type.size();
        final long acc = stage + r * bytes;
        Reductions.reduce(type, op, acc, r == 0 ? in : stage, r == 1 ? in : stage + bytes, count);
        for (int q = 2; q < n; q++) {
            Reductions.reduce(type, op, acc, acc, q == r ? in : stage + q * bytes, count);
        }
        Reductions.copy(acc, out, bytes);
    }

    /**
     * Ring all-reduce: a reduce-scatter pass, then an all-gather pass, over {@code n} segments;
     * every chunk is forwarded as soon as it is reduced [COLL-012].
     */
    static Plan ringAllReduce(final Plan plan, final int r, final int n, final long count, final DataType type,
                              final ReduceOp op, final Mem in, final Mem out, final int chunk,
                              final long placeAbove) {
        plan.clear();
        final int next = mod(r + 1, n);
        final int prev = mod(r - 1, n);
        final int es = type.size();
        final Transfer[] rsSend = plan.marks(0, n);
        Transfer prevRecv = null;
        for (int s = 0; s < n - 1; s++) {
            final int sendSeg = mod(r - s, n);
            final int recvSeg = mod(r - s - 1, n);
            final Mem src = s == 0 ? in : out;
            final Transfer send = plan.send(next, src.address() + segmentOffset(count, n, sendSeg) * es, src.lkey(),
                segmentLength(count, n, sendSeg) * es, chunk).after(prevRecv);
            final long recvOff = segmentOffset(count, n, recvSeg) * es;
            final Transfer recv = plan.reduce(prev, out.address() + recvOff, in.address() + recvOff,
                segmentLength(count, n, recvSeg) * es, chunk, type, op);
            rsSend[sendSeg] = send;
            prevRecv = recv;
        }
        for (int s = 0; s < n - 1; s++) {
            final int sendSeg = mod(r + 1 - s, n);
            final int recvSeg = mod(r - s, n);
            final Transfer send = plan.send(next, out.address() + segmentOffset(count, n, sendSeg) * es, out.lkey(),
                segmentLength(count, n, sendSeg) * es, chunk).after(prevRecv).placedAbove(placeAbove);
            // Segment recvSeg's partial sum left from here during the first pass: overwrite it (or,
            // placed, grant it to the sender) only once that WRITE has completed.
            final Transfer recv = plan.copy(prev, out.address() + segmentOffset(count, n, recvSeg) * es,
                segmentLength(count, n, recvSeg) * es, chunk).guardedBy(rsSend[recvSeg])
                .placedAbove(placeAbove, out.rkey());
            prevRecv = recv;
        }
        return plan;
    }

    /**
     * Rabenseifner all-reduce [COLL-037]: over the largest power of two p <= n, a reduce-scatter by
     * recursive halving, then an all-gather by recursive doubling, on the vector cut into p blocks
     * ({@link #segmentOffset}). 2 log2(p) dependent hops, each rank sending the ring's bytes. Ranks
     * p..n-1 first fold their vector into rank r-p and get the result back from it at the end.
     * <p>
     * Every message is one block, so chunk j of a transfer and chunk j of the one it depends on or
     * is guarded by cover the same bytes, which is what the engine's per-chunk pipelining relies on
     * ({@link Transfer#dependsOn}, {@link Transfer#guard}). Each block is reduced at one rank only,
     * its owner, in an order fixed by the rank numbers, and copied from there: every rank ends with
     * bit-identical results. {@code in} may be {@code out}.
     */
    static Plan rabenseifnerAllReduce(final Plan plan, final int r, final int n, final long count, final DataType type,
                                      final ReduceOp op, final Mem in, final Mem out, final int chunk,
                                      final long placeAbove) {
        plan.clear();
        final int p = Integer.highestOneBit(n);
        final int extra = n - p;
        final int es = type.size();
        if (r >= p) {
            // Folded away: the whole input goes to rank r-p, the whole result comes back, block by
            // block (the partner sends block by block). Block b of out may be overwritten (in place)
            // only once the WRITE of block b of the input has completed.
            final Transfer[] sent = plan.marks(0, p);
            for (int b = 0; b < p; b++) {
                final long off = segmentOffset(count, p, b) * es;
                sent[b] = plan.send(r - p, in.address() + off, in.lkey(), segmentLength(count, p, b) * es, chunk);
            }
            for (int b = 0; b < p; b++) {
                final long off = segmentOffset(count, p, b) * es;
                plan.copy(r - p, out.address() + off, segmentLength(count, p, b) * es, chunk)
                    .guardedBy(sent[b]).placedAbove(placeAbove, out.rkey());
            }
            return plan;
        }
        // latest[b]: the receive that last wrote block b of out (null: block b is still only in in).
        final Transfer[] latest = plan.marks(0, p);
        // sentRs[b]: the reduce-scatter send of block b, which reads out (or in) until it completes.
        final Transfer[] sentRs = plan.marks(1, p);
        if (r < extra) {
            for (int b = 0; b < p; b++) {
                final long off = segmentOffset(count, p, b) * es;
                latest[b] = plan.reduce(r + p, out.address() + off, in.address() + off,
                    segmentLength(count, p, b) * es, chunk, type, op);
            }
        }
        // Reduce-scatter: the current range of blocks [lo, lo + 2m) is halved with partner r ^ m;
        // rank r keeps the half holding block r and reduces the partner's partial sums into it.
        int lo = 0;
        for (int m = p >> 1; m >= 1; m >>= 1) {
            final int partner = r ^ m;
            final int keep = (r & m) == 0 ? lo : lo + m;
            final int give = (r & m) == 0 ? lo + m : lo;
            for (int b = give; b < give + m; b++) {
                final long off = segmentOffset(count, p, b) * es;
                final Mem src = latest[b] == null ? in : out;
                sentRs[b] = plan.send(partner, src.address() + off, src.lkey(), segmentLength(count, p, b) * es,
                    chunk).after(latest[b]);
            }
            for (int b = keep; b < keep + m; b++) {
                final long off = segmentOffset(count, p, b) * es;
                final long operand = (latest[b] == null ? in : out).address() + off;
                latest[b] = plan.reduce(partner, out.address() + off, operand, segmentLength(count, p, b) * es,
                    chunk, type, op).after(latest[b]);
            }
            lo = keep;
        }
        // All-gather: rank r's group of m blocks (aligned at r & -m) goes to partner r ^ m, whose
        // group comes back; each of those blocks left this rank in the reduce-scatter pass, so it
        // is overwritten (or granted, placed) only once that WRITE has completed.
        for (int m = 1; m < p; m <<= 1) {
            final int partner = r ^ m;
            final int mine = r & -m;
            final int theirs = partner & -m;
            for (int b = mine; b < mine + m; b++) {
                final long off = segmentOffset(count, p, b) * es;
                plan.send(partner, out.address() + off, out.lkey(), segmentLength(count, p, b) * es, chunk)
                    .after(latest[b]).placedAbove(placeAbove);
            }
            for (int b = theirs; b < theirs + m; b++) {
                final long off = segmentOffset(count, p, b) * es;
                latest[b] = plan.copy(partner, out.address() + off, segmentLength(count, p, b) * es, chunk)
                    .guardedBy(sentRs[b]).placedAbove(placeAbove, out.rkey());
            }
        }
        if (r < extra) {
            for (int b = 0; b < p; b++) {
                final long off = segmentOffset(count, p, b) * es;
                plan.send(r + p, out.address() + off, out.lkey(), segmentLength(count, p, b) * es, chunk)
                    .after(latest[b]).placedAbove(placeAbove);
            }
        }
        return plan;
    }

    /**
     * Recursive doubling all-reduce over the largest power of two p <= n; ranks p..n-1 first fold
     * their vector into rank r-p and get the result back from it [COLL-013]. Intermediate results
     * alternate between the two halves {@code a} and {@code b} of scratch memory.
     *
     * @return the plan; {@code result[0]} is set to the memory holding the result afterwards
     */
    static Plan recursiveDoubling(final Plan plan, final int r, final int n, final long count, final DataType type,
                                  final ReduceOp op, final Mem in, final Mem out, final Mem a,
                                  final Mem b, final int chunk, final Mem[] result) {
        plan.clear();
        final long bytes = count * type.size();
        final int p = Integer.highestOneBit(n);
        final int extra = n - p;
        if (r >= p) {
            plan.send(r - p, in.address(), in.lkey(), bytes, chunk);
            plan.copy(r - p, out.address(), bytes, chunk);
            result[0] = out;
            return plan;
        }
        Mem cur = in;
        Transfer lastRecv = null;
        Transfer sentFromA = null;
        Transfer sentFromB = null;
        if (r < extra) {
            lastRecv = plan.reduce(r + p, a.address(), in.address(), bytes, chunk, type, op);
            cur = a;
        }
        for (int mask = 1; mask < p; mask <<= 1) {
            final int partner = r ^ mask;
            final Transfer send = plan.send(partner, cur.address(), cur.lkey(), bytes, chunk).after(lastRecv);
            final Mem dst = cur == a ? b : a;
            final Transfer recv = plan.reduce(partner, dst.address(), cur.address(), bytes, chunk, type, op)
                .after(lastRecv).guardedBy(dst == a ? sentFromA : sentFromB);
            if (cur == a) {
                sentFromA = send;
            } else if (cur == b) {
                sentFromB = send;
            }
            cur = dst;
            lastRecv = recv;
        }
        if (r < extra) {
            plan.send(r + p, cur.address(), cur.lkey(), bytes, chunk).after(lastRecv);
        }
        result[0] = cur;
        return plan;
    }

    /** Ring reduce-scatter: rank r ends with segment r (of {@code recvCount} elements) reduced [COLL-014]. */
    static Plan ringReduceScatter(final Plan plan, final int r, final int n, final long recvCount, final DataType type,
                                  final ReduceOp op, final Mem in, final Mem out, final Mem scratch,
                                  final int chunk) {
        plan.clear();
        final int next = mod(r + 1, n);
        final int prev = mod(r - 1, n);
        final long seg = recvCount * type.size();
        Transfer prevRecv = null;
        for (int s = 0; s < n - 1; s++) {
            final int sendSeg = mod(r - s - 1, n);
            final int recvSeg = mod(r - s - 2, n);
            final Mem src = s == 0 ? in : scratch;
            plan.send(next, src.address() + sendSeg * seg, src.lkey(), seg, chunk).after(prevRecv);
            final long dst = s == n - 2 ? out.address() : scratch.address() + recvSeg * seg;
            final Transfer recv = plan.reduce(prev, dst, in.address() + recvSeg * seg, seg, chunk, type, op);
            prevRecv = recv;
        }
        return plan;
    }

    /** Ring all-gather: block i of {@code out} comes from rank i's {@code in} [COLL-015]. */
    static Plan ringAllGather(final Plan plan, final int r, final int n, final long sendCount, final DataType type,
                              final Mem in, final Mem out, final int chunk, final long placeAbove) {
        plan.clear();
        final int next = mod(r + 1, n);
        final int prev = mod(r - 1, n);
        final long seg = sendCount * type.size();
        Transfer prevRecv = null;
        for (int s = 0; s < n - 1; s++) {
            final int sendSeg = mod(r - s, n);
            final int recvSeg = mod(r - s - 1, n);
            final long src = s == 0 ? in.address() : out.address() + sendSeg * seg;
            plan.send(next, src, s == 0 ? in.lkey() : out.lkey(), seg, chunk).after(prevRecv)
                .placedAbove(placeAbove);
            final Transfer recv = plan.copy(prev, out.address() + recvSeg * seg, seg, chunk)
                .placedAbove(placeAbove, out.rkey());
            prevRecv = recv;
        }
        return plan;
    }

    /** Pipelined chain broadcast from {@code root} along increasing ranks [COLL-016]. */
    static Plan chainBroadcast(final Plan plan, final int r, final int n, final int root, final long bytes,
                               final Mem in, final Mem out, final int chunk, final long placeAbove) {
        plan.clear();
        final int pos = mod(r - root, n);
        final int next = mod(r + 1, n);
        final int prev = mod(r - 1, n);
        if (pos == 0) {
            plan.send(next, in.address(), in.lkey(), bytes, chunk).placedAbove(placeAbove);
            return plan;
        }
        final Transfer recv = plan.copy(prev, out.address(), bytes, chunk).placedAbove(placeAbove, out.rkey());
        if (pos < n - 1) {
            plan.send(next, out.address(), out.lkey(), bytes, chunk).after(recv).placedAbove(placeAbove);
        }
        return plan;
    }

    /** @return the binomial tree parent of relative rank {@code v > 0} (its lowest set bit cleared) */
    static int treeParent(final int v) {
        return v & (v - 1);
    }

    /**
     * @return the binomial tree children of relative rank {@code v} in a tree of {@code n}: {@code v + 2^k}
     *     for every {@code 2^k} below v's lowest set bit (every {@code 2^k < n} for the root), that is
     *     below {@code n}, largest subtree first
     */
    static int[] treeChildren(final int v, final int n) {
        final int[] children = new int[treeChildCount(v, n)];
        for (int i = 0; i < children.length; i++) {
            children[i] = treeChild(v, n, i);
        }
        return children;
    }

    /** @return how many {@link #treeChildren} relative rank {@code v} has in a tree of {@code n} */
    static int treeChildCount(final int v, final int n) {
        int count = 0;
        for (int m = treeChildLimit(v, n) >> 1; m > 0; m >>= 1) {
            count += v + m < n ? 1 : 0;
        }
        return count;
    }

    /** @return child {@code i} of relative rank {@code v} (as {@link #treeChildren}; the plans allocate no array) */
    static int treeChild(final int v, final int n, final int i) {
        int k = 0;
        for (int m = treeChildLimit(v, n) >> 1; m > 0; m >>= 1) {
            if (v + m < n && k++ == i) {
                return v + m;
            }
        }
        throw new IndexOutOfBoundsException("child " + i + " of relative rank " + v + " of " + n);
    }

    /** @return twice the largest step to a child: v's lowest set bit, or for the root the power of two above n - 1 */
    private static int treeChildLimit(final int v, final int n) {
        return v == 0 ? Integer.highestOneBit(Math.max(1, n - 1)) << 1 : Integer.lowestOneBit(v);
    }

    /**
     * Binomial tree broadcast from {@code root} (latency: ceil(log2 n) hops instead of the chain's
     * n-1): relative rank {@code v = r - root} receives from {@link #treeParent} and forwards every
     * chunk to its {@link #treeChildren}, largest subtree first [COLL-032].
     */
    static Plan treeBroadcast(final Plan plan, final int r, final int n, final int root, final long bytes,
                              final Mem in, final Mem out, final int chunk, final long placeAbove) {
        plan.clear();
        final int v = mod(r - root, n);
        Transfer recv = null;
        Mem src = in;
        if (v != 0) {
            recv = plan.copy(mod(treeParent(v) + root, n), out.address(), bytes, chunk)
                .placedAbove(placeAbove, out.rkey());
            src = out;
        }
        final int children = treeChildCount(v, n);
        for (int i = 0; i < children; i++) {
            plan.send(mod(treeChild(v, n, i) + root, n), src.address(), src.lkey(), bytes, chunk).after(recv)
                .placedAbove(placeAbove);
        }
        return plan;
    }

    /**
     * Binomial tree reduce toward {@code root}, the broadcast tree reversed: a rank reduces what its
     * children send (smallest subtree first, chunk by chunk) into its accumulator, then sends that
     * to its parent; leaves send their input [COLL-032].
     */
    static Plan treeReduce(final Plan plan, final int r, final int n, final int root, final long count,
                           final DataType type, final ReduceOp op, final Mem in, final Mem out,
                           final Mem scratch, final int chunk) {
        plan.clear();
        final long bytes = count * type.size();
        final int v = mod(r - root, n);
        final int children = treeChildCount(v, n);
        final Mem acc = v == 0 ? out : scratch;
        Transfer last = null;
        Mem operand = in;
        for (int i = children - 1; i >= 0; i--) {
            last = plan.reduce(mod(treeChild(v, n, i) + root, n), acc.address(), operand.address(), bytes, chunk,
                type, op).after(last);
            operand = acc;
        }
        if (v != 0) {
            final Mem src = children == 0 ? in : acc;
            plan.send(mod(treeParent(v) + root, n), src.address(), src.lkey(), bytes, chunk).after(last);
        }
        return plan;
    }

    /** Pipelined chain reduce toward {@code root}, along decreasing ranks [COLL-017]. */
    static Plan chainReduce(final Plan plan, final int r, final int n, final int root, final long count,
                            final DataType type, final ReduceOp op, final Mem in, final Mem out,
                            final Mem scratch, final int chunk) {
        plan.clear();
        final long bytes = count * type.size();
        final int pos = mod(r - root, n);
        final int toward = mod(r - 1, n);
        final int from = mod(r + 1, n);
        if (pos == n - 1) {
            plan.send(toward, in.address(), in.lkey(), bytes, chunk);
            return plan;
        }
        final Mem dst = pos == 0 ? out : scratch;
        final Transfer recv = plan.reduce(from, dst.address(), in.address(), bytes, chunk, type, op);
        if (pos > 0) {
            plan.send(toward, dst.address(), dst.lkey(), bytes, chunk).after(recv);
        }
        return plan;
    }

    /**
     * Wire baseline: the sends and receives of a ring all-reduce of {@code bytes} bytes (2(n-1)
     * segments each way, segment {@code i} of {@code n}), without dependencies; arriving chunks are
     * dropped [COLL-030].
     */
    static Plan ringBaseline(final Plan plan, final int r, final int n, final long bytes, final Mem in,
                             final int chunk) {
        plan.clear();
        final int next = mod(r + 1, n);
        final int prev = mod(r - 1, n);
        for (int s = 0; s < 2 * (n - 1); s++) {
            final int sendSeg = mod(r - s, n);
            final int recvSeg = mod(r - s - 1, n);
            plan.send(next, in.address() + segmentOffset(bytes, n, sendSeg), in.lkey(),
                segmentLength(bytes, n, sendSeg), chunk);
            plan.discard(prev, segmentLength(bytes, n, recvSeg), chunk);
        }
        return plan;
    }

    /** Pairwise all-to-all: in step s, block to rank r+s and block from rank r-s [COLL-018]. */
    static Plan allToAll(final Plan plan, final int r, final int n, final long countPerPeer, final DataType type,
                         final Mem in, final Mem out, final Mem staging, final int chunk,
                         final long placeAbove) {
        plan.clear();
        final long block = countPerPeer * type.size();
        final boolean inPlace = in.address() == out.address();
        final Transfer[] sends = plan.marks(0, n);
        for (int s = 1; s < n; s++) {
            final int to = mod(r + s, n);
            sends[to] = plan.send(to, in.address() + to * block, in.lkey(), block, chunk).placedAbove(placeAbove);
        }
        for (int s = 1; s < n; s++) {
            final int from = mod(r - s, n);
            // In place, the block from a peer lands where the block to it came from: copied there
            // (from a slot, or placed in staging) chunk by chunk as the WRITEs of that block complete.
            final Transfer recv = plan.copy(from, out.address() + from * block, block, chunk)
                .guardedBy(inPlace ? sends[from] : null)
                .placedAbove(placeAbove, !inPlace ? out.rkey() : staging != null ? staging.rkey() : 0);
            if (inPlace && staging != null) {
                recv.stagedAt(staging.address() + from * block, staging.rkey());
            }
        }
        return plan;
    }
}
