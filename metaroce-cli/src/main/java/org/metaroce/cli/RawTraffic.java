// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.cli;

import java.util.concurrent.atomic.AtomicLong;

import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.metaroce.core.connection.ConnectionManager;
import org.metaroce.core.engine.AsyncEventType;
import org.metaroce.core.engine.ConnectionManagerHandler;
import org.metaroce.core.engine.EndpointCounter;
import org.metaroce.core.engine.QueuePair;
import org.metaroce.core.engine.TransmitSink;
import org.metaroce.netty.MetaRoceDevice;

/**
 * The raw UDP baseline: plain datagrams pushed through the very same device (sockets, transport,
 * sink with its batching and GSO, sendmmsg flushes, threads and idle strategy) without the
 * protocol. It sits in front of the connection manager, whose packets it passes through, and in
 * each poll copies payload-only datagrams from a source buffer into the driver's sink, sprayed
 * over the device's entropy ports message by message. No header, no integrity check, no
 * acknowledgement, no retransmission. The receiver's device counts them: they start with an
 * invalid version nibble, so its endpoint rejects them at the second byte it reads and counts
 * them as {@link EndpointCounter#MALFORMED}.
 *
 * <p>The benchmark thread raises {@link #addTarget}; the owning thread emits up to it.
 */
final class RawTraffic implements ConnectionManagerHandler {
    private static final int MAX_PER_POLL = 256;
    private static final Runnable WAKE = () -> { };

    private final ConnectionManager cm;
    private final MetaRoceDevice device;
    private final UnsafeBuffer source;
    private final int[] entropies;
    private final int datagramBytes;
    private final int lastDatagramBytes;
    private final int datagramsPerMessage;
    private final AtomicLong target = new AtomicLong();
    private final AtomicLong sent = new AtomicLong();
    private final boolean wake;
    private volatile int peer = -1;
    private int datagramInMessage;
    private int path;

    /**
     * @param device the device (its endpoint's counters count what arrives)
     * @param cm the connection manager this handler passes through
     * @param messageBytes message size: a message is sent as datagrams of {@code mtu} bytes
     * @param mtu payload bytes per datagram
     * @param wake whether the owning thread is another thread, to be woken when there is more to send
     */
    RawTraffic(final MetaRoceDevice device, final ConnectionManager cm, final int messageBytes, final int mtu,
               final boolean wake) {
        this.device = device;
        this.wake = wake;
        this.cm = cm;
        this.entropies = device.entropyPorts();
        this.datagramBytes = Math.min(messageBytes, mtu);
        this.datagramsPerMessage = (messageBytes + mtu - 1) / mtu;
        final int rest = messageBytes - (datagramsPerMessage - 1) * mtu;
        this.lastDatagramBytes = rest;
        this.source = new UnsafeBuffer(org.agrona.BufferUtil.allocateDirectAligned(Math.max(64, datagramBytes), 64));
        for (int i = 0; i < source.capacity(); i++) {
            source.putByte(i, (byte) (i * 31 + 7));
        }
        // Version nibble 0xF: the receiving endpoint drops it as malformed after reading one byte.
        source.putByte(0, (byte) 0xF0);
    }

    /** @return datagrams one message takes */
    int datagramsPerMessage() {
        return datagramsPerMessage;
    }

    /** Benchmark thread: where datagrams go (the peer id of the other end's endpoint address). */
    void peer(final int peerId) {
        this.peer = peerId;
        if (wake) {
            device.offer(WAKE);
        }
    }

    /** Benchmark thread: allows {@code datagrams} more datagrams to be sent. */
    void addTarget(final long datagrams) {
        target.addAndGet(datagrams);
        if (wake) {
            device.offer(WAKE);
        }
    }

    /** Benchmark thread: sends nothing more than what was sent already. */
    void stop() {
        target.set(sent.get());
    }

    /** @return datagrams handed to the sink so far */
    long sent() {
        return sent.get();
    }

    /** @return the target */
    long target() {
        return target.get();
    }

    /** @return raw datagrams this device received (any thread) */
    long received() {
        return device.endpoint().counters().get(EndpointCounter.MALFORMED);
    }

    @Override
    public void onPacket(final long nowNs, final DirectBuffer buffer, final int offset, final int length,
                         final int peerId) {
        cm.onPacket(nowNs, buffer, offset, length, peerId);
    }

    @Override
    public int poll(final long nowNs, final TransmitSink sink) {
        int emitted = cm.poll(nowNs, sink);
        final int to = peer;
        if (to < 0) {
            return emitted;
        }
        long s = sent.get();
        final long limit = Math.min(target.get(), s + MAX_PER_POLL);
        while (s < limit) {
            final int length = datagramInMessage == datagramsPerMessage - 1 ? lastDatagramBytes : datagramBytes;
            final int offset = sink.claim(length, entropies[path]);
            if (offset == TransmitSink.NO_ROOM) {
                break;
            }
            sink.buffer().putBytes(offset, source, 0, length);
            sink.commit(offset, length, to, entropies[path]);
            s++;
            emitted++;
            if (++datagramInMessage == datagramsPerMessage) {
                datagramInMessage = 0;
                if (++path == entropies.length) {
                    path = 0;
                }
            }
        }
        sent.lazySet(s);
        return emitted;
    }

    @Override
    public long nextDeadlineNs() {
        // More to send: poll again at once (the endpoint maps MIN_VALUE to "now").
        return peer >= 0 && sent.get() < target.get() ? Long.MIN_VALUE : cm.nextDeadlineNs();
    }

    @Override
    public void deliverEvents() {
        cm.deliverEvents();
    }

    @Override
    public void onQueuePairEvent(final QueuePair qp, final AsyncEventType type) {
        cm.onQueuePairEvent(qp, type);
    }

    @Override
    public void onQueuePairDestroyed(final QueuePair qp) {
        cm.onQueuePairDestroyed(qp);
    }
}
