// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.collectives;

/**
 * Conversions between {@code float} and the 16-bit floating-point element types
 * ({@link DataType#BFLOAT16}, {@link DataType#FLOAT16}), as stored in a {@code short}. Narrowing
 * rounds to nearest, ties to even; overflow gives infinity; every NaN becomes the type's positive
 * canonical quiet NaN (which NaN operand the hardware propagates, and its sign, depends on the
 * operand order), so ranks that reduce the same values in either order store the same bits
 * [COLL-031]. ({@code Float.floatToFloat16} is Java 20+; this library targets Java 17.)
 */
public final class HalfPrecision {
    /** Canonical quiet NaN of bfloat16 (positive). */
    public static final short BF16_NAN = 0x7FC0;
    /** Canonical quiet NaN of IEEE 754 binary16 (positive). */
    public static final short FP16_NAN = 0x7E00;

    private HalfPrecision() {
    }

    /**
     * @param bits a bfloat16 value
     * @return the same value as a float (exact)
     */
    public static float bf16ToFloat(final short bits) {
        return Float.intBitsToFloat((bits & 0xFFFF) << 16);
    }

    /**
     * @param f a float
     * @return the nearest bfloat16 (ties to even; any NaN gives {@link #BF16_NAN})
     */
    public static short floatToBf16(final float f) {
        final int bits = Float.floatToRawIntBits(f);
        if ((bits & 0x7FFF_FFFF) > 0x7F80_0000) {
            return BF16_NAN;
        }
        // Adding 0x7FFF plus the lowest kept bit rounds to nearest, ties to even; a carry into the
        // exponent is the right result, up to infinity.
        return (short) ((bits + 0x7FFF + ((bits >>> 16) & 1)) >>> 16);
    }

    /**
     * @param bits an IEEE 754 binary16 value
     * @return the same value as a float (exact)
     */
    public static float halfToFloat(final short bits) {
        final int h = bits & 0xFFFF;
        final int sign = (h & 0x8000) << 16;
        final int exp = (h >>> 10) & 0x1F;
        final int mant = h & 0x3FF;
        if (exp == 0x1F) {
            return Float.intBitsToFloat(sign | 0x7F80_0000 | (mant << 13)); // infinity or NaN
        }
        if (exp == 0) {
            final float magnitude = mant * 0x1p-24f; // subnormal (or zero): exact in float
            return sign != 0 ? -magnitude : magnitude;
        }
        return Float.intBitsToFloat(sign | ((exp + 112) << 23) | (mant << 13));
    }

    /**
     * @param f a float
     * @return the nearest binary16 (ties to even; overflow to infinity; any NaN gives {@link #FP16_NAN})
     */
    public static short floatToHalf(final float f) {
        final int bits = Float.floatToRawIntBits(f);
        final int sign = (bits >>> 16) & 0x8000;
        final int abs = bits & 0x7FFF_FFFF;
        if (abs > 0x7F80_0000) {
            return FP16_NAN;
        }
        if (abs >= 0x477F_F000) {
            return (short) (sign | 0x7C00); // 65520 and above (the tie above 65504 goes to even): infinity
        }
        if (abs < 0x3880_0000) {
            // Below the smallest normal (2^-14): a multiple of 2^-24, rounded to nearest even.
            final int e = abs >>> 23;
            if (e < 102) {
                return (short) sign; // below 2^-25 (half the smallest subnormal): zero
            }
            final int m = (abs & 0x7F_FFFF) | 0x80_0000;
            final int shift = 126 - e;
            int q = m >>> shift;
            final int rem = m & ((1 << shift) - 1);
            final int half = 1 << (shift - 1);
            if (rem > half || (rem == half && (q & 1) == 1)) {
                q++; // may carry into the smallest normal: still the right encoding
            }
            return (short) (sign | q);
        }
        int h = (abs - 0x3800_0000) >>> 13; // rebias the exponent (127 - 15 = 112)
        final int rem = abs & 0x1FFF;
        if (rem > 0x1000 || (rem == 0x1000 && (h & 1) == 1)) {
            h++;
        }
        return (short) (sign | h);
    }
}
