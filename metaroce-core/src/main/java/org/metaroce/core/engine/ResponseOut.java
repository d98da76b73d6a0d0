// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.engine;

import org.agrona.MutableDirectBuffer;
import org.metaroce.core.wire.Opcode;

/**
 * How the responder's parts ({@link ReadResponder}, {@link AtomicExecutor}) send a response
 * packet without holding the queue pair: the responder's path choice, the Base Header's addresses
 * and the queue pair's packet accounting stay behind this interface. One packet at a time:
 * {@link #claim}, then {@link #header} and the part's own headers and payload, then
 * {@link #commit}; the path chosen by {@code claim} is used until {@code commit}.
 */
interface ResponseOut {
    /**
     * Chooses the path of the next response packet and claims room for it in the sink.
     *
     * @param maxLength the packet's length with its Integrity Check
     * @return the offset in {@code sink.buffer()}, or {@link TransmitSink#NO_ROOM} (the path has
     *     been taken either way, as the responder always did)
     */
    int claim(TransmitSink sink, long nowNs, int maxLength);

    /**
     * As {@link #claim}, for a bare ACK or NACK, whose path may follow the requester's latest new
     * packet [MP-023].
     */
    int claimAck(TransmitSink sink, long nowNs, int maxLength);

    /**
     * Writes the claimed packet's Base Header: to the peer's queue pair, on the claimed path,
     * stamped with {@code nowNs}.
     *
     * @return the writer, for the packet's other headers
     */
    PacketWriter header(MutableDirectBuffer buffer, int offset, Opcode opcode, int flags, int psn,
                        int payloadLength, long nowNs);

    /** Seals the claimed packet with its Integrity Check and hands it to the sink on the claimed path. */
    void commit(TransmitSink sink, int offset, Opcode opcode, int payloadLength);
}
