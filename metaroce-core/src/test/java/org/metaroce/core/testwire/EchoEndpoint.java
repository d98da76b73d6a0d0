// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.testwire;

import java.util.ArrayDeque;

import org.agrona.DirectBuffer;
import org.metaroce.core.engine.DatagramEndpoint;
import org.metaroce.core.engine.TransmitSink;

/**
 * Fake endpoint for wire tests: returns every datagram it receives, byte for byte, to its sender
 * at its next poll. It copies the bytes on receipt, as the contract requires: the wire reuses the
 * delivery buffer once {@code onDatagram} returns.
 */
final class EchoEndpoint implements DatagramEndpoint {
    private final ArrayDeque<byte[]> pending = new ArrayDeque<>();
    private final ArrayDeque<Integer> pendingPeers = new ArrayDeque<>();
    int echoed;

    @Override
    public void onDatagram(final long nowNs, final DirectBuffer buffer, final int offset, final int length,
                           final int peerId, final int ecn) {
        final byte[] copy = new byte[length];
        buffer.getBytes(offset, copy);
        pending.addLast(copy);
        pendingPeers.addLast(peerId);
    }

    @Override
    public int poll(final long nowNs, final TransmitSink sink) {
        int sent = 0;
        while (!pending.isEmpty()) {
            final byte[] packet = pending.peekFirst();
            final int offset = sink.claim(packet.length);
            if (offset == TransmitSink.NO_ROOM) {
                break;
            }
            sink.buffer().putBytes(offset, packet);
            sink.commit(offset, packet.length, pendingPeers.peekFirst(), 4791);
            pending.removeFirst();
            pendingPeers.removeFirst();
            echoed++;
            sent++;
        }
        return sent;
    }

    @Override
    public long nextDeadlineNs() {
        return Long.MAX_VALUE;
    }
}
