// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.connection;

import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * Header-only answers waiting for the next poll: the server's stateless answers to requests
 * [CM-010] and a connection's READY_TO_USE and DISCONNECT_REPLY, which go out once and are not
 * retransmitted. A fixed ring of {@link CmPacketWriter#HEADER}-byte slots with the peer each goes
 * to, allocated once: a flood of requests fills it and further answers are dropped (the client
 * retransmits [CM-022]) rather than growing memory the flooder controls [SEC-008].
 *
 * <p>An answer is written in two steps, so that nothing is queued if writing it is abandoned:
 * {@link #reserve} a slot, write it in {@link #buffer()}, then {@link #commit} it.
 */
final class AnswerQueue {
    private static final int SLOT = CmPacketWriter.HEADER;

    private final UnsafeBuffer slots;
    private final int[] peers;
    private int head;
    private int count;

    /** @param capacity answers the queue holds */
    AnswerQueue(final int capacity) {
        this.slots = new UnsafeBuffer(new byte[capacity * SLOT]);
        this.peers = new int[capacity];
    }

    /** @return the buffer the slots are in */
    MutableDirectBuffer buffer() {
        return slots;
    }

    /** @return answers queued */
    int size() {
        return count;
    }

    /** @return whether no answer is queued */
    boolean isEmpty() {
        return count == 0;
    }

    /**
     * @return the offset in {@link #buffer()} of the slot to write the next answer into, or -1 if
     *     the queue is full
     */
    int reserve() {
        if (count == peers.length) {
            return -1;
        }
        return ((head + count) % peers.length) * SLOT;
    }

    /**
     * Queues the answer written into the slot {@link #reserve} returned.
     *
     * @param peerId where it goes
     */
    void commit(final int peerId) {
        peers[(head + count) % peers.length] = peerId;
        count++;
    }

    /** @return the offset in {@link #buffer()} of the oldest answer; only if not empty */
    int headOffset() {
        return head * SLOT;
    }

    /** @return the peer the oldest answer goes to; only if not empty */
    int headPeer() {
        return peers[head];
    }

    /** Drops the oldest answer, once sent. */
    void removeHead() {
        head = (head + 1) % peers.length;
        count--;
    }
}
