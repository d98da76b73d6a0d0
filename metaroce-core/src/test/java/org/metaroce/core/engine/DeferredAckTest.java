// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.metaroce.core.congestion.CongestionControlAlgorithm;
import org.metaroce.core.testwire.LinkProfile;
import org.metaroce.core.verbs.RecvRequest;
import org.metaroce.core.verbs.SendFlags;
import org.metaroce.core.verbs.SendRequest;
import org.metaroce.core.verbs.WrOpcode;
import org.metaroce.core.wire.BaseHeader;
import org.metaroce.core.wire.ConnectHeader;
import org.metaroce.core.wire.Flags;
import org.metaroce.core.wire.Opcode;

/**
 * Deferred acknowledgements (DEFERRED_ACK, v1.0.16): the last packet of an unsignaled SEND goes
 * without ACK_REQ [REL-074]; the responder holds its ACK until a request of its own carries it or
 * ACK_DEFER_DELAY has passed [REL-073]; the requester's timers allow for the hold, so nothing is
 * probed or resent meanwhile [REL-074]; a signaled request and a requester that has to wait for the
 * ACK still ask for it at once.
 */
class DeferredAckTest {
    private static final int ATTACHED = ConnectHeader.CAP_ATTACHED_ACK;
    private static final int BOTH = ConnectHeader.CAP_ATTACHED_ACK | ConnectHeader.CAP_DEFERRED_ACK;
    private static final int ROUNDS = 30;
    private static final long SECOND = 1_000_000_000L;

    /** One packet on the wire: sender, opcode, flags, when. */
    private record Sent(int from, int opcode, int flags, long atNs) {
        boolean bareAck() {
            return opcode == Opcode.ACK.value();
        }
    }

    private static List<Sent> record(final ReactingPair p) {
        final List<Sent> sent = new ArrayList<>();
        p.wire.filter((from, to, buf, off, len, now) -> {
            sent.add(new Sent(from, BaseHeader.opcode(buf, off), BaseHeader.flags(buf, off), now));
            return false;
        });
        return sent;
    }

    private static void postRecvs(final ReactingPair.Node node, final int n) {
        for (int i = 0; i < n; i++) {
            node.qp.postRecv(new RecvRequest(1).wrId(i).addSge(node.address(8192 + 4096L * (i % 16)), 4096,
                node.mr.lkey()));
        }
    }

    private static void send(final ReactingPair.Node node, final long wrId, final boolean signaled) {
        node.qp.postSend(new SendRequest(1).wrId(wrId).opcode(WrOpcode.SEND)
            .sendFlags(signaled ? SendFlags.SIGNALED : 0).addSge(node.address(0), 64, node.mr.lkey()));
    }

    /** Runs the wire for {@code ns} of virtual time, leaving the clock there. */
    private static void runFor(final ReactingPair p, final long ns) {
        p.wire.runUntil(() -> false, ns);
    }

    private static long bareAcks(final List<Sent> sent, final int from) {
        return sent.stream().filter(s -> s.from() == from && s.bareAck()).count();
    }

    /**
     * The pattern of a collective operation: A sends two unsignaled messages 30 µs apart, B answers
     * the pair with one unsignaled message once both arrived, and A starts the next round on the
     * answer. An ACK of the first message is due while B has nothing to send A.
     */
    private static ReactingPair rounds(final int capabilities, final List<Sent> into) {
        final ReactingPair p = new ReactingPair(1601, LinkProfile.perfect(), new EndpointConfig())
            .connect(1024, capabilities, capabilities);
        final List<Sent> sent = record(p);
        postRecvs(p.a, ROUNDS);
        postRecvs(p.b, 2 * ROUNDS);
        p.b.onReceive = wc -> {
            if (p.b.recvCompletions.size() % 2 == 0) {
                send(p.b, p.b.recvCompletions.size(), false);
            }
        };
        for (int r = 0; r < ROUNDS; r++) {
            final int answers = r + 1;
            send(p.a, 2L * r, false);
            runFor(p, 30_000);
            send(p.a, 2L * r + 1, false);
            assertThat(p.wire.runUntil(() -> p.a.recvCompletions.size() == answers, SECOND)).as("%s", p.wire).isTrue();
        }
        // The last round's held ACKs leave on their own once ACK_DEFER_DELAY has passed.
        runFor(p, 2 * EndpointConfig.ACK_DEFER_DELAY_NS);
        into.addAll(sent);
        return p;
    }

    @Test
    void heldAcksRideOnTheNextRequestInsteadOfLeavingBare() {
        final List<Sent> deferred = new ArrayList<>();
        final ReactingPair with = rounds(BOTH, deferred);
        final List<Sent> attachedOnly = new ArrayList<>();
        final ReactingPair without = rounds(ATTACHED, attachedOnly);

        assertThat(with.b.recvCompletions).hasSize(2 * ROUNDS);
        assertThat(with.a.recvCompletions).hasSize(ROUNDS);
        // REL-073: every ACK but the final ones rode on a request.
        assertThat(bareAcks(deferred, with.b.id)).as("B's bare ACKs with DEFERRED_ACK").isLessThanOrEqualTo(1);
        assertThat(bareAcks(deferred, with.a.id)).as("A's bare ACKs with DEFERRED_ACK").isLessThanOrEqualTo(1);
        // Without it the first message of every round is acknowledged at once, alone.
        assertThat(bareAcks(attachedOnly, without.b.id)).isGreaterThanOrEqualTo(ROUNDS);
        // REL-074: the last packets of unsignaled SENDs asked for nothing, but only under the capability.
        assertThat(deferred.stream().filter(s -> s.opcode() == Opcode.SEND.value()))
            .allSatisfy(s -> assertThat(s.flags() & Flags.ACK_REQ).isZero());
        assertThat(attachedOnly.stream().filter(s -> s.opcode() == Opcode.SEND.value()))
            .allSatisfy(s -> assertThat(s.flags() & Flags.ACK_REQ).isEqualTo(Flags.ACK_REQ));
        // REL-074: the timers allowed for the hold: no probe, no timeout, nothing sent twice.
        for (final ReactingPair.Node n : List.of(with.a, with.b)) {
            assertThat(n.counter(EndpointCounter.TIMEOUTS)).isZero();
            assertThat(n.counter(EndpointCounter.RETRANSMITS_TAIL_PROBE)).isZero();
            assertThat(n.counter(EndpointCounter.TAIL_PROBES_ASKED)).isZero();
            assertThat(n.counter(EndpointCounter.TAIL_PROBES_NEW)).isZero();
            assertThat(n.counter(EndpointCounter.DUPLICATE_REQUESTS)).isZero();
        }
        assertThat(deferred.size()).as("datagrams with DEFERRED_ACK against without").isLessThan(attachedOnly.size());
    }

    @Test
    void aHeldAckLeavesAloneAfterAckDeferDelay() {
        final ReactingPair p = new ReactingPair(1602, LinkProfile.perfect(), new EndpointConfig()).connect(1024, BOTH, BOTH);
        final List<Sent> sent = record(p);
        postRecvs(p.b, 1);
        send(p.a, 1, false);
        runFor(p, 3 * EndpointConfig.ACK_DEFER_DELAY_NS);
        assertThat(p.b.recvCompletions).hasSize(1);
        final Sent request = sent.stream().filter(s -> s.opcode() == Opcode.SEND.value()).findFirst().orElseThrow();
        final List<Sent> acks = sent.stream().filter(s -> s.from() == p.b.id && s.bareAck()).toList();
        assertThat(sent.stream().filter(s -> s.opcode() != Opcode.KEEPALIVE.value())).hasSize(2);
        assertThat(acks).as("one ACK, late").hasSize(1);
        final long held = acks.get(0).atNs() - request.atNs();
        assertThat(held).as("from the request's transmission to the ACK's, ns")
            .isBetween(EndpointConfig.ACK_DEFER_DELAY_NS, EndpointConfig.ACK_DEFER_DELAY_NS + 20_000);
        assertThat(p.a.counter(EndpointCounter.TIMEOUTS) + p.a.counter(EndpointCounter.RETRANSMITS_TAIL_PROBE)
            + p.a.counter(EndpointCounter.TAIL_PROBES_ASKED)).isZero();
    }

    @Test
    void aSignaledRequestStillAsksAndIsAcknowledgedAtOnce() {
        final ReactingPair p = new ReactingPair(1603, LinkProfile.perfect(), new EndpointConfig()).connect(1024, BOTH, BOTH);
        final List<Sent> sent = record(p);
        postRecvs(p.b, 1);
        send(p.a, 7, true);
        assertThat(p.wire.runUntil(() -> p.a.sendCompletions.size() == 1, SECOND)).isTrue();
        final Sent request = sent.get(0);
        assertThat(request.flags() & Flags.ACK_REQ).isEqualTo(Flags.ACK_REQ);
        final Sent ack = sent.stream().filter(Sent::bareAck).findFirst().orElseThrow();
        assertThat(ack.atNs() - request.atNs()).as("the ACK is not held").isLessThan(EndpointConfig.ACK_DEFER_DELAY_NS / 10);
    }

    @Test
    void aStreamOfUnsignaledSendsNeverWaitsForAHeldAck() {
        // The requester asks whenever the window could not take another packet without the ACK [REL-074].
        final int messages = 200;
        final long[] took = new long[2];
        for (final int caps : new int[] {ATTACHED, BOTH}) {
            // A window of four packets, below ACK_COALESCE_PACKETS: only the requester's asking keeps it moving.
            final ReactingPair p = new ReactingPair(1604, LinkProfile.perfect(), new EndpointConfig())
                .connect(1024, caps, caps, CongestionControlAlgorithm.FIXED, 4);
            postRecvs(p.b, messages);
            final long start = p.wire.now();
            for (int i = 0; i < messages; i++) {
                send(p.a, i, false);
            }
            assertThat(p.wire.runUntil(() -> p.b.recvCompletions.size() == messages, SECOND)).isTrue();
            took[caps == BOTH ? 1 : 0] = p.wire.now() - start;
        }
        assertThat(took[1]).as("virtual ns with DEFERRED_ACK, against %d without", took[0])
            .isLessThan(took[0] + EndpointConfig.ACK_DEFER_DELAY_NS / 2);
    }
}
