// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.collectives;

/** Element types of collective operations (the NCCL {@code ncclDataType_t} subset MetaRoCE supports). */
public enum DataType {
    /** IEEE 754 binary32 ({@code float}). */
    FLOAT32(4, "float"),
    /** IEEE 754 binary64 ({@code double}). */
    FLOAT64(8, "double"),
    /** Two's-complement 32-bit integer ({@code int}); sums and products wrap. */
    INT32(4, "int32"),
    /** Two's-complement 64-bit integer ({@code long}); sums and products wrap. */
    INT64(8, "int64"),
    /**
     * bfloat16 (8-bit exponent, 8-bit significand), stored as a {@code short}: reduced in
     * {@code float} and rounded to nearest even after every operation [COLL-031]; see
     * {@link HalfPrecision}.
     */
    BFLOAT16(2, "bfloat16"),
    /**
     * IEEE 754 binary16 ({@code half}: 5-bit exponent, 11-bit significand), stored as a
     * {@code short}: reduced in {@code float} and rounded to nearest even after every operation
     * [COLL-031]; see {@link HalfPrecision}.
     */
    FLOAT16(2, "half");

    private final int size;
    private final String shortName;

    DataType(final int size, final String shortName) {
        this.size = size;
        this.shortName = shortName;
    }

    /** @return bytes per element */
    public int size() {
        return size;
    }

    /**
     * @return the name nccl-tests print ({@code float}, {@code double}, {@code int32}, {@code int64},
     *     {@code bfloat16}, {@code half})
     */
    public String shortName() {
        return shortName;
    }

    /**
     * @param name a constant name, a short name or an alias, any case ({@code float32}, {@code float},
     *     {@code int64}, {@code bf16}, {@code fp16} ...)
     * @return the type
     * @throws IllegalArgumentException naming the accepted names
     */
    public static DataType parse(final String name) {
        for (final DataType t : values()) {
            if (t.name().equalsIgnoreCase(name) || t.shortName.equalsIgnoreCase(name)) {
                return t;
            }
        }
        if ("bf16".equalsIgnoreCase(name)) {
            return BFLOAT16;
        }
        if ("fp16".equalsIgnoreCase(name)) {
            return FLOAT16;
        }
        throw new IllegalArgumentException("unknown data type '" + name + "': one of float32 (float), float64 "
            + "(double), int32, int64, bfloat16 (bf16), float16 (half, fp16)");
    }
}
