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
    /** The arrival time of a datagram the transport cannot timestamp. */
    long NO_ARRIVAL = Long.MIN_VALUE;

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

    /**
     * One datagram as the kernel returned it, with the time the kernel received it.
     *
     * @param data its bytes (valid only during the call)
     * @param offset first byte in {@code data}
     * @param length bytes
     * @param source who sent it (a reused object, valid only during the call)
     * @param ecn the ECN codepoint of its IP header, as for the method without the arrival time
     * @param segmentBytes UDP GRO segment size, as for the method without the arrival time
     * @param arrivalNs when the kernel received it, on the clock of {@link System#nanoTime()}, or
     *     {@link #NO_ARRIVAL}; transports that cannot tell call the method without it
     * @return whether the transport should go on reading
     */
    default boolean onDatagram(DirectBuffer data, int offset, int length, SourceAddress source, int ecn,
                               int segmentBytes, long arrivalNs) {
        return onDatagram(data, offset, length, source, ecn, segmentBytes);
    }

    /** The end of a read batch: a datagram held back waits no longer, and the next batch reads the clock again. */
    void onBatchEnd();
}
