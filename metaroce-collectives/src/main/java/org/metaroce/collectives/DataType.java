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
    INT64(8, "int64");

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

    /** @return the name nccl-tests print ({@code float}, {@code double}, {@code int32}, {@code int64}) */
    public String shortName() {
        return shortName;
    }

    /**
     * @param name a constant name or a short name, any case ({@code float32}, {@code float}, {@code int64} ...)
     * @return the type
     * @throws IllegalArgumentException naming the accepted names
     */
    public static DataType parse(final String name) {
        for (final DataType t : values()) {
            if (t.name().equalsIgnoreCase(name) || t.shortName.equalsIgnoreCase(name)) {
                return t;
            }
        }
        throw new IllegalArgumentException("unknown data type '" + name + "': one of float32 (float), float64 "
            + "(double), int32, int64");
    }
}
