// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.verbs;

/**
 * Outcome codes of the memory-region access checks. Plain ints so that the responder can check
 * every incoming packet without allocating or throwing; the engine maps them to NAK reasons or
 * completion statuses.
 */
public final class MemoryAccessResult {
    /** Access allowed. */
    public static final int OK = 0;
    /** The key names a region that has been deregistered (or never existed). */
    public static final int INVALID_KEY = 1;
    /** The range starts before the region, ends after it, or has a negative/overflowing length. */
    public static final int OUT_OF_BOUNDS = 2;
    /** The region does not grant the requested access. */
    public static final int NO_PERMISSION = 3;
    /** An atomic target is not 8-byte aligned. */
    public static final int MISALIGNED = 4;

    private MemoryAccessResult() {
    }

    /**
     * @param result a code from this class
     * @return its name, or "UNKNOWN(n)"
     */
    public static String describe(final int result) {
        switch (result) {
            case OK:
                return "OK";
            case INVALID_KEY:
                return "INVALID_KEY";
            case OUT_OF_BOUNDS:
                return "OUT_OF_BOUNDS";
            case NO_PERMISSION:
                return "NO_PERMISSION";
            case MISALIGNED:
                return "MISALIGNED";
            default:
                return "UNKNOWN(" + result + ")";
        }
    }
}
