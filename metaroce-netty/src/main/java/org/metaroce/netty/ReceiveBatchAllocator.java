// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.ChannelConfig;
import io.netty.channel.RecvByteBufAllocator;
import io.netty.util.UncheckedBooleanSupplier;

/**
 * Receive buffers of a fixed size for the endpoint socket, and the rule for when one readiness
 * event stops reading.
 *
 * <p>Netty's own handles keep reading until a read returns nothing. With recvmmsg that last read
 * is a wasted pair of system calls per burst (the empty {@code recvmmsg} and the
 * {@code getsockopt} Netty's native code makes before each one): a {@code recvmmsg} that filled
 * fewer slots than it offered has already drained the socket, because the kernel only stops
 * early when the queue is empty. So with {@code drainedWhenPartial} a read continues only after a
 * batch that filled every slot. Netty 4.2 registers sockets level-triggered, so datagrams that
 * arrive after the partial batch are reported by the next poll; nothing is left unread.
 * Without it (one datagram per read: NIO, GRO, a batch of one) the handle reads until the socket
 * is empty, as Netty's do.
 */
final class ReceiveBatchAllocator implements RecvByteBufAllocator {
    private final int bufferBytes;
    private final int maxDatagramsPerRead;
    private final boolean drainedWhenPartial;

    /**
     * @param bufferBytes size of each receive buffer (slot size × batch)
     * @param maxDatagramsPerRead datagrams one readiness event may read at most
     * @param drainedWhenPartial whether a read that filled fewer bytes than it offered proves the socket empty
     *     (true only for recvmmsg with fixed slots)
     */
    ReceiveBatchAllocator(final int bufferBytes, final int maxDatagramsPerRead, final boolean drainedWhenPartial) {
        if (bufferBytes < 1 || maxDatagramsPerRead < 1) {
            throw new IllegalArgumentException("bufferBytes and maxDatagramsPerRead must be positive, got "
                + bufferBytes + " and " + maxDatagramsPerRead);
        }
        this.bufferBytes = bufferBytes;
        this.maxDatagramsPerRead = maxDatagramsPerRead;
        this.drainedWhenPartial = drainedWhenPartial;
    }

    @Override
    public Handle newHandle() {
        return new BatchHandle();
    }

    /** One per channel; used only by the channel's event-loop thread. */
    private final class BatchHandle implements ExtendedHandle {
        private ChannelConfig config;
        private int datagrams;
        private int lastBytesRead;
        private int attemptedBytesRead;

        @Override
        public ByteBuf allocate(final ByteBufAllocator alloc) {
            return alloc.ioBuffer(bufferBytes);
        }

        @Override
        public int guess() {
            return bufferBytes;
        }

        @Override
        public void reset(final ChannelConfig channelConfig) {
            this.config = channelConfig;
            datagrams = 0;
            lastBytesRead = 0;
            attemptedBytesRead = 0;
        }

        @Override
        public void incMessagesRead(final int numMessages) {
            datagrams += numMessages;
        }

        @Override
        public void lastBytesRead(final int bytes) {
            lastBytesRead = bytes;
        }

        @Override
        public int lastBytesRead() {
            return lastBytesRead;
        }

        @Override
        public void attemptedBytesRead(final int bytes) {
            attemptedBytesRead = bytes;
        }

        @Override
        public int attemptedBytesRead() {
            return attemptedBytesRead;
        }

        @Override
        public boolean continueReading() {
            return continueReading(null);
        }

        @Override
        public boolean continueReading(final UncheckedBooleanSupplier ignored) {
            if (!config.isAutoRead() || lastBytesRead <= 0 || datagrams >= maxDatagramsPerRead) {
                return false;
            }
            return !drainedWhenPartial || lastBytesRead >= attemptedBytesRead;
        }

        @Override
        public void readComplete() {
            // Fixed size: nothing to learn from the read.
        }
    }
}
