// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.verbs;

/** Scatter/gather list helpers shared by {@link SendRequest} and {@link RecvRequest}. */
final class WorkRequests {
    private WorkRequests() {
    }

    static ScatterGatherEntry[] newSgList(final int maxSge) {
        if (maxSge < 0 || maxSge > QpAttributes.MAX_SGE) {
            throw new IllegalArgumentException("maxSge must be in 0.." + QpAttributes.MAX_SGE + ", was " + maxSge);
        }
        final ScatterGatherEntry[] list = new ScatterGatherEntry[maxSge];
        for (int i = 0; i < maxSge; i++) {
            list[i] = new ScatterGatherEntry();
        }
        return list;
    }

    static int add(final ScatterGatherEntry[] list, final int numSge, final long addr, final int length, final int lkey) {
        if (numSge == list.length) {
            throw new IllegalStateException("work request already holds its " + list.length
                + " preallocated scatter/gather entries");
        }
        list[numSge].set(addr, length, lkey);
        return numSge + 1;
    }

    static int checkNumSge(final int numSge, final int capacity) {
        if (numSge < 0 || numSge > capacity) {
            throw new IllegalArgumentException("numSge must be in 0.." + capacity + ", was " + numSge);
        }
        return numSge;
    }

    static void clear(final ScatterGatherEntry[] list, final int numSge) {
        for (int i = 0; i < numSge; i++) {
            list[i].clear();
        }
    }

    static int copy(final ScatterGatherEntry[] from, final int fromCount, final ScatterGatherEntry[] to, final int toCount) {
        if (fromCount > to.length) {
            throw new IllegalArgumentException("cannot copy " + fromCount
                + " scatter/gather entries into a request with room for " + to.length);
        }
        for (int i = 0; i < fromCount; i++) {
            to[i].copyFrom(from[i]);
        }
        for (int i = fromCount; i < toCount; i++) {
            to[i].clear();
        }
        return fromCount;
    }

    static long totalLength(final ScatterGatherEntry[] list, final int numSge) {
        long total = 0;
        for (int i = 0; i < numSge; i++) {
            total += list[i].length();
        }
        return total;
    }

    static StringBuilder appendSgList(final StringBuilder sb, final ScatterGatherEntry[] list, final int numSge) {
        sb.append('[');
        for (int i = 0; i < numSge; i++) {
            if (i > 0) {
                sb.append(", ");
            }
            sb.append(list[i]);
        }
        return sb.append(']');
    }
}
