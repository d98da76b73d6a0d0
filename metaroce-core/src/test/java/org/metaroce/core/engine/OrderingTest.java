// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.engine;

import static org.assertj.core.api.Assertions.assertThat;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.metaroce.core.testwire.PacketFilter;
import org.metaroce.core.testwire.PacketMatcher;
import org.metaroce.core.verbs.AccessFlags;
import org.metaroce.core.verbs.QpAttributes;
import org.metaroce.core.verbs.QpState;
import org.metaroce.core.verbs.RecvRequest;
import org.metaroce.core.verbs.SendFlags;
import org.metaroce.core.verbs.SendRequest;
import org.metaroce.core.verbs.WcStatus;
import org.metaroce.core.verbs.WorkCompletion;
import org.metaroce.core.verbs.WrOpcode;
import org.metaroce.core.wire.Opcode;

/**
 * The ordering guarantees of specification 5.9 hold even though packets are placed out of order:
 * the first packet of an earlier WRITE is dropped, so the later operation overtakes it on the wire.
 */
class OrderingTest {
    private static void fill(final UnsafeBuffer b, final int offset, final int length, final int seed) {
        for (int i = 0; i < length; i++) {
            b.putByte(offset + i, (byte) (i * 7 + seed));
        }
    }

    private static void assertSameBytes(final UnsafeBuffer x, final int xo, final UnsafeBuffer y, final int yo,
                                        final int length) {
        for (int i = 0; i < length; i++) {
            assertThat(y.getByte(yo + i)).as("byte %d", i).isEqualTo(x.getByte(xo + i));
        }
    }

    private static TwoNodeFixture withFirstWritePacketDropped(final long seed) {
        final TwoNodeFixture f = new TwoNodeFixture(seed).connect(1024);
        f.wire.filter(PacketFilter.dropNth(1, PacketMatcher.opcode(Opcode.WRITE.value())));
        return f;
    }

    private static void postWrite(final TwoNodeFixture f, final int length) {
        f.a.qp.postSend(new SendRequest(1).wrId(1).opcode(WrOpcode.RDMA_WRITE)
            .addSge(f.a.address(0), length, f.a.mr.lkey()).remoteAddr(f.b.address(100_000)).rkey(f.b.mr.rkey()));
    }

    /** [OPS-029] a READ executes only after every earlier PSN arrived, so it sees the WRITE. */
    @Test
    void readAfterWriteSeesTheWrittenData() {
        final TwoNodeFixture f = withFirstWritePacketDropped(3001);
        fill(f.a.mr.buffer(), 0, 8192, 1);
        postWrite(f, 8192);
        f.a.qp.postSend(new SendRequest(1).wrId(2).opcode(WrOpcode.RDMA_READ).sendFlags(SendFlags.SIGNALED)
            .addSge(f.a.address(50_000), 8192, f.a.mr.lkey()).remoteAddr(f.b.address(100_000)).rkey(f.b.mr.rkey()));
        assertThat(f.runUntilQuiet()).isTrue();
        assertThat(f.a.sendCompletions).extracting(WorkCompletion::status).containsExactly(WcStatus.SUCCESS);
        assertThat(f.a.endpoint.counters().retransmits()).isPositive();
        assertSameBytes(f.a.mr.buffer(), 0, f.a.mr.buffer(), 50_000, 8192);
    }

    /** [OPS-029] an atomic executes after the earlier WRITE to the same word. */
    @Test
    void atomicAfterWriteSeesTheWrittenValue() {
        final TwoNodeFixture f = withFirstWritePacketDropped(3002);
        f.a.mr.buffer().putLong(0, 100);
        f.a.qp.postSend(new SendRequest(1).wrId(1).opcode(WrOpcode.RDMA_WRITE).addSge(f.a.address(0), 8, f.a.mr.lkey())
            .remoteAddr(f.b.address(64)).rkey(f.b.mr.rkey()));
        f.a.qp.postSend(new SendRequest(1).wrId(2).opcode(WrOpcode.ATOMIC_FETCH_ADD).sendFlags(SendFlags.SIGNALED)
            .addSge(f.a.address(8), 8, f.a.mr.lkey()).remoteAddr(f.b.address(64)).rkey(f.b.mr.rkey()).compareAdd(1));
        assertThat(f.runUntilQuiet()).isTrue();
        assertThat(f.a.mr.buffer().getLong(8)).as("original value seen by the atomic").isEqualTo(100);
        assertThat(f.b.mr.buffer().getLong(64)).isEqualTo(101);
    }

    /** [OPS-030] when a receive completion is seen, every earlier WRITE's data is in memory. */
    @Test
    void receiveCompletionImpliesEarlierWriteIsVisible() {
        final TwoNodeFixture f = withFirstWritePacketDropped(3003);
        fill(f.a.mr.buffer(), 0, 8192, 5);
        f.b.qp.postRecv(new RecvRequest(1).wrId(7).addSge(f.b.address(0), 64, f.b.mr.lkey()));
        postWrite(f, 8192);
        f.a.qp.postSend(new SendRequest(1).wrId(2).opcode(WrOpcode.SEND).addSge(f.a.address(0), 16, f.a.mr.lkey()));
        assertThat(f.wire.runUntil(() -> {
            f.b.drain();
            return !f.b.recvCompletions.isEmpty();
        }, 1_000_000_000L)).isTrue();
        // Checked at the very instant the completion became visible.
        assertSameBytes(f.a.mr.buffer(), 0, f.b.mr.buffer(), 100_000, 8192);
        assertThat(f.b.recvCompletions.get(0).status()).isEqualTo(WcStatus.SUCCESS);
    }

    /** [MEM-008] an operation the QP does not enable is an invalid request, whatever the region allows. */
    @Test
    void operationNotEnabledOnTheQpIsAnInvalidRequest() {
        final TwoNodeFixture f = new TwoNodeFixture(3004);
        f.connect(1024);
        // Re-create b's QP permissions: move it through RESET with REMOTE_READ only.
        f.b.qp.modify(QpState.RESET, new QpAttributes());
        f.b.qp.modify(QpState.INIT, new QpAttributes().port(1).accessFlags(AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_READ));
        f.b.qp.modify(QpState.RTR, new QpAttributes().pathMtu(1024).destQpn(f.a.qp.qpn())
            .rqPsn(f.a.qp.nextSendPsn()).maxDestRdAtomic(16).minRnrTimerNs(20_000)
            .paths(TwoNodeFixture.PATHS).remotePeer(f.a.node));
        f.b.mr.buffer().setMemory(0, 4096, (byte) 0x11);
        f.a.qp.postSend(new SendRequest(1).wrId(1).opcode(WrOpcode.RDMA_WRITE).sendFlags(SendFlags.SIGNALED)
            .addSge(f.a.address(0), 64, f.a.mr.lkey()).remoteAddr(f.b.address(0)).rkey(f.b.mr.rkey()));
        assertThat(f.runUntilCompletions(1, 0)).isTrue();
        assertThat(f.a.sendCompletions.get(0).status()).isEqualTo(WcStatus.REM_INV_REQ_ERR);
        assertThat(f.b.mr.buffer().getByte(0)).isEqualTo((byte) 0x11);
        assertThat(f.b.endpoint.counters().get(EndpointCounter.NACKS_OUT_INVALID_REQUEST)).isEqualTo(1);
    }
}
