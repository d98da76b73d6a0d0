// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.atomic.AtomicReference;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.metaroce.core.testwire.LinkProfile;
import org.metaroce.core.verbs.QpState;
import org.metaroce.core.verbs.RecvRequest;
import org.metaroce.core.verbs.SendFlags;
import org.metaroce.core.verbs.SendRequest;
import org.metaroce.core.verbs.WcStatus;
import org.metaroce.core.verbs.WorkCompletion;
import org.metaroce.core.verbs.WrOpcode;
import org.metaroce.core.wire.AckHeader;
import org.metaroce.core.wire.BaseHeader;
import org.metaroce.core.wire.IntegrityCheck;
import org.metaroce.core.wire.Opcode;

/**
 * [REL-068]: an ACK that lacks a PSN the requester took as received, and that the responder
 * generated after the requester took it so, ends the connection with BAD_RESP_ERR. Found by
 * {@code EngineFuzzTest} (campaign of 2026-12-04, {@code fuzz-open/probes-answered-sends-stuck-…}):
 * a resealed, altered ACK in B's name SACKed a PSN B never got; A completed the SEND without it,
 * B's receive never completed, and A answered probes and later requests stayed in RTS for ever.
 * The last test is the exactness the rule needs: a READ response that overtakes an older ACK must
 * not be taken for a contradiction.
 */
class ContradictedDeliveryTest {
    private static final int MTU = 1024;

    /** An ACK in B's name with Cumulative PSN {@code cumulative} and SACK {@code bitmap}, resealed. */
    private static int forgedAck(final UnsafeBuffer p, final TwoNodeFixture f, final int cumulative, final long bitmap) {
        final Opcode op = Opcode.ACK;
        new BaseHeader().wrap(p, 0).initialize(op).destQpn(f.a.qp.qpn()).psn(0).sourceQpn(f.b.qp.qpn());
        new AckHeader().wrap(p, op.ackOffset()).initialize().cumulativePsn(cumulative).sackBitmap(bitmap).credit(64);
        return new IntegrityCheck().seal(p, 0, op.headerLength());
    }

    /**
     * A's 4-packet SEND reaches B without its second packet (every copy dropped), and a forged ACK
     * tells A that packet arrived: A completes the SEND with SUCCESS, B never completes its receive.
     *
     * @return the PSN B lacks
     */
    private static int sendWithAForgedSack(final TwoNodeFixture f) {
        final int first = f.a.qp.nextSendPsn();
        final int missing = first + 1;
        f.wire.filter((from, to, buf, off, len, now) -> from == f.a.node && BaseHeader.psn(buf, off) == missing
            && BaseHeader.opcode(buf, off) != Opcode.KEEPALIVE.value());
        f.b.qp.postRecv(new RecvRequest(1).wrId(70).addSge(f.b.address(0), 4 * MTU, f.b.mr.lkey()));
        f.a.qp.postSend(new SendRequest(1).wrId(1).opcode(WrOpcode.SEND).sendFlags(SendFlags.SIGNALED)
            .addSge(f.a.address(0), 4 * MTU, f.a.mr.lkey()));
        assertThat(f.wire.runUntil(() -> f.a.endpoint.counters().get(EndpointCounter.REQUEST_PACKETS_OUT) >= 4,
            1_000_000_000L)).isTrue();
        final UnsafeBuffer p = new UnsafeBuffer(new byte[256]);
        f.a.endpoint.onDatagram(f.wire.now(), p, 0, forgedAck(p, f, first, 1L), f.b.node, DatagramEndpoint.ECN_NOT_ECT);
        assertThat(f.runUntilCompletions(1, 0)).isTrue();
        assertThat(f.a.sendCompletions).extracting(WorkCompletion::status)
            .as("the forgery made A take the missing packet as delivered").containsExactly(WcStatus.SUCCESS);
        assertThat(f.b.recvCompletions).isEmpty();
        return missing;
    }

    @Test
    void theNextRequestsAckEndsTheConnectionWithBadResponse() {
        final TwoNodeFixture f = new TwoNodeFixture(6801, LinkProfile.perfect(), new EndpointConfig(),
            QueuePairCapabilities.defaults(), 4096).connect(MTU);
        final int missing = sendWithAForgedSack(f);
        final long start = f.wire.now();
        f.a.qp.postSend(new SendRequest(1).wrId(2).opcode(WrOpcode.RDMA_WRITE).sendFlags(SendFlags.SIGNALED)
            .addSge(f.a.address(8192), 64, f.a.mr.lkey()).remoteAddr(f.b.address(8192)).rkey(f.b.mr.rkey()));

        assertThat(f.runUntilCompletions(2, 0)).isTrue();
        // B's ACK of the WRITE still says Cumulative PSN = the missing packet, and echoes the
        // WRITE, which left after A took that packet as received: a contradiction, not a late ACK.
        assertThat(f.a.sendCompletions).extracting(WorkCompletion::status)
            .containsExactly(WcStatus.SUCCESS, WcStatus.BAD_RESP_ERR);
        assertThat(f.a.qp.state()).isEqualTo(QpState.ERR);
        assertThat(f.a.qp.failure()).contains("REL-068").contains("PSN " + Integer.toUnsignedString(missing));
        assertThat(f.wire.now() - start).as("one round trip, not a timeout").isLessThan(1_000_000L);
    }

    @Test
    void anIdleRequestersKeepaliveAnswerEndsTheConnection() {
        final long idleNs = 50_000_000L;
        final TwoNodeFixture f = new TwoNodeFixture(6802, LinkProfile.perfect(),
            new EndpointConfig().keepaliveIdleNs(idleNs), QueuePairCapabilities.defaults(), 4096).connect(MTU);
        sendWithAForgedSack(f);
        final long start = f.wire.now();
        // Nothing more to send: B's answer to A's first KEEPALIVE carries the contradiction.
        assertThat(f.wire.runUntil(() -> f.a.qp.state() != QpState.RTS, 10_000_000_000L)).isTrue();
        assertThat(f.a.qp.state()).isEqualTo(QpState.ERR);
        assertThat(f.a.qp.failure()).contains("REL-068");
        assertThat(f.a.endpoint.counters().get(EndpointCounter.KEEPALIVES_OUT)).isEqualTo(1);
        // B, as idle, probes first (A's answer restarts nothing at A, B's probe restarts A's idle
        // time), so A's own probe leaves about two idle times after the SEND.
        assertThat(f.wire.now() - start).isBetween(idleNs, 3 * idleNs);
        // The first event is the CC_FALLBACK of an in-memory wire without ECN; then the failure.
        assertThat(f.a.endpoint.asyncEvents().peekType()).isEqualTo(AsyncEventType.CC_FALLBACK);
        f.a.endpoint.asyncEvents().remove();
        assertThat(f.a.endpoint.asyncEvents().peekType()).isEqualTo(AsyncEventType.QP_FATAL);
    }

    @Test
    void aReadResponseThatOvertakesAnOlderAckIsNoContradiction() {
        final TwoNodeFixture f = new TwoNodeFixture(6803, LinkProfile.perfect(), new EndpointConfig(),
            QueuePairCapabilities.defaults(), 4096).connect(MTU);
        final int write = f.a.qp.nextSendPsn();
        final int read = write + 1;
        // Hold back B's first ACK whose Cumulative PSN is the READ's PSN (B had the WRITE, not yet
        // the READ); deliver it after the READ response, which resolved that PSN.
        final AtomicReference<byte[]> held = new AtomicReference<>();
        f.wire.filter((from, to, buf, off, len, now) -> {
            if (from == f.b.node && held.get() == null && BaseHeader.opcode(buf, off) == Opcode.ACK.value()
                && AckHeader.cumulativePsn(buf, off + Opcode.ACK.ackOffset()) == read) {
                final byte[] copy = new byte[len];
                buf.getBytes(off, copy);
                held.set(copy);
                return true;
            }
            return false;
        });
        f.a.qp.postSend(new SendRequest(1).wrId(1).opcode(WrOpcode.RDMA_WRITE).sendFlags(SendFlags.SIGNALED)
            .addSge(f.a.address(0), 64, f.a.mr.lkey()).remoteAddr(f.b.address(0)).rkey(f.b.mr.rkey()));
        assertThat(f.wire.runUntil(() -> held.get() != null, 1_000_000_000L)).isTrue();
        // The READ leaves after B acknowledged the WRITE (in the ACK held back): its response
        // resolves the READ's PSN before that ACK arrives.
        f.a.qp.postSend(new SendRequest(1).wrId(2).opcode(WrOpcode.RDMA_READ).sendFlags(SendFlags.SIGNALED)
            .addSge(f.a.address(4096), 64, f.a.mr.lkey()).remoteAddr(f.b.address(4096)).rkey(f.b.mr.rkey()));
        assertThat(f.wire.runUntil(() -> f.a.endpoint.counters().get(EndpointCounter.PACKETS_IN) >= 1,
            1_000_000_000L)).isTrue();
        assertThat(f.a.sendCompletions).isEmpty();
        final byte[] late = held.get();
        f.a.endpoint.onDatagram(f.wire.now(), new UnsafeBuffer(late), 0, late.length, f.b.node,
            DatagramEndpoint.ECN_NOT_ECT);

        assertThat(f.runUntilCompletions(2, 0)).isTrue();
        assertThat(f.a.sendCompletions).extracting(WorkCompletion::status)
            .containsExactly(WcStatus.SUCCESS, WcStatus.SUCCESS);
        assertThat(f.a.qp.state()).isEqualTo(QpState.RTS);
        assertThat(f.a.qp.failure()).isNull();
    }
}
