// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.engine;

import org.agrona.DirectBuffer;

/**
 * The sans-I/O contract between a protocol endpoint and whatever moves its datagrams: a Netty
 * driver in real time, the fabric simulator in virtual time, or an in-memory test wire. Every call
 * takes the current time; the endpoint never reads a clock.
 */
public interface DatagramEndpoint {
    /** IP ECN codepoint: not ECN-capable, or unknown (real sockets under Netty cannot see it). */
    int ECN_NOT_ECT = 0;
    /** IP ECN codepoint ECT(1). */
    int ECN_ECT_1 = 1;
    /** IP ECN codepoint ECT(0). */
    int ECN_ECT_0 = 2;
    /** IP ECN codepoint CE: congestion experienced. */
    int ECN_CE = 3;

    /**
     * Processes one received datagram. Never throws because of the datagram's content: malformed
     * packets are dropped and counted.
     *
     * @param nowNs current time in nanoseconds (any epoch, monotonic)
     * @param buffer holds the UDP payload
     * @param offset first byte of the UDP payload
     * @param length UDP payload length
     * @param peerId the driver's identifier of the sender's address
     * @param ecn the IP ECN codepoint of the datagram, {@link #ECN_NOT_ECT} when unknown
     */
    void onDatagram(long nowNs, DirectBuffer buffer, int offset, int length, int peerId, int ecn);

    /**
     * Processes one received datagram that reached the host at {@code arrivalNs}, earlier than now
     * when it waited in a socket for the thread that reads it. A transport with per-datagram receive
     * timestamps (the kernel's) passes them here: the endpoint measures round trips and reports ACK
     * Delay from the arrival, so that the time a packet waited for a busy or descheduled thread is
     * not taken for path delay [REL-066]. Without an override it is {@link #onDatagram(long,
     * DirectBuffer, int, int, int, int)} at {@code nowNs}.
     *
     * @param nowNs current time in nanoseconds (any epoch, monotonic)
     * @param arrivalNs when the datagram arrived, on the clock of {@code nowNs}; at most {@code nowNs}
     * @param buffer holds the UDP payload
     * @param offset first byte of the UDP payload
     * @param length UDP payload length
     * @param peerId the driver's identifier of the sender's address
     * @param ecn the IP ECN codepoint of the datagram, {@link #ECN_NOT_ECT} when unknown
     */
    default void onDatagram(long nowNs, long arrivalNs, DirectBuffer buffer, int offset, int length, int peerId,
                            int ecn) {
        onDatagram(nowNs, buffer, offset, length, peerId, ecn);
    }

    /**
     * Emits every packet that is ready to go (new data within the window, retransmissions,
     * acknowledgements, responses) and runs expired timers.
     *
     * @param nowNs current time in nanoseconds
     * @param sink where packets are written
     * @return number of packets committed to the sink
     */
    int poll(long nowNs, TransmitSink sink);

    /**
     * @return the time at which {@link #poll} must be called again even if nothing arrives, or
     *         {@link Long#MAX_VALUE} when no timer is armed
     */
    long nextDeadlineNs();
}
