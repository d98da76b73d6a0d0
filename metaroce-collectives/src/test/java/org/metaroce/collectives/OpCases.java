// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.collectives;

import static org.metaroce.collectives.Reference.direct;
import static org.metaroce.collectives.Reference.fill;
import static org.metaroce.collectives.Reference.get;
import static org.metaroce.collectives.Reference.poison;
import static org.metaroce.collectives.Reference.value;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

/**
 * Every operation, on one rank, against the plain reference computation of {@link Reference}:
 * what each rank runs inside {@link LocalCluster#run}. Returns a description of every mismatch
 * (empty when all results are right); every rank checks its own output.
 */
final class OpCases {
    final Communicator c;
    final long seed;
    final List<String> wrong = new ArrayList<>();
    int checked;

    OpCases(final Communicator c, final long seed) {
        this.c = c;
        this.seed = seed;
    }

    private void expect(final String what, final ByteBuffer b, final DataType t, final long i, final double want) {
        checked++;
        final double got = get(b, t, i);
        if (Double.compare(got, want) != 0 && wrong.size() < 20) {
            wrong.add("rank " + c.rank() + " of " + c.size() + ": " + what + " element " + i + " = " + got
                + ", expected " + want);
        }
    }

    void allReduce(final long n, final DataType t, final ReduceOp op, final boolean inPlace) {
        final long s = seed + n * 31 + t.ordinal() * 7 + op.ordinal();
        final ByteBuffer in = direct(n * t.size());
        fill(in, t, s, c.rank(), 0, n, op);
        final ByteBuffer out = inPlace ? in : direct(n * t.size());
        if (!inPlace) {
            poison(out);
        }
        c.allReduce(in, out, n, t, op);
        final String what = "all_reduce(" + n + ", " + t + ", " + op + (inPlace ? ", in place)" : ")");
        for (long i = 0; i < n; i++) {
            expect(what, out, t, i, Reference.reduce(s, c.size(), i, t, op));
        }
        if (!inPlace) {
            for (long i = 0; i < n; i++) {
                expect(what + " input", in, t, i, value(s, c.rank(), i, op, t));
            }
        }
    }

    void reduceScatter(final long n, final DataType t, final ReduceOp op, final boolean inPlace) {
        final long s = seed + n * 37 + t.ordinal() * 5 + op.ordinal();
        final int size = c.size();
        final ByteBuffer in = direct(n * size * t.size());
        fill(in, t, s, c.rank(), 0, n * size, op);
        final ByteBuffer out;
        if (inPlace) {
            out = in.duplicate().position((int) (c.rank() * n * t.size())).slice().order(in.order());
        } else {
            out = direct(n * t.size());
            poison(out);
        }
        c.reduceScatter(in, out, n, t, op);
        final String what = "reduce_scatter(" + n + ", " + t + ", " + op + (inPlace ? ", in place)" : ")");
        for (long i = 0; i < n; i++) {
            expect(what, out, t, i, Reference.reduce(s, size, c.rank() * n + i, t, op));
        }
    }

    void allGather(final long n, final DataType t, final boolean inPlace) {
        final long s = seed + n * 41 + t.ordinal();
        final int size = c.size();
        final ByteBuffer out = direct(n * size * t.size());
        poison(out);
        final ByteBuffer in;
        if (inPlace) {
            in = out.duplicate().position((int) (c.rank() * n * t.size())).slice().order(out.order());
        } else {
            in = direct(n * t.size());
        }
        fill(in, t, s, c.rank(), 0, n, ReduceOp.SUM);
        c.allGather(in, out, n, t);
        final String what = "all_gather(" + n + ", " + t + (inPlace ? ", in place)" : ")");
        for (int r = 0; r < size; r++) {
            for (long i = 0; i < n; i++) {
                expect(what, out, t, r * n + i, value(s, r, i, ReduceOp.SUM, t));
            }
        }
    }

    void broadcast(final long n, final DataType t, final int root, final boolean inPlace) {
        final long s = seed + n * 43 + t.ordinal() + root;
        final ByteBuffer in = direct(n * t.size());
        final ByteBuffer out = inPlace ? in : direct(n * t.size());
        poison(out);
        if (c.rank() == root) {
            fill(in, t, s, root, 0, n, ReduceOp.SUM);
        }
        c.broadcast(in, out, n, t, root);
        final String what = "broadcast(" + n + ", " + t + ", root " + root + (inPlace ? ", in place)" : ")");
        for (long i = 0; i < n; i++) {
            expect(what, out, t, i, value(s, root, i, ReduceOp.SUM, t));
        }
    }

    void reduce(final long n, final DataType t, final ReduceOp op, final int root) {
        final long s = seed + n * 47 + t.ordinal() * 3 + op.ordinal() + root;
        final ByteBuffer in = direct(n * t.size());
        fill(in, t, s, c.rank(), 0, n, op);
        final ByteBuffer out = c.rank() == root ? direct(n * t.size()) : null;
        if (out != null) {
            poison(out);
        }
        c.reduce(in, out, n, t, op, root);
        if (out != null) {
            final String what = "reduce(" + n + ", " + t + ", " + op + ", root " + root + ")";
            for (long i = 0; i < n; i++) {
                expect(what, out, t, i, Reference.reduce(s, c.size(), i, t, op));
            }
        }
    }

    void allToAll(final long n, final DataType t, final boolean inPlace) {
        final long s = seed + n * 53 + t.ordinal();
        final int size = c.size();
        // Block j of rank r holds value(s, r, j * n + i).
        final ByteBuffer in = direct(n * size * t.size());
        fill(in, t, s, c.rank(), 0, n * size, ReduceOp.SUM);
        final ByteBuffer out = inPlace ? in : direct(n * size * t.size());
        if (!inPlace) {
            poison(out);
        }
        c.allToAll(in, out, n, t);
        final String what = "all_to_all(" + n + ", " + t + (inPlace ? ", in place)" : ")");
        for (int r = 0; r < size; r++) {
            for (long i = 0; i < n; i++) {
                expect(what, out, t, r * n + i, value(s, r, c.rank() * n + i, ReduceOp.SUM, t));
            }
        }
    }

    /** Ring of send/recv: even ranks send first, odd ranks receive first. */
    void sendRecv(final long n, final DataType t) {
        final int size = c.size();
        if (size == 1) {
            return;
        }
        final long s = seed + n * 59 + t.ordinal();
        final int next = (c.rank() + 1) % size;
        final int prev = (c.rank() + size - 1) % size;
        final ByteBuffer in = direct(n * t.size());
        fill(in, t, s, c.rank(), 0, n, ReduceOp.SUM);
        final ByteBuffer out = direct(n * t.size());
        poison(out);
        if (c.rank() % 2 == 0) {
            c.send(in, n, t, next);
            c.recv(out, n, t, prev);
        } else {
            c.recv(out, n, t, prev);
            c.send(in, n, t, next);
        }
        final String what = "send/recv(" + n + ", " + t + ")";
        for (long i = 0; i < n; i++) {
            expect(what, out, t, i, value(s, prev, i, ReduceOp.SUM, t));
        }
    }

    /** Every operation for every size, type and reduction given. */
    List<String> all(final long[] sizes, final DataType[] types, final ReduceOp[] ops) {
        for (final DataType t : types) {
            for (final long n : sizes) {
                for (final ReduceOp op : ops) {
                    allReduce(n, t, op, false);
                    allReduce(n, t, op, true);
                    reduceScatter(n, t, op, (n & 1) == 0);
                    reduce(n, t, op, (int) (n % c.size()));
                }
                allGather(n, t, false);
                allGather(n, t, true);
                broadcast(n, t, (int) ((n + 1) % c.size()), (n & 1) == 1);
                allToAll(n, t, false);
                allToAll(n, t, true);
                sendRecv(n, t);
            }
            c.barrier();
        }
        return wrong;
    }
}
