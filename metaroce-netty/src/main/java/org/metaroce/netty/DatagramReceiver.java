// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty;

import org.agrona.DirectBuffer;

/**
 * Where a {@link UdpSocket} delivers what it reads: {@link ReceiveDispatcher} in the driver.
 * Transports call it on the owning thread, one datagram at a time, and end each read batch with
 * {@link #onBatchEnd()}.
 */
public interface DatagramReceiver {
    /**
     * One datagram as the kernel returned it.
     *
     * @param data its bytes (valid only during the call)
     * @param offset first byte in {@code data}
     * @param length bytes
     * @param source who sent it (a reused object, valid only during the call)
     * @param ecn the ECN codepoint of its IP header, 0..3 ({@code DatagramEndpoint.ECN_NOT_ECT} when the
     *     transport cannot read it)
     * @param segmentBytes UDP GRO: the size of each of the coalesced datagrams it holds back to back
     *     (the last may be shorter); 0 when it is one datagram
     * @return whether the transport should go on reading; a {@link PolledUdpSocket} stops when false
     */
    boolean onDatagram(DirectBuffer data, int offset, int length, SourceAddress source, int ecn, int segmentBytes);

    /** {@code arrivalNs} of a transport that cannot tell when a datagram reached the host. */
    long NO_ARRIVAL = Long.MIN_VALUE;

    /**
     * One datagram as the kernel returned it, with when it reached the host: the kernel's receive
     * timestamp on {@link System#nanoTime()}'s clock, earlier than now by the time it waited in the
     * socket [REL-066]. Without an override it is the call above, the arrival unknown.
     *
     * @param arrivalNs when it reached the host, or {@link #NO_ARRIVAL}
     * @return whether the transport should go on reading
     */
    default boolean onDatagram(final DirectBuffer data, final int offset, final int length, final SourceAddress source,
                               final int ecn, final int segmentBytes, final long arrivalNs) {
        return onDatagram(data, offset, length, source, ecn, segmentBytes);
    }

    /**
     * The transport read {@link System#nanoTime()}'s clock right after a receive call, at
     * {@code nowNs}, no earlier than the arrival of any datagram it returned: the receiver may take
     * it as the time of the datagrams that follow (up to {@link #onBatchEnd()}) rather than read the
     * clock again. Without an override it is ignored.
     */
    default void onBatchClock(final long nowNs) {
    }

    /** The end of a read batch: a datagram held back waits no longer, and the next batch reads the clock again. */
    void onBatchEnd();
}
