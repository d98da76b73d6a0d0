// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.engine;

import java.util.Locale;

/** How failure reasons and diagnostics write a duration: seconds with one decimal ("15.0 s"). */
final class Seconds {
    private Seconds() {
    }

    /** @return the duration in seconds with one decimal, e.g. "15.0 s" (allocates: cold paths only) */
    static String of(final long ns) {
        if (ns < 0) {
            return String.format(Locale.ROOT, "%.1f s", ns / 1e9);
        }
        // "%.1f s" (half up) by integer arithmetic: String.format was most of a failure's cost,
        // and a failure message is built for every QP that fails (most fuzzed ones do).
        final long tenths = ns / 100_000_000L + (ns % 100_000_000L >= 50_000_000L ? 1 : 0);
        return tenths / 10 + "." + tenths % 10 + " s";
    }
}
