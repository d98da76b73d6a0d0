// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.metaroce.core.testwire.LinkProfile;
import org.metaroce.core.verbs.SendFlags;
import org.metaroce.core.verbs.SendRequest;
import org.metaroce.core.verbs.WrOpcode;
import org.metaroce.core.wire.AckHeader;
import org.metaroce.core.wire.BaseHeader;
import org.metaroce.core.wire.Flags;
import org.metaroce.core.wire.NackHeader;
import org.metaroce.core.wire.NackReason;
import org.metaroce.core.wire.Opcode;

/** [ENC-017] a trimmed packet that arrives CE-marked counts in CE Count like any other. */
class TrimmedCeCountTest {
    @Test
    void aTrimmedCeMarkedPacketIsCountedInCeCount() {
        final TwoNodeFixture f = new TwoNodeFixture(6501, LinkProfile.perfect(), new EndpointConfig().keepaliveIdleNs(0),
            QueuePairCapabilities.defaults(), 4096).connect(1024);
        final List<byte[]> fromA = new ArrayList<>();
        final List<byte[]> fromB = new ArrayList<>();
        f.wire.filter((from, to, buf, off, len, now) -> {
            final byte[] copy = new byte[len];
            buf.getBytes(off, copy);
            (from == f.a.node ? fromA : fromB).add(copy);
            return from == f.a.node;
        });
        f.a.qp.postSend(new SendRequest(1).wrId(1).opcode(WrOpcode.RDMA_WRITE).sendFlags(SendFlags.SIGNALED)
            .addSge(f.a.address(0), 512, f.a.mr.lkey()).remoteAddr(f.b.address(0)).rkey(f.b.mr.rkey()));
        f.wire.runFor(1_000);
        assertThat(fromA).hasSize(1);
        // Trim it as a switch would [WIRE-042]: TRIMMED, Payload Length 0, headers only, no Integrity Check.
        final Opcode op = Opcode.WRITE;
        final UnsafeBuffer trimmed = new UnsafeBuffer(new byte[op.headerLength()]);
        trimmed.putBytes(0, fromA.get(0), 0, op.headerLength());
        final BaseHeader bh = new BaseHeader().wrap(trimmed, 0);
        bh.flags(BaseHeader.flags(trimmed, 0) | Flags.TRIMMED).payloadLength(0);
        f.b.endpoint.onDatagram(f.wire.now(), trimmed, 0, op.headerLength(), f.a.node, DatagramEndpoint.ECN_CE);
        f.wire.runFor(1_000);
        final byte[] nack = fromB.stream().filter(b -> Opcode.of(b[BaseHeader.OPCODE_OFFSET] & 0xFF) == Opcode.NACK)
            .findFirst().orElseThrow(() -> new AssertionError("no NACK from B: " + fromB.size() + " packets"));
        final UnsafeBuffer n = new UnsafeBuffer(nack);
        assertThat(NackHeader.reason(n, Opcode.NACK.nackOffset())).isEqualTo(NackReason.TRIMMED.code());
        assertThat(AckHeader.ceCount(n, Opcode.NACK.ackOffset())).as("CE Count of the NACK TRIMMED [ENC-017]")
            .isEqualTo(1);
    }
}
