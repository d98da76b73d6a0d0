// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.engine;

import static org.assertj.core.api.Assertions.assertThat;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.metaroce.core.testwire.LinkProfile;
import org.metaroce.core.verbs.PostStatus;
import org.metaroce.core.verbs.QpState;
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
 * Found by {@code EngineFuzzTest} (issue 14 item 6): an ACK granting credit 0 to a requester with
 * nothing in flight left it without an ACK or a timer to wait for, so its later sends never left
 * and, with keepalive off, never failed either. [REL-019] requires a KEEPALIVE with ACK_REQ after
 * one RTO of blocked credit, repeated with backoff; its answer carries the current Credit.
 */
class CreditProbeTest {
    /** An ACK from B to A that acknowledges everything A sent and grants {@code credit}. */
    private static int ack(final UnsafeBuffer p, final TwoNodeFixture f, final int credit) {
        final Opcode op = Opcode.ACK;
        new BaseHeader().wrap(p, 0).initialize(op).destQpn(f.a.qp.qpn()).psn(0).sourceQpn(f.b.qp.qpn());
        new AckHeader().wrap(p, op.ackOffset()).initialize().cumulativePsn(f.a.qp.nextSendPsn()).credit(credit);
        return new IntegrityCheck().seal(p, 0, op.headerLength());
    }

    @Test
    void zeroCreditWithNothingOutstandingIsProbedUntilTheResponderGrantsMore() {
        // Keepalive off: otherwise its probe after KEEPALIVE_IDLE would mask the missing credit probe.
        final TwoNodeFixture f = new TwoNodeFixture(6101, LinkProfile.perfect(), new EndpointConfig().keepaliveIdleNs(0),
            QueuePairCapabilities.defaults(), 4096).connect(1024);
        final UnsafeBuffer p = new UnsafeBuffer(new byte[256]);
        f.a.endpoint.onDatagram(f.wire.now(), p, 0, ack(p, f, 0), f.b.node, DatagramEndpoint.ECN_NOT_ECT);
        final long start = f.wire.now();
        assertThat(f.a.qp.postSend(new SendRequest(1).wrId(1).opcode(WrOpcode.RDMA_WRITE).sendFlags(SendFlags.SIGNALED)
            .addSge(f.a.address(0), 64, f.a.mr.lkey()).remoteAddr(f.b.address(0)).rkey(f.b.mr.rkey())))
            .isEqualTo(PostStatus.OK);

        assertThat(f.runUntilCompletions(1, 0)).as("the WRITE completes once the probe's answer restores credit").isTrue();
        assertThat(f.a.sendCompletions).extracting(WorkCompletion::status).containsExactly(WcStatus.SUCCESS);
        assertThat(f.a.endpoint.counters().get(EndpointCounter.KEEPALIVES_OUT)).isEqualTo(1);
        // One RTO (TIMEOUT 1 ms) of blocked credit, then the probe's round trip.
        assertThat(f.wire.now() - start).isBetween(1_000_000L, 2_000_000L);
        assertThat(f.a.qp.state()).isEqualTo(QpState.RTS);
    }

    @Test
    void unansweredCreditProbesBackOff() {
        final TwoNodeFixture f = new TwoNodeFixture(6102, LinkProfile.perfect(), new EndpointConfig().keepaliveIdleNs(0),
            QueuePairCapabilities.defaults(), 4096).connect(1024);
        // B's KEEPALIVE answers never arrive: A stays blocked and keeps asking, ever more slowly.
        f.wire.filter((from, to, buf, off, len, now) -> from == f.b.node);
        final UnsafeBuffer p = new UnsafeBuffer(new byte[256]);
        f.a.endpoint.onDatagram(f.wire.now(), p, 0, ack(p, f, 0), f.b.node, DatagramEndpoint.ECN_NOT_ECT);
        f.a.qp.postSend(new SendRequest(1).wrId(1).opcode(WrOpcode.RDMA_WRITE).sendFlags(SendFlags.SIGNALED)
            .addSge(f.a.address(0), 64, f.a.mr.lkey()).remoteAddr(f.b.address(0)).rkey(f.b.mr.rkey()));
        f.wire.runFor(1_000_000_000L);
        // RTO 1 ms doubling up to RTO_MAX 100 ms: 1+2+4+...+64 ms, then every 100 ms; about 14 in 1 s.
        assertThat(f.a.endpoint.counters().get(EndpointCounter.KEEPALIVES_OUT)).isBetween(10L, 16L);
        assertThat(f.a.endpoint.counters().get(EndpointCounter.REQUEST_PACKETS_OUT)).isZero();
        assertThat(f.a.qp.outstandingSends()).isEqualTo(1);
    }
}
