// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.collectives;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.SplittableRandom;

import org.agrona.BufferUtil;
import org.junit.jupiter.api.Test;

/**
 * The reduction kernels against scalar Java arithmetic for every type and operator (random values,
 * wrapping integers, NaN, signed zeros), in place and out of place, and their allocation-free
 * steady state.
 */
class ReductionsTest {
    static final int N = 1027;

    @Test
    void everyKernelMatchesScalarArithmetic() {
        final long seed = 99;
        System.out.println("ReductionsTest seed=" + seed);
        final SplittableRandom random = new SplittableRandom(seed);
        for (final DataType t : DataType.values()) {
            for (final ReduceOp op : ReduceOp.values()) {
                final ByteBuffer a = ByteBuffer.allocateDirect(N * 8).order(ByteOrder.nativeOrder());
                final ByteBuffer b = ByteBuffer.allocateDirect(N * 8).order(ByteOrder.nativeOrder());
                final ByteBuffer d = ByteBuffer.allocateDirect(N * 8).order(ByteOrder.nativeOrder());
                for (int i = 0; i < N; i++) {
                    final long x = random.nextLong();
                    final long y = random.nextLong();
                    switch (t) {
                        case FLOAT32 -> {
                            a.putFloat(i * 4, i == 0 ? Float.NaN : i == 1 ? -0.0f : Float.intBitsToFloat((int) x));
                            b.putFloat(i * 4, i == 1 ? 0.0f : Float.intBitsToFloat((int) y));
                        }
                        case FLOAT64 -> {
                            a.putDouble(i * 8, i == 0 ? Double.NaN : i == 1 ? -0.0 : Double.longBitsToDouble(x));
                            b.putDouble(i * 8, i == 1 ? 0.0 : Double.longBitsToDouble(y));
                        }
                        case INT32 -> {
                            a.putInt(i * 4, (int) x);
                            b.putInt(i * 4, (int) y);
                        }
                        case INT64 -> {
                            a.putLong(i * 8, x);
                            b.putLong(i * 8, y);
                        }
                        case BFLOAT16, FLOAT16 -> {
                            // Random bits: NaNs, infinities, subnormals and overflowing sums included.
                            final short nan = t == DataType.BFLOAT16 ? (short) 0x7FC1 : (short) 0x7E01;
                            a.putShort(i * 2, i == 0 ? nan : i == 1 ? (short) 0x8000 : (short) x);
                            b.putShort(i * 2, i == 1 ? 0 : (short) y);
                        }
                        default -> throw new IllegalStateException();
                    }
                }
                Reductions.reduce(t, op, BufferUtil.address(d), BufferUtil.address(a), BufferUtil.address(b), N);
                for (int i = 0; i < N; i++) {
                    final String at = t + " " + op + " element " + i;
                    switch (t) {
                        case FLOAT32 -> {
                            final float x = a.getFloat(i * 4);
                            final float y = b.getFloat(i * 4);
                            final float want = switch (op) {
                                case SUM -> x + y;
                                case PROD -> x * y;
                                case MIN -> Math.min(x, y);
                                case MAX -> Math.max(x, y);
                            };
                            assertThat(Float.floatToIntBits(d.getFloat(i * 4))).as(at).isEqualTo(Float.floatToIntBits(want));
                        }
                        case FLOAT64 -> {
                            final double x = a.getDouble(i * 8);
                            final double y = b.getDouble(i * 8);
                            final double want = switch (op) {
                                case SUM -> x + y;
                                case PROD -> x * y;
                                case MIN -> Math.min(x, y);
                                case MAX -> Math.max(x, y);
                            };
                            assertThat(Double.doubleToLongBits(d.getDouble(i * 8))).as(at)
                                .isEqualTo(Double.doubleToLongBits(want));
                        }
                        case INT32 -> {
                            final int x = a.getInt(i * 4);
                            final int y = b.getInt(i * 4);
                            final int want = switch (op) {
                                case SUM -> x + y;
                                case PROD -> x * y;
                                case MIN -> Math.min(x, y);
                                case MAX -> Math.max(x, y);
                            };
                            assertThat(d.getInt(i * 4)).as(at).isEqualTo(want);
                        }
                        case INT64 -> {
                            final long x = a.getLong(i * 8);
                            final long y = b.getLong(i * 8);
                            final long want = switch (op) {
                                case SUM -> x + y;
                                case PROD -> x * y;
                                case MIN -> Math.min(x, y);
                                case MAX -> Math.max(x, y);
                            };
                            assertThat(d.getLong(i * 8)).as(at).isEqualTo(want);
                        }
                        case BFLOAT16, FLOAT16 -> {
                            final boolean bf = t == DataType.BFLOAT16;
                            final float x = bf ? HalfPrecision.bf16ToFloat(a.getShort(i * 2))
                                : HalfPrecision.halfToFloat(a.getShort(i * 2));
                            final float y = bf ? HalfPrecision.bf16ToFloat(b.getShort(i * 2))
                                : HalfPrecision.halfToFloat(b.getShort(i * 2));
                            final float wide = switch (op) {
                                case SUM -> x + y;
                                case PROD -> x * y;
                                case MIN -> Math.min(x, y);
                                case MAX -> Math.max(x, y);
                            };
                            final short want = bf ? HalfPrecision.floatToBf16(wide) : HalfPrecision.floatToHalf(wide);
                            assertThat(d.getShort(i * 2)).as(at).isEqualTo(want);
                            if (i == 0 || Float.isNaN(wide)) {
                                // NaN payloads are canonical, so both orders of a reduction store the same bits.
                                assertThat(want).isEqualTo(bf ? HalfPrecision.BF16_NAN : HalfPrecision.FP16_NAN);
                            }
                        }
                        default -> throw new IllegalStateException();
                    }
                }
                // In place (dst == a) gives the same.
                final ByteBuffer copy = ByteBuffer.allocateDirect(N * 8).order(ByteOrder.nativeOrder());
                copy.put(0, a, 0, N * 8);
                Reductions.reduce(t, op, BufferUtil.address(copy), BufferUtil.address(copy), BufferUtil.address(b), N);
                for (int i = 0; i < N * t.size(); i++) {
                    assertThat(copy.get(i)).as(t + " " + op + " in place, byte " + i).isEqualTo(d.get(i));
                }
            }
        }
    }

    @Test
    void kernelsDoNotAllocate() {
        final com.sun.management.ThreadMXBean threads =
            (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        final ByteBuffer a = ByteBuffer.allocateDirect(1 << 20);
        final long addr = BufferUtil.address(a);
        for (int warm = 0; warm < 50; warm++) {
            for (final DataType t : DataType.values()) {
                for (final ReduceOp op : ReduceOp.values()) {
                    Reductions.reduce(t, op, addr, addr, addr, (1 << 20) / 8);
                }
            }
        }
        final long before = threads.getCurrentThreadAllocatedBytes();
        for (final DataType t : DataType.values()) {
            for (final ReduceOp op : ReduceOp.values()) {
                Reductions.reduce(t, op, addr, addr, addr, (1 << 20) / 8);
            }
        }
        Reductions.copy(addr, addr + 512, 256);
        final long allocated = threads.getCurrentThreadAllocatedBytes() - before;
        // values() of the enums above allocate a copy each; the kernels themselves nothing.
        assertThat(allocated).as("bytes allocated by 16 kernel runs over 1 MiB").isLessThan(1024);
    }
}
