// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.metaroce.core.testwire.LinkProfile;
import org.metaroce.core.verbs.RecvRequest;
import org.metaroce.core.verbs.SendFlags;
import org.metaroce.core.verbs.SendRequest;
import org.metaroce.core.verbs.WcStatus;
import org.metaroce.core.verbs.WorkCompletion;
import org.metaroce.core.verbs.WrOpcode;
import org.metaroce.core.wire.BaseHeader;
import org.metaroce.core.wire.ConnectHeader;
import org.metaroce.core.wire.Flags;
import org.metaroce.core.wire.IntegrityCheck;
import org.metaroce.core.wire.Opcode;
import org.metaroce.core.wire.WireConstants;

/**
 * ACKs attached to the queue pair's own request packets (v1.0.15): a request-reply exchange sends
 * no bare ACK in steady state with ATTACHED_ACK and one per message without [REL-071]; the
 * attached ACK completes the peer's SEND [REL-070]; one on a QP without the capability is dropped
 * whole and counted [REL-070]; NACKs leave bare; the size rule [WIRE-073]; a lost packet that
 * carried an ACK is repaired by the normal means; READ_REQUESTs and atomics carry one too; and the
 * ACK part is taken whatever the responder does with the request part.
 */
class AttachedAckTest {
    private static final int CAP = ConnectHeader.CAP_ATTACHED_ACK;
    private static final int ROUNDS = 40;
    private static final long SECOND = 1_000_000_000L;

    /** One packet on the wire: sender, opcode, flags. */
    private record Sent(int from, int opcode, int flags) {
        boolean attached() {
            return (flags & Flags.ATTACHED_ACK) != 0;
        }
    }

    private static List<Sent> record(final ReactingPair p) {
        final List<Sent> sent = new ArrayList<>();
        p.wire.filter((from, to, buf, off, len, now) -> {
            sent.add(new Sent(from, BaseHeader.opcode(buf, off), BaseHeader.flags(buf, off)));
            return false;
        });
        return sent;
    }

    private static long count(final List<Sent> sent, final int from, final Opcode opcode) {
        return sent.stream().filter(s -> s.from() == from && s.opcode() == opcode.value()).count();
    }

    private static void postRecvs(final ReactingPair.Node node, final int n) {
        for (int i = 0; i < n; i++) {
            node.qp.postRecv(new RecvRequest(1).wrId(i).addSge(node.address(8192 + 4096L * (i % 16)), 4096,
                node.mr.lkey()));
        }
    }

    private static void send(final ReactingPair.Node node, final long wrId, final int size) {
        node.qp.postSend(new SendRequest(1).wrId(wrId).opcode(WrOpcode.SEND).sendFlags(SendFlags.SIGNALED)
            .addSge(node.address(0), size, node.mr.lkey()));
    }

    /** A sends {@code rounds} pings; B answers each with a pong posted on its receive, A the next ping on the pong's. */
    private static void pingPong(final ReactingPair p, final int rounds, final int pongSize) {
        postRecvs(p.a, rounds);
        postRecvs(p.b, rounds);
        p.b.onReceive = wc -> send(p.b, wc.wrId(), pongSize);
        p.a.onReceive = wc -> {
            if (p.a.recvCompletions.size() < rounds) {
                send(p.a, p.a.recvCompletions.size(), 64);
            }
        };
        send(p.a, 0, 64);
        assertThat(p.wire.runUntil(() -> p.a.recvCompletions.size() == rounds && p.a.sendCompletions.size() == rounds
            && p.b.sendCompletions.size() == rounds, SECOND)).as("%s", p.wire).isTrue();
        assertThat(p.a.sendCompletions).extracting(WorkCompletion::status).containsOnly(WcStatus.SUCCESS);
        assertThat(p.b.sendCompletions).extracting(WorkCompletion::status).containsOnly(WcStatus.SUCCESS);
    }

    @Test
    void aSendPingPongSendsNoBareAckWithTheCapabilityAndOnePerMessageWithout() {
        final ReactingPair with = new ReactingPair(1501, LinkProfile.perfect(), new EndpointConfig()).connect(1024, CAP, CAP);
        final List<Sent> sentWith = record(with);
        pingPong(with, ROUNDS, 64);
        assertThat(count(sentWith, with.b.id, Opcode.ACK)).as("B's ACKs of pings all ride on pongs").isZero();
        assertThat(count(sentWith, with.a.id, Opcode.ACK)).as("A's: only the last pong's, which no ping follows")
            .isEqualTo(1);
        assertThat(with.b.counter(EndpointCounter.ACKS_ATTACHED_OUT)).isEqualTo(ROUNDS);
        assertThat(with.a.counter(EndpointCounter.ACKS_ATTACHED_IN)).isEqualTo(ROUNDS);
        assertThat(with.a.counter(EndpointCounter.ACKS_ATTACHED_OUT)).isEqualTo(ROUNDS - 1);
        assertThat(with.b.counter(EndpointCounter.ACKS_ATTACHED_IN)).isEqualTo(ROUNDS - 1);
        assertThat(sentWith.stream().filter(Sent::attached).allMatch(s -> s.opcode() == Opcode.SEND.value())).isTrue();
        assertThat(with.a.counter(EndpointCounter.RETRANSMITS_TAIL_PROBE)
            + with.b.counter(EndpointCounter.RETRANSMITS_TAIL_PROBE)).isZero();

        final ReactingPair without = new ReactingPair(1501, LinkProfile.perfect(), new EndpointConfig()).connect(1024, 0, 0);
        final List<Sent> sentWithout = record(without);
        pingPong(without, ROUNDS, 64);
        assertThat(count(sentWithout, without.b.id, Opcode.ACK)).isEqualTo(ROUNDS);
        assertThat(count(sentWithout, without.a.id, Opcode.ACK)).isEqualTo(ROUNDS);
        assertThat(sentWithout.stream().noneMatch(Sent::attached)).isTrue();
        assertThat(sentWith.size()).as("datagrams with against without").isEqualTo(2 * ROUNDS + 1);
        assertThat(sentWithout.size()).isEqualTo(4 * ROUNDS);
    }

    @Test
    void aPongThatWouldOutgrowAFullWriteWithImmLeavesItsAckBare() {
        // 40 + 1024 + 36 > 60 + 1024, 40 + 1008 + 36 = 60 + 1024 [WIRE-073].
        final ReactingPair full = new ReactingPair(1502, LinkProfile.perfect(), new EndpointConfig()).connect(1024, CAP, CAP);
        final List<Sent> sentFull = record(full);
        pingPong(full, ROUNDS, 1024);
        assertThat(count(sentFull, full.b.id, Opcode.ACK)).isEqualTo(ROUNDS);
        assertThat(full.b.counter(EndpointCounter.ACKS_ATTACHED_OUT)).isZero();

        final ReactingPair fits = new ReactingPair(1502, LinkProfile.perfect(), new EndpointConfig()).connect(1024, CAP, CAP);
        final List<Sent> sentFits = record(fits);
        pingPong(fits, ROUNDS, 1008);
        assertThat(count(sentFits, fits.b.id, Opcode.ACK)).isZero();
        assertThat(fits.b.counter(EndpointCounter.ACKS_ATTACHED_OUT)).isEqualTo(ROUNDS);
    }

    @Test
    void aLostPacketThatCarriedAnAckIsRepairedAndNothingHangs() {
        for (final int lost : new int[] {1, 5, ROUNDS}) {
            final ReactingPair p = new ReactingPair(1503 + lost, LinkProfile.perfect(), new EndpointConfig())
                .connect(1024, CAP, CAP);
            final int[] seen = {0};
            // Drops the lost-th pong that carries an ACK, and with it the ACK of a ping.
            p.wire.filter((from, to, buf, off, len, now) -> from == p.b.id
                && (BaseHeader.flags(buf, off) & Flags.ATTACHED_ACK) != 0 && ++seen[0] == lost);
            pingPong(p, ROUNDS, 64);
            assertThat(p.a.counter(EndpointCounter.ACKS_ATTACHED_IN)).as("lost %d", lost).isEqualTo(ROUNDS - 1);
            System.out.println("lost " + lost + ": A " + p.a.endpoint.counters() + "; B " + p.b.endpoint.counters());
        }
    }

    @Test
    void nacksLeaveBare() {
        final ReactingPair p = new ReactingPair(1504, LinkProfile.perfect(), new EndpointConfig()).connect(1024, CAP, CAP);
        final List<Sent> sent = record(p);
        postRecvs(p.a, 8);
        // B has no receive posted: A's SENDs earn RNR NACKs while B streams SENDs of its own to A.
        for (int i = 0; i < 8; i++) {
            send(p.b, i, 64);
        }
        send(p.a, 0, 64);
        p.wire.runUntil(() -> p.b.counter(EndpointCounter.RNR_NACKS_OUT) > 0 && p.a.sendCompletions.size() == 0
            && p.b.sendCompletions.size() == 8, SECOND / 100);
        assertThat(p.b.counter(EndpointCounter.RNR_NACKS_OUT)).isPositive();
        assertThat(count(sent, p.b.id, Opcode.NACK)).as("every NACK a datagram of its own")
            .isEqualTo(p.b.counter(EndpointCounter.NACKS_OUT));
        postRecvs(p.b, 1);
        assertThat(p.wire.runUntil(() -> p.a.sendCompletions.size() == 1, SECOND)).isTrue();
        assertThat(p.a.sendCompletions.get(0).status()).isEqualTo(WcStatus.SUCCESS);
    }

    @Test
    void readRequestsAndAtomicsCarryTheAckOfTheSendTheyAnswer() {
        for (final WrOpcode op : new WrOpcode[] {WrOpcode.RDMA_READ, WrOpcode.ATOMIC_FETCH_ADD, WrOpcode.ATOMIC_CMP_SWAP}) {
            final ReactingPair p = new ReactingPair(1505, LinkProfile.perfect(), new EndpointConfig())
                .connect(1024, CAP, CAP);
            final List<Sent> sent = record(p);
            postRecvs(p.a, 1);
            p.a.onReceive = wc -> p.a.qp.postSend(new SendRequest(1).wrId(7).opcode(op).sendFlags(SendFlags.SIGNALED)
                .addSge(p.a.address(4096), 8, p.a.mr.lkey()).remoteAddr(p.b.address(64)).rkey(p.b.mr.rkey())
                .compareAdd(0).swap(9));
            send(p.b, 1, 64);
            assertThat(p.wire.runUntil(() -> p.a.sendCompletions.size() == 1 && p.b.sendCompletions.size() == 1,
                SECOND)).as(op.name()).isTrue();
            assertThat(p.b.sendCompletions.get(0).status()).as(op.name()).isEqualTo(WcStatus.SUCCESS);
            assertThat(p.a.sendCompletions.get(0).status()).as(op.name()).isEqualTo(WcStatus.SUCCESS);
            assertThat(count(sent, p.a.id, Opcode.ACK)).as(op.name() + ": no bare ACK from A").isZero();
            assertThat(sent.stream().filter(s -> s.from() == p.a.id && s.attached()).map(Sent::opcode).toList())
                .as(op.name()).hasSize(1).doesNotContain(Opcode.SEND.value());
            assertThat(p.b.counter(EndpointCounter.ACKS_ATTACHED_IN)).as(op.name()).isEqualTo(1);
        }
    }

    /**
     * Forges {@code request} (a sealed request packet) with ATTACHED_ACK and a trailer: the
     * Triggering PSN and the ACK header of {@code ack} (a sealed bare ACK), then seals it again.
     */
    private static UnsafeBuffer attach(final byte[] request, final byte[] ack) {
        final UnsafeBuffer forged = new UnsafeBuffer(new byte[request.length + WireConstants.ATTACHED_ACK_LENGTH]);
        final int covered = request.length - WireConstants.INTEGRITY_CHECK_LENGTH;
        forged.putBytes(0, request, 0, covered);
        forged.putShort(2, (short) (BaseHeader.flags(forged, 0) | Flags.ATTACHED_ACK), ByteOrder.BIG_ENDIAN);
        final UnsafeBuffer bare = new UnsafeBuffer(ack);
        forged.putInt(covered, BaseHeader.psn(bare, 0), ByteOrder.BIG_ENDIAN);
        forged.putBytes(covered + 4, ack, Opcode.ACK.ackOffset(), WireConstants.ACK_HEADER_LENGTH);
        new IntegrityCheck().seal(forged, 0, covered + WireConstants.ATTACHED_ACK_LENGTH);
        return forged;
    }

    private static byte[] copy(final org.agrona.DirectBuffer buf, final int off, final int len) {
        final byte[] bytes = new byte[len];
        buf.getBytes(off, bytes);
        return bytes;
    }

    /**
     * B's SEND waits for its ACK, which the wire dropped; A's old ping, already received, comes again
     * carrying that ACK: the request part is a duplicate, the ACK part completes B's SEND [REL-070].
     * The same packet on a QP without the capability is dropped whole and counted.
     */
    @Test
    void theAckPartIsTakenWhateverTheRequestPartIsAndDroppedWholeWithoutTheCapability() {
        for (final boolean negotiated : new boolean[] {true, false}) {
            final ReactingPair p = new ReactingPair(1506, LinkProfile.perfect(), new EndpointConfig())
                .connect(1024, negotiated ? CAP : 0, negotiated ? CAP : 0);
            final byte[][] ping = new byte[1][];
            final byte[][] ack = new byte[1][];
            p.wire.filter((from, to, buf, off, len, now) -> {
                if (from == p.a.id && BaseHeader.opcode(buf, off) == Opcode.SEND.value() && ping[0] == null) {
                    ping[0] = copy(buf, off, len);
                }
                if (from == p.a.id && BaseHeader.opcode(buf, off) == Opcode.ACK.value() && ping[0] != null
                    && p.a.recvCompletions.size() == 1) {
                    ack[0] = copy(buf, off, len);
                    return true;
                }
                return false;
            });
            postRecvs(p.a, 1);
            postRecvs(p.b, 1);
            send(p.a, 0, 64);
            assertThat(p.wire.runUntil(() -> p.a.sendCompletions.size() == 1, SECOND)).isTrue();
            send(p.b, 0, 64);
            assertThat(p.wire.runUntil(() -> ack[0] != null, SECOND)).isTrue();
            assertThat(p.b.sendCompletions).as("its ACK was dropped").isEmpty();
            final int expected = p.b.qp.expectedReceivePsn();

            final UnsafeBuffer forged = attach(ping[0], ack[0]);
            p.b.onDatagram(p.wire.now(), forged, 0, forged.capacity(), p.a.id, 0);

            if (negotiated) {
                assertThat(p.b.sendCompletions).as("completed by the attached ACK of a duplicate").hasSize(1);
                assertThat(p.b.sendCompletions.get(0).status()).isEqualTo(WcStatus.SUCCESS);
                assertThat(p.b.counter(EndpointCounter.ACKS_ATTACHED_IN)).isEqualTo(1);
                assertThat(p.b.counter(EndpointCounter.ATTACHED_ACK_NOT_NEGOTIATED)).isZero();
            } else {
                assertThat(p.b.sendCompletions).isEmpty();
                assertThat(p.b.counter(EndpointCounter.ATTACHED_ACK_NOT_NEGOTIATED)).isEqualTo(1);
                assertThat(p.b.counter(EndpointCounter.ACKS_ATTACHED_IN)).isZero();
                assertThat(p.b.qp.expectedReceivePsn()).isEqualTo(expected);
            }
            assertThat(p.b.recvCompletions).hasSize(1);
        }
    }
}
