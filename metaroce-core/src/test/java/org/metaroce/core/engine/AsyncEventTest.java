// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;

import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.metaroce.core.testwire.LinkProfile;
import org.metaroce.core.verbs.AccessFlags;
import org.metaroce.core.verbs.QpAttributes;
import org.metaroce.core.verbs.QpState;
import org.metaroce.core.verbs.SendFlags;
import org.metaroce.core.verbs.SendRequest;
import org.metaroce.core.verbs.WrOpcode;
import org.metaroce.core.wire.AckHeader;
import org.metaroce.core.wire.BaseHeader;
import org.metaroce.core.wire.Flags;
import org.metaroce.core.wire.Opcode;

/** Asynchronous events [QP-010], [QP-013], [QP-014], [QP-021] and KEEPALIVE answers [CM-028]. */
class AsyncEventTest {
    private static List<AsyncEventType> drain(final Endpoint endpoint) {
        final List<AsyncEventType> out = new ArrayList<>();
        final AsyncEvents events = endpoint.asyncEvents();
        while (!events.isEmpty()) {
            out.add(events.peekType());
            events.remove();
        }
        return out;
    }

    @Test
    void accessViolationRaisesAccessErrorAtTheResponderAndFatalAtTheRequester() {
        final TwoNodeFixture f = new TwoNodeFixture(5001).connect(1024);
        f.a.qp.postSend(new SendRequest(1).wrId(1).opcode(WrOpcode.RDMA_WRITE).sendFlags(SendFlags.SIGNALED)
            .addSge(f.a.address(0), 64, f.a.mr.lkey()).remoteAddr(f.b.address(0)).rkey(f.b.mr.rkey() + 1));
        assertThat(f.runUntilCompletions(1, 0)).isTrue();
        // Each side first reports that the endpoint default DEFAULT runs as FIXED without ECN [CC-034].
        assertThat(drain(f.b.endpoint)).containsExactly(AsyncEventType.CC_FALLBACK, AsyncEventType.QP_ACCESS_ERR);
        assertThat(drain(f.a.endpoint)).containsExactly(AsyncEventType.CC_FALLBACK, AsyncEventType.QP_FATAL);
    }

    @Test
    void completionQueueOverflowFailsEveryQpOnThatQueue() {
        final TwoNodeFixture f = new TwoNodeFixture(5002, LinkProfile.perfect(), new EndpointConfig(),
            QueuePairCapabilities.defaults(), 1).connect(1024);
        for (int i = 0; i < 3; i++) {
            f.a.qp.postSend(new SendRequest(1).wrId(i).opcode(WrOpcode.RDMA_WRITE).sendFlags(SendFlags.SIGNALED)
                .addSge(f.a.address(0), 8, f.a.mr.lkey()).remoteAddr(f.b.address(0)).rkey(f.b.mr.rkey()));
        }
        f.wire.runFor(2_000_000);
        assertThat(drain(f.a.endpoint)).containsExactly(AsyncEventType.CC_FALLBACK, AsyncEventType.CQ_ERR,
            AsyncEventType.QP_FATAL);
        assertThat(f.a.qp.state()).isEqualTo(QpState.ERR);
    }

    @Test
    void firstRequestInRtrRaisesCommEstOnce() {
        final TwoNodeFixture f = new TwoNodeFixture(5003);
        // b stops in RTR; a goes to RTS.
        f.b.qp.modify(QpState.INIT, new QpAttributes().port(1).accessFlags(AccessFlags.ALL));
        f.b.qp.modify(QpState.RTR, new QpAttributes().pathMtu(1024).destQpn(f.a.qp.qpn()).rqPsn(7)
            .maxDestRdAtomic(4).minRnrTimerNs(20_000).paths(TwoNodeFixture.PATHS).remotePeer(f.a.node));
        f.a.qp.modify(QpState.INIT, new QpAttributes().port(1).accessFlags(AccessFlags.ALL));
        f.a.qp.modify(QpState.RTR, new QpAttributes().pathMtu(1024).destQpn(f.b.qp.qpn()).rqPsn(9)
            .maxDestRdAtomic(4).minRnrTimerNs(20_000).paths(TwoNodeFixture.PATHS).remotePeer(f.b.node));
        f.a.qp.modify(QpState.RTS, new QpAttributes().sqPsn(7).timeoutNs(1_000_000).retryCount(7).rnrRetry(7)
            .maxRdAtomic(4));
        for (int i = 0; i < 3; i++) {
            f.a.qp.postSend(new SendRequest(1).wrId(i).opcode(WrOpcode.RDMA_WRITE).sendFlags(SendFlags.SIGNALED)
                .addSge(f.a.address(0), 8, f.a.mr.lkey()).remoteAddr(f.b.address(0)).rkey(f.b.mr.rkey()));
        }
        assertThat(f.runUntilQuiet()).isTrue();
        assertThat(drain(f.b.endpoint)).containsExactly(AsyncEventType.COMM_EST);
    }

    @Test
    void sqdRaisesSqDrainedWhenStartedWorkIsDone() {
        final TwoNodeFixture f = new TwoNodeFixture(5004).connect(1024);
        f.a.qp.postSend(new SendRequest(1).wrId(1).opcode(WrOpcode.RDMA_WRITE).sendFlags(SendFlags.SIGNALED)
            .addSge(f.a.address(0), 100_000, f.a.mr.lkey()).remoteAddr(f.b.address(0)).rkey(f.b.mr.rkey()));
        f.wire.runFor(1_000);
        f.a.qp.modify(QpState.SQD, new QpAttributes());
        f.a.qp.postSend(new SendRequest(1).wrId(2).opcode(WrOpcode.RDMA_WRITE).sendFlags(SendFlags.SIGNALED)
            .addSge(f.a.address(0), 64, f.a.mr.lkey()).remoteAddr(f.b.address(0)).rkey(f.b.mr.rkey()));
        f.wire.runFor(5_000_000);
        f.a.drain();
        assertThat(f.a.sendCompletions).hasSize(1);
        assertThat(drain(f.a.endpoint)).containsExactly(AsyncEventType.CC_FALLBACK, AsyncEventType.SQ_DRAINED);
        f.a.qp.modify(QpState.RTS, new QpAttributes());
        assertThat(f.runUntilQuiet()).isTrue();
        assertThat(f.a.sendCompletions).hasSize(2);
    }

    @Test
    void keepaliveIsAnsweredWithAnAck() {
        final TwoNodeFixture f = new TwoNodeFixture(5005).connect(1024);
        final UnsafeBuffer packet = new UnsafeBuffer(new byte[64]);
        final PacketWriter w = new PacketWriter();
        w.header(packet, 0, Opcode.KEEPALIVE, Flags.ACK_REQ, f.b.qp.qpn(), 1234, 0, 0, 777, f.a.qp.qpn());
        final int length = w.seal(packet, 0, Opcode.KEEPALIVE, 0);
        f.b.endpoint.onDatagram(1_000, packet, 0, length, f.a.node, DatagramEndpoint.ECN_NOT_ECT);
        final CapturingSink sink = new CapturingSink();
        f.b.endpoint.poll(2_000, sink);
        assertThat(sink.opcodes).containsExactly(Opcode.ACK.value());
        assertThat(BaseHeader.psn(sink.buffer, 0)).isEqualTo(1234);
        assertThat(AckHeader.echoedTimestamp(sink.buffer, Opcode.ACK.ackOffset())).isEqualTo(777);
        assertThat(AckHeader.cumulativePsn(sink.buffer, Opcode.ACK.ackOffset())).isEqualTo(f.b.qp.expectedReceivePsn());
    }

    @Test
    void keepaliveWithoutAckReqIsNotAnswered() {
        // Found by the compliance suite (cm.keepalive-no-ackreq) [CM-028].
        final TwoNodeFixture f = new TwoNodeFixture(5006).connect(1024);
        final UnsafeBuffer packet = new UnsafeBuffer(new byte[64]);
        final PacketWriter w = new PacketWriter();
        w.header(packet, 0, Opcode.KEEPALIVE, 0, f.b.qp.qpn(), 1234, 0, 0, 777, f.a.qp.qpn());
        final int length = w.seal(packet, 0, Opcode.KEEPALIVE, 0);
        f.b.endpoint.onDatagram(1_000, packet, 0, length, f.a.node, DatagramEndpoint.ECN_NOT_ECT);
        final CapturingSink sink = new CapturingSink();
        f.b.endpoint.poll(2_000, sink);
        assertThat(sink.opcodes).isEmpty();
    }

    /** Keeps the first packet at offset 0 and records every opcode. */
    private static final class CapturingSink implements TransmitSink {
        final UnsafeBuffer buffer = new UnsafeBuffer(new byte[1 << 16]);
        final List<Integer> opcodes = new ArrayList<>();
        private int next;

        @Override
        public MutableDirectBuffer buffer() {
            return buffer;
        }

        @Override
        public int claim(final int maxLength) {
            final int offset = next;
            next += maxLength;
            return offset;
        }

        @Override
        public void commit(final int offset, final int length, final int peerId, final int entropy) {
            opcodes.add(BaseHeader.opcode(buffer, offset));
        }
    }
}
