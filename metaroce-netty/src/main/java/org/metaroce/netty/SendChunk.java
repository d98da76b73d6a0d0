// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty;

import java.nio.ByteBuffer;

/**
 * Off-heap memory, allocated by a {@link UdpTransport}, that the engine writes packets into and
 * that {@link SendBatch} entries point into. The sink releases a chunk when it moves on to a new
 * one, after every batch that pointed into it was handed to its socket.
 */
public interface SendChunk {
    /**
     * @return a direct buffer whose bytes from {@link #bufferOffset()} on are the chunk (a pooled
     *     chunk is often a region of a larger buffer); always the same object. Transports may move
     *     its position and limit while they send: the engine's view of it does not depend on them
     */
    ByteBuffer buffer();

    /** @return index in {@link #buffer()} of the chunk's first byte */
    int bufferOffset();

    /** @return native address of the chunk's first byte */
    long address();

    /** @return bytes */
    int capacity();

    /**
     * The sink is done with the chunk: its memory may be reused as soon as no transport still
     * holds it (a synchronous transport holds nothing after its send returned).
     */
    void release();

    /**
     * @return the chunk's byte ranges whose content lies elsewhere (payloads the engine handed the
     *     sink by reference, {@link org.metaroce.core.engine.TransmitSink#reference}), for a
     *     transport that gathers ({@link SocketCapabilities#gather()}); null for a chunk that keeps
     *     none (every byte is in the chunk)
     */
    default PayloadReferences references() {
        return null;
    }
}
