// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.engine;

import org.agrona.MutableDirectBuffer;

/**
 * The driver's sink as the endpoint's poll hands it on: everything passes through, and whether a
 * claim found no room is remembered, so that the endpoint asks to be polled again at once instead of
 * at its next deadline. Reused for every poll ({@link #wrap}), so that a poll allocates nothing.
 */
final class SinkRoomWatch implements TransmitSink {
    private TransmitSink delegate;
    /** Whether a claim since the last {@link #wrap} found no room. */
    boolean full;

    /** @return this, passing on to {@code sink} and with {@link #full} cleared */
    SinkRoomWatch wrap(final TransmitSink sink) {
        delegate = sink;
        full = false;
        return this;
    }

    @Override
    public MutableDirectBuffer buffer() {
        return delegate.buffer();
    }

    @Override
    public int claim(final int maxLength) {
        final int offset = delegate.claim(maxLength);
        if (offset == NO_ROOM) {
            full = true;
        }
        return offset;
    }

    @Override
    public int claim(final int maxLength, final int entropy) {
        final int offset = delegate.claim(maxLength, entropy);
        if (offset == NO_ROOM) {
            full = true;
        }
        return offset;
    }

    @Override
    public void commit(final int offset, final int length, final int peerId, final int entropy) {
        delegate.commit(offset, length, peerId, entropy);
    }

    @Override
    public boolean reference(final int at, final long address, final int length) {
        return delegate.reference(at, address, length);
    }
}
