// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

import org.agrona.BufferUtil;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.metaroce.core.testwire.LinkProfile;
import org.metaroce.core.verbs.AccessFlags;
import org.metaroce.core.verbs.MemoryRegion;
import org.metaroce.core.verbs.QpState;
import org.metaroce.core.verbs.SendFlags;
import org.metaroce.core.verbs.SendRequest;
import org.metaroce.core.verbs.WrOpcode;
import org.metaroce.core.wire.BaseHeader;
import org.metaroce.core.wire.NackHeader;
import org.metaroce.core.wire.NackReason;
import org.metaroce.core.wire.Opcode;

/**
 * [MEM-006] a region deregistered while READ_RESPONSEs for it are still to be sent: the responder
 * stops reading from it and answers NACK REMOTE_ACCESS with the READ_REQUEST's PSN [MEM-015].
 */
class ReadSourceDeregisteredTest {
    @Test
    void aReadWhoseSourceIsDeregisteredBeforeItsResponsesIsAnsweredRemoteAccess() {
        final TwoNodeFixture f = new TwoNodeFixture(6601, LinkProfile.perfect(), new EndpointConfig().keepaliveIdleNs(0),
            QueuePairCapabilities.defaults(), 4096).connect(1024);
        final ByteBuffer memory = BufferUtil.allocateDirectAligned(8192, 64);
        final MemoryRegion source = f.b.pd.registerMemory(memory, AccessFlags.ALL);
        final List<byte[]> fromA = new ArrayList<>();
        final List<byte[]> fromB = new ArrayList<>();
        // A's READ_REQUEST is held back so that the test hands it to B itself, then deregisters
        // the source before B's first transmission opportunity.
        f.wire.filter((from, to, buf, off, len, now) -> {
            final byte[] copy = new byte[len];
            buf.getBytes(off, copy);
            (from == f.a.node ? fromA : fromB).add(copy);
            return from == f.a.node;
        });
        f.a.qp.postSend(new SendRequest(1).wrId(1).opcode(WrOpcode.RDMA_READ).sendFlags(SendFlags.SIGNALED)
            .addSge(f.a.address(0), 5000, f.a.mr.lkey()).remoteAddr(source.address()).rkey(source.rkey()));
        f.wire.runFor(1_000);
        final byte[] request = fromA.stream().filter(b -> Opcode.of(b[BaseHeader.OPCODE_OFFSET] & 0xFF)
            == Opcode.READ_REQUEST).findFirst().orElseThrow();
        final int requestPsn = BaseHeader.psn(new UnsafeBuffer(request), 0);
        f.b.endpoint.onDatagram(f.wire.now(), new UnsafeBuffer(request), 0, request.length, f.a.node,
            DatagramEndpoint.ECN_NOT_ECT);
        f.b.pd.deregister(source);
        f.wire.runFor(10_000);
        assertThat(fromB).as("no READ_RESPONSE from the deregistered region").noneMatch(b ->
            Opcode.of(b[BaseHeader.OPCODE_OFFSET] & 0xFF) == Opcode.READ_RESPONSE);
        final byte[] nack = fromB.stream().filter(b -> Opcode.of(b[BaseHeader.OPCODE_OFFSET] & 0xFF) == Opcode.NACK)
            .findFirst().orElseThrow(() -> new AssertionError("no NACK from B"));
        final UnsafeBuffer n = new UnsafeBuffer(nack);
        assertThat(NackHeader.reason(n, Opcode.NACK.nackOffset())).isEqualTo(NackReason.REMOTE_ACCESS.code());
        assertThat(NackHeader.nackPsn(n, Opcode.NACK.nackOffset())).as("NACK PSN = the READ_REQUEST's PSN")
            .isEqualTo(requestPsn);
        assertThat(f.b.qp.state()).isEqualTo(QpState.ERR);
    }
}
