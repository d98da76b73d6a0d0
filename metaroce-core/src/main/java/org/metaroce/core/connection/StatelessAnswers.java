// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.connection;

import org.agrona.DirectBuffer;
import org.metaroce.core.engine.PeerDirectory;
import org.metaroce.core.engine.TransmitSink;
import org.metaroce.core.wire.BaseHeader;
import org.metaroce.core.wire.ConnectHeader;
import org.metaroce.core.wire.Opcode;

/**
 * The header-only answers the connection manager sends once and forgets: the server's stateless
 * CONNECT_CHALLENGE and CONNECT_REJECT to requests it keeps no state for [CM-010, CM-011], rate
 * limited per source address and in all [SEC-008] and never larger than the request [SEC-005],
 * and a connection's READY_TO_USE and DISCONNECT_REPLY. Each is written into a slot of a fixed
 * {@link AnswerQueue} at once and leaves at the next poll; a full queue drops the answer (counted),
 * since the client retransmits [CM-022].
 */
final class StatelessAnswers {
    private final AnswerQueue queue;
    private final AnswerRateLimiter limiter;
    private final CmPacketWriter writer;
    private final CookieJar cookies;
    private final PeerDirectory directory;
    private final CmCounters counters;

    StatelessAnswers(final CmConfig config, final CmPacketWriter writer, final CookieJar cookies,
                     final PeerDirectory directory, final CmCounters counters) {
        this.queue = new AnswerQueue(config.answerQueueCapacity());
        this.limiter = new AnswerRateLimiter(config.rateLimiterBuckets(), config.answerRatePerSource(),
            config.globalAnswerRate());
        this.writer = writer;
        this.cookies = cookies;
        this.directory = directory;
        this.counters = counters;
    }

    /** @return whether no answer waits */
    boolean isEmpty() {
        return queue.isEmpty();
    }

    /**
     * Steps 3 and 4 of [CM-010]: a new cookie to the datagram's source, rate-limited per source [SEC-008].
     *
     * @param address the source's address bytes, from offset 0, that the cookie is bound to [CM-015]
     */
    void challenge(final long now, final DirectBuffer b, final int off, final int peerId, final DirectBuffer address,
                   final int addressLength) {
        if (!rateAllows(now, peerId)) {
            return;
        }
        final int slot = reserve();
        if (slot < 0) {
            return;
        }
        final int h = off + CmPacketWriter.CM;
        final int cookie = writer.challenge(queue.buffer(), slot, b, off);
        cookies.issue(now, address, addressLength, ConnectHeader.serviceId(b, h), ConnectHeader.transactionId(b, h),
            BaseHeader.sourceQpn(b, off), queue.buffer(), cookie);
        counters.increment(CmCounter.CHALLENGES_SENT);
        queue.commit(peerId);
    }

    /** Steps 1, 2 and 5 of [CM-010]: CONNECT_REJECT to the datagram's source, rate-limited per source [SEC-008]. */
    void rejectIfAllowed(final long now, final DirectBuffer b, final int off, final int peerId, final int reason) {
        if (rateAllows(now, peerId)) {
            reject(b, off, peerId, reason);
        }
    }

    /**
     * CONNECT_REJECT to a request the server keeps no state for: header only, never larger than
     * the request [SEC-005]; also to a verified source when no state may be created for it (table full).
     */
    void reject(final DirectBuffer b, final int off, final int peerId, final int reason) {
        final int slot = reserve();
        if (slot < 0) {
            return;
        }
        writer.statelessReject(queue.buffer(), slot, b, off, reason);
        counters.increment(CmCounter.REJECTS_SENT);
        queue.commit(peerId);
    }

    /** A connection's READY_TO_USE or DISCONNECT_REPLY, sent once. */
    void headerOnly(final Connection c, final Opcode opcode, final int reason) {
        final int slot = reserve();
        if (slot >= 0) {
            writer.headerOnly(queue.buffer(), slot, c, opcode, reason);
            queue.commit(c.remotePeer);
        }
    }

    /**
     * Sends the queued answers, oldest first, until the sink has no room.
     *
     * @return answers sent
     */
    int emit(final long now, final TransmitSink sink, final CmPacketOut out) {
        int emitted = 0;
        while (!queue.isEmpty()) {
            if (!out.send(now, sink, queue.buffer(), queue.headOffset(), CmPacketWriter.HEADER, queue.headPeer())) {
                break;
            }
            emitted++;
            queue.removeHead();
        }
        return emitted;
    }

    private boolean rateAllows(final long now, final int peerId) {
        if (limiter.tryAcquire(now, directory.hostOf(peerId))) {
            return true;
        }
        counters.increment(CmCounter.ANSWERS_RATE_LIMITED);
        return false;
    }

    /** @return the offset of a free slot, or -1 (counted) if the queue is full */
    private int reserve() {
        final int slot = queue.reserve();
        if (slot < 0) {
            counters.increment(CmCounter.ANSWERS_QUEUE_FULL);
        }
        return slot;
    }
}
