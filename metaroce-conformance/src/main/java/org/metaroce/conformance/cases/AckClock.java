// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.conformance.cases;

import org.metaroce.conformance.suite.CaseContext;
import org.metaroce.conformance.tester.Packet;
import org.metaroce.conformance.tester.TesterQp;

/**
 * The tester as a selective-repeat responder that acknowledges every request packet of the IUT
 * after a chosen hold, as a network queue on the ACK path would delay it: each ACK carries the
 * responder state (Cumulative PSN, SACK bitmap) as of the packet's arrival and is released
 * {@code holdNs} later. The ACK Delay field reports the hold or not: reported, the IUT sees its
 * true round trip; unreported, it sees the hold as path delay (specification 6.4, [REL-020]).
 *
 * <p>It measures the IUT's outstanding data from the wire: when a new PSN x arrives, the IUT sent
 * it while it knew of no ACK the tester had not yet sent, so x + 1 − (highest Cumulative PSN sent)
 * is a lower bound of what the IUT had in flight, hence of its window [CC-001, REL-019].
 */
final class AckClock {
    private static final int MAX_PACKETS = 1 << 16;

    private final CaseContext ctx;
    private final TesterQp t;
    private final int base;
    private final boolean[] received = new boolean[MAX_PACKETS];
    private final java.util.ArrayDeque<long[]> due = new java.util.ArrayDeque<>();
    private final java.util.ArrayDeque<Packet> duePackets = new java.util.ArrayDeque<>();
    /** (send time, highest Cumulative PSN sent so far) of every ACK, in sending order. */
    private final java.util.ArrayDeque<long[]> sentAt = new java.util.ArrayDeque<>();
    private int cumulative;
    private int cumulativeSent;
    private int highest = -1;
    private int credit = 1024;
    private long holdNs;
    private long holdTargetNs;
    private long holdStepNs;
    private boolean reportHold = true;
    private int ackFlags;
    private int newPackets;
    private int repeats;

    AckClock(final CaseContext ctx, final TesterQp t, final int base) {
        this.ctx = ctx;
        this.t = t;
        this.base = base;
    }

    /** Credit granted from the Cumulative PSN in each ACK [REL-013]. */
    AckClock credit(final int packets) {
        credit = packets;
        return this;
    }

    /**
     * @param ns how long each ACK is held after its packet arrived
     * @param report whether ACK Delay reports the hold (else the IUT sees it as path delay)
     */
    AckClock hold(final long ns, final boolean report) {
        holdNs = ns;
        holdTargetNs = ns;
        holdStepNs = 0;
        reportHold = report;
        return this;
    }

    /**
     * Like {@link #hold}, but the hold grows by {@code stepNs} per ACK from its current value to
     * {@code ns}: the IUT's RTT estimate follows a queue that builds, as a real one does, instead of
     * a step that every retransmission timer based on the old RTT would take for loss.
     */
    AckClock rampHold(final long ns, final long stepNs, final boolean report) {
        holdTargetNs = ns;
        holdStepNs = stepNs;
        reportHold = report;
        return this;
    }

    /**
     * @param echo whether every ACK sent from now on carries ECN_ECHO, as if each request packet had
     *     arrived CE-marked (CE Count stays 0: the flag alone is the signal) [REL-018, CC-012]
     */
    AckClock ecnEcho(final boolean echo) {
        ackFlags = echo ? org.metaroce.core.wire.AckHeader.FLAG_ECN_ECHO : 0;
        return this;
    }

    /** @return distinct PSNs received so far */
    int newPackets() {
        return newPackets;
    }

    /** @return request packets that arrived again after their PSN had (retransmissions, probes) */
    int repeats() {
        return repeats;
    }

    /** @return whether offset {@code k} arrived */
    boolean received(final int k) {
        return k >= 0 && k < MAX_PACKETS && received[k];
    }

    /**
     * Serves until the IUT's next new PSN arrives, for at most {@code ms}, so that a phase timed after
     * it starts when the IUT sends, not when the agent was asked to post: a loaded host may take
     * tens of milliseconds to act on a command, and a 30 ms control phase would then see nothing.
     *
     * @return whether a new PSN arrived
     */
    boolean awaitNew(final long ms) {
        final int n = newPackets;
        run(ms, 1);
        return newPackets > n;
    }

    /**
     * Serves for {@code ms} or until {@code maxNew} new PSNs arrived.
     *
     * @return the largest outstanding amount, in packets, measured at a new PSN's arrival
     */
    int run(final long ms, final int maxNew) {
        final long end = System.nanoTime() + ms * 1_000_000L;
        int max = 0;
        final int stopAt = newPackets + maxNew;
        while (newPackets < stopAt) {
            final long now = System.nanoTime();
            if (now - end >= 0) {
                break;
            }
            sendDue(now);
            final long nextDue = due.isEmpty() ? end : Math.min(end, due.peekFirst()[0]);
            final long waitMs = Math.max(0, (nextDue - System.nanoTime()) / 1_000_000L);
            final Packet p = ctx.tester().poll(t::isRequest, waitMs);
            if (p == null) {
                continue;
            }
            final int k = p.psn() - base;
            if (k < 0 || k >= MAX_PACKETS) {
                continue;
            }
            if (!received[k]) {
                received[k] = true;
                newPackets++;
                if (k > highest) {
                    highest = k;
                    max = Math.max(max, k + 1 - cumulativeSentBefore(p.receivedNs()));
                }
                while (cumulative < MAX_PACKETS && received[cumulative]) {
                    cumulative++;
                }
            } else {
                repeats++;
            }
            long bitmap = 0;
            for (int i = cumulative + 1; i < MAX_PACKETS && i - cumulative - 1 < 64 && i <= highest; i++) {
                if (received[i]) {
                    bitmap |= 1L << (i - cumulative - 1);
                }
            }
            if (holdNs < holdTargetNs) {
                holdNs = Math.min(holdTargetNs, holdNs + holdStepNs);
            }
            due.addLast(new long[] {p.receivedNs() + holdNs, cumulative, bitmap, p.receivedNs()});
            duePackets.addLast(p);
        }
        return max;
    }

    /** Sends every ACK whose hold has passed, with the state it was given at its packet's arrival. */
    private void sendDue(final long now) {
        while (!due.isEmpty() && due.peekFirst()[0] - now <= 0) {
            final long[] d = due.pollFirst();
            final Packet p = duePackets.pollFirst();
            final int cum = (int) d[1];
            final long delay = reportHold ? Math.max(0, System.nanoTime() - d[3]) : 0;
            ctx.tester().inject(t.ack(p, base + cum).sack(d[2]).credit(credit).ackDelay(delay).ackFlags(ackFlags)
                .build());
            cumulativeSent = Math.max(cumulativeSent, cum);
            sentAt.addLast(new long[] {System.nanoTime(), cumulativeSent});
        }
    }

    /**
     * @return the highest Cumulative PSN (offset) of the ACKs the tester had sent before
     *     {@code ns}: ACKs sent later cannot have let the IUT send a packet that arrived at {@code ns}
     */
    private int cumulativeSentBefore(final long ns) {
        for (final java.util.Iterator<long[]> it = sentAt.descendingIterator(); it.hasNext();) {
            final long[] a = it.next();
            if (a[0] - ns < 0) {
                return (int) a[1];
            }
        }
        return 0;
    }
}
