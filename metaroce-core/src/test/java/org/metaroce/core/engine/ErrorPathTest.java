// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteBuffer;

import org.agrona.BufferUtil;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.metaroce.core.testwire.LinkProfile;
import org.metaroce.core.verbs.AccessFlags;
import org.metaroce.core.verbs.MemoryRegion;
import org.metaroce.core.verbs.PostStatus;
import org.metaroce.core.verbs.QpAttributes;
import org.metaroce.core.verbs.QpState;
import org.metaroce.core.verbs.RecvRequest;
import org.metaroce.core.verbs.SendFlags;
import org.metaroce.core.verbs.SendRequest;
import org.metaroce.core.verbs.WcStatus;
import org.metaroce.core.verbs.WorkCompletion;
import org.metaroce.core.verbs.WrOpcode;

/**
 * Every error path ends in a defined state: the right completion status at the requester, memory
 * at the target untouched, the QP in ERR and every other outstanding request flushed [MEM, REL, QP].
 */
class ErrorPathTest {
    private static final byte SENTINEL = (byte) 0x5A;

    private static void sentinel(final MemoryRegion mr) {
        mr.buffer().setMemory(0, mr.length(), SENTINEL);
    }

    private static void assertUntouched(final MemoryRegion mr) {
        for (int i = 0; i < mr.length(); i++) {
            if (mr.buffer().getByte(i) != SENTINEL) {
                throw new AssertionError("target memory modified at offset " + i);
            }
        }
    }

    private static SendRequest signaledWrite(final TwoNodeFixture f, final long wrId, final long remote,
                                             final int rkey, final int length) {
        return new SendRequest(1).wrId(wrId).opcode(WrOpcode.RDMA_WRITE).sendFlags(SendFlags.SIGNALED)
            .addSge(f.a.address(0), length, f.a.mr.lkey()).remoteAddr(remote).rkey(rkey);
    }

    private static void expectFailure(final TwoNodeFixture f, final WcStatus status) {
        assertThat(f.runUntilCompletions(2, 0)).as("two completions").isTrue();
        assertThat(f.a.sendCompletions).extracting(WorkCompletion::status)
            .containsExactly(status, WcStatus.WR_FLUSH_ERR);
        assertThat(f.a.qp.state()).isEqualTo(QpState.ERR);
        assertThat(f.b.qp.state()).as("responder QP after a fatal NACK").isEqualTo(QpState.ERR);
    }

    @Test
    void invalidRkeyIsRemoteAccessErrorAndTouchesNothing() {
        final TwoNodeFixture f = new TwoNodeFixture(2001).connect(1024);
        sentinel(f.b.mr);
        f.a.qp.postSend(signaledWrite(f, 1, f.b.address(0), f.b.mr.rkey() ^ 0x1, 4096));
        f.a.qp.postSend(signaledWrite(f, 2, f.b.address(0), f.b.mr.rkey(), 64));
        expectFailure(f, WcStatus.REM_ACCESS_ERR);
        assertUntouched(f.b.mr);
        assertThat(f.b.endpoint.counters().get(EndpointCounter.NACKS_OUT_REMOTE_ACCESS)).isEqualTo(1);
    }

    @ParameterizedTest(name = "out of bounds by {0} bytes at the front")
    @ValueSource(ints = {1, 4096})
    void writeBeforeTheRegionIsRejected(final int before) {
        final TwoNodeFixture f = new TwoNodeFixture(2002L + before).connect(1024);
        sentinel(f.b.mr);
        f.a.qp.postSend(signaledWrite(f, 1, f.b.address(-before), f.b.mr.rkey(), 2048));
        f.a.qp.postSend(signaledWrite(f, 2, f.b.address(0), f.b.mr.rkey(), 64));
        expectFailure(f, WcStatus.REM_ACCESS_ERR);
        assertUntouched(f.b.mr);
    }

    @ParameterizedTest(name = "out of bounds by {0} bytes at the rear")
    @ValueSource(ints = {1, 3000})
    void writePastTheRegionIsRejectedEvenForItsInBoundsPackets(final int beyond) {
        final TwoNodeFixture f = new TwoNodeFixture(2004L + beyond).connect(1024);
        sentinel(f.b.mr);
        // The first packets of this 5000-byte message would fit; the message as a whole does not.
        final long start = f.b.mr.address() + f.b.mr.length() - 5000 + beyond;
        f.a.qp.postSend(signaledWrite(f, 1, start, f.b.mr.rkey(), 5000));
        f.a.qp.postSend(signaledWrite(f, 2, f.b.address(0), f.b.mr.rkey(), 64));
        expectFailure(f, WcStatus.REM_ACCESS_ERR);
        assertUntouched(f.b.mr);
    }

    @Test
    void missingRemotePermissionIsRejected() {
        final TwoNodeFixture f = new TwoNodeFixture(2006).connect(1024);
        final ByteBuffer memory = BufferUtil.allocateDirectAligned(8192, 64);
        final MemoryRegion readOnly = f.b.pd.registerMemory(memory, AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_READ);
        sentinel(readOnly);
        f.a.qp.postSend(signaledWrite(f, 1, readOnly.address(), readOnly.rkey(), 100));
        f.a.qp.postSend(signaledWrite(f, 2, f.b.address(0), f.b.mr.rkey(), 64));
        expectFailure(f, WcStatus.REM_ACCESS_ERR);
        assertUntouched(readOnly);
    }

    @Test
    void deregisteredRegionIsRejected() {
        final TwoNodeFixture f = new TwoNodeFixture(2007).connect(1024);
        final ByteBuffer memory = BufferUtil.allocateDirectAligned(8192, 64);
        final MemoryRegion gone = f.b.pd.registerMemory(memory, AccessFlags.ALL);
        final long address = gone.address();
        final int rkey = gone.rkey();
        f.b.pd.deregister(gone);
        f.a.qp.postSend(new SendRequest(1).wrId(1).opcode(WrOpcode.RDMA_READ).sendFlags(SendFlags.SIGNALED)
            .addSge(f.a.address(0), 100, f.a.mr.lkey()).remoteAddr(address).rkey(rkey));
        f.a.qp.postSend(signaledWrite(f, 2, f.b.address(0), f.b.mr.rkey(), 64));
        expectFailure(f, WcStatus.REM_ACCESS_ERR);
    }

    @Test
    void receiveBufferDeregisteredAfterThePostIsAProtectionError() {
        // OPS-015, MEM-014 (found by conformance case ops.recv-deregistered: it completed LOC_LEN_ERR).
        final TwoNodeFixture f = new TwoNodeFixture(2017).connect(1024);
        final MemoryRegion buf = f.b.pd.registerMemory(BufferUtil.allocateDirectAligned(4096, 64),
            AccessFlags.LOCAL_WRITE);
        sentinel(buf);
        f.b.qp.postRecv(new RecvRequest(1).wrId(50).addSge(buf.address(), 4096, buf.lkey()));
        f.b.pd.deregister(buf);
        f.a.qp.postSend(new SendRequest(1).wrId(1).opcode(WrOpcode.SEND).sendFlags(SendFlags.SIGNALED)
            .addSge(f.a.address(0), 100, f.a.mr.lkey()));
        assertThat(f.runUntilCompletions(1, 1)).isTrue();
        assertThat(f.a.sendCompletions).extracting(WorkCompletion::status).containsExactly(WcStatus.REM_OP_ERR);
        assertThat(f.b.recvCompletions).extracting(WorkCompletion::status).containsExactly(WcStatus.LOC_PROT_ERR);
        assertThat(f.b.qp.state()).isEqualTo(QpState.ERR);
        assertUntouched(buf);
    }

    @Test
    void readIntoADestinationDeregisteredAfterThePostIsAProtectionError() {
        // REL-050, MEM-014 (found by conformance case rel.local-protection: the response was placed
        // into the deregistered region and the READ completed SUCCESS).
        final TwoNodeFixture f = new TwoNodeFixture(2018).connect(1024);
        final MemoryRegion dst = f.a.pd.registerMemory(BufferUtil.allocateDirectAligned(4096, 64),
            AccessFlags.LOCAL_WRITE);
        sentinel(dst);
        f.a.qp.postSend(new SendRequest(1).wrId(1).opcode(WrOpcode.RDMA_READ).sendFlags(SendFlags.SIGNALED)
            .addSge(dst.address(), 3000, dst.lkey()).remoteAddr(f.b.address(0)).rkey(f.b.mr.rkey()));
        f.a.qp.postSend(signaledWrite(f, 2, f.b.address(0), f.b.mr.rkey(), 64));
        f.a.pd.deregister(dst);
        assertThat(f.runUntilCompletions(2, 0)).isTrue();
        assertThat(f.a.sendCompletions).extracting(WorkCompletion::status)
            .containsExactly(WcStatus.LOC_PROT_ERR, WcStatus.WR_FLUSH_ERR);
        assertThat(f.a.qp.state()).isEqualTo(QpState.ERR);
        assertUntouched(dst);
    }

    @Test
    void readLargerThanTheCreditShareIsRequestedInSegments() {
        // OPS-019, REL-019, CC-018 (found by conformance case ops.read-segments): with a receiver-credit
        // share of one PSN, a 10-packet READ waited for a credit of 10 that never came.
        final EndpointConfig config = new EndpointConfig().linkRateBitsPerSecond(1_000_000_000L);
        final TwoNodeFixture f = new TwoNodeFixture(2019, LinkProfile.perfect(), config,
            QueuePairCapabilities.defaults(), 4096)
            .connect(1024, org.metaroce.core.wire.ConnectHeader.CAP_RECEIVER_CREDIT,
                org.metaroce.core.congestion.CongestionControlAlgorithm.FIXED);
        for (int i = 0; i < 10 * 1024; i++) {
            f.b.mr.buffer().putByte(i, (byte) (i * 7));
        }
        f.a.qp.postSend(signaledWrite(f, 1, f.b.address(20_000), f.b.mr.rkey(), 64));
        // The WRITE's ACK brings the share (1 PSN at 1 Gb/s x 10 us) before the READ is posted.
        assertThat(f.runUntilCompletions(1, 0)).isTrue();
        f.a.qp.postSend(new SendRequest(1).wrId(2).opcode(WrOpcode.RDMA_READ).sendFlags(SendFlags.SIGNALED)
            .addSge(f.a.address(30_000), 10 * 1024, f.a.mr.lkey()).remoteAddr(f.b.address(0))
            .rkey(f.b.mr.rkey()));
        assertThat(f.runUntilCompletions(2, 0)).as("A " + f.a.endpoint.counters()).isTrue();
        assertThat(f.a.sendCompletions).extracting(WorkCompletion::status)
            .containsExactly(WcStatus.SUCCESS, WcStatus.SUCCESS);
        for (int i = 0; i < 10 * 1024; i++) {
            assertThat(f.a.mr.buffer().getByte(30_000 + i)).isEqualTo((byte) (i * 7));
        }
    }

    @Test
    void misalignedAtomicIsRefusedAtPostTime() {
        final TwoNodeFixture f = new TwoNodeFixture(2008).connect(1024);
        final SendRequest atomic = new SendRequest(1).wrId(1).opcode(WrOpcode.ATOMIC_FETCH_ADD)
            .sendFlags(SendFlags.SIGNALED).addSge(f.a.address(0), 8, f.a.mr.lkey()).remoteAddr(f.b.address(4))
            .rkey(f.b.mr.rkey()).compareAdd(1);
        assertThat(f.a.qp.postSend(atomic)).isEqualTo(PostStatus.INVALID_ARGUMENT);
        assertThat(f.a.qp.outstandingSends()).isZero();
        assertThat(f.a.qp.state()).isEqualTo(QpState.RTS);
    }

    @Test
    void receiveTooSmallFailsBothSides() {
        final TwoNodeFixture f = new TwoNodeFixture(2009).connect(1024);
        f.b.qp.postRecv(new RecvRequest(1).wrId(50).addSge(f.b.address(0), 100, f.b.mr.lkey()));
        f.b.qp.postRecv(new RecvRequest(1).wrId(51).addSge(f.b.address(200), 100, f.b.mr.lkey()));
        f.a.qp.postSend(new SendRequest(1).wrId(1).opcode(WrOpcode.SEND).sendFlags(SendFlags.SIGNALED)
            .addSge(f.a.address(0), 3000, f.a.mr.lkey()));
        f.a.qp.postSend(new SendRequest(1).wrId(2).opcode(WrOpcode.SEND).sendFlags(SendFlags.SIGNALED)
            .addSge(f.a.address(0), 10, f.a.mr.lkey()));
        assertThat(f.runUntilCompletions(2, 2)).isTrue();
        assertThat(f.a.sendCompletions).extracting(WorkCompletion::status)
            .containsExactly(WcStatus.REM_OP_ERR, WcStatus.WR_FLUSH_ERR);
        assertThat(f.b.recvCompletions).extracting(WorkCompletion::status)
            .containsExactly(WcStatus.LOC_LEN_ERR, WcStatus.WR_FLUSH_ERR);
    }

    @Test
    void illegalStateTransitionsAreRejectedWithAPreciseMessage() {
        final TwoNodeFixture f = new TwoNodeFixture(2010);
        assertThatThrownBy(() -> f.a.qp.modify(QpState.RTS, new QpAttributes()))
            .isInstanceOf(IllegalStateException.class).hasMessageContaining("RESET -> RTS");
        f.a.qp.modify(QpState.INIT, new QpAttributes().port(1).accessFlags(AccessFlags.ALL));
        assertThatThrownBy(() -> f.a.qp.modify(QpState.RTR, new QpAttributes().pathMtu(1024)))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("DEST_QPN");
        assertThat(f.a.qp.state()).isEqualTo(QpState.INIT);
    }

    @Test
    void postingInTheWrongStateIsRefused() {
        final TwoNodeFixture f = new TwoNodeFixture(2011);
        final SendRequest wr = signaledWrite(f, 1, f.b.address(0), f.b.mr.rkey(), 8);
        assertThat(f.a.qp.postSend(wr)).isEqualTo(PostStatus.INVALID_QP_STATE);
        assertThat(f.a.qp.postRecv(new RecvRequest(1).wrId(1).addSge(f.a.address(0), 8, f.a.mr.lkey())))
            .isEqualTo(PostStatus.INVALID_QP_STATE);
    }

    @Test
    void fullSendQueueReturnsQueueFull() {
        final TwoNodeFixture f = new TwoNodeFixture(2012, LinkProfile.perfect(), new EndpointConfig(),
            new QueuePairCapabilities(4, 4, 1, 1, 4), 64).connect(1024);
        for (int i = 0; i < 4; i++) {
            assertThat(f.a.qp.postSend(signaledWrite(f, i, f.b.address(0), f.b.mr.rkey(), 8))).isEqualTo(PostStatus.OK);
        }
        assertThat(f.a.qp.postSend(signaledWrite(f, 4, f.b.address(0), f.b.mr.rkey(), 8)))
            .isEqualTo(PostStatus.QUEUE_FULL);
        assertThat(f.runUntilQuiet()).isTrue();
        assertThat(f.a.qp.postSend(signaledWrite(f, 5, f.b.address(0), f.b.mr.rkey(), 8))).isEqualTo(PostStatus.OK);
    }

    @Test
    void badLkeyIsRefusedAtPostTime() {
        final TwoNodeFixture f = new TwoNodeFixture(2013).connect(1024);
        final SendRequest wr = new SendRequest(1).wrId(1).opcode(WrOpcode.RDMA_WRITE)
            .addSge(f.a.address(0), 8, f.a.mr.lkey() + 1).remoteAddr(f.b.address(0)).rkey(f.b.mr.rkey());
        assertThat(f.a.qp.postSend(wr)).isEqualTo(PostStatus.INVALID_LKEY);
    }

    @Test
    void completionQueueOverflowIsAnErrorNotASilentLoss() {
        final TwoNodeFixture f = new TwoNodeFixture(2014, LinkProfile.perfect(), new EndpointConfig(),
            QueuePairCapabilities.defaults(), 2).connect(1024);
        for (int i = 0; i < 5; i++) {
            f.a.qp.postSend(signaledWrite(f, i, f.b.address(0), f.b.mr.rkey(), 8));
        }
        f.wire.runFor(5_000_000);
        assertThat(f.a.sendCq.isInError()).isTrue();
        assertThat(f.a.sendCq.overflowCount()).isEqualTo(3);
        assertThat(f.a.qp.state()).isEqualTo(QpState.ERR);
        assertThat(f.a.endpoint.counters().get(EndpointCounter.CQ_OVERFLOWS)).isPositive();
    }

    @Test
    void packetsFromAStrangerAreDropped() {
        final TwoNodeFixture f = new TwoNodeFixture(2015).connect(1024);
        // A third endpoint forges a WRITE to b's QP: wrong peer address, so it is dropped.
        final Endpoint stranger = new Endpoint(new EndpointConfig(), new org.metaroce.core.SeededRandomSource(9));
        final int strangerNode = f.wire.attach(stranger);
        assertThat(strangerNode).isEqualTo(2);
        sentinel(f.b.mr);
        final var pd = stranger.allocateProtectionDomain();
        final var cq = stranger.createCompletionQueue(16);
        final QueuePair forged = stranger.createQueuePair(pd, cq, cq, QueuePairCapabilities.defaults());
        final MemoryRegion mr = pd.registerMemory(BufferUtil.allocateDirectAligned(4096, 64), AccessFlags.ALL);
        forged.modify(QpState.INIT, new QpAttributes().port(1).accessFlags(AccessFlags.ALL));
        forged.modify(QpState.RTR, new QpAttributes().pathMtu(1024).destQpn(f.b.qp.qpn())
            .rqPsn(f.b.qp.nextSendPsn()).maxDestRdAtomic(1).minRnrTimerNs(10_000).paths(new int[] {1})
            .remotePeer(f.b.node));
        forged.modify(QpState.RTS, new QpAttributes().sqPsn(f.b.qp.expectedReceivePsn()).timeoutNs(100_000)
            .retryCount(1).rnrRetry(1).maxRdAtomic(1));
        forged.postSend(new SendRequest(1).wrId(1).opcode(WrOpcode.RDMA_WRITE).addSge(mr.address(), 64, mr.lkey())
            .remoteAddr(f.b.address(0)).rkey(f.b.mr.rkey()));
        f.wire.runFor(10_000_000);
        assertUntouched(f.b.mr);
        assertThat(f.b.endpoint.counters().get(EndpointCounter.PEER_MISMATCH)).isPositive();
        assertThat(f.b.qp.state()).isEqualTo(QpState.RTS);
    }

    /** [QP-005], [QP-006] an attribute the move does not take fails the modify and changes nothing. */
    @Test
    void modifyWithAnAttributeTheMoveDoesNotTakeIsRejected() {
        final TwoNodeFixture f = new TwoNodeFixture(2016).connect(1024);
        assertThatThrownBy(() -> f.a.qp.modify(QpState.RTS, new QpAttributes().sqPsn(5)))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("does not take attributes: SQ_PSN");
        assertThat(f.a.qp.state()).isEqualTo(QpState.RTS);
    }

    /** Table 4.4 row 5: RETRY_CNT and TIMEOUT can be changed on a running QP, and take effect. */
    @Test
    void retryCountAndTimeoutCanBeChangedInRts() {
        final TwoNodeFixture f = new TwoNodeFixture(2017).connect(1024);
        // RETRY_TIMEOUT is updatable in RTS too: 0 lets RETRY_CNT alone decide [REL-060].
        f.a.qp.modify(QpState.RTS, new QpAttributes().retryCount(1).timeoutNs(300_000).retryTimeoutNs(0));
        f.wire.filter(org.metaroce.core.testwire.PacketFilter.dropMatching(
            org.metaroce.core.testwire.PacketMatcher.from(f.a.node)));
        f.a.qp.postSend(signaledWrite(f, 1, f.b.address(0), f.b.mr.rkey(), 64));
        assertThat(f.runUntilCompletions(1, 0)).isTrue();
        assertThat(f.a.sendCompletions.get(0).status()).isEqualTo(WcStatus.RETRY_EXC_ERR);
        assertThat(f.a.endpoint.counters().get(EndpointCounter.TIMEOUTS)).as("retry count 1: two expiries").isEqualTo(2);
    }

    /** [CM-035] a destroyed QPN is not reused for QPN_QUARANTINE, then becomes available again. */
    @Test
    void destroyedQpnsStayQuarantinedForTheConfiguredTime() {
        final Endpoint ep = new Endpoint(new EndpointConfig().qpnQuarantineNs(1_000_000),
            new org.metaroce.core.SeededRandomSource(77));
        final var pd = ep.allocateProtectionDomain();
        final var cq = ep.createCompletionQueue(16);
        ep.poll(5_000_000, new org.metaroce.core.testwire.PacketFilterFreeSink());
        final QueuePair qp = ep.createQueuePair(pd, cq, cq, QueuePairCapabilities.defaults());
        final int qpn = qp.qpn();
        ep.destroyQueuePair(qp);
        assertThat(ep.quarantinedQpnCount()).isEqualTo(1);
        ep.poll(5_900_000, new org.metaroce.core.testwire.PacketFilterFreeSink());
        assertThat(ep.createQueuePair(pd, cq, cq, QueuePairCapabilities.defaults()).qpn()).isNotEqualTo(qpn);
        assertThat(ep.quarantinedQpnCount()).as("still inside the quarantine").isEqualTo(1);
        ep.poll(6_000_000, new org.metaroce.core.testwire.PacketFilterFreeSink());
        ep.createQueuePair(pd, cq, cq, QueuePairCapabilities.defaults());
        assertThat(ep.quarantinedQpnCount()).as("released after 1 ms").isZero();
    }

    /**
     * [QP-022, CM-039]: destroying frees what the QP preallocated but leaves the object readable;
     * work posted to it afterwards completes at once with WR_FLUSH_ERR, as in ERR, and modify fails.
     */
    @Test
    void destroyedQueuePairFlushesWhatIsPostedToItAndStaysReadable() {
        final TwoNodeFixture f = new TwoNodeFixture(2018).connect(1024);
        final QueuePair qp = f.a.qp;
        qp.modify(QpState.ERR, new QpAttributes());
        final int sendPsn = qp.nextSendPsn();
        final int receivePsn = qp.expectedReceivePsn();
        f.a.endpoint.destroyQueuePair(qp);
        assertThat(qp.isDestroyed()).isTrue();
        assertThat(qp.state()).isEqualTo(QpState.ERR);
        assertThat(qp.nextSendPsn()).isEqualTo(sendPsn);
        assertThat(qp.expectedReceivePsn()).isEqualTo(receivePsn);
        assertThat(qp.hasAcknowledgementsToSend()).isFalse();
        assertThat(qp.postSend(signaledWrite(f, 5, f.b.address(0), f.b.mr.rkey(), 64))).isEqualTo(PostStatus.OK);
        assertThat(qp.postRecv(new org.metaroce.core.verbs.RecvRequest(1).wrId(6).addSge(f.a.address(4096), 64,
            f.a.mr.lkey()))).isEqualTo(PostStatus.OK);
        assertThat(qp.outstandingSends()).isZero();
        assertThat(qp.postedReceives()).isZero();
        f.a.drain();
        assertThat(f.a.sendCompletions).singleElement().satisfies(wc -> {
            assertThat(wc.wrId()).isEqualTo(5);
            assertThat(wc.status()).isEqualTo(WcStatus.WR_FLUSH_ERR);
            assertThat(wc.byteLen()).isEqualTo(64);
        });
        assertThat(f.a.recvCompletions).singleElement().satisfies(wc -> {
            assertThat(wc.wrId()).isEqualTo(6);
            assertThat(wc.status()).isEqualTo(WcStatus.WR_FLUSH_ERR);
        });
        assertThatThrownBy(() -> qp.modify(QpState.RESET, new QpAttributes()))
            .isInstanceOf(IllegalStateException.class).hasMessageContaining("destroyed");
    }

    /**
     * A request reaching a QP in ERR is dropped unanswered and counted INVALID_QP_STATE, like every
     * other packet the state table drops [QP-011] (it used to vanish uncounted, issue 14).
     */
    @Test
    void aRequestToAQpInErrorIsDroppedAndCountedInvalidQpState() {
        final TwoNodeFixture f = TwoNodeFixture.countingRetriesOnly(9311).connect(1024);
        f.b.qp.modify(QpState.ERR, new QpAttributes());
        final long outBefore = f.b.endpoint.counters().get(EndpointCounter.PACKETS_OUT);
        f.a.qp.postSend(new SendRequest(1).wrId(1).opcode(WrOpcode.RDMA_WRITE).sendFlags(SendFlags.SIGNALED)
            .addSge(f.a.address(0), 64, f.a.mr.lkey()).remoteAddr(f.b.address(0)).rkey(f.b.mr.rkey()));
        f.wire.runUntil(() -> f.b.endpoint.counters().get(EndpointCounter.INVALID_QP_STATE) > 0, 1_000_000_000L);
        final String story = "B " + f.b.endpoint.counters();
        assertThat(f.b.endpoint.counters().get(EndpointCounter.INVALID_QP_STATE)).as(story).isPositive();
        assertThat(f.b.endpoint.counters().get(EndpointCounter.PACKETS_OUT)).as(story).isEqualTo(outBefore);
    }
}
