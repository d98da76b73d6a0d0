// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.collectives;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.SplittableRandom;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * The 16-bit float conversions against definitions computed independently: every binary16 and
 * bfloat16 bit pattern widened exactly, and narrowing of random, boundary and tie floats against a
 * brute-force search for the nearest value (ties to even, overflow to infinity) [COLL-031].
 */
class HalfPrecisionTest {
    static final long SEED = Long.getLong("metaroce.seed", 16L);

    /** The binary16 value of a bit pattern, from the definition (sign, exponent, significand). */
    static double halfValue(final int h) {
        final int exp = (h >>> 10) & 0x1F;
        final int mant = h & 0x3FF;
        final double sign = (h & 0x8000) != 0 ? -1 : 1;
        if (exp == 0x1F) {
            return mant == 0 ? sign * Double.POSITIVE_INFINITY : Double.NaN;
        }
        return exp == 0 ? sign * mant * Math.pow(2, -24) : sign * (1024 + mant) * Math.pow(2, exp - 25);
    }

    @Test
    @DisplayName("COLL-031: every binary16 and bfloat16 pattern widens exactly and narrows back to itself")
    void everyPatternRoundTrips() {
        for (int h = 0; h < 0x10000; h++) {
            final double want = halfValue(h);
            final float f = HalfPrecision.halfToFloat((short) h);
            if (Double.isNaN(want)) {
                assertThat(f).isNaN();
                assertThat(HalfPrecision.floatToHalf(f)).isEqualTo(HalfPrecision.FP16_NAN);
            } else {
                assertThat((double) f).as("half %04x", h).isEqualTo(want);
                assertThat(Float.floatToRawIntBits(f) >>> 31).isEqualTo(h >>> 15); // signed zero kept
                assertThat(HalfPrecision.floatToHalf(f)).as("half %04x", h).isEqualTo((short) h);
            }
            final float b = HalfPrecision.bf16ToFloat((short) h);
            if (Float.isNaN(b)) {
                assertThat(HalfPrecision.floatToBf16(b)).isEqualTo(HalfPrecision.BF16_NAN);
            } else {
                assertThat(Float.floatToRawIntBits(b)).isEqualTo(h << 16);
                assertThat(HalfPrecision.floatToBf16(b)).as("bf16 %04x", h).isEqualTo((short) h);
            }
        }
    }

    /** Nearest binary16 by search over every finite pattern; ties to the even significand. */
    static short nearestHalf(final float f) {
        if (Math.abs(f) >= 65520f) {
            return (short) (f > 0 ? 0x7C00 : 0xFC00);
        }
        final int sign = Float.floatToRawIntBits(f) < 0 ? 0x8000 : 0;
        final double x = Math.abs((double) f);
        int best = 0;
        double bestDiff = Double.MAX_VALUE;
        for (int h = 0; h < 0x7C00; h++) {
            final double d = Math.abs(halfValue(h) - x);
            if (d < bestDiff || (d == bestDiff && (h & 1) == 0)) {
                best = h;
                bestDiff = d;
            }
        }
        return (short) (sign | best);
    }

    /** Nearest bfloat16: the two patterns around f, ties to even. */
    static short nearestBf16(final float f) {
        final int bits = Float.floatToRawIntBits(f);
        if (Float.isInfinite(f)) {
            return (short) (bits >>> 16);
        }
        final int lower = bits & 0xFFFF_0000;
        final int upper = lower + 0x1_0000;
        final double dl = Math.abs((double) Float.intBitsToFloat(lower) - f);
        final double du = Math.abs(upper == 0x7F80_0000 || upper == 0xFF80_0000
            ? Math.scalb(1.0, 128) * Math.signum(f) - f : (double) Float.intBitsToFloat(upper) - f);
        final int pick = dl < du || (dl == du && ((lower >>> 16) & 1) == 0) ? lower : upper;
        return (short) (pick >>> 16);
    }

    @Test
    @DisplayName("COLL-031: narrowing rounds to nearest, ties to even, overflowing to infinity")
    void narrowingIsRoundToNearestEven() {
        System.out.println("HalfPrecisionTest seed=" + SEED);
        final SplittableRandom random = new SplittableRandom(SEED);
        final float[] edges = {0f, -0f, 65504f, 65519.996f, 65520f, -65520f, 1e-8f, 2.9802322e-8f, 2.9802326e-8f,
            5.9604645e-8f, 6.1035156e-5f, 6.1028e-5f, 1.0009766f, 1.0004883f, 1.0014648f, 3.3895314e38f,
            Float.MAX_VALUE, Float.MIN_VALUE, Float.POSITIVE_INFINITY, Float.NEGATIVE_INFINITY};
        for (final float f : edges) {
            assertThat(HalfPrecision.floatToHalf(f)).as("half of %s", f).isEqualTo(nearestHalf(f));
            assertThat(HalfPrecision.floatToBf16(f)).as("bf16 of %s", f).isEqualTo(nearestBf16(f));
        }
        for (int k = 0; k < 1000; k++) {
            // Floats in binary16's range (including subnormals and exact ties between two halves) ...
            final int h = random.nextInt(0x7C00);
            final float mid = (float) ((halfValue(h) + halfValue(h + 1)) / 2);
            final float near = Float.intBitsToFloat(Float.floatToRawIntBits(mid) + random.nextInt(-3, 4));
            final float any = (float) (random.nextDouble(-70000, 70000) * Math.pow(2, -random.nextInt(30)));
            for (final float f : new float[] {mid, near, any, -mid}) {
                assertThat(HalfPrecision.floatToHalf(f)).as("half of %s", f).isEqualTo(nearestHalf(f));
            }
            // ... and any float bit pattern for bfloat16, with its ties.
            final float bits = Float.intBitsToFloat(random.nextInt());
            final float tie = Float.intBitsToFloat((random.nextInt() & 0xFFFF_0000) | 0x8000);
            for (final float f : new float[] {bits, tie}) {
                if (!Float.isNaN(f)) {
                    assertThat(HalfPrecision.floatToBf16(f)).as("bf16 of %s", f).isEqualTo(nearestBf16(f));
                }
            }
        }
    }
}
