// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.conformance;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;

import org.agrona.concurrent.UnsafeBuffer;
import org.metaroce.conformance.proxy.FaultProxy;
import org.metaroce.conformance.proxy.PacketMutator;
import org.metaroce.conformance.tester.Packet;
import org.metaroce.conformance.tester.PacketBuilder;
import org.metaroce.core.wire.AckHeader;
import org.metaroce.core.wire.BaseHeader;
import org.metaroce.core.wire.ConnectHeader;
import org.metaroce.core.wire.Flags;
import org.metaroce.core.wire.NackReason;
import org.metaroce.core.wire.Opcode;

/**
 * Deliberately broken IUTs built from the correct one: packet-rewriting shims that sit in front
 * of the reference agent, so that from the wire the IUT behaves as a buggy implementation would.
 * Each mutant names the behaviour it fakes; the mutation test asserts the suite fails it.
 */
final class Mutants {
    private Mutants() {
    }

    private static Packet parse(final byte[] d) {
        return new Packet(d, null, 0);
    }

    /** Ignores the integrity check: the shim repairs every corrupted CRC before the IUT sees it. */
    static PacketMutator ignoresIntegrityCheck() {
        return (toTarget, d) -> {
            if (toTarget) {
                PacketBuilder.reseal(d);
            }
            return List.of(d);
        };
    }

    /** Accepts a bad rkey: a NACK REMOTE_ACCESS leaves the IUT as an ACK of the offending packet. */
    static PacketMutator acceptsBadRkey() {
        return (toTarget, d) -> {
            final Packet p = parse(d);
            if (!toTarget && p.wellFormed() && p.opcode() == Opcode.NACK
                && p.nackReason() == NackReason.REMOTE_ACCESS.code()) {
                return List.of(PacketBuilder.of(Opcode.ACK).destQpn(p.destQpn()).srcQpn(p.sourceQpn()).psn(p.psn())
                    .cumulativePsn(p.nackPsn() + 1).echoedTimestamp(p.echoedTimestamp()).credit(p.credit()).build());
            }
            return List.of(d);
        };
    }

    private static final java.util.concurrent.ScheduledExecutorService LATER =
        java.util.concurrent.Executors.newSingleThreadScheduledExecutor(r -> {
            final Thread t = new Thread(r, "mutant-timer");
            t.setDaemon(true);
            return t;
        });

    /**
     * Go-back-N instead of selective repeat: every retransmission is followed, one RTO-like 2 ms
     * later, by every later packet of the QP again (as RoCEv2 does on a timeout).
     */
    static PacketMutator resendsEverything(final AtomicReference<FaultProxy> proxy) {
        final Map<Integer, List<byte[]>> sent = new HashMap<>();
        return (toTarget, d) -> {
            final Packet p = parse(d);
            if (toTarget || !p.wellFormed() || !p.opcode().isRequest()) {
                return List.of(d);
            }
            final List<byte[]> history = sent.computeIfAbsent(p.sourceQpn(), k -> new ArrayList<>());
            if (!p.has(Flags.RETRANSMIT)) {
                history.add(d.clone());
                return List.of(d);
            }
            final List<byte[]> out = new ArrayList<>();
            for (final byte[] h : history) {
                if (parse(h).psn() - p.psn() > 0) {
                    final byte[] copy = h.clone();
                    final UnsafeBuffer b = new UnsafeBuffer(copy);
                    BaseHeader bh = new BaseHeader();
                    bh.wrap(b, 0).flags(bh.flags() | Flags.RETRANSMIT);
                    PacketBuilder.reseal(copy);
                    out.add(copy);
                }
            }
            LATER.schedule(() -> out.forEach(c -> proxy.get().inject(false, c)), 2,
                java.util.concurrent.TimeUnit.MILLISECONDS);
            return List.of(d);
        };
    }

    /** ACKs the wrong PSN: every Cumulative PSN is one too high. */
    static PacketMutator acksWrongPsn() {
        return (toTarget, d) -> {
            final Packet p = parse(d);
            if (!toTarget && p.wellFormed() && p.opcode() == Opcode.ACK) {
                new AckHeader().wrap(new UnsafeBuffer(d), Opcode.ACK.ackOffset()).cumulativePsn(p.cumulativePsn() + 1);
                PacketBuilder.reseal(d);
            }
            return List.of(d);
        };
    }

    /**
     * Ignores the Credit: every ACK reaches the IUT's requester as if it granted 4096 PSNs, so an
     * IUT that honours the field sends what an IUT that ignores it would.
     */
    static PacketMutator ignoresCredit() {
        return (toTarget, d) -> {
            final Packet p = parse(d);
            if (toTarget && p.wellFormed() && (p.opcode() == Opcode.ACK || p.opcode() == Opcode.NACK)) {
                new AckHeader().wrap(new UnsafeBuffer(d), p.opcode().ackOffset()).credit(4096);
                PacketBuilder.reseal(d);
            }
            return List.of(d);
        };
    }

    /**
     * Ignores ECN echo: every ACK and NACK reaches the IUT's requester without ECN_ECHO and with CE
     * Count 0, so an IUT that reacts to marks behaves as one that ignores them (ECN still negotiated).
     */
    static PacketMutator stripsEcnEcho() {
        return (toTarget, d) -> {
            final Packet p = parse(d);
            if (toTarget && p.wellFormed() && (p.opcode() == Opcode.ACK || p.opcode() == Opcode.NACK)) {
                final AckHeader h = new AckHeader().wrap(new UnsafeBuffer(d), p.opcode().ackOffset());
                h.ackFlags(h.ackFlags() & ~AckHeader.FLAG_ECN_ECHO).ceCount(0);
                PacketBuilder.reseal(d);
            }
            return List.of(d);
        };
    }

    /**
     * Claims GO_BACK_N in every CONNECT_REPLY: with an agent that does not offer the capability,
     * an IUT that negotiates go-back-N but runs selective repeat.
     */
    static PacketMutator claimsGoBackN() {
        return (toTarget, d) -> {
            final Packet p = parse(d);
            if (!toTarget && p.wellFormed() && p.opcode() == Opcode.CONNECT_REPLY) {
                new ConnectHeader().wrap(new UnsafeBuffer(d), Opcode.CONNECT_REPLY.cmOffset())
                    .capabilities(p.capabilities() | ConnectHeader.CAP_GO_BACK_N);
                PacketBuilder.reseal(d);
            }
            return List.of(d);
        };
    }

    /**
     * Resends only the NACK PSN of a NACK SEQUENCE_GAP, not everything after it (selective repeat's
     * answer where go-back-N is negotiated): other retransmissions never leave the shim.
     */
    static PacketMutator resendsOnlyNackPsn() {
        final int[] nackPsn = {0};
        final boolean[] seen = {false};
        return (toTarget, d) -> {
            final Packet p = parse(d);
            if (!p.wellFormed()) {
                return List.of(d);
            }
            if (toTarget && p.opcode() == Opcode.NACK) {
                nackPsn[0] = p.nackPsn();
                seen[0] = true;
            } else if (!toTarget && seen[0] && p.opcode().isRequest() && p.has(Flags.RETRANSMIT)
                && p.psn() != nackPsn[0]) {
                return List.of();
            }
            return List.of(d);
        };
    }

    /**
     * Advertises more Responder Resources than it holds: every CONNECT_REPLY claims
     * {@code claimed}, while the reference behind holds what it was configured with.
     */
    static PacketMutator claimsResponderResources(final int claimed) {
        return (toTarget, d) -> {
            final Packet p = parse(d);
            if (!toTarget && p.wellFormed() && p.opcode() == Opcode.CONNECT_REPLY) {
                new ConnectHeader().wrap(new UnsafeBuffer(d), Opcode.CONNECT_REPLY.cmOffset())
                    .responderResources(claimed);
                PacketBuilder.reseal(d);
            }
            return List.of(d);
        };
    }

    /** Sprays a single-path QP: every data packet of the IUT leaves on Path ID 1 [MP-015]. */
    static PacketMutator spraysSinglePath() {
        return (toTarget, d) -> {
            final Packet p = parse(d);
            if (!toTarget && p.wellFormed() && p.opcode().isRequest()) {
                final org.metaroce.core.wire.BaseHeader h = new org.metaroce.core.wire.BaseHeader();
                h.wrap(new UnsafeBuffer(d), 0);
                h.pathId(1);
                PacketBuilder.reseal(d);
            }
            return List.of(d);
        };
    }

    /** Echoes Path ID 0 whatever path the triggering packet came on [CC-009]. */
    static PacketMutator echoesPathZero() {
        return (toTarget, d) -> {
            final Packet p = parse(d);
            if (!toTarget && p.wellFormed() && p.opcode() == Opcode.ACK) {
                final AckHeader h = new AckHeader();
                h.wrap(new UnsafeBuffer(d), Opcode.ACK.ackOffset());
                h.echoedPathId(0);
                PacketBuilder.reseal(d);
            }
            return List.of(d);
        };
    }

    /** Never sends RNR: RNR NACKs are swallowed. */
    static PacketMutator neverSendsRnr() {
        return (toTarget, d) -> {
            final Packet p = parse(d);
            if (!toTarget && p.wellFormed() && p.opcode() == Opcode.NACK && p.nackReason() == NackReason.RNR.code()) {
                return List.of();
            }
            return List.of(d);
        };
    }

    /** Accepts any PSN: a request far outside the window is moved to the responder's cumulative point. */
    static PacketMutator acceptsAnyPsn() {
        final Map<Integer, Integer> cumulative = new HashMap<>();
        final Map<Long, Integer> initialPsns = new HashMap<>();
        return (toTarget, d) -> {
            final Packet p = parse(d);
            if (!p.wellFormed()) {
                return List.of(d);
            }
            if (toTarget && p.opcode() == Opcode.CONNECT_REQUEST) {
                initialPsns.put(p.transactionId(), p.initialPsn());
            } else if (!toTarget && p.opcode() == Opcode.CONNECT_REPLY && initialPsns.containsKey(p.transactionId())) {
                cumulative.put(p.sourceQpn(), initialPsns.get(p.transactionId()));
            } else if (!toTarget && p.opcode() == Opcode.ACK) {
                cumulative.put(p.sourceQpn(), p.cumulativePsn());
            } else if (toTarget && p.opcode().isRequest()) {
                final Integer cum = cumulative.get(p.destQpn());
                if (cum != null && Math.abs(p.psn() - cum) >= 1 << 20) {
                    new BaseHeader().wrap(new UnsafeBuffer(d), 0).psn(cum);
                    PacketBuilder.reseal(d);
                }
            }
            return List.of(d);
        };
    }

    /** Answers every KEEPALIVE, as if ACK_REQ were always set. */
    static PacketMutator answersEveryKeepalive() {
        return (toTarget, d) -> {
            final Packet p = parse(d);
            if (toTarget && p.wellFormed() && p.opcode() == Opcode.KEEPALIVE) {
                final BaseHeader bh = new BaseHeader();
                bh.wrap(new UnsafeBuffer(d), 0).flags(bh.flags() | Flags.ACK_REQ);
                PacketBuilder.reseal(d);
            }
            return List.of(d);
        };
    }

    /** Never marks duplicates: the DUPLICATE flag is cleared from every ACK. */
    static PacketMutator noDuplicateFlag() {
        return (toTarget, d) -> {
            final Packet p = parse(d);
            if (!toTarget && p.wellFormed() && p.opcode() == Opcode.ACK) {
                new AckHeader().wrap(new UnsafeBuffer(d), Opcode.ACK.ackOffset()).ackFlags(p.ackFlags()
                    & ~AckHeader.FLAG_DUPLICATE);
                PacketBuilder.reseal(d);
            }
            return List.of(d);
        };
    }

    /**
     * Keeps state for unverified handshakes: the shim answers the server's CONNECT_CHALLENGE itself,
     * so every first CONNECT_REQUEST leads to a connection without the client proving its address.
     */
    static PacketMutator skipsCookieCheck(final AtomicReference<FaultProxy> proxy) {
        return skipsCookieCheck(proxy, false);
    }

    /**
     * As {@link #skipsCookieCheck(AtomicReference)}; with {@code forwardChallenge} the challenge
     * also reaches the client, so a client that completes its handshake itself still connects
     * (its second request is a duplicate the IUT answers again, CM-025) while every spoofed
     * first request still ends in a connection.
     */
    static PacketMutator skipsCookieCheck(final AtomicReference<FaultProxy> proxy, final boolean forwardChallenge) {
        final Map<Long, byte[]> firstRequests = new HashMap<>();
        return (toTarget, d) -> {
            final Packet p = parse(d);
            if (!p.wellFormed()) {
                return List.of(d);
            }
            if (toTarget && p.opcode() == Opcode.CONNECT_REQUEST) {
                firstRequests.putIfAbsent(p.transactionId(), d.clone());
            } else if (!toTarget && p.opcode() == Opcode.CONNECT_CHALLENGE) {
                final byte[] first = firstRequests.get(p.transactionId());
                if (first != null) {
                    final byte[] second = first.clone();
                    new ConnectHeader().wrap(new UnsafeBuffer(second), Opcode.CONNECT_REQUEST.cmOffset())
                        .putCookie(new UnsafeBuffer(p.cookie()), 0);
                    PacketBuilder.reseal(second);
                    proxy.get().inject(true, second);
                    return forwardChallenge ? List.of(d) : List.of();
                }
            }
            return List.of(d);
        };
    }
}
