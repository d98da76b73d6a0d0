// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.engine;

import static org.assertj.core.api.Assertions.assertThat;

import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.metaroce.core.testwire.LinkProfile;
import org.metaroce.core.verbs.SendFlags;
import org.metaroce.core.verbs.SendRequest;
import org.metaroce.core.verbs.WrOpcode;

/**
 * [CC-032] An endpoint shares its transmit link round robin among the queue pairs that have
 * something to send. The sink here takes one packet per poll, as a NIC with a short transmit ring
 * does (the fabric simulator's host takes at most two waiting packets): each poll then decides
 * which queue pair's packet leaves next.
 */
class SendSchedulingTest {
    private static final int QPS = 16;

    /** A transmit ring with room for one packet per poll. */
    private static final class OneSlotSink implements TransmitSink {
        private final UnsafeBuffer buffer = new UnsafeBuffer(new byte[4096]);
        boolean used;

        @Override
        public MutableDirectBuffer buffer() {
            return buffer;
        }

        @Override
        public int claim(final int maxLength) {
            return used ? NO_ROOM : 0;
        }

        @Override
        public void commit(final int offset, final int length, final int peerId, final int entropy) {
            used = true;
        }
    }

    @Test
    @DisplayName("[CC-032] two busy QPs at neighbouring positions of the poll order get alternate turns at a one-packet sink")
    void neighbouringQueuePairsShareTheSinkEqually() {
        final MultiQpFixture f = new MultiQpFixture(3232, LinkProfile.perfect(), QPS, 1024, 1 << 20);
        // Positions 9 and 10 of 16: when the start advanced by one position per poll, the QP at 9
        // was the first ready one from 15 of the 16 starts (11..15 wrap round to it, 0..9 reach
        // it first) and the QP at 10 only from start 10: 60 packets against 4.
        final QueuePair first = f.a.qps.get(9).qp;
        final QueuePair second = f.a.qps.get(10).qp;
        for (final QueuePair qp : new QueuePair[] {first, second}) {
            assertThat(qp.postSend(new SendRequest(1).wrId(1).opcode(WrOpcode.RDMA_WRITE)
                .sendFlags(SendFlags.SIGNALED).addSge(f.a.address(0), 96 * 1024, f.a.mr.lkey())
                .remoteAddr(f.b.address(0)).rkey(f.b.mr.rkey()))).isZero();
        }
        final int firstPsn = first.nextSendPsn();
        final int secondPsn = second.nextSendPsn();
        final OneSlotSink sink = new OneSlotSink();
        long now = f.wire.now();
        // 64 packets, fewer than either QP's window allows (FIXED, one BDP of 1024-byte packets),
        // so nothing but the schedule decides which QP sends; no packet is delivered.
        for (int i = 0; i < 64; i++) {
            sink.used = false;
            now += 100;
            assertThat(f.a.endpoint.poll(now, sink)).isEqualTo(1);
        }
        final int sentFirst = first.nextSendPsn() - firstPsn;
        final int sentSecond = second.nextSendPsn() - secondPsn;
        System.out.println("SendSchedulingTest packets: QP at position 9 " + sentFirst + ", at position 10 " + sentSecond);
        assertThat(sentFirst + sentSecond).isEqualTo(64);
        assertThat(sentFirst).isEqualTo(32);
        assertThat(sentSecond).isEqualTo(32);
    }
}
