// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Locale;
import java.util.Random;

import org.metaroce.core.congestion.CongestionControlAlgorithm;
import org.metaroce.core.testwire.DescheduledEndpoint;
import org.metaroce.core.testwire.LinkProfile;
import org.metaroce.core.wire.ConnectHeader;
import org.junit.jupiter.api.Test;

/**
 * The real-socket incast rig of issue 16 in memory: eight software-endpoint senders (marks-only
 * DEFAULT, CC-037) writing 64 KiB messages into one receiver through a policer at 400 Mb/s (512 KB
 * burst) that marks above 320 Mb/s (64 KB burst), nothing queued, 10 µs each way
 * (docs/congestion-control.md, "The rig on a quiet host"). The figures are taken in the steady
 * state: from 100 ms of virtual time until the first sender finishes.
 */
class PolicedIncastTest {
    private static final int SENDERS = 8;
    private static final int MTU = 4096;
    private static final int MESSAGE = 65536;
    private static final int MESSAGES = 160;
    private static final long RATE = 400_000_000L;
    private static final long WARM_NS = 100_000_000L;
    private static final boolean TRACE = Boolean.getBoolean("policed.trace");

    /** What one run measured. */
    record Result(boolean done, boolean intact, double ofRate, double retransmittedPerDelivered, double jain,
                  long timeouts, String detail) {
        @Override
        public String toString() {
            return String.format(Locale.ROOT, "done=%s intact=%s steady: ofR=%.3f retx/delivered=%.4f Jain=%.4f"
                + " timeouts=%d | %s", done, intact, ofRate, retransmittedPerDelivered, jain, timeouts, detail);
        }
    }

    static Result run(final long seed, final long receiverWaitNs) {
        return run(seed, receiverWaitNs, 0);
    }

    /**
     * @param senderLateNs the largest lateness of a sender thread's wake-ups ({@link DescheduledEndpoint}),
     *        0 for senders that run when due
     */
    static Result run(final long seed, final long receiverWaitNs, final long senderLateNs) {
        final EndpointConfig config = new EndpointConfig().softwareEndpoint(true);
        final IncastFixture f = new IncastFixture(seed, SENDERS, config, ConnectHeader.CAP_ECN,
            CongestionControlAlgorithm.DEFAULT, MTU, 1 << 20,
            LinkProfile.builder().delayNs(10_000).jitterNs(receiverWaitNs).jitterIsReceiverWait(true)
                .rateBitsPerSecond(25_000_000_000L).ecn(2).build(),
            (i, e) -> senderLateNs == 0 ? e : new DescheduledEndpoint(e, senderLateNs, new Random(seed * 977 + i)));
        f.wire.policer(f.receiverNode, RATE, 512 * 1024, RATE * 8 / 10, 64 * 1024);
        f.postWrites(MESSAGES, MESSAGE);
        final long[] nextTrace = {0};
        final long[] start = {-1, 0};
        final long[] startDone = new long[SENDERS];
        final long[] end = {-1, 0};
        final long[] endDone = new long[SENDERS];
        final boolean done = f.wire.runUntil(() -> {
            boolean all = true;
            boolean any = false;
            for (final IncastFixture.Sender s : f.senders) {
                s.drain(f.wire.now());
                all &= s.done();
                any |= s.done();
            }
            if (start[0] < 0 && f.wire.now() >= WARM_NS) {
                start[0] = f.wire.now();
                start[1] = f.totalRetransmits();
                for (int i = 0; i < SENDERS; i++) {
                    startDone[i] = f.senders.get(i).completionNs.size();
                }
            }
            if (start[0] >= 0 && end[0] < 0 && any) {
                end[0] = f.wire.now();
                end[1] = f.totalRetransmits();
                for (int i = 0; i < SENDERS; i++) {
                    endDone[i] = f.senders.get(i).completionNs.size();
                }
            }
            if (TRACE && f.wire.now() >= nextTrace[0]) {
                nextTrace[0] += 10_000_000;
                final StringBuilder b = new StringBuilder();
                for (final IncastFixture.Sender s : f.senders) {
                    final String cc = s.qp.congestionControl().toString();
                    b.append(s.completionNs.size()).append('@').append(cc.substring(cc.indexOf("pacing") + 7,
                        cc.lastIndexOf("Mb/s"))).append(' ').append(s.endpoint.counters().get(EndpointCounter.TIMEOUTS))
                        .append(" | ");
                }
                System.out.printf(Locale.ROOT, "  t=%.0fms done=[%s] retx=%d timeouts=%d drops=%d marks=%d %s%n",
                    f.wire.now() / 1e6, b, f.totalRetransmits(), f.totalTimeouts(), f.wire.stats().droppedQueue(),
                    f.wire.stats().ceMarked(), f.senders.get(Integer.getInteger("policed.traceSender", 0)).qp.congestionControl());
            }
            return all;
        }, 60_000_000_000L);
        double delivered = 0;
        double sum = 0;
        double squares = 0;
        for (int i = 0; i < SENDERS; i++) {
            final double x = (endDone[i] - startDone[i]) * (double) MESSAGE;
            delivered += x;
            sum += x;
            squares += x * x;
        }
        final double seconds = (end[0] - start[0]) / 1e9;
        final double ofRate = end[0] < 0 ? 0 : delivered * 8 / seconds / RATE;
        // Every retransmission of a 64 KiB WRITE's packets is one full PMTU of payload.
        final double retx = end[0] < 0 ? Double.NaN : (end[1] - start[1]) * (double) MTU / delivered;
        final double jain = sum * sum / (SENDERS * squares);
        final String detail = String.format(Locale.ROOT, "seed=%d wait<=%dus whole run: retx=%d dropped=%d marked=%d"
                + " last=%.1fms sender0 %s", seed, receiverWaitNs / 1000, f.totalRetransmits(),
            f.wire.stats().droppedQueue(), f.wire.stats().ceMarked(), f.lastCompletionNs() / 1e6,
            f.senders.get(0).qp.congestionControl());
        return new Result(done, done && f.dataIntact(MESSAGE * MESSAGES), ofRate, retx, jain, f.totalTimeouts(), detail);
    }

    /**
     * Without host waits the rig's bottleneck alone decides: DEFAULT on software endpoints keeps
     * the rate's share without loss in the steady state (v1.0.16: 3.23 bytes retransmitted per byte
     * delivered, 0.77 of the rate, Jain's index 0.88; with it 0, 0.924, 0.953) [CC-041].
     * Jain's index is asserted at 0.94, not the rig's 0.95: this run has no randomness (no wait, no
     * jitter; every seed gives the same figures), and its index moved between 0.93 and 0.97 with
     * changes that do not touch the steady state (how the start-up's expiries are paced, when the
     * rate starts).
     */
    @Test
    void policedIncastHoldsTheRatesShareWithoutLoss() {
        final Result r = run(7, 0);
        meetsTheTargets(r, 0.94);
    }

    /**
     * With up to 50 µs of receiver wait per packet, the hosts' scheduling in memory (before CC-041:
     * 4.36 retransmitted per delivered in v1.0.16; 0 with it, 0.925 of the rate, Jain 0.962) [CC-041].
     */
    @Test
    void policedIncastWithHostWaits() {
        meetsTheTargets(run(7, 50_000), 0.95);
    }

    /**
     * With up to 1 ms of receiver wait the echo samples leave the wait out and the timers expired
     * early: with CC-041 alone 36,274 RTO expiries and 0.78 bytes resent per byte delivered, though
     * the policer dropped 629 packets in the run (v1.0.16: 54,130 and 8.66, 0.50 of the rate). The
     * timers take the loop on a software endpoint [REL-072]: 37 expiries, 0.0001, 0.90.
     */
    @Test
    void longHostWaitsDoNotExpireTheTimers() {
        final Result r = run(7, 1_000_000);
        System.out.println("POLICED " + r);
        assertThat(r.done()).isTrue();
        assertThat(r.intact()).isTrue();
        assertThat(r.retransmittedPerDelivered()).isLessThanOrEqualTo(0.01);
        assertThat(r.timeouts()).isLessThan(1_000);
        assertThat(r.ofRate()).isGreaterThanOrEqualTo(0.85);
    }

    /**
     * Senders whose threads wake up to 5 ms late ({@link DescheduledEndpoint}; on the real rig's
     * shared cores they were 15-30 ms late): catching up only PACING_CREDIT slots, a late sender
     * sent three packets per wake-up, its delivery rate fell to what the wake-ups allowed and the
     * cap of PACING_GAIN times it held it there, 0.76 of the rate (0.41 with wake-ups up to 10 ms
     * late, 0.21 up to 20 ms); catching up a window's worth, 0.943, nothing retransmitted, Jain
     * 0.99 (0.89 and 0.75 up to 10 and 20 ms, where the catch-up bursts draw marks). Without rate
     * pacing (v1.0.16) 0.986 of the rate but 0.74 bytes resent per byte delivered [CC-041].
     */
    @Test
    void lateSendersKeepTheirRate() {
        meetsTheTargets(run(7, 0, 5_000_000L), 0.95);
    }

    /** The targets: at least 0.9 of the rate, at most 1 % resent, Jain's index at least {@code jain}. */
    private static void meetsTheTargets(final Result r, final double jain) {
        System.out.println("POLICED " + r);
        assertThat(r.done()).isTrue();
        assertThat(r.intact()).isTrue();
        assertThat(r.retransmittedPerDelivered()).isLessThanOrEqualTo(0.01);
        assertThat(r.ofRate()).isGreaterThanOrEqualTo(0.9);
        assertThat(r.jain()).isGreaterThanOrEqualTo(jain);
    }
}
