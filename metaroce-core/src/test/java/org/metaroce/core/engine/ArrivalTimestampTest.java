// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.metaroce.core.testwire.LinkProfile;
import org.metaroce.core.verbs.SendFlags;
import org.metaroce.core.verbs.SendRequest;
import org.metaroce.core.verbs.WrOpcode;
import org.metaroce.core.wire.AckHeader;
import org.metaroce.core.wire.BaseHeader;
import org.metaroce.core.wire.IntegrityCheck;
import org.metaroce.core.wire.Opcode;

/**
 * A datagram that waited in the host's socket before the driver read it [REL-066]: the responder
 * counts the wait as its hold (ACK Delay from the arrival, [WIRE-061]) and the requester takes
 * its RTT sample at the arrival of the ACK, so neither host's receive queue passes for path delay
 * [REL-020]. The test plays the driver: it hands packets to the endpoints itself with arrival
 * times before now, as a kernel receive timestamp gives them.
 */
class ArrivalTimestampTest {
    /** How long a datagram waits in the host's socket (below the 1 ms RTO before the first sample). */
    private static final long WAIT_NS = 300_000;

    /** A's packets, captured and dropped on the wire; B's ACKs, captured (the ACK Delay they report). */
    private final List<byte[]> fromA = new ArrayList<>();
    private final List<Long> ackDelays = new ArrayList<>();

    private TwoNodeFixture fixture(final long seed, final EndpointConfig config) {
        final TwoNodeFixture f = new TwoNodeFixture(seed, LinkProfile.perfect(), config.keepaliveIdleNs(0),
            QueuePairCapabilities.defaults(), 4096).connect(1024);
        f.wire.filter((from, to, buf, off, len, now) -> {
            if (from == f.a.node) {
                final byte[] copy = new byte[len];
                buf.getBytes(off, copy);
                fromA.add(copy);
                return true;
            }
            if (Opcode.of(BaseHeader.opcode(buf, off)) == Opcode.ACK) {
                ackDelays.add(AckHeader.ackDelay(buf, off + Opcode.ACK.ackOffset()));
            }
            return true;
        });
        return f;
    }

    private static void write(final TwoNodeFixture f) {
        f.a.qp.postSend(new SendRequest(1).wrId(1).opcode(WrOpcode.RDMA_WRITE).sendFlags(SendFlags.SIGNALED)
            .addSge(f.a.address(0), 64, f.a.mr.lkey()).remoteAddr(f.b.address(0)).rkey(f.b.mr.rkey()));
    }

    /** An ACK from B for {@code trigger}, echoing {@code echo}, with ACK Delay 0, arriving at A at {@code arrivalNs}. */
    private static void ackArrivingAt(final TwoNodeFixture f, final int trigger, final int echo, final int path,
                                      final long arrivalNs) {
        final UnsafeBuffer p = new UnsafeBuffer(new byte[256]);
        final Opcode op = Opcode.ACK;
        new BaseHeader().wrap(p, 0).initialize(op).destQpn(f.a.qp.qpn()).psn(trigger).sourceQpn(f.b.qp.qpn());
        new AckHeader().wrap(p, op.ackOffset()).initialize().cumulativePsn(trigger + 1).credit(64)
            .echoedTimestamp(echo).echoedPathId(path).ackDelay(0);
        final int len = new IntegrityCheck().seal(p, 0, op.headerLength());
        f.a.endpoint.onDatagram(f.wire.now(), arrivalNs, p, 0, len, f.b.node, DatagramEndpoint.ECN_NOT_ECT);
    }

    @Test
    void theRequesterSamplesTheRoundTripWhenTheAckReachedTheHostNotWhenItWasRead() {
        final long rtt = sampleWithAckReadLate(new TwoNodeFixture[1], new EndpointConfig());
        // Sent at t, ACK arrived at t + 201 µs, read 300 µs later.
        assertThat(rtt).isEqualTo(201_000L);
        final long ignoring = sampleWithAckReadLate(new TwoNodeFixture[1], new EndpointConfig().arrivalTimestamps(false));
        assertThat(ignoring).as("arrival times off: sampled when read").isEqualTo(201_000L + WAIT_NS);
    }

    private long sampleWithAckReadLate(final TwoNodeFixture[] holder, final EndpointConfig config) {
        fromA.clear();
        final TwoNodeFixture f = fixture(6501, config);
        holder[0] = f;
        write(f);
        f.wire.runFor(1_000);
        final byte[] packet = fromA.get(fromA.size() - 1);
        final UnsafeBuffer b = new UnsafeBuffer(packet);
        f.wire.runFor(200_000 + WAIT_NS);
        ackArrivingAt(f, BaseHeader.psn(b, 0), BaseHeader.timestamp(b, 0), BaseHeader.pathId(b, 0),
            f.wire.now() - WAIT_NS);
        assertThat(f.a.qp.requester().rtt().hasSample()).isTrue();
        return f.a.qp.requester().rtt().latestRttNs();
    }

    @Test
    void theResponderReportsTheTimeAPacketWaitedInItsSocketAsHold() {
        final TwoNodeFixture f = fixture(6502, new EndpointConfig());
        write(f);
        f.wire.runFor(1_000);
        final byte[] packet = fromA.get(fromA.size() - 1);
        f.wire.runFor(WAIT_NS);
        // The WRITE reached B's host WAIT_NS ago; B reads it only now.
        f.b.endpoint.onDatagram(f.wire.now(), f.wire.now() - WAIT_NS, new UnsafeBuffer(packet), 0, packet.length,
            f.a.node, DatagramEndpoint.ECN_NOT_ECT);
        f.wire.runFor(100_000);
        assertThat(ackDelays).as("ACKs B sent").isNotEmpty();
        // Held from arrival to the ACK: the wait plus at most the coalescing delay (10 µs) [WIRE-061].
        assertThat(ackDelays.get(0)).isBetween(WAIT_NS, WAIT_NS + 20_000);
    }

    @Test
    void anArrivalAfterNowCountsAsNowAndOneMoreThanASecondOldIsIgnored() {
        final TwoNodeFixture f = fixture(6503, new EndpointConfig());
        write(f);
        f.wire.runFor(1_000);
        final byte[] packet = fromA.get(fromA.size() - 1);
        f.wire.runFor(50_000);
        f.b.endpoint.onDatagram(f.wire.now(), f.wire.now() + 5_000, new UnsafeBuffer(packet), 0, packet.length,
            f.a.node, DatagramEndpoint.ECN_NOT_ECT);
        f.wire.runFor(100_000);
        assertThat(ackDelays.get(0)).as("hold from now, not from the future").isBetween(0L, 20_000L);
        ackDelays.clear();
        write(f);
        f.wire.runFor(1_000);
        final byte[] second = fromA.get(fromA.size() - 1);
        f.wire.runFor(2_000_000_000L);
        f.b.endpoint.onDatagram(f.wire.now(), f.wire.now() - 1_500_000_000L, new UnsafeBuffer(second), 0,
            second.length, f.a.node, DatagramEndpoint.ECN_NOT_ECT);
        f.wire.runFor(100_000);
        assertThat(ackDelays).isNotEmpty();
        assertThat(ackDelays.get(ackDelays.size() - 1)).as("a stepped clock's arrival is not believed")
            .isBetween(0L, 20_000L);
    }
}
