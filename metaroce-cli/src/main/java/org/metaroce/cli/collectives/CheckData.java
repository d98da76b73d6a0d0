// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.cli.collectives;

import java.nio.ByteBuffer;

import org.metaroce.collectives.DataType;
import org.metaroce.collectives.HalfPrecision;
import org.metaroce.collectives.ReduceOp;

/**
 * The tools' check: rank r's element i is a small value computed from (r, i), chosen so every
 * reduction is exact in every type (small sums, products of +-1 and +-2), so each result can be
 * compared exactly with a reference computed here element by element.
 */
final class CheckData {
    private static final long[] FACTORS = {-2, -1, 1, 2};

    private CheckData() {
    }

    static long value(final int rank, final long i, final ReduceOp op) {
        return value(rank, i, op, DataType.FLOAT32);
    }

    /**
     * @return rank's element i; for the 16-bit float types within +-2, so that sums over up to 128
     *     ranks stay within bfloat16's exact integers
     */
    static long value(final int rank, final long i, final ReduceOp op, final DataType t) {
        final long h = (rank * 7919L + i * 104_729L + (i >>> 7) * 31L) & 0x7FFF_FFFFL;
        return op == ReduceOp.PROD ? FACTORS[(int) (h & 3)] : t.size() == 2 ? h % 5 - 2 : h % 11 - 5;
    }

    static void put(final ByteBuffer b, final DataType t, final long i, final long v) {
        final int at = (int) (i * t.size());
        switch (t) {
            case FLOAT32 -> b.putFloat(at, v);
            case FLOAT64 -> b.putDouble(at, v);
            case INT32 -> b.putInt(at, (int) v);
            case INT64 -> b.putLong(at, v);
            case BFLOAT16 -> b.putShort(at, HalfPrecision.floatToBf16(v));
            case FLOAT16 -> b.putShort(at, HalfPrecision.floatToHalf(v));
            default -> throw new IllegalArgumentException(t.toString());
        }
    }

    /** Fills {@code count} elements with rank's values for indices {@code base + i}. */
    static void fill(final ByteBuffer b, final DataType t, final int rank, final long base, final long count,
                     final ReduceOp op) {
        for (long i = 0; i < count; i++) {
            put(b, t, i, value(rank, base + i, op, t));
        }
    }

    /** @return the reduction over ranks 0..n-1 of element i, in the type's arithmetic, as a double */
    static double reduced(final int n, final long i, final DataType t, final ReduceOp op) {
        if (t != DataType.INT32 && t != DataType.INT64) {
            double acc = value(0, i, op, t);
            for (int r = 1; r < n; r++) {
                final double v = value(r, i, op, t);
                acc = narrow(t, switch (op) {
                    case SUM -> acc + v;
                    case PROD -> acc * v;
                    case MIN -> Math.min(acc, v);
                    case MAX -> Math.max(acc, v);
                });
            }
            return acc;
        }
        long acc = value(0, i, op);
        for (int r = 1; r < n; r++) {
            final long v = value(r, i, op);
            acc = switch (op) {
                case SUM -> acc + v;
                case PROD -> acc * v;
                case MIN -> Math.min(acc, v);
                case MAX -> Math.max(acc, v);
            };
        }
        return t == DataType.INT32 ? (int) acc : acc;
    }

    /** @return {@code v} rounded to the 16-bit float types, which reduce in float and round after each step */
    private static double narrow(final DataType t, final double v) {
        return switch (t) {
            case BFLOAT16 -> HalfPrecision.bf16ToFloat(HalfPrecision.floatToBf16((float) v));
            case FLOAT16 -> HalfPrecision.halfToFloat(HalfPrecision.floatToHalf((float) v));
            default -> v;
        };
    }

    static double get(final ByteBuffer b, final DataType t, final long i) {
        final int at = (int) (i * t.size());
        return switch (t) {
            case FLOAT32 -> b.getFloat(at);
            case FLOAT64 -> b.getDouble(at);
            case INT32 -> b.getInt(at);
            case INT64 -> b.getLong(at);
            case BFLOAT16 -> HalfPrecision.bf16ToFloat(b.getShort(at));
            case FLOAT16 -> HalfPrecision.halfToFloat(b.getShort(at));
        };
    }
}
