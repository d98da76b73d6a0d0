// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteOrder;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.metaroce.core.verbs.QpState;
import org.metaroce.core.verbs.SendFlags;
import org.metaroce.core.verbs.SendRequest;
import org.metaroce.core.verbs.WcStatus;
import org.metaroce.core.verbs.WorkCompletion;
import org.metaroce.core.verbs.WrOpcode;
import org.metaroce.core.wire.BaseHeader;
import org.metaroce.core.wire.Flags;
import org.metaroce.core.wire.IntegrityCheck;
import org.metaroce.core.wire.MessageHeader;
import org.metaroce.core.wire.Opcode;
import org.metaroce.core.wire.RdmaHeader;

/**
 * Found by the compliance suite: zero-length RDMA operations carry no valid key and must not be
 * checked [OPS-017, OPS-023, MEM-012], and a request packet that no correct segmentation can
 * produce is an invalid request [OPS-005].
 */
class ZeroLengthAndSegmentationTest {
    @Test
    void zeroLengthWriteWithABogusRkeySucceeds() {
        final TwoNodeFixture f = new TwoNodeFixture(7101).connect(1024);
        f.a.qp.postSend(new SendRequest(1).wrId(1).opcode(WrOpcode.RDMA_WRITE).sendFlags(SendFlags.SIGNALED)
            .remoteAddr(0).rkey(0xDEADBEEF));
        assertThat(f.runUntilCompletions(1, 0)).isTrue();
        assertThat(f.a.sendCompletions).extracting(WorkCompletion::status).containsExactly(WcStatus.SUCCESS);
        assertThat(f.b.qp.state()).isEqualTo(QpState.RTS);
    }

    @Test
    void zeroLengthReadWithABogusRkeySucceeds() {
        final TwoNodeFixture f = new TwoNodeFixture(7102).connect(1024);
        f.a.qp.postSend(new SendRequest(1).wrId(1).opcode(WrOpcode.RDMA_READ).sendFlags(SendFlags.SIGNALED)
            .remoteAddr(12345).rkey(0x0BADBEEF));
        assertThat(f.runUntilCompletions(1, 0)).isTrue();
        assertThat(f.a.sendCompletions).extracting(WorkCompletion::status).containsExactly(WcStatus.SUCCESS);
        assertThat(f.b.qp.state()).isEqualTo(QpState.RTS);
    }

    @Test
    void writePacketAtAnOffsetThatIsNotAMultipleOfThePmtuIsAnInvalidRequest() {
        final TwoNodeFixture f = new TwoNodeFixture(7103).connect(1024);
        final UnsafeBuffer packet = new UnsafeBuffer(new byte[2048]);
        final Opcode op = Opcode.WRITE;
        new BaseHeader().wrap(packet, 0).initialize(op).flags(Flags.ACK_REQ).destQpn(f.b.qp.qpn())
            .psn(f.b.qp.expectedReceivePsn()).payloadLength(1024).sourceQpn(f.a.qp.qpn());
        new MessageHeader().wrap(packet, op.msgOffset()).msn(0).messageOffset(100).messageLength(1124).rsn(0);
        new RdmaHeader().wrap(packet, op.rethOffset()).virtualAddress(f.b.address(0)).rkey(f.b.mr.rkey())
            .dmaLength(1124);
        final int covered = op.headerLength() + 1024;
        packet.putInt(covered, IntegrityCheck.software(packet, 0, covered), ByteOrder.BIG_ENDIAN);
        final byte before = f.b.mr.buffer().getByte(100);
        f.b.endpoint.onDatagram(f.wire.now(), packet, 0, covered + 4, f.a.node, DatagramEndpoint.ECN_NOT_ECT);
        f.runUntilQuiet();
        assertThat(f.b.endpoint.counters().get(EndpointCounter.NACKS_OUT_INVALID_REQUEST)).isEqualTo(1);
        assertThat(f.b.qp.state()).isEqualTo(QpState.ERR);
        assertThat(f.b.mr.buffer().getByte(100)).as("nothing placed [REL-006]").isEqualTo(before);
    }
}
