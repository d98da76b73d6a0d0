// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteOrder;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.metaroce.core.verbs.QpState;
import org.metaroce.core.verbs.RecvRequest;
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

/**
 * Found by the compliance suite: a second message claiming a receive WR already matched to
 * another message is an invalid request [OPS-014]; a response to a READ that has completed is a
 * DUPLICATE_RESPONSE [REL-043].
 */
class StrayPacketTest {
    private static int send(final UnsafeBuffer p, final TwoNodeFixture f, final int psn, final int msn,
                            final int flags, final int msgLength, final int payload) {
        final Opcode op = Opcode.SEND;
        new BaseHeader().wrap(p, 0).initialize(op).flags(flags).destQpn(f.b.qp.qpn()).psn(psn).payloadLength(payload)
            .sourceQpn(f.a.qp.qpn());
        new MessageHeader().wrap(p, op.msgOffset()).msn(msn).messageOffset(0).messageLength(msgLength).rsn(0);
        final int covered = op.headerLength() + payload;
        p.putInt(covered, IntegrityCheck.software(p, 0, covered), ByteOrder.BIG_ENDIAN);
        return covered + 4;
    }

    @Test
    void secondMessageForAMatchedReceiveIsAnInvalidRequest() {
        final TwoNodeFixture f = new TwoNodeFixture(7301).connect(1024);
        f.b.qp.postRecv(new RecvRequest(1).wrId(1).addSge(f.b.address(0), 4096, f.b.mr.lkey()));
        final int e = f.b.qp.expectedReceivePsn();
        final UnsafeBuffer p = new UnsafeBuffer(new byte[2048]);
        // Message A: first of two packets, RSN 0.
        f.b.endpoint.onDatagram(f.wire.now(), p, 0, send(p, f, e, 0, 0, 2048, 1024), f.a.node, DatagramEndpoint.ECN_NOT_ECT);
        // Message B (another MSN) claims RSN 0 as well.
        f.b.endpoint.onDatagram(f.wire.now(), p, 0, send(p, f, e + 2, 1, Flags.LAST, 64, 64), f.a.node,
            DatagramEndpoint.ECN_NOT_ECT);
        f.runUntilQuiet();
        assertThat(f.b.endpoint.counters().get(EndpointCounter.NACKS_OUT_INVALID_REQUEST)).isEqualTo(1);
        assertThat(f.b.qp.state()).isEqualTo(QpState.ERR);
    }

    @Test
    void responseToACompletedReadIsADuplicate() {
        final TwoNodeFixture f = new TwoNodeFixture(7302).connect(1024);
        final UnsafeBuffer captured = new UnsafeBuffer(new byte[2048]);
        final int[] length = {0};
        f.wire.filter((from, to, buf, off, len, now) -> {
            if (BaseHeader.opcode(buf, off) == Opcode.READ_RESPONSE.value() && length[0] == 0) {
                captured.putBytes(0, buf, off, len);
                length[0] = len;
            }
            return false;
        });
        f.a.qp.postSend(new SendRequest(1).wrId(1).opcode(WrOpcode.RDMA_READ).sendFlags(SendFlags.SIGNALED)
            .addSge(f.a.address(0), 64, f.a.mr.lkey()).remoteAddr(f.b.address(0)).rkey(f.b.mr.rkey()));
        assertThat(f.runUntilCompletions(1, 0)).isTrue();
        assertThat(f.a.sendCompletions).extracting(WorkCompletion::status).containsExactly(WcStatus.SUCCESS);
        f.a.endpoint.onDatagram(f.wire.now(), captured, 0, length[0], f.b.node, DatagramEndpoint.ECN_NOT_ECT);
        assertThat(f.a.endpoint.counters().get(EndpointCounter.DUPLICATE_RESPONSE)).isEqualTo(1);
        assertThat(f.a.endpoint.counters().get(EndpointCounter.ACK_FOR_UNSENT_PSN)).isZero();
        assertThat(f.a.qp.state()).isEqualTo(QpState.RTS);
    }
}
