// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;
import org.metaroce.core.SeededRandomSource;
import org.metaroce.core.verbs.CompletionQueue;
import org.metaroce.core.verbs.PostStatus;
import org.metaroce.core.verbs.ProtectionDomain;
import org.metaroce.core.verbs.QpAttributes;
import org.metaroce.core.verbs.QpState;
import org.metaroce.core.verbs.RecvRequest;
import org.metaroce.core.verbs.SendFlags;
import org.metaroce.core.verbs.SendRequest;
import org.metaroce.core.verbs.WcStatus;
import org.metaroce.core.verbs.WorkCompletion;
import org.metaroce.core.verbs.WrOpcode;

/** Creation, RESET and destruction of queue pairs and their protection domain (sections 4.4, 10.2). */
class QueuePairLifecycleTest {
    private static Endpoint endpoint() {
        return new Endpoint(new EndpointConfig(), new SeededRandomSource(77));
    }

    /** [QP-002] a new QP is in RESET; [MEM-001] it belongs to the PD it was created in, for good. */
    @Test
    void aNewQueuePairIsInResetAndBelongsToItsDomain() {
        final Endpoint ep = endpoint();
        final ProtectionDomain pd = ep.allocateProtectionDomain();
        final QueuePair qp = ep.createQueuePair(pd, ep.createCompletionQueue(16), ep.createCompletionQueue(16),
            QueuePairCapabilities.defaults());
        assertThat(qp.state()).isEqualTo(QpState.RESET);
        assertThat(qp.pd()).isSameAs(pd);
        qp.modify(QpState.INIT, new QpAttributes().port(1).accessFlags(0));
        assertThat(qp.pd()).as("the domain is fixed at creation").isSameAs(pd);
    }

    /** [MEM-002] a PD cannot be destroyed while a QP (or an MR) belongs to it. */
    @Test
    void aDomainCannotCloseWhileAQueuePairBelongsToIt() {
        final Endpoint ep = endpoint();
        final ProtectionDomain pd = ep.allocateProtectionDomain();
        final CompletionQueue cq = ep.createCompletionQueue(16);
        final QueuePair qp = ep.createQueuePair(pd, cq, cq, QueuePairCapabilities.defaults());
        assertThatThrownBy(pd::close).isInstanceOf(IllegalStateException.class)
            .hasMessageContaining("still has 1 queue pair(s)");
        assertThat(pd.isClosed()).isFalse();
        ep.destroyQueuePair(qp);
        pd.close();
        assertThat(pd.isClosed()).isTrue();
        assertThatThrownBy(() -> ep.createQueuePair(pd, cq, cq, QueuePairCapabilities.defaults()))
            .isInstanceOf(IllegalArgumentException.class);
    }

    /**
     * [QP-008] entering RESET discards every posted WR without a completion, cancels the timers (no
     * retransmission follows) and forgets the sequence state: RESET → INIT → RTR → RTS with new
     * initial PSNs then works as on a fresh QP.
     */
    @Test
    void resetDiscardsWorkAndTimersAndTheQueuePairStartsAgainFromScratch() {
        final TwoNodeFixture f = new TwoNodeFixture(6301).connect(1024);
        // B never hears A: A's WRITEs stay outstanding and A keeps retransmitting.
        f.wire.filter((from, to, buf, off, len, now) -> from == f.a.node);
        for (int i = 0; i < 3; i++) {
            assertThat(f.a.qp.postSend(new SendRequest(1).wrId(i).opcode(WrOpcode.RDMA_WRITE)
                .sendFlags(SendFlags.SIGNALED).addSge(f.a.address(0), 2048, f.a.mr.lkey())
                .remoteAddr(f.b.address(0)).rkey(f.b.mr.rkey()))).isEqualTo(PostStatus.OK);
        }
        assertThat(f.a.qp.postRecv(new RecvRequest(1).wrId(9).addSge(f.a.address(8192), 64, f.a.mr.lkey())))
            .isEqualTo(PostStatus.OK);
        f.wire.runFor(3_000_000);
        final long sentBeforeReset = f.a.endpoint.counters().get(EndpointCounter.PACKETS_OUT);
        assertThat(f.a.endpoint.counters().get(EndpointCounter.RETRANSMITS_TIMEOUT)).as("A was retrying").isPositive();

        f.a.qp.modify(QpState.RESET, new QpAttributes());
        f.b.qp.modify(QpState.RESET, new QpAttributes());
        f.wire.runFor(200_000_000);
        f.a.drain();
        assertThat(f.a.sendCompletions).as("no completions for discarded send WRs").isEmpty();
        assertThat(f.a.recvCompletions).as("no completions for discarded receive WRs").isEmpty();
        assertThat(f.a.endpoint.counters().get(EndpointCounter.PACKETS_OUT)).as("no packet after RESET: timers "
            + "cancelled").isEqualTo(sentBeforeReset);

        // From scratch, with other initial PSNs and the wire repaired.
        f.wire.filter((from, to, buf, off, len, now) -> false);
        f.connectWithPsns(1024, 0x1000, 0x2000);
        assertThat(f.a.qp.nextSendPsn()).isEqualTo(0x1000);
        assertThat(f.a.qp.postSend(new SendRequest(1).wrId(42).opcode(WrOpcode.RDMA_WRITE)
            .sendFlags(SendFlags.SIGNALED).addSge(f.a.address(0), 2048, f.a.mr.lkey())
            .remoteAddr(f.b.address(0)).rkey(f.b.mr.rkey()))).isEqualTo(PostStatus.OK);
        assertThat(f.runUntilCompletions(1, 0)).isTrue();
        assertThat(f.a.sendCompletions).extracting(WorkCompletion::wrId).containsExactly(42L);
        assertThat(f.a.sendCompletions).extracting(WorkCompletion::status).containsExactly(WcStatus.SUCCESS);
        assertThat(f.a.qp.nextSendPsn()).as("two packets from the new initial PSN").isEqualTo(0x1002);
    }
}
