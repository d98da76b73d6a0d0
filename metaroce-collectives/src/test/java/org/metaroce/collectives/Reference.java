// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.collectives;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * Test data and a plain reference computation: rank r's element i is a small value derived
 * from (seed, rank, i), chosen so that every reduction is exact in every type (sums of small
 * integers, products of +-1 and +-2), so results must match bit for bit whatever the order.
 */
final class Reference {
    private Reference() {
    }

    static long mix(final long seed, final int rank, final long i) {
        long z = seed * 0x9E3779B97F4A7C15L + rank * 0xBF58476D1CE4E5B9L + i * 0x94D049BB133111EBL;
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }

    /**
     * @return rank's element i, as a long (exactly representable in every type; for the 16-bit
     *     float types within +-32, so that sums over 8 ranks stay within bfloat16's exact integers)
     */
    static long value(final long seed, final int rank, final long i, final ReduceOp op, final DataType t) {
        final long h = mix(seed, rank, i) >>> 1;
        if (op == ReduceOp.PROD) {
            final long[] choices = {-2, -1, 1, 2};
            return choices[(int) (h % 4)];
        }
        return t.size() == 2 ? h % 65 - 32 : h % 201 - 100;
    }

    static void put(final ByteBuffer b, final DataType t, final long i, final long v) {
        final int at = b.position() + (int) (i * t.size());
        switch (t) {
            case FLOAT32 -> b.putFloat(at, v);
            case FLOAT64 -> b.putDouble(at, v);
            case INT32 -> b.putInt(at, (int) v);
            case INT64 -> b.putLong(at, v);
            case BFLOAT16 -> b.putShort(at, HalfPrecision.floatToBf16(v));
            case FLOAT16 -> b.putShort(at, HalfPrecision.floatToHalf(v));
            default -> throw new IllegalArgumentException();
        }
    }

    /** @return element i as a double (exact for the values used) */
    static double get(final ByteBuffer b, final DataType t, final long i) {
        final int at = b.position() + (int) (i * t.size());
        return switch (t) {
            case FLOAT32 -> b.getFloat(at);
            case FLOAT64 -> b.getDouble(at);
            case INT32 -> b.getInt(at);
            case INT64 -> b.getLong(at);
            case BFLOAT16 -> HalfPrecision.bf16ToFloat(b.getShort(at));
            case FLOAT16 -> HalfPrecision.halfToFloat(b.getShort(at));
        };
    }

    /** @return the reduction of every rank's element i, computed in the type's arithmetic */
    static double reduce(final long seed, final int ranks, final long i, final DataType t, final ReduceOp op) {
        double acc = value(seed, 0, i, op, t);
        for (int r = 1; r < ranks; r++) {
            final double v = value(seed, r, i, op, t);
            acc = narrow(t, switch (op) {
                case SUM -> acc + v;
                case PROD -> acc * v;
                case MIN -> Math.min(acc, v);
                case MAX -> Math.max(acc, v);
            });
        }
        return acc;
    }

    /** @return {@code v} rounded to the 16-bit float types (reduced in float, rounded after each step) */
    static double narrow(final DataType t, final double v) {
        return switch (t) {
            case BFLOAT16 -> HalfPrecision.bf16ToFloat(HalfPrecision.floatToBf16((float) v));
            case FLOAT16 -> HalfPrecision.halfToFloat(HalfPrecision.floatToHalf((float) v));
            default -> v;
        };
    }

    static ByteBuffer direct(final long bytes) {
        return ByteBuffer.allocateDirect((int) Math.max(1, bytes)).order(ByteOrder.nativeOrder());
    }

    /** Fills rank's contribution: elements 0..count-1 with value(seed, rank, base + i). */
    static void fill(final ByteBuffer b, final DataType t, final long seed, final int rank, final long base,
                     final long count, final ReduceOp op) {
        for (long i = 0; i < count; i++) {
            put(b, t, i, value(seed, rank, base + i, op, t));
        }
    }

    /** Poisons a buffer so stale data cannot pass for a result. */
    static void poison(final ByteBuffer b) {
        for (int i = 0; i < b.capacity(); i++) {
            b.put(i, (byte) 0x5A);
        }
    }
}
