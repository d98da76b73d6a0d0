// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.collectives;

import org.agrona.UnsafeApi;

/**
 * Element-wise reduction kernels over off-heap memory: {@code dst[i] = a[i] op b[i]} for raw
 * native addresses, one tight loop per (type, operator) with the dispatch outside the loop, no
 * allocation and no bounds checks (callers pass ranges they have validated). {@code dst} may
 * equal {@code a} or {@code b}. Float operators are commutative in IEEE 754, so both ends of a
 * pairwise exchange compute bit-identical results.
 */
final class Reductions {
    private Reductions() {
    }

    /**
     * @param type element type
     * @param op operator
     * @param dst destination address
     * @param a first operand address
     * @param b second operand address
     * @param count elements
     */
    static void reduce(final DataType type, final ReduceOp op, final long dst, final long a, final long b,
                       final long count) {
        switch (type) {
            case FLOAT32 -> float32(op, dst, a, b, count);
            case FLOAT64 -> float64(op, dst, a, b, count);
            case INT32 -> int32(op, dst, a, b, count);
            case INT64 -> int64(op, dst, a, b, count);
            case BFLOAT16 -> bfloat16(op, dst, a, b, count);
            case FLOAT16 -> float16(op, dst, a, b, count);
            default -> throw new IllegalArgumentException("type " + type);
        }
    }

    /** Copies {@code bytes} bytes; ranges may not overlap unless equal. */
    static void copy(final long src, final long dst, final long bytes) {
        if (src != dst && bytes > 0) {
            UnsafeApi.copyMemory(src, dst, bytes);
        }
    }

    private static void float32(final ReduceOp op, final long dst, final long a, final long b, final long count) {
        final long end = count << 2;
        switch (op) {
            case SUM -> {
                for (long i = 0; i < end; i += 4) {
                    UnsafeApi.putFloat(dst + i, UnsafeApi.getFloat(a + i) + UnsafeApi.getFloat(b + i));
                }
            }
            case PROD -> {
                for (long i = 0; i < end; i += 4) {
                    UnsafeApi.putFloat(dst + i, UnsafeApi.getFloat(a + i) * UnsafeApi.getFloat(b + i));
                }
            }
            case MIN -> {
                for (long i = 0; i < end; i += 4) {
                    UnsafeApi.putFloat(dst + i, Math.min(UnsafeApi.getFloat(a + i), UnsafeApi.getFloat(b + i)));
                }
            }
            case MAX -> {
                for (long i = 0; i < end; i += 4) {
                    UnsafeApi.putFloat(dst + i, Math.max(UnsafeApi.getFloat(a + i), UnsafeApi.getFloat(b + i)));
                }
            }
            default -> throw new IllegalArgumentException("op " + op);
        }
    }

    /** bfloat16: widen to float (exact), operate, round to nearest even [COLL-031]. */
    private static void bfloat16(final ReduceOp op, final long dst, final long a, final long b, final long count) {
        final long end = count << 1;
        switch (op) {
            case SUM -> {
                for (long i = 0; i < end; i += 2) {
                    UnsafeApi.putShort(dst + i, HalfPrecision.floatToBf16(HalfPrecision.bf16ToFloat(UnsafeApi.getShort(a + i))
                        + HalfPrecision.bf16ToFloat(UnsafeApi.getShort(b + i))));
                }
            }
            case PROD -> {
                for (long i = 0; i < end; i += 2) {
                    UnsafeApi.putShort(dst + i, HalfPrecision.floatToBf16(HalfPrecision.bf16ToFloat(UnsafeApi.getShort(a + i))
                        * HalfPrecision.bf16ToFloat(UnsafeApi.getShort(b + i))));
                }
            }
            case MIN -> {
                for (long i = 0; i < end; i += 2) {
                    UnsafeApi.putShort(dst + i, HalfPrecision.floatToBf16(Math.min(
                        HalfPrecision.bf16ToFloat(UnsafeApi.getShort(a + i)), HalfPrecision.bf16ToFloat(UnsafeApi.getShort(b + i)))));
                }
            }
            case MAX -> {
                for (long i = 0; i < end; i += 2) {
                    UnsafeApi.putShort(dst + i, HalfPrecision.floatToBf16(Math.max(
                        HalfPrecision.bf16ToFloat(UnsafeApi.getShort(a + i)), HalfPrecision.bf16ToFloat(UnsafeApi.getShort(b + i)))));
                }
            }
            default -> throw new IllegalArgumentException("op " + op);
        }
    }

    /** binary16: widen to float (exact), operate, round to nearest even [COLL-031]. */
    private static void float16(final ReduceOp op, final long dst, final long a, final long b, final long count) {
        final long end = count << 1;
        switch (op) {
            case SUM -> {
                for (long i = 0; i < end; i += 2) {
                    UnsafeApi.putShort(dst + i, HalfPrecision.floatToHalf(HalfPrecision.halfToFloat(UnsafeApi.getShort(a + i))
                        + HalfPrecision.halfToFloat(UnsafeApi.getShort(b + i))));
                }
            }
            case PROD -> {
                for (long i = 0; i < end; i += 2) {
                    UnsafeApi.putShort(dst + i, HalfPrecision.floatToHalf(HalfPrecision.halfToFloat(UnsafeApi.getShort(a + i))
                        * HalfPrecision.halfToFloat(UnsafeApi.getShort(b + i))));
                }
            }
            case MIN -> {
                for (long i = 0; i < end; i += 2) {
                    UnsafeApi.putShort(dst + i, HalfPrecision.floatToHalf(Math.min(
                        HalfPrecision.halfToFloat(UnsafeApi.getShort(a + i)), HalfPrecision.halfToFloat(UnsafeApi.getShort(b + i)))));
                }
            }
            case MAX -> {
                for (long i = 0; i < end; i += 2) {
                    UnsafeApi.putShort(dst + i, HalfPrecision.floatToHalf(Math.max(
                        HalfPrecision.halfToFloat(UnsafeApi.getShort(a + i)), HalfPrecision.halfToFloat(UnsafeApi.getShort(b + i)))));
                }
            }
            default -> throw new IllegalArgumentException("op " + op);
        }
    }

    private static void float64(final ReduceOp op, final long dst, final long a, final long b, final long count) {
        final long end = count << 3;
        switch (op) {
            case SUM -> {
                for (long i = 0; i < end; i += 8) {
                    UnsafeApi.putDouble(dst + i, UnsafeApi.getDouble(a + i) + UnsafeApi.getDouble(b + i));
                }
            }
            case PROD -> {
                for (long i = 0; i < end; i += 8) {
                    UnsafeApi.putDouble(dst + i, UnsafeApi.getDouble(a + i) * UnsafeApi.getDouble(b + i));
                }
            }
            case MIN -> {
                for (long i = 0; i < end; i += 8) {
                    UnsafeApi.putDouble(dst + i, Math.min(UnsafeApi.getDouble(a + i), UnsafeApi.getDouble(b + i)));
                }
            }
            case MAX -> {
                for (long i = 0; i < end; i += 8) {
                    UnsafeApi.putDouble(dst + i, Math.max(UnsafeApi.getDouble(a + i), UnsafeApi.getDouble(b + i)));
                }
            }
            default -> throw new IllegalArgumentException("op " + op);
        }
    }

    private static void int32(final ReduceOp op, final long dst, final long a, final long b, final long count) {
        final long end = count << 2;
        switch (op) {
            case SUM -> {
                for (long i = 0; i < end; i += 4) {
                    UnsafeApi.putInt(dst + i, UnsafeApi.getInt(a + i) + UnsafeApi.getInt(b + i));
                }
            }
            case PROD -> {
                for (long i = 0; i < end; i += 4) {
                    UnsafeApi.putInt(dst + i, UnsafeApi.getInt(a + i) * UnsafeApi.getInt(b + i));
                }
            }
            case MIN -> {
                for (long i = 0; i < end; i += 4) {
                    UnsafeApi.putInt(dst + i, Math.min(UnsafeApi.getInt(a + i), UnsafeApi.getInt(b + i)));
                }
            }
            case MAX -> {
                for (long i = 0; i < end; i += 4) {
                    UnsafeApi.putInt(dst + i, Math.max(UnsafeApi.getInt(a + i), UnsafeApi.getInt(b + i)));
                }
            }
            default -> throw new IllegalArgumentException("op " + op);
        }
    }

    private static void int64(final ReduceOp op, final long dst, final long a, final long b, final long count) {
        final long end = count << 3;
        switch (op) {
            case SUM -> {
                for (long i = 0; i < end; i += 8) {
                    UnsafeApi.putLong(dst + i, UnsafeApi.getLong(a + i) + UnsafeApi.getLong(b + i));
                }
            }
            case PROD -> {
                for (long i = 0; i < end; i += 8) {
                    UnsafeApi.putLong(dst + i, UnsafeApi.getLong(a + i) * UnsafeApi.getLong(b + i));
                }
            }
            case MIN -> {
                for (long i = 0; i < end; i += 8) {
                    UnsafeApi.putLong(dst + i, Math.min(UnsafeApi.getLong(a + i), UnsafeApi.getLong(b + i)));
                }
            }
            case MAX -> {
                for (long i = 0; i < end; i += 8) {
                    UnsafeApi.putLong(dst + i, Math.max(UnsafeApi.getLong(a + i), UnsafeApi.getLong(b + i)));
                }
            }
            default -> throw new IllegalArgumentException("op " + op);
        }
    }
}
