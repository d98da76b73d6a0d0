// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.engine;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;
import org.metaroce.core.verbs.MemoryRegion;

/**
 * Copies between a packet and a work request's scatter-gather list, at a byte offset within the
 * message: the one copy from or to registered memory that a packet costs. Entries are the
 * request's own copies (address, length, resolved region), so the application may reuse its
 * request objects as soon as a post returns.
 */
final class ScatterGather {
    private ScatterGather() {
    }

    /** Copies {@code length} message bytes starting at {@code messageOffset} out of the list into {@code dst}. */
    static void gather(final int numSge, final long[] sgeAddr, final int[] sgeLength, final MemoryRegion[] sgeRegion,
                       final long messageOffset, final MutableDirectBuffer dst, final int dstOffset, final int length) {
        long skip = messageOffset;
        int remaining = length;
        int out = dstOffset;
        for (int i = 0; i < numSge && remaining > 0; i++) {
            final int len = sgeLength[i];
            if (skip >= len) {
                skip -= len;
                continue;
            }
            final int n = (int) Math.min(len - skip, remaining);
            final MemoryRegion mr = sgeRegion[i];
            dst.putBytes(out, mr.buffer(), (int) (mr.offsetOf(sgeAddr[i]) + skip), n);
            out += n;
            remaining -= n;
            skip = 0;
        }
    }

    /** Copies {@code length} bytes from {@code src} into the list at message offset {@code messageOffset}. */
    static void scatter(final int numSge, final long[] sgeAddr, final int[] sgeLength, final MemoryRegion[] sgeRegion,
                        final long messageOffset, final DirectBuffer src, final int srcOffset, final int length) {
        long skip = messageOffset;
        int remaining = length;
        int in = srcOffset;
        for (int i = 0; i < numSge && remaining > 0; i++) {
            final int len = sgeLength[i];
            if (skip >= len) {
                skip -= len;
                continue;
            }
            final int n = (int) Math.min(len - skip, remaining);
            final MemoryRegion mr = sgeRegion[i];
            mr.buffer().putBytes((int) (mr.offsetOf(sgeAddr[i]) + skip), src, in, n);
            in += n;
            remaining -= n;
            skip = 0;
        }
    }
}
