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
        return String.format(Locale.ROOT, "%.1f s", ns / 1e9);
    }
}
