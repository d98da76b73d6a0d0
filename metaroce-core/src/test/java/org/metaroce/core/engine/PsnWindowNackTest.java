// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.engine;

import static org.assertj.core.api.Assertions.assertThat;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.metaroce.core.testwire.LinkProfile;
import org.metaroce.core.verbs.PostStatus;
import org.metaroce.core.verbs.SendFlags;
import org.metaroce.core.verbs.SendRequest;
import org.metaroce.core.verbs.WrOpcode;
import org.metaroce.core.wire.AckHeader;
import org.metaroce.core.wire.BaseHeader;
import org.metaroce.core.wire.IntegrityCheck;
import org.metaroce.core.wire.NackHeader;
import org.metaroce.core.wire.NackReason;
import org.metaroce.core.wire.Opcode;

/**
 * The requester's reaction to NACK PSN_WINDOW [REL-061]: the NACKed packet stays outstanding and
 * is sent again only when a later ACK moves the Cumulative PSN and its Credit admits the packet,
 * or by the probe/retransmission timer, never at once. A fuzz campaign (docs/fuzzing.md) found
 * that resending at once, with retransmissions exempt from credit [REL-019], repeats NACK and
 * resend without end within one virtual instant.
 *
 * <p>A's packets never reach B: the test plays B's feedback itself, so it controls the window.
 */
class PsnWindowNackTest {
    /** Less than any probe timeout (at least 20 µs, REL-026): what A sends in it, it sends at once. */
    private static final long INSTANT_NS = 1_000;

    private static TwoNodeFixture twoPacketsOutstanding(final long seed) {
        // Keepalive off: its probes would be further packets from A.
        final TwoNodeFixture f = new TwoNodeFixture(seed, LinkProfile.perfect(), new EndpointConfig().keepaliveIdleNs(0),
            QueuePairCapabilities.defaults(), 4096).connect(1024);
        f.wire.filter((from, to, buf, off, len, now) -> from == f.a.node);
        assertThat(f.a.qp.postSend(new SendRequest(1).wrId(1).opcode(WrOpcode.RDMA_WRITE).sendFlags(SendFlags.SIGNALED)
            .addSge(f.a.address(0), 2048, f.a.mr.lkey()).remoteAddr(f.b.address(0)).rkey(f.b.mr.rkey())))
            .isEqualTo(PostStatus.OK);
        f.wire.runFor(INSTANT_NS);
        assertThat(packetsOut(f)).as("both packets of the WRITE left").isEqualTo(2);
        return f;
    }

    /** Every datagram A sent: requests, first and again (A has nothing else to send here). */
    private static long packetsOut(final TwoNodeFixture f) {
        return f.a.endpoint.counters().get(EndpointCounter.PACKETS_OUT);
    }

    /** Feedback from B to A: an ACK, or a NACK PSN_WINDOW for {@code psn}, with the given window state. */
    private static void feedback(final TwoNodeFixture f, final boolean nack, final int psn, final int cumulative,
                                 final int credit) {
        final UnsafeBuffer p = new UnsafeBuffer(new byte[256]);
        final Opcode op = nack ? Opcode.NACK : Opcode.ACK;
        new BaseHeader().wrap(p, 0).initialize(op).destQpn(f.a.qp.qpn()).psn(psn).sourceQpn(f.b.qp.qpn());
        new AckHeader().wrap(p, op.ackOffset()).initialize().cumulativePsn(cumulative).credit(credit)
            // An echo that matches no transmission: the virtual clock starts at 0, so an echo of 0
            // would pass for the packets' own timestamps and yield a bogus RTT sample [REL-017].
            .echoedTimestamp(0x5EED_0001);
        if (nack) {
            new NackHeader().wrap(p, op.nackOffset()).initialize().reason(NackReason.PSN_WINDOW.code()).nackPsn(psn);
        }
        final int len = new IntegrityCheck().seal(p, 0, op.headerLength());
        f.a.endpoint.onDatagram(f.wire.now(), p, 0, len, f.b.node, DatagramEndpoint.ECN_NOT_ECT);
    }

    @Test
    void aPsnWindowNackIsNotAnsweredByAnImmediateResendEvenWhenRepeated() {
        final TwoNodeFixture f = twoPacketsOutstanding(6201);
        final int first = f.a.qp.nextSendPsn() - 2;
        final int second = first + 1;
        // B's window holds one PSN from the first: the second is beyond it. The same NACK fifty
        // times, each followed by A's next transmission opportunities, all within the probe timeout.
        for (int i = 0; i < 50; i++) {
            feedback(f, true, second, first, 1);
            f.wire.runFor(INSTANT_NS);
        }
        assertThat(packetsOut(f)).as("no resend in reaction to PSN_WINDOW NACKs [REL-061]").isEqualTo(2);
        assertThat(f.a.endpoint.counters().get(EndpointCounter.RETRANSMITS_PSN_WINDOW)).isZero();

        // The first PSN arrives and B's window moves: the ACK admits the second, which goes out once.
        feedback(f, false, first, second, 64);
        f.wire.runFor(INSTANT_NS);
        assertThat(f.a.endpoint.counters().get(EndpointCounter.RETRANSMITS_PSN_WINDOW))
            .as("resent when a later ACK's Credit admits it [REL-061]").isEqualTo(1);
        assertThat(packetsOut(f)).isEqualTo(3);
        // A repeated ACK of the same state does not send it again.
        feedback(f, false, first, second, 64);
        f.wire.runFor(INSTANT_NS);
        assertThat(packetsOut(f)).isEqualTo(3);
    }

    @Test
    void anAckThatDoesNotAdmitTheNackedPsnDoesNotResendIt() {
        final TwoNodeFixture f = twoPacketsOutstanding(6202);
        final int first = f.a.qp.nextSendPsn() - 2;
        final int second = first + 1;
        feedback(f, true, second, first, 1);
        f.wire.runFor(INSTANT_NS);
        // The cumulative point moves but the Credit still ends before the NACKed PSN.
        feedback(f, false, first, second, 0);
        f.wire.runFor(INSTANT_NS);
        assertThat(f.a.endpoint.counters().get(EndpointCounter.RETRANSMITS_PSN_WINDOW)).isZero();
        assertThat(packetsOut(f)).isEqualTo(2);
    }

    @Test
    void withoutAnAdmittingAckTheRetransmissionTimerResends() {
        final TwoNodeFixture f = twoPacketsOutstanding(6203);
        final int first = f.a.qp.nextSendPsn() - 2;
        final long start = f.wire.now();
        feedback(f, true, first + 1, first, 1);
        // Nothing before the RTO (TIMEOUT 1 ms; no RTT sample, so no tail probe, REL-026).
        f.wire.runFor(900_000);
        assertThat(packetsOut(f)).isEqualTo(2);
        f.wire.runUntil(() -> packetsOut(f) > 2, 2_000_000);
        // The timer runs from the packets' transmission, INSTANT_NS before start.
        assertThat(f.wire.now() - start).as("the timer, not the NACK, resends [REL-061, REL-028]")
            .isGreaterThanOrEqualTo(1_000_000 - INSTANT_NS);
        assertThat(f.a.endpoint.counters().get(EndpointCounter.RETRANSMITS_TIMEOUT)).isEqualTo(1);
    }
}
