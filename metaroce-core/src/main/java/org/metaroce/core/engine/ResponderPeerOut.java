// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.engine;

import org.agrona.MutableDirectBuffer;
import org.metaroce.core.wire.Opcode;

/**
 * Every packet a responder sends goes to the peer's queue pair on the path the responder's own
 * sequence picks next [MP-017, MP-022] (an ACK or NACK possibly the requester's latest path,
 * [MP-023]); the path chosen at claim is kept until commit. The queue
 * pair's paths are read at each packet: a modify to RTR replaces them.
 */
final class ResponderPeerOut implements ResponseOut {
    private final ResponderContext qp;
    private int pathId;

    ResponderPeerOut(final ResponderContext qp) {
        this.qp = qp;
    }

    @Override
    public int claim(final TransmitSink sink, final long nowNs, final int maxLength) {
        pathId = qp.paths().nextForResponder(nowNs);
        return sink.claim(maxLength, qp.paths().entropy(pathId));
    }

    @Override
    public int claimAck(final TransmitSink sink, final long nowNs, final int maxLength) {
        pathId = qp.paths().nextForAck(nowNs);
        return sink.claim(maxLength, qp.paths().entropy(pathId));
    }

    @Override
    public PacketWriter header(final MutableDirectBuffer buffer, final int offset, final Opcode opcode,
                               final int flags, final int psn, final int payloadLength, final long nowNs) {
        final PacketWriter w = qp.writer();
        w.header(buffer, offset, opcode, flags, qp.destQpn(), psn, payloadLength, pathId, nowNs, qp.qpn());
        return w;
    }

    @Override
    public void commit(final TransmitSink sink, final int offset, final Opcode opcode, final int payloadLength) {
        final int length = qp.writer().seal(sink.buffer(), offset, opcode, payloadLength);
        qp.commit(sink, offset, length, qp.paths().entropy(pathId));
    }
}
