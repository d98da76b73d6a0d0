// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.metaroce.core.verbs.SendFlags;
import org.metaroce.core.verbs.SendRequest;
import org.metaroce.core.verbs.WcStatus;
import org.metaroce.core.verbs.WrOpcode;
import org.metaroce.core.wire.BaseHeader;
import org.metaroce.core.wire.Opcode;

/**
 * Time-based loss detection only counts a retransmitted packet's latest transmission as delivered
 * when the ACK proves that transmission arrived [REL-023]. A cumulative or selective
 * acknowledgement of a packet that was sent twice does not say which copy arrived; when it was the
 * original, taking the retransmission's send time declares every packet sent before the
 * retransmission lost, although their acknowledgements are merely behind. On real sockets that
 * turned one spurious retransmission into a burst of them whenever the requester read its
 * acknowledgements late (issue 14).
 */
class RackProofTest {
    private static final int PACKETS = 20;
    private static final int HELD_FROM = 15;

    /**
     * A 20-packet WRITE: the original of packet 0 and the first copies of packets 15..19 are held
     * back; packets 1..14 are selectively acknowledged, so packet 0 is declared lost and resent, and
     * that copy is dropped. Then the held original of 0 arrives: its ACK (not echoing the
     * retransmission) delivers 0 cumulatively. Packets 15..19, sent long before 0's retransmission
     * and still unacknowledged, must not be declared lost by that: exactly one retransmission in
     * all, and no duplicate at the responder once 15..19 arrive.
     */
    @Test
    void aCumulativeAckOfARetransmittedPacketDoesNotDeclareEarlierPacketsLost() {
        final TwoNodeFixture f = new TwoNodeFixture(8101).connect(1024);
        final int first = f.a.qp.nextSendPsn();
        final List<UnsafeBuffer> held = new ArrayList<>();
        final int[] transmissions = new int[PACKETS];
        f.wire.filter((from, to, buf, off, len, now) -> {
            if (from != f.a.node || buf.getByte(off + 1) != Opcode.WRITE.value()) {
                return false;
            }
            final int i = BaseHeader.psn(buf, off) - first;
            if (i < 0 || i >= PACKETS) {
                return false;
            }
            final int n = ++transmissions[i];
            if (n == 1 && (i == 0 || i >= HELD_FROM)) {
                final UnsafeBuffer copy = new UnsafeBuffer(new byte[len]);
                copy.putBytes(0, buf, off, len);
                held.add(copy);
                return true;
            }
            // The retransmission of packet 0 is lost.
            return i == 0 && n == 2;
        });
        for (int i = 0; i < PACKETS * 1024; i++) {
            f.a.mr.buffer().putByte(i, (byte) (i * 7 + 3));
        }
        f.a.qp.postSend(new SendRequest(1).wrId(1).opcode(WrOpcode.RDMA_WRITE).sendFlags(SendFlags.SIGNALED)
            .addSge(f.a.address(0), PACKETS * 1024, f.a.mr.lkey()).remoteAddr(f.b.address(0)).rkey(f.b.mr.rkey()));
        assertThat(f.wire.runUntil(() -> transmissions[0] == 2, 5_000_000L)).as("packet 0 resent").isTrue();
        assertThat(held).hasSize(1 + PACKETS - HELD_FROM);

        // The original of packet 0 arrives late; its ACK delivers 0 without echoing the resent copy.
        f.wire.runFor(10_000);
        f.b.endpoint.onDatagram(f.wire.now(), held.get(0), 0, held.get(0).capacity(), f.a.node,
            DatagramEndpoint.ECN_NOT_ECT);
        f.wire.runFor(15_000);
        final String afterZero = "A " + f.a.endpoint.counters() + " B " + f.b.endpoint.counters();
        assertThat(f.a.endpoint.counters().retransmits()).as(afterZero).isEqualTo(1);

        // Packets 15..19 arrive late, but arrive: nothing of them was lost.
        for (int i = 1; i < held.size(); i++) {
            f.b.endpoint.onDatagram(f.wire.now(), held.get(i), 0, held.get(i).capacity(), f.a.node,
                DatagramEndpoint.ECN_NOT_ECT);
        }
        assertThat(f.runUntilQuiet()).isTrue();
        final String story = "A " + f.a.endpoint.counters() + " B " + f.b.endpoint.counters();
        assertThat(f.a.sendCompletions).as(story).extracting(wc -> wc.status()).containsExactly(WcStatus.SUCCESS);
        assertThat(f.a.endpoint.counters().retransmits()).as(story).isEqualTo(1);
        assertThat(f.b.endpoint.counters().get(EndpointCounter.DUPLICATE_REQUESTS)).as(story).isZero();
        for (int i = 0; i < PACKETS * 1024; i++) {
            if (f.a.mr.buffer().getByte(i) != f.b.mr.buffer().getByte(i)) {
                throw new AssertionError("byte " + i + " differs; " + story);
            }
        }
    }
}
