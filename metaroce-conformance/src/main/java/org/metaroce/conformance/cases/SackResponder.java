// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.conformance.cases;

import java.util.ArrayList;
import java.util.List;

import org.metaroce.conformance.suite.CaseContext;
import org.metaroce.conformance.tester.Packet;
import org.metaroce.conformance.tester.TesterQp;
import org.metaroce.core.wire.AckHeader;

/**
 * The tester as a minimal selective-repeat responder for the IUT's requests (specification 6.4),
 * with scripted loss: it "loses" the first {@code drops[k]} transmissions of PSN base + k (they are
 * recorded but neither marked nor acknowledged, as if a switch had dropped them) and answers every
 * other arrival with an ACK carrying its cumulative point and SACK bitmap. Everything the IUT sent
 * is recorded for the case to judge.
 */
final class SackResponder {
    private final CaseContext ctx;
    private final TesterQp t;
    private final int base;
    private final int n;
    private final int[] drops;
    private final int[] transmissions;
    private final boolean[] received;
    /** Per PSN offset: when the IUT had certainly processed the tester's ACK of it (0 = not yet). */
    private final long[] settledNs;
    private int originals;
    private int fenceStamp = 0x7E570000;
    final List<Packet> arrivals = new ArrayList<>();

    SackResponder(final CaseContext ctx, final TesterQp t, final int base, final int n, final int[] drops) {
        this.ctx = ctx;
        this.t = t;
        this.base = base;
        this.n = n;
        this.drops = drops;
        this.transmissions = new int[n];
        this.received = new boolean[n];
        this.settledNs = new long[n];
    }

    /**
     * Answers arrivals until every PSN has been received, then keeps answering for {@code settleMs}
     * to catch needless retransmissions.
     *
     * @return whether every PSN arrived within {@code timeoutMs}
     */
    boolean run(final long timeoutMs, final long settleMs) {
        final long deadline = System.nanoTime() + timeoutMs * 1_000_000L;
        while (cumulative() != n) {
            final long left = (deadline - System.nanoTime()) / 1_000_000L;
            if (left <= 0) {
                return false;
            }
            handle(ctx.tester().poll(t::isRequest, left));
        }
        final long settleEnd = System.nanoTime() + settleMs * 1_000_000L;
        while (true) {
            final long left = (settleEnd - System.nanoTime()) / 1_000_000L;
            if (left <= 0) {
                return true;
            }
            handle(ctx.tester().poll(t::isRequest, left));
        }
    }

    /** Keeps answering retransmissions for {@code ms} (a lost final ACK is repaired this way). */
    void serve(final long ms) {
        final long end = System.nanoTime() + ms * 1_000_000L;
        while (true) {
            final long left = (end - System.nanoTime()) / 1_000_000L;
            if (left <= 0) {
                return;
            }
            handle(ctx.tester().poll(t::isRequest, left));
        }
    }

    private void handle(final Packet p) {
        if (p == null) {
            return;
        }
        arrivals.add(p);
        final int k = p.psn() - base;
        if (k < 0 || k >= n) {
            return;
        }
        final int tx = transmissions[k]++;
        if (tx == 0) {
            originals++;
        }
        if (tx < drops[k]) {
            fenceAfterOriginals();
            return;
        }
        final boolean duplicate = received[k];
        received[k] = true;
        final int cum = cumulative();
        long bitmap = 0;
        for (int i = cum + 1; i < n && i - cum - 1 < 64; i++) {
            if (received[i]) {
                bitmap |= 1L << (i - cum - 1);
            }
        }
        ctx.tester().inject(t.ack(p, base + cum).sack(bitmap).ackFlags(duplicate ? AckHeader.FLAG_DUPLICATE : 0)
            .build());
        if (tx > 0 && !duplicate) {
            // A lost packet just arrived: once the IUT has this ACK, any further copy is needless.
            final long f = fence();
            settledNs[k] = f;
        }
        fenceAfterOriginals();
    }

    /** Once every original has arrived: every PSN delivered so far is settled at the fence. */
    private void fenceAfterOriginals() {
        if (originals != n || settledNs.length == 0 || fenceDone) {
            return;
        }
        fenceDone = true;
        final long f = fence();
        for (int j = 0; j < n; j++) {
            if (received[j] && settledNs[j] == 0) {
                settledNs[j] = f;
            }
        }
    }

    private boolean fenceDone;

    /**
     * Sends a KEEPALIVE with ACK_REQ and waits for its answer. The IUT handles a peer's packets in
     * order, so when the answer arrives it has processed every ACK sent before the KEEPALIVE:
     * what it sends afterwards is decided with that knowledge [CM-028].
     *
     * @return arrival time of the answer ({@link System#nanoTime()})
     */
    private long fence() {
        final int stamp = ++fenceStamp;
        ctx.tester().inject(org.metaroce.conformance.tester.PacketBuilder.of(org.metaroce.core.wire.Opcode.KEEPALIVE)
            .destQpn(t.iutQpn).srcQpn(t.qpn).flags(org.metaroce.core.wire.Flags.ACK_REQ).psn(t.sendPsn)
            .timestamp(stamp).build());
        final Packet answer = ctx.tester().poll(q -> t.fromIut(q) && q.opcode() == org.metaroce.core.wire.Opcode.ACK
            && q.echoedTimestamp() == stamp, CaseContext.EXPECT_MS);
        return answer != null ? answer.receivedNs() : System.nanoTime();
    }

    /**
     * @return copies the IUT sent of PSNs it already knew were delivered, as "offset@us-after-fence",
     *     i.e. needless retransmissions
     */
    List<String> needless() {
        final List<String> out = new ArrayList<>();
        for (final Packet p : arrivals) {
            final int k = p.psn() - base;
            if (k >= 0 && k < n && settledNs[k] != 0 && p.receivedNs() > settledNs[k]) {
                out.add(k + "@" + (p.receivedNs() - settledNs[k]) / 1000 + "us");
            }
        }
        return out;
    }

    private int cumulative() {
        int c = 0;
        while (c < n && received[c]) {
            c++;
        }
        return c;
    }

    /** @return how many times PSN base + k was transmitted */
    int transmissions(final int k) {
        return transmissions[k];
    }

    /** @return the arrivals as "offset[R]@ms" for failure messages */
    String describe() {
        final StringBuilder sb = new StringBuilder();
        final long t0 = arrivals.isEmpty() ? 0 : arrivals.get(0).receivedNs();
        for (final Packet p : arrivals) {
            sb.append(p.psn() - base).append(p.has(org.metaroce.core.wire.Flags.RETRANSMIT) ? "R" : "")
                .append('@').append((p.receivedNs() - t0) / 1000).append("us ");
        }
        return sb.toString().trim();
    }

    /** @return the PSN offsets sent more than once */
    List<Integer> retransmitted() {
        final List<Integer> l = new ArrayList<>();
        for (int k = 0; k < n; k++) {
            if (transmissions[k] > 1) {
                l.add(k);
            }
        }
        return l;
    }
}
