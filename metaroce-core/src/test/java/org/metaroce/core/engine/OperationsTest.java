// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.engine;

import static org.assertj.core.api.Assertions.assertThat;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;
import org.metaroce.core.verbs.PostStatus;
import org.metaroce.core.verbs.RecvRequest;
import org.metaroce.core.verbs.SendFlags;
import org.metaroce.core.verbs.SendRequest;
import org.metaroce.core.verbs.WcOpcode;
import org.metaroce.core.verbs.WcStatus;
import org.metaroce.core.verbs.WorkCompletion;
import org.metaroce.core.verbs.WrOpcode;

/** Every operation end to end over a perfect in-memory link, data verified byte for byte [OPS]. */
class OperationsTest {
    private static void fill(final UnsafeBuffer b, final int offset, final int length, final int seed) {
        for (int i = 0; i < length; i++) {
            b.putByte(offset + i, (byte) (i * 31 + seed));
        }
    }

    private static void assertSameBytes(final UnsafeBuffer x, final int xOffset, final UnsafeBuffer y,
                                        final int yOffset, final int length) {
        for (int i = 0; i < length; i++) {
            if (x.getByte(xOffset + i) != y.getByte(yOffset + i)) {
                throw new AssertionError("byte " + i + " differs: " + x.getByte(xOffset + i) + " vs "
                    + y.getByte(yOffset + i));
            }
        }
    }

    @ParameterizedTest(name = "SEND of {0} bytes")
    @ValueSource(ints = {0, 1, 1024, 1025, 4096, 100_000})
    void sendDeliversIntoTheReceiveBuffer(final int length) {
        final TwoNodeFixture f = new TwoNodeFixture(11L + length).connect(1024);
        fill(f.a.mr.buffer(), 0, length, 5);
        assertThat(f.b.qp.postRecv(new RecvRequest(1).wrId(77).addSge(f.b.address(4096), 200_000, f.b.mr.lkey())))
            .isEqualTo(PostStatus.OK);
        assertThat(f.a.qp.postSend(new SendRequest(1).wrId(1).opcode(WrOpcode.SEND).sendFlags(SendFlags.SIGNALED)
            .addSge(f.a.address(0), length, f.a.mr.lkey()))).isEqualTo(PostStatus.OK);
        assertThat(f.runUntilCompletions(1, 1)).as("completions").isTrue();

        final WorkCompletion send = f.a.sendCompletions.get(0);
        assertThat(send.status()).isEqualTo(WcStatus.SUCCESS);
        assertThat(send.wrId()).isEqualTo(1);
        assertThat(send.opcode()).isEqualTo(WcOpcode.SEND);
        final WorkCompletion recv = f.b.recvCompletions.get(0);
        assertThat(recv.status()).isEqualTo(WcStatus.SUCCESS);
        assertThat(recv.wrId()).isEqualTo(77);
        assertThat(recv.opcode()).isEqualTo(WcOpcode.RECV);
        assertThat(recv.byteLen()).isEqualTo(length);
        assertThat(recv.qpNum()).isEqualTo(f.b.qp.qpn());
        assertSameBytes(f.a.mr.buffer(), 0, f.b.mr.buffer(), 4096, length);
        assertThat(f.a.endpoint.counters().retransmits()).isZero();
    }

    @Test
    void sendWithImmediateScattersOverSeveralEntries() {
        final TwoNodeFixture f = new TwoNodeFixture(21).connect(512);
        fill(f.a.mr.buffer(), 0, 3000, 9);
        f.b.qp.postRecv(new RecvRequest(3).wrId(5).addSge(f.b.address(10_000), 1000, f.b.mr.lkey())
            .addSge(f.b.address(20_000), 1000, f.b.mr.lkey()).addSge(f.b.address(30_000), 1000, f.b.mr.lkey()));
        f.a.qp.postSend(new SendRequest(2).wrId(2).opcode(WrOpcode.SEND_WITH_IMM).immData(0xCAFE)
            .sendFlags(SendFlags.SIGNALED).addSge(f.a.address(0), 1700, f.a.mr.lkey())
            .addSge(f.a.address(1700), 1300, f.a.mr.lkey()));
        assertThat(f.runUntilCompletions(1, 1)).isTrue();
        final WorkCompletion recv = f.b.recvCompletions.get(0);
        assertThat(recv.status()).isEqualTo(WcStatus.SUCCESS);
        assertThat(recv.immData()).isEqualTo(0xCAFE);
        assertThat(recv.wcFlags() & WorkCompletion.WC_WITH_IMM).isNotZero();
        assertSameBytes(f.a.mr.buffer(), 0, f.b.mr.buffer(), 10_000, 1000);
        assertSameBytes(f.a.mr.buffer(), 1000, f.b.mr.buffer(), 20_000, 1000);
        assertSameBytes(f.a.mr.buffer(), 2000, f.b.mr.buffer(), 30_000, 1000);
    }

    /**
     * [OPS-035, OPS-040] the receive completion says whether the message was solicited: SEND and
     * WRITE_WITH_IMM posted with SOLICITED set the flag, the same operations without it do not.
     */
    @Test
    void receiveCompletionsReportSolicited() {
        final TwoNodeFixture f = new TwoNodeFixture(22).connect(512);
        for (int i = 0; i < 4; i++) {
            f.b.qp.postRecv(new RecvRequest(1).wrId(10 + i).addSge(f.b.address(i * 1000L), 1000, f.b.mr.lkey()));
        }
        final WrOpcode[] ops = {WrOpcode.SEND, WrOpcode.SEND, WrOpcode.RDMA_WRITE_WITH_IMM, WrOpcode.RDMA_WRITE_WITH_IMM};
        for (int i = 0; i < 4; i++) {
            final boolean solicited = i % 2 == 0;
            f.a.qp.postSend(new SendRequest(1).wrId(i).opcode(ops[i]).immData(i)
                .sendFlags(SendFlags.SIGNALED | (solicited ? SendFlags.SOLICITED : 0))
                .addSge(f.a.address(0), 100, f.a.mr.lkey()).remoteAddr(f.b.address(50_000)).rkey(f.b.mr.rkey()));
        }
        assertThat(f.runUntilCompletions(4, 4)).isTrue();
        assertThat(f.b.recvCompletions).extracting(wc -> (wc.wcFlags() & WorkCompletion.WC_SOLICITED) != 0)
            .containsExactly(true, false, true, false);
    }

    @ParameterizedTest(name = "WRITE of {0} bytes")
    @ValueSource(ints = {0, 7, 4096, 65536, 300_001})
    void writePlacesDataAtTheRemoteAddress(final int length) {
        final TwoNodeFixture f = new TwoNodeFixture(31L + length).connect(4096);
        fill(f.a.mr.buffer(), 100, length, 3);
        f.a.qp.postSend(new SendRequest(1).wrId(9).opcode(WrOpcode.RDMA_WRITE).sendFlags(SendFlags.SIGNALED)
            .addSge(f.a.address(100), length, f.a.mr.lkey()).remoteAddr(f.b.address(500)).rkey(f.b.mr.rkey()));
        assertThat(f.runUntilCompletions(1, 0)).isTrue();
        assertThat(f.a.sendCompletions.get(0).status()).isEqualTo(WcStatus.SUCCESS);
        assertThat(f.a.sendCompletions.get(0).opcode()).isEqualTo(WcOpcode.RDMA_WRITE);
        assertSameBytes(f.a.mr.buffer(), 100, f.b.mr.buffer(), 500, length);
        assertThat(f.b.recvCompletions).isEmpty();
    }

    @Test
    void writeWithImmediateConsumesAReceive() {
        final TwoNodeFixture f = new TwoNodeFixture(41).connect(1024);
        fill(f.a.mr.buffer(), 0, 5000, 1);
        f.b.qp.postRecv(new RecvRequest(1).wrId(123).addSge(f.b.address(0), 0, f.b.mr.lkey()));
        f.a.qp.postSend(new SendRequest(1).wrId(3).opcode(WrOpcode.RDMA_WRITE_WITH_IMM).immData(42)
            .sendFlags(SendFlags.SIGNALED).addSge(f.a.address(0), 5000, f.a.mr.lkey())
            .remoteAddr(f.b.address(8192)).rkey(f.b.mr.rkey()));
        assertThat(f.runUntilCompletions(1, 1)).isTrue();
        final WorkCompletion recv = f.b.recvCompletions.get(0);
        assertThat(recv.status()).isEqualTo(WcStatus.SUCCESS);
        assertThat(recv.opcode()).isEqualTo(WcOpcode.RECV_RDMA_WITH_IMM);
        assertThat(recv.immData()).isEqualTo(42);
        assertThat(recv.byteLen()).isEqualTo(5000);
        assertSameBytes(f.a.mr.buffer(), 0, f.b.mr.buffer(), 8192, 5000);
    }

    @ParameterizedTest(name = "READ of {0} bytes")
    @ValueSource(ints = {0, 8, 1024, 70_000, 500_000})
    void readFetchesRemoteMemory(final int length) {
        final TwoNodeFixture f = new TwoNodeFixture(51L + length).connect(1024);
        fill(f.b.mr.buffer(), 1000, length, 77);
        f.a.qp.postSend(new SendRequest(1).wrId(4).opcode(WrOpcode.RDMA_READ).sendFlags(SendFlags.SIGNALED)
            .addSge(f.a.address(2000), length, f.a.mr.lkey()).remoteAddr(f.b.address(1000)).rkey(f.b.mr.rkey()));
        assertThat(f.runUntilCompletions(1, 0)).isTrue();
        final WorkCompletion wc = f.a.sendCompletions.get(0);
        assertThat(wc.status()).isEqualTo(WcStatus.SUCCESS);
        assertThat(wc.opcode()).isEqualTo(WcOpcode.RDMA_READ);
        assertThat(wc.byteLen()).isEqualTo(length);
        assertSameBytes(f.b.mr.buffer(), 1000, f.a.mr.buffer(), 2000, length);
    }

    @Test
    void fetchAddReturnsTheOriginalAndAddsOnce() {
        final TwoNodeFixture f = new TwoNodeFixture(61).connect(1024);
        f.b.mr.buffer().putLong(64, 1000);
        for (int i = 0; i < 3; i++) {
            f.a.qp.postSend(new SendRequest(1).wrId(i).opcode(WrOpcode.ATOMIC_FETCH_ADD)
                .sendFlags(SendFlags.SIGNALED).addSge(f.a.address(8 * i), 8, f.a.mr.lkey())
                .remoteAddr(f.b.address(64)).rkey(f.b.mr.rkey()).compareAdd(5));
        }
        assertThat(f.runUntilCompletions(3, 0)).isTrue();
        assertThat(f.b.mr.buffer().getLong(64)).isEqualTo(1015);
        assertThat(f.a.mr.buffer().getLong(0)).isEqualTo(1000);
        assertThat(f.a.mr.buffer().getLong(8)).isEqualTo(1005);
        assertThat(f.a.mr.buffer().getLong(16)).isEqualTo(1010);
        assertThat(f.a.sendCompletions).extracting(WorkCompletion::opcode).containsOnly(WcOpcode.FETCH_ADD);
        assertThat(f.a.sendCompletions).extracting(WorkCompletion::wrId).containsExactly(0L, 1L, 2L);
    }

    @Test
    void compareAndSwapSwapsOnlyWhenEqual() {
        final TwoNodeFixture f = new TwoNodeFixture(71).connect(1024);
        f.b.mr.buffer().putLong(128, 7);
        f.a.qp.postSend(new SendRequest(1).wrId(1).opcode(WrOpcode.ATOMIC_CMP_SWAP).sendFlags(SendFlags.SIGNALED)
            .addSge(f.a.address(0), 8, f.a.mr.lkey()).remoteAddr(f.b.address(128)).rkey(f.b.mr.rkey())
            .compareAdd(6).swap(99));
        f.a.qp.postSend(new SendRequest(1).wrId(2).opcode(WrOpcode.ATOMIC_CMP_SWAP).sendFlags(SendFlags.SIGNALED)
            .addSge(f.a.address(8), 8, f.a.mr.lkey()).remoteAddr(f.b.address(128)).rkey(f.b.mr.rkey())
            .compareAdd(7).swap(99));
        assertThat(f.runUntilCompletions(2, 0)).isTrue();
        assertThat(f.a.mr.buffer().getLong(0)).isEqualTo(7);
        assertThat(f.a.mr.buffer().getLong(8)).isEqualTo(7);
        assertThat(f.b.mr.buffer().getLong(128)).isEqualTo(99);
    }

    @Test
    void completionsArriveInPostOrderAndUnsignaledOnesAreSilent() {
        final TwoNodeFixture f = new TwoNodeFixture(81).connect(1024);
        fill(f.b.mr.buffer(), 0, 50_000, 2);
        // A long READ, then short WRITEs: the WRITEs finish first on the wire but complete after.
        f.a.qp.postSend(new SendRequest(1).wrId(100).opcode(WrOpcode.RDMA_READ).sendFlags(SendFlags.SIGNALED)
            .addSge(f.a.address(0), 50_000, f.a.mr.lkey()).remoteAddr(f.b.address(0)).rkey(f.b.mr.rkey()));
        for (int i = 0; i < 5; i++) {
            f.a.qp.postSend(new SendRequest(1).wrId(200 + i).opcode(WrOpcode.RDMA_WRITE)
                .sendFlags(i == 2 ? 0 : SendFlags.SIGNALED).addSge(f.a.address(100_000), 64, f.a.mr.lkey())
                .remoteAddr(f.b.address(200_000 + i * 64)).rkey(f.b.mr.rkey()));
        }
        assertThat(f.runUntilQuiet()).isTrue();
        assertThat(f.a.sendCompletions).extracting(WorkCompletion::wrId).containsExactly(100L, 200L, 201L, 203L, 204L);
        assertThat(f.a.sendCompletions).extracting(WorkCompletion::status).containsOnly(WcStatus.SUCCESS);
    }

    @Test
    void fenceWaitsForEarlierReads() {
        final TwoNodeFixture f = new TwoNodeFixture(91).connect(1024);
        fill(f.b.mr.buffer(), 0, 8192, 4);
        // READ b[0..8192) into a, then a fenced WRITE of that same local area back to b elsewhere:
        // without the fence the WRITE could carry stale bytes.
        f.a.qp.postSend(new SendRequest(1).wrId(1).opcode(WrOpcode.RDMA_READ).sendFlags(SendFlags.SIGNALED)
            .addSge(f.a.address(0), 8192, f.a.mr.lkey()).remoteAddr(f.b.address(0)).rkey(f.b.mr.rkey()));
        f.a.qp.postSend(new SendRequest(1).wrId(2).opcode(WrOpcode.RDMA_WRITE)
            .sendFlags(SendFlags.SIGNALED | SendFlags.FENCE).addSge(f.a.address(0), 8192, f.a.mr.lkey())
            .remoteAddr(f.b.address(500_000)).rkey(f.b.mr.rkey()));
        assertThat(f.runUntilQuiet()).isTrue();
        assertSameBytes(f.b.mr.buffer(), 0, f.b.mr.buffer(), 500_000, 8192);
    }
}
