// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.engine;

import org.agrona.MutableDirectBuffer;

/**
 * Where an endpoint writes the packets it wants sent. The driver (Netty, the simulator, a test
 * wire) owns the memory; the engine claims a region, writes one packet into it, and commits it
 * with its destination. No copy is needed between engine and driver. The engine calls the sink
 * from the middle of its poll, so a sink only stores packets: it must not call the endpoint.
 */
public interface TransmitSink {
    /** Value returned by {@link #claim(int)} when the sink has no room now. */
    int NO_ROOM = -1;

    /**
     * @return the buffer that the offset returned by the most recent successful claim refers to
     *     (a sink may keep several buffers, for example one per send socket)
     */
    MutableDirectBuffer buffer();

    /**
     * Reserves room for one packet.
     *
     * @param maxLength the most bytes the packet will take
     * @return offset in {@link #buffer()} of at least {@code maxLength} writable bytes, or
     *         {@link #NO_ROOM}; the engine then stops emitting and tries again on its next poll
     */
    int claim(int maxLength);

    /**
     * Reserves room for one packet that will be committed with {@code entropy}. Knowing the
     * entropy value (the send socket) at claim time lets a driver keep each socket's packets
     * contiguous in memory, so that consecutive packets of one path can leave as one
     * segmentation-offloaded send without copying, even when a QP sprays over several paths.
     *
     * @param maxLength the most bytes the packet will take
     * @param entropy the entropy value the packet will be committed with
     * @return as {@link #claim(int)}
     */
    default int claim(final int maxLength, final int entropy) {
        return claim(maxLength);
    }

    /**
     * Hands a written packet to the network.
     *
     * @param offset the offset returned by the matching {@link #claim(int)}
     * @param length bytes written, at most the claimed length
     * @param peerId the driver's identifier of the remote address
     * @param entropy the UDP source port (entropy value) the packet must be sent from
     */
    void commit(int offset, int length, int peerId, int entropy);

    /**
     * Offers the driver bytes {@code [at, at + length)} of the packet being written (after its
     * claim, before its commit) by reference instead of by copy: they are registered memory at
     * native {@code address}, a work request's payload. A driver that accepts sends those bytes
     * from {@code address} (a gathering system call) and the engine leaves them unwritten in
     * {@link #buffer()}; the packet's length at commit still counts them. A driver must read the
     * bytes before the engine next runs (in the same duty cycle: by sending the packet, or by
     * copying them into the buffer's room if it keeps the packet for later), since only until then
     * is the work request known to be outstanding, its memory as the integrity check the engine
     * writes covers it (the application leaves a send buffer alone until its request completes, as
     * verbs require). A packet that is claimed again instead of committed drops its reference.
     *
     * @param at offset in {@link #buffer()} where the bytes belong, inside the room claimed
     * @param address native address of the bytes
     * @param length bytes
     * @return whether the driver takes them by reference; false (the default): the engine writes
     *     them into the buffer
     */
    default boolean reference(final int at, final long address, final int length) {
        return false;
    }
}
