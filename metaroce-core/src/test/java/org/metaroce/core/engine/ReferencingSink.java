// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.engine;

import java.util.ArrayList;
import java.util.List;

import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * A sink over one buffer, every packet at one offset, that takes payloads by reference
 * ({@link TransmitSink#reference}) when told to and records them, and rebuilds the bytes a
 * gathering driver would send.
 */
final class ReferencingSink implements TransmitSink {
    final UnsafeBuffer buffer;
    final int at;
    final boolean accept;
    /** Each reference taken: its offset in the buffer, its address and its length. */
    final List<long[]> references = new ArrayList<>();

    ReferencingSink(final UnsafeBuffer buffer, final int at, final boolean accept) {
        this.buffer = buffer;
        this.at = at;
        this.accept = accept;
    }

    @Override
    public MutableDirectBuffer buffer() {
        return buffer;
    }

    @Override
    public int claim(final int maxLength) {
        return at;
    }

    @Override
    public void commit(final int offset, final int length, final int peerId, final int entropy) {
    }

    @Override
    public boolean reference(final int offset, final long address, final int length) {
        if (accept) {
            references.add(new long[] {offset, address, length});
        }
        return accept;
    }

    /** @return the packet at {@link #at} as the driver sends it: the buffer's bytes, a referenced range from its memory */
    byte[] sent(final int length) {
        final byte[] out = new byte[length];
        buffer.getBytes(at, out);
        for (final long[] r : references) {
            new UnsafeBuffer(r[1], (int) r[2]).getBytes(0, out, (int) r[0] - at, (int) r[2]);
        }
        return out;
    }
}
