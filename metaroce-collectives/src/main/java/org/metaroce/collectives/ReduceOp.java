// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.collectives;

/** Reduction operators, applied element by element. */
public enum ReduceOp {
    /** Sum; integer sums wrap. */
    SUM,
    /** Product; integer products wrap. */
    PROD,
    /** Minimum ({@link Math#min}: a NaN operand gives NaN). */
    MIN,
    /** Maximum ({@link Math#max}: a NaN operand gives NaN). */
    MAX;

    /** @return the name nccl-tests print */
    public String shortName() {
        return name().toLowerCase(java.util.Locale.ROOT);
    }

    /**
     * @param name a constant name, any case
     * @return the operator
     * @throws IllegalArgumentException naming the accepted names
     */
    public static ReduceOp parse(final String name) {
        for (final ReduceOp op : values()) {
            if (op.name().equalsIgnoreCase(name)) {
                return op;
            }
        }
        throw new IllegalArgumentException("unknown reduction '" + name + "': one of sum, prod, min, max");
    }
}
