// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.engine;

import org.metaroce.core.multipath.PathSelector;
import org.metaroce.core.wire.Flags;
import org.metaroce.core.wire.Opcode;
import org.metaroce.core.wire.WireConstants;

/**
 * Writes a queue pair's KEEPALIVE with ACK_REQ, header only [WIRE-065]: a keepalive probe [CM-027],
 * a requester's request for a fresh Credit [REL-019] or its question of what arrived [REL-069].
 * Successive probes ({@code attempt}) try the paths in turn, so that a probe is not lost on the
 * path that lost the rest. When to probe is the caller's ({@link KeepaliveTimer}, the requester's
 * credit probe and asking tail probe); this class only writes and hands the packet on.
 */
final class ProbeWriter {
    /** Hands a written packet to the driver, addressed to the peer and counted as sent. */
    @FunctionalInterface
    interface Commit {
        void commit(TransmitSink sink, int offset, int length, int entropy);
    }

    private final int qpn;
    private final CurrentAttributes attributes;
    private final PacketWriter writer;
    private final Commit out;
    private final EndpointCounters counters;

    ProbeWriter(final int qpn, final CurrentAttributes attributes, final PacketWriter writer, final Commit out,
                final EndpointCounters counters) {
        this.qpn = qpn;
        this.attributes = attributes;
        this.writer = writer;
        this.out = out;
        this.counters = counters;
    }

    /**
     * Writes and commits one probe to the peer's queue pair.
     *
     * @param attempt the probe's number in its episode: it picks the path
     * @param psn the PSN field, the requester's next PSN [WIRE-065]
     * @return false when the sink had no room (nothing was sent)
     */
    boolean write(final long nowNs, final TransmitSink sink, final int attempt, final int psn) {
        final PathSelector paths = attributes.paths();
        final Opcode opcode = Opcode.KEEPALIVE;
        final int pathId = paths.forRetransmission(nowNs, attempt % paths.pathCount());
        final int offset = sink.claim(opcode.headerLength() + WireConstants.INTEGRITY_CHECK_LENGTH, paths.entropy(pathId));
        if (offset == TransmitSink.NO_ROOM) {
            return false;
        }
        writer.header(sink.buffer(), offset, opcode, Flags.ACK_REQ, attributes.destQpn(), psn, 0, pathId, nowNs, qpn);
        final int length = writer.seal(sink.buffer(), offset, opcode, 0);
        out.commit(sink, offset, length, paths.entropy(pathId));
        counters.increment(EndpointCounter.KEEPALIVES_OUT);
        return true;
    }
}
