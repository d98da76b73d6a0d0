// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.cli;

import java.nio.ByteOrder;

import org.agrona.concurrent.UnsafeBuffer;

/**
 * The deterministic data of {@code --verify}: every slot of every queue pair gets its own byte
 * sequence (a SplitMix64 stream keyed by queue pair, slot and word index), so a misplaced, stale or
 * corrupted message shows up as a mismatch at the exact byte.
 */
final class Pattern {
    private static final long SEED = 0x6D65_7461_726F_6365L; // "metaroce"

    private Pattern() {
    }

    static long word(final int qp, final int slot, final long index) {
        long z = SEED + qp * 0x9E37_79B9_7F4A_7C15L + slot * 0xC2B2_AE3D_27D4_EB4FL + index * 0x1656_67B1_9E37_79F9L;
        z = (z ^ (z >>> 30)) * 0xBF58_476D_1CE4_E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D0_49BB_1331_11EBL;
        return z ^ (z >>> 31);
    }

    /** Writes the pattern of (qp, slot) into {@code length} bytes at {@code offset}. */
    static void fill(final UnsafeBuffer buffer, final long offset, final int length, final int qp, final int slot) {
        final int base = Math.toIntExact(offset);
        int i = 0;
        for (; i + 8 <= length; i += 8) {
            buffer.putLong(base + i, word(qp, slot, i >>> 3), ByteOrder.LITTLE_ENDIAN);
        }
        if (i < length) {
            final long w = word(qp, slot, i >>> 3);
            for (int b = 0; i < length; i++, b++) {
                buffer.putByte(base + i, (byte) (w >>> (8 * b)));
            }
        }
    }

    /**
     * @return the index of the first byte of the {@code length} bytes at {@code offset} that differs
     *     from the pattern of (qp, slot), or -1 when all match
     */
    static long firstMismatch(final UnsafeBuffer buffer, final long offset, final int length, final int qp,
                              final int slot) {
        final int base = Math.toIntExact(offset);
        int i = 0;
        for (; i + 8 <= length; i += 8) {
            final long expected = word(qp, slot, i >>> 3);
            final long actual = buffer.getLong(base + i, ByteOrder.LITTLE_ENDIAN);
            if (expected != actual) {
                for (int b = 0; b < 8; b++) {
                    if ((byte) (expected >>> (8 * b)) != buffer.getByte(base + i + b)) {
                        return i + b;
                    }
                }
            }
        }
        if (i < length) {
            final long w = word(qp, slot, i >>> 3);
            for (int b = 0; i < length; i++, b++) {
                if (buffer.getByte(base + i) != (byte) (w >>> (8 * b))) {
                    return i;
                }
            }
        }
        return -1;
    }
}
