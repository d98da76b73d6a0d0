// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;

import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.metaroce.core.verbs.SendFlags;
import org.metaroce.core.verbs.SendRequest;
import org.metaroce.core.verbs.WcStatus;
import org.metaroce.core.verbs.WrOpcode;
import org.metaroce.core.wire.BaseHeader;
import org.metaroce.core.wire.Opcode;

/**
 * A KEEPALIVE carries the next PSN the requester will assign [WIRE-065]. When the packet that gets
 * that PSN leaves in the same clock tick, it has the KEEPALIVE's PSN and Transmit Timestamp, and
 * the ACK answering the KEEPALIVE (trigger = that PSN, echo = that timestamp) looked like proof
 * that the packet had arrived [REL-017]. If the packet itself was lost, the requester counted it
 * delivered and never sent it again; the responder waited for it for ever, the requester went on
 * to the end of the credit and stopped, probing without end (issue 14: write_bw with 64 QPs hung
 * in the soak, the server's cumulative PSN stuck exactly 1,024 PSNs behind the client's next PSN).
 */
class KeepaliveTwinTest {
    /** Keeps a copy of every packet an endpoint emits. */
    private static final class Capture implements TransmitSink {
        private final UnsafeBuffer buffer = new UnsafeBuffer(new byte[64 * 1024]);
        final List<byte[]> packets = new ArrayList<>();

        @Override
        public MutableDirectBuffer buffer() {
            return buffer;
        }

        @Override
        public int claim(final int maxLength) {
            return 0;
        }

        @Override
        public void commit(final int offset, final int length, final int peerId, final int entropy) {
            final byte[] copy = new byte[length];
            buffer.getBytes(offset, copy);
            packets.add(copy);
        }
    }

    private TwoNodeFixture fixture;

    @Test
    void theAnswerToAKeepaliveDoesNotProveThePacketSentWithItsPsnInTheSameTick() {
        final long seed = 4711;
        final TwoNodeFixture f = new TwoNodeFixture(seed).connect(1024);
        fixture = f;
        f.a.qp.postSend(write(0, 1));
        assertThat(f.runUntilQuiet()).isTrue();
        f.a.drain();
        f.a.sendCompletions.clear();
        for (int i = 0; i < 64; i++) {
            f.a.mr.buffer().putByte(4096 + i, (byte) (i + 7));
        }
        // A heard nothing since: its next deadline is the keepalive probe. The WRITE posted now (the
        // wire does not run) leaves in the same poll, with the same clock reading.
        final long t = f.a.endpoint.nextDeadlineNs();
        f.a.qp.postSend(write(4096, 2));
        final Capture fromA = new Capture();
        f.a.endpoint.poll(t, fromA);
        final byte[] keepalive = find(fromA, Opcode.KEEPALIVE);
        final byte[] data = find(fromA, Opcode.WRITE);
        assertThat(keepalive).as("seed %d: a KEEPALIVE in the poll", seed).isNotNull();
        assertThat(data).as("a WRITE in the same poll").isNotNull();
        final UnsafeBuffer k = new UnsafeBuffer(keepalive);
        final UnsafeBuffer d = new UnsafeBuffer(data);
        assertThat(BaseHeader.psn(k, 0)).as("the KEEPALIVE carries the WRITE's PSN").isEqualTo(BaseHeader.psn(d, 0));
        assertThat(BaseHeader.timestamp(k, 0)).as("and its timestamp").isEqualTo(BaseHeader.timestamp(d, 0));

        // The WRITE is lost; the KEEPALIVE reaches B and B's answer reaches A.
        f.b.endpoint.onDatagram(t + 10_000, k, 0, keepalive.length, f.a.node, DatagramEndpoint.ECN_NOT_ECT);
        final Capture fromB = new Capture();
        f.b.endpoint.poll(t + 10_000, fromB);
        final byte[] ack = find(fromB, Opcode.ACK);
        assertThat(ack).as("B answers the KEEPALIVE").isNotNull();
        f.a.endpoint.onDatagram(t + 20_000, new UnsafeBuffer(ack), 0, ack.length, f.b.node,
            DatagramEndpoint.ECN_NOT_ECT);
        f.a.drain();
        assertThat(f.a.sendCompletions).as("the lost WRITE is not complete: nothing proved it arrived").isEmpty();

        // From here on the wire runs: the WRITE is sent again and completes, its data in place.
        f.wire.runUntil(t + 30_000);
        assertThat(f.runUntilQuiet()).isTrue();
        assertThat(f.a.sendCompletions).extracting(wc -> wc.status()).containsExactly(WcStatus.SUCCESS);
        for (int i = 0; i < 64; i++) {
            assertThat(f.b.mr.buffer().getByte(4096 + i)).as("byte %d at B", i).isEqualTo((byte) (i + 7));
        }
    }

    private SendRequest write(final long offset, final long wrId) {
        return new SendRequest(1).wrId(wrId).opcode(WrOpcode.RDMA_WRITE).sendFlags(SendFlags.SIGNALED)
            .addSge(fixture.a.address(offset), 64, fixture.a.mr.lkey()).remoteAddr(fixture.b.address(offset))
            .rkey(fixture.b.mr.rkey());
    }

    private static byte[] find(final Capture c, final Opcode opcode) {
        for (final byte[] p : c.packets) {
            if ((p[1] & 0xFF) == opcode.value()) {
                return p;
            }
        }
        return null;
    }
}
