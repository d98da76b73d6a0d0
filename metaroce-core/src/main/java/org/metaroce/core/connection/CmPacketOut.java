// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.connection;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;
import org.metaroce.core.engine.TransmitSink;
import org.metaroce.core.wire.WireConstants;

/**
 * How a connection-manager packet leaves: a copy of a built packet (without integrity check) into
 * the driver's sink, stamped and sealed as it goes [CM-041], sent from the endpoint port [ENC-003]
 * and counted. Every CM packet, kept by a connection or queued as a stateless answer, goes out here.
 */
final class CmPacketOut {
    private final CmPacketWriter writer;
    private final CmCounters counters;
    private final int endpointPort;

    /**
     * @param writer stamps and seals each copy
     * @param counters counts PACKETS_OUT
     * @param endpointPort the endpoint's UDP port: the entropy value CM packets are committed with
     */
    CmPacketOut(final CmPacketWriter writer, final CmCounters counters, final int endpointPort) {
        this.writer = writer;
        this.counters = counters;
        this.endpointPort = endpointPort;
    }

    /**
     * @param src holds the packet, without integrity check
     * @param srcOffset its first byte
     * @param length its length
     * @param peerId where it goes
     * @return false if the sink had no room (nothing was sent)
     */
    boolean send(final long now, final TransmitSink sink, final DirectBuffer src, final int srcOffset,
                 final int length, final int peerId) {
        final int at = sink.claim(length + WireConstants.INTEGRITY_CHECK_LENGTH, endpointPort);
        if (at == TransmitSink.NO_ROOM) {
            return false;
        }
        final MutableDirectBuffer dst = sink.buffer();
        dst.putBytes(at, src, srcOffset, length);
        final int total = writer.seal(dst, at, length, now);
        sink.commit(at, total, peerId, endpointPort);
        counters.increment(CmCounter.PACKETS_OUT);
        return true;
    }
}
