// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.connection;

import static org.assertj.core.api.Assertions.assertThat;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.metaroce.core.wire.BaseHeader;
import org.metaroce.core.wire.ConnectHeader;
import org.metaroce.core.wire.IntegrityCheck;
import org.metaroce.core.wire.Opcode;

class CmPacketWriterTest {
    private final CmPacketWriter writer = new CmPacketWriter();
    private final UnsafeBuffer dst = new UnsafeBuffer(new byte[Connection.MAX_PACKET + 64]);

    private static Connection client() {
        final Connection c = new Connection(false, 0x5E41_71CEL, 0x0123_4567_89AB_CDEFL, null);
        c.localQpn = 1110;
        c.localInitialPsn = 0x1357_9BDF;
        c.proposedMtu = 4096;
        c.proposedCapabilities = ConnectHeader.CAP_ECN;
        c.proposedInitiatorDepth = 8;
        c.proposedResponderResources = 6;
        c.proposedPathCount = 4;
        c.localPrivateData = new byte[] {1, 2, 3};
        return c;
    }

    private static Connection established() {
        final Connection c = client();
        c.remoteQpn = 291;
        c.mtu = 1024;
        c.replyInitiatorDepth = 5;
        c.pathCount = 2;
        return c;
    }

    @Test
    void aFirstRequestCarriesTheProposalAndNoCookie() {
        // [CM-002] to QPN 0 from the client's QPN, the proposal, private data; [CM-005] cookie zero.
        final Connection c = client();
        final int n = writer.request(c, dst);
        assertThat(n).isEqualTo(CmPacketWriter.HEADER + 3);
        assertThat(Opcode.of(BaseHeader.opcode(dst, 0))).isEqualTo(Opcode.CONNECT_REQUEST);
        assertThat(BaseHeader.destQpn(dst, 0)).isZero();
        assertThat(BaseHeader.sourceQpn(dst, 0)).isEqualTo(1110);
        assertThat(BaseHeader.payloadLength(dst, 0)).isEqualTo(3);
        final int h = CmPacketWriter.CM;
        assertThat(ConnectHeader.serviceId(dst, h)).isEqualTo(0x5E41_71CEL);
        assertThat(ConnectHeader.transactionId(dst, h)).isEqualTo(0x0123_4567_89AB_CDEFL);
        assertThat(ConnectHeader.initialPsn(dst, h)).isEqualTo(0x1357_9BDF);
        assertThat(ConnectHeader.pathMtu(dst, h)).isEqualTo(4096);
        assertThat(ConnectHeader.capabilities(dst, h)).isEqualTo(ConnectHeader.CAP_ECN);
        assertThat(ConnectHeader.initiatorDepth(dst, h)).isEqualTo(8);
        assertThat(ConnectHeader.responderResources(dst, h)).isEqualTo(6);
        assertThat(ConnectHeader.pathCount(dst, h)).isEqualTo(4);
        assertThat(Packets.cookieOf(dst).byteArray()).containsOnly(0);
        assertThat(dst.getByte(CmPacketWriter.HEADER + 2)).isEqualTo((byte) 3);
    }

    @Test
    void aReplyCarriesTheNegotiatedValuesAndARejectTheProposal() {
        // [CM-002] CONNECT_REPLY: negotiated values; CONNECT_REJECT: echo of the request, from QPN 0.
        final Connection c = established();
        assertThat(writer.reply(c, dst)).isEqualTo(CmPacketWriter.HEADER + 3);
        assertThat(Opcode.of(BaseHeader.opcode(dst, 0))).isEqualTo(Opcode.CONNECT_REPLY);
        assertThat(BaseHeader.destQpn(dst, 0)).isEqualTo(291);
        assertThat(BaseHeader.sourceQpn(dst, 0)).isEqualTo(1110);
        assertThat(ConnectHeader.pathMtu(dst, CmPacketWriter.CM)).isEqualTo(1024);
        assertThat(ConnectHeader.initiatorDepth(dst, CmPacketWriter.CM)).isEqualTo(5);
        assertThat(ConnectHeader.pathCount(dst, CmPacketWriter.CM)).isEqualTo(2);

        assertThat(writer.reject(c, CmReason.REJECTED_BY_APPLICATION, new byte[] {9}, dst))
            .isEqualTo(CmPacketWriter.HEADER + 1);
        assertThat(Opcode.of(BaseHeader.opcode(dst, 0))).isEqualTo(Opcode.CONNECT_REJECT);
        assertThat(BaseHeader.sourceQpn(dst, 0)).isZero();
        assertThat(ConnectHeader.initialPsn(dst, CmPacketWriter.CM)).isZero();
        assertThat(ConnectHeader.pathMtu(dst, CmPacketWriter.CM)).isEqualTo(4096);
        assertThat(ConnectHeader.reason(dst, CmPacketWriter.CM)).isEqualTo(CmReason.REJECTED_BY_APPLICATION);
        assertThat(dst.getByte(CmPacketWriter.HEADER)).isEqualTo((byte) 9);
    }

    @Test
    void headerOnlyPacketsCarryTheIdentityAndTheReasonAtAnyOffset() {
        final Connection c = established();
        writer.headerOnly(dst, 32, c, Opcode.DISCONNECT_REQUEST, CmReason.QP_ERROR);
        assertThat(Opcode.of(BaseHeader.opcode(dst, 32))).isEqualTo(Opcode.DISCONNECT_REQUEST);
        assertThat(BaseHeader.destQpn(dst, 32)).isEqualTo(291);
        assertThat(BaseHeader.sourceQpn(dst, 32)).isEqualTo(1110);
        assertThat(BaseHeader.payloadLength(dst, 32)).isZero();
        assertThat(ConnectHeader.transactionId(dst, 32 + CmPacketWriter.CM)).isEqualTo(c.transactionId);
        assertThat(ConnectHeader.reason(dst, 32 + CmPacketWriter.CM)).isEqualTo(CmReason.QP_ERROR);
    }

    @Test
    void statelessAnswersTurnTheRequestAround() {
        // [CM-010] answers go back to the request's Source QPN from QPN 0, header only [SEC-005].
        final UnsafeBuffer request = Packets.request(1110, 77, 0xABCDL, null, new byte[] {5, 5});
        final int cookieAt = writer.challenge(dst, 8, request, 0);
        assertThat(cookieAt).isEqualTo(8 + CmPacketWriter.CM + ConnectHeader.COOKIE_OFFSET);
        assertThat(Opcode.of(BaseHeader.opcode(dst, 8))).isEqualTo(Opcode.CONNECT_CHALLENGE);
        assertThat(BaseHeader.destQpn(dst, 8)).isEqualTo(1110);
        assertThat(BaseHeader.sourceQpn(dst, 8)).isZero();
        assertThat(BaseHeader.payloadLength(dst, 8)).isZero();
        assertThat(ConnectHeader.serviceId(dst, 8 + CmPacketWriter.CM)).isEqualTo(77);
        assertThat(ConnectHeader.transactionId(dst, 8 + CmPacketWriter.CM)).isEqualTo(0xABCDL);
        assertThat(ConnectHeader.initialPsn(dst, 8 + CmPacketWriter.CM)).isZero();

        dst.setMemory(cookieAt, 20, (byte) 0x7F); // as if a cookie had been issued there before
        writer.statelessReject(dst, 8, request, 0, CmReason.NO_LISTENER);
        assertThat(Opcode.of(BaseHeader.opcode(dst, 8))).isEqualTo(Opcode.CONNECT_REJECT);
        assertThat(ConnectHeader.reason(dst, 8 + CmPacketWriter.CM)).isEqualTo(CmReason.NO_LISTENER);
        for (int i = 0; i < 20; i++) {
            assertThat(dst.getByte(cookieAt + i)).isZero();
        }
    }

    @Test
    void sealingStampsTheTimeAndAppendsAValidIntegrityCheck() {
        // [CM-041] every copy carries the time of its own transmission and a recomputed check.
        final int n = writer.request(client(), dst);
        final int total = writer.seal(dst, 0, n, 0x1_2345_6789L);
        assertThat(total).isEqualTo(n + 4);
        assertThat(BaseHeader.timestamp(dst, 0)).isEqualTo(0x2345_6789);
        assertThat(new IntegrityCheck().verify(dst, 0, total)).isTrue();
    }
}
