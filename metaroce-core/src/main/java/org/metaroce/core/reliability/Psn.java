// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.reliability;

/** Serial-number arithmetic on 32-bit PSNs (RFC 1982), as specification 3.1 defines it. */
public final class Psn {
    private Psn() {
    }

    /**
     * @param a a PSN
     * @param b a PSN
     * @return signed distance from {@code a} to {@code b}; positive when {@code b} is after {@code a}
     */
    public static int distance(final int a, final int b) {
        return b - a;
    }

    /** @return whether {@code a} is strictly before {@code b} */
    public static boolean before(final int a, final int b) {
        return b - a > 0;
    }

    /** @return whether {@code a} is before or equal to {@code b} */
    public static boolean beforeOrEqual(final int a, final int b) {
        return b - a >= 0;
    }
}
