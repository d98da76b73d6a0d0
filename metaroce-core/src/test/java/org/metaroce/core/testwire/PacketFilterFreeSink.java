// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.testwire;

import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.metaroce.core.engine.TransmitSink;

/** A sink that accepts and discards packets: for driving an endpoint's clock in unit tests. */
public final class PacketFilterFreeSink implements TransmitSink {
    private final UnsafeBuffer buffer = new UnsafeBuffer(new byte[16 * 1024]);

    @Override
    public MutableDirectBuffer buffer() {
        return buffer;
    }

    @Override
    public int claim(final int maxLength) {
        return maxLength <= buffer.capacity() ? 0 : NO_ROOM;
    }

    @Override
    public void commit(final int offset, final int length, final int peerId, final int entropy) {
        // Discarded.
    }
}
