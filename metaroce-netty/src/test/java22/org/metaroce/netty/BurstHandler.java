// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty;

import java.util.concurrent.atomic.AtomicInteger;

import org.agrona.DirectBuffer;
import org.metaroce.core.engine.ConnectionManagerHandler;
import org.metaroce.core.engine.TransmitSink;

/**
 * A connection-manager handler that emits one burst of plain datagrams through the device's sink
 * when told to ({@link #fire}), from one entropy port to one peer, then nothing: once the burst is
 * committed it has no deadline, so a blocking driver idles with whatever the sockets left unsent.
 * Datagrams the sink refuses are committed at a later poll.
 */
final class BurstHandler implements ConnectionManagerHandler {
    private final int entropy;
    private final int length;
    private volatile int peer = -1;
    private final AtomicInteger toSend = new AtomicInteger();
    private final AtomicInteger refused = new AtomicInteger();

    /**
     * @param entropy the entropy port the datagrams leave from
     * @param length bytes per datagram
     */
    BurstHandler(final int entropy, final int length) {
        this.entropy = entropy;
        this.length = length;
    }

    /** Any thread: the next poll commits {@code datagrams} datagrams to {@code peerId}. */
    void fire(final int peerId, final int datagrams) {
        peer = peerId;
        toSend.set(datagrams);
    }

    /** @return claims the sink refused (each is tried again at the next poll) */
    int refused() {
        return refused.get();
    }

    @Override
    public void onPacket(final long nowNs, final DirectBuffer buffer, final int offset, final int length,
                         final int peerId) {
        // Nothing arrives for it.
    }

    @Override
    public int poll(final long nowNs, final TransmitSink sink) {
        int emitted = 0;
        while (toSend.get() > 0) {
            final int offset = sink.claim(length, entropy);
            if (offset == TransmitSink.NO_ROOM) {
                refused.incrementAndGet();
                break;
            }
            sink.buffer().setMemory(offset, length, (byte) 0xF0); // version 0xF: dropped as malformed
            sink.commit(offset, length, peer, entropy);
            toSend.decrementAndGet();
            emitted++;
        }
        return emitted;
    }

    @Override
    public long nextDeadlineNs() {
        return Long.MAX_VALUE;
    }
}
