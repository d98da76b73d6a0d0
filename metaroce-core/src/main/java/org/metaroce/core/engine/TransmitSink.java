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
}
