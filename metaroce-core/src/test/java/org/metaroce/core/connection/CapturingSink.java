// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.connection;

import java.util.ArrayList;
import java.util.List;

import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.metaroce.core.engine.TransmitSink;

/** A sink that keeps a copy of every committed packet with its destination and entropy. */
final class CapturingSink implements TransmitSink {
    /** One committed packet. */
    record Sent(UnsafeBuffer packet, int length, int peerId, int entropy) {
        int opcode() {
            return packet.getByte(1) & 0xFF;
        }
    }

    private final UnsafeBuffer buffer = new UnsafeBuffer(new byte[64 * 1024]);
    final List<Sent> sent = new ArrayList<>();
    private int position;

    @Override
    public MutableDirectBuffer buffer() {
        return buffer;
    }

    @Override
    public int claim(final int maxLength) {
        if (position + maxLength > buffer.capacity()) {
            return NO_ROOM;
        }
        return position;
    }

    @Override
    public void commit(final int offset, final int length, final int peerId, final int entropy) {
        final byte[] copy = new byte[length];
        buffer.getBytes(offset, copy);
        sent.add(new Sent(new UnsafeBuffer(copy), length, peerId, entropy));
        position = 0;
    }

    List<Sent> take() {
        final List<Sent> out = new ArrayList<>(sent);
        sent.clear();
        return out;
    }
}
