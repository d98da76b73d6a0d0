// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.verbs;

import java.lang.management.ManagementFactory;

/** Measures bytes allocated by the current thread (HotSpot's ThreadMXBean extension). */
final class Allocations {
    private static final com.sun.management.ThreadMXBean BEAN =
        (com.sun.management.ThreadMXBean)ManagementFactory.getThreadMXBean();

    private Allocations() {
    }

    /** Runs {@code body} {@code iterations} times after as many warm-up runs; returns bytes allocated. */
    static long allocatedBy(final int iterations, final Runnable body) {
        for (int i = 0; i < iterations; i++) {
            body.run();
        }
        final long before = BEAN.getCurrentThreadAllocatedBytes();
        for (int i = 0; i < iterations; i++) {
            body.run();
        }
        return BEAN.getCurrentThreadAllocatedBytes() - before;
    }
}
