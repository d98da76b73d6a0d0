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
        return ack(p, f, f.a.qp.nextSendPsn(), credit);
    }

    /** An ACK from B to A with Cumulative PSN {@code cumulative}, granting {@code credit}. */
    private static int ack(final UnsafeBuffer p, final TwoNodeFixture f, final int cumulative, final int credit) {
        final Opcode op = Opcode.ACK;
        new BaseHeader().wrap(p, 0).initialize(op).destQpn(f.a.qp.qpn()).psn(0).sourceQpn(f.b.qp.qpn());
        new AckHeader().wrap(p, op.ackOffset()).initialize().cumulativePsn(cumulative).credit(credit);
        return new IntegrityCheck().seal(p, 0, op.headerLength());
    }

    /** A blocked by credit 0 with one 64 B WRITE posted; B's own packets never reach A. */
    private static TwoNodeFixture blockedWithTheAnswersCut(final long seed, final long retryTimeoutNs) {
        final TwoNodeFixture f = new TwoNodeFixture(seed, LinkProfile.perfect(),
            new EndpointConfig().keepaliveIdleNs(0).retryTimeoutNs(retryTimeoutNs), QueuePairCapabilities.defaults(), 4096)
            .connect(1024);
        f.wire.filter((from, to, buf, off, len, now) -> from == f.b.node);
        final UnsafeBuffer p = new UnsafeBuffer(new byte[256]);
        f.a.endpoint.onDatagram(f.wire.now(), p, 0, ack(p, f, 0), f.b.node, DatagramEndpoint.ECN_NOT_ECT);
        assertThat(f.a.qp.postSend(new SendRequest(1).wrId(1).opcode(WrOpcode.RDMA_WRITE).sendFlags(SendFlags.SIGNALED)
            .addSge(f.a.address(0), 64, f.a.mr.lkey()).remoteAddr(f.b.address(0)).rkey(f.b.mr.rkey())))
            .isEqualTo(PostStatus.OK);
        return f;
    }

    /**
     * Runs {@code durationNs} in 1 ms steps; after each step in which A sent a credit probe, A
     * receives {@code answer} (built by the function from the fixture), as B's answer to it.
     */
    private static void answerEachProbe(final TwoNodeFixture f, final long durationNs,
                                        final java.util.function.ToIntBiFunction<UnsafeBuffer, TwoNodeFixture> answer) {
        final UnsafeBuffer p = new UnsafeBuffer(new byte[256]);
        long probes = 0;
        for (long t = 0; t < durationNs && f.a.qp.state() == QpState.RTS; t += 1_000_000L) {
            f.wire.runFor(1_000_000L);
            final long sent = f.a.endpoint.counters().get(EndpointCounter.KEEPALIVES_OUT);
            if (sent > probes) {
                probes = sent;
                f.a.endpoint.onDatagram(f.wire.now(), p, 0, answer.applyAsInt(p, f), f.b.node, DatagramEndpoint.ECN_NOT_ECT);
            }
        }
        f.wire.runFor(1_000_000L);
        f.a.drain();
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

    /**
     * The fuzzer's finding of 2026-12-03: B's receive sequence had run past every PSN A ever sent,
     * so each answer to A's credit probes was dropped as ACK_FOR_UNSENT_PSN [REL-016] and A, in
     * RTS with its work requests posted, waited for a Credit that could never arrive. Probes that
     * no acceptable ACK follows count like retransmission timeouts [REL-067]: RETRY_CNT (7) + 1 of
     * them, with RETRY_TIMEOUT spent since the block began, end the connection with RETRY_EXC_ERR.
     */
    @Test
    void aPeerThatAnswersCreditProbesOnlyForUnsentPsnsEndsTheConnection() {
        final long retryTimeoutNs = 200_000_000L;
        final TwoNodeFixture f = blockedWithTheAnswersCut(6103, retryTimeoutNs);
        final long start = f.wire.now();
        answerEachProbe(f, 5_000_000_000L, (p, fx) -> ack(p, fx, fx.a.qp.nextSendPsn() + 5, 64));

        assertThat(f.a.qp.state()).isEqualTo(QpState.ERR);
        assertThat(f.a.sendCompletions).extracting(WorkCompletion::status).containsExactly(WcStatus.RETRY_EXC_ERR);
        assertThat(f.a.endpoint.counters().get(EndpointCounter.REQUEST_PACKETS_OUT)).isZero();
        // Probes at 1, 3, 7, 15, 31, 63, 127, 227 ms (RTO 1 ms doubling to RTO_MAX 100 ms), all
        // answered for unsent PSNs; the ninth is due at 327 ms and finds eight unanswered.
        assertThat(f.a.endpoint.counters().get(EndpointCounter.KEEPALIVES_OUT)).isEqualTo(8);
        assertThat(f.a.endpoint.counters().get(EndpointCounter.ACK_FOR_UNSENT_PSN)).isEqualTo(8);
        assertThat(f.wire.now() - start).as("not before RETRY_TIMEOUT [REL-060]").isBetween(retryTimeoutNs, 400_000_000L);
        assertThat(f.a.qp.failure()).contains("REL-067").contains("unsent PSNs");
    }

    /** The same with RETRY_TIMEOUT 10 s: the probes go on, backed off, until it is spent [REL-060]. */
    @Test
    void theDivergedPeerIsProbedUntilRetryTimeoutIsSpent() {
        final TwoNodeFixture f = blockedWithTheAnswersCut(6104, 10_000_000_000L);
        answerEachProbe(f, 9_000_000_000L, (p, fx) -> ack(p, fx, fx.a.qp.nextSendPsn() + 5, 64));
        assertThat(f.a.qp.state()).as("9 s into a 10 s RETRY_TIMEOUT").isEqualTo(QpState.RTS);
        answerEachProbe(f, 2_000_000_000L, (p, fx) -> ack(p, fx, fx.a.qp.nextSendPsn() + 5, 64));
        assertThat(f.a.qp.state()).isEqualTo(QpState.ERR);
        assertThat(f.a.sendCompletions).extracting(WorkCompletion::status).containsExactly(WcStatus.RETRY_EXC_ERR);
    }

    /**
     * A peer that answers every probe with an acceptable ACK still granting no credit is alive and
     * may grant more later (a receiver that posts no receives): the requester waits, as verbs waits
     * with RNR_RETRY 7, and only keepalive or the application ends it [REL-019], [REL-067].
     */
    @Test
    void aPeerThatAnswersEveryCreditProbeWithCreditZeroIsWaitedFor() {
        final TwoNodeFixture f = blockedWithTheAnswersCut(6105, 0);
        answerEachProbe(f, 3_000_000_000L, (p, fx) -> ack(p, fx, 0));
        assertThat(f.a.qp.state()).isEqualTo(QpState.RTS);
        assertThat(f.a.endpoint.counters().get(EndpointCounter.KEEPALIVES_OUT)).isGreaterThan(20);
        assertThat(f.a.qp.outstandingSends()).isEqualTo(1);
        assertThat(f.a.sendCompletions).isEmpty();
    }

    /**
     * With RETRY_TIMEOUT 0 and keepalive off, credit probes that nothing answers end the connection
     * after RETRY_CNT + 1 of them, as unanswered retransmissions would [REL-029], [REL-067]; before,
     * such a requester waited for ever.
     */
    @Test
    void creditProbesThatNothingAnswersEndTheConnectionAfterRetryCount() {
        final TwoNodeFixture f = blockedWithTheAnswersCut(6106, 0);
        f.wire.runFor(1_000_000_000L);
        f.a.drain();
        assertThat(f.a.qp.state()).isEqualTo(QpState.ERR);
        assertThat(f.a.sendCompletions).extracting(WorkCompletion::status).containsExactly(WcStatus.RETRY_EXC_ERR);
        assertThat(f.a.endpoint.counters().get(EndpointCounter.KEEPALIVES_OUT)).isEqualTo(8);
    }

    /**
     * The fuzzer's second finding of 2026-12-03: an ACK forged in the peer's name had moved A's
     * cumulative point past the peer's real one with a Credit of 0, so every honest answer was
     * stale [REL-018]: accepted, its Credit never taken, and A blocked for ever. Stale answers do
     * not answer a credit probe [REL-067]: the connection ends as if nothing had answered.
     */
    @Test
    void creditProbesAnsweredOnlyByStaleAcksEndTheConnection() {
        final TwoNodeFixture f = blockedWithTheAnswersCut(6107, 0);
        answerEachProbe(f, 5_000_000_000L, (p, fx) -> ack(p, fx, fx.a.qp.nextSendPsn() - 1, 64));

        assertThat(f.a.qp.state()).isEqualTo(QpState.ERR);
        assertThat(f.a.sendCompletions).extracting(WorkCompletion::status).containsExactly(WcStatus.RETRY_EXC_ERR);
        assertThat(f.a.endpoint.counters().get(EndpointCounter.KEEPALIVES_OUT)).isEqualTo(8);
        assertThat(f.a.endpoint.counters().get(EndpointCounter.ACK_FOR_UNSENT_PSN)).as("stale, not unsent").isZero();
        assertThat(f.a.endpoint.counters().get(EndpointCounter.ACKS_IN)).as("each answer accepted").isEqualTo(9);
    }
}
