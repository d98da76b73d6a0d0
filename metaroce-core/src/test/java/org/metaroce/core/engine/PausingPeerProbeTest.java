// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.engine;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.metaroce.core.testwire.LinkProfile;
import org.metaroce.core.verbs.SendFlags;
import org.metaroce.core.verbs.SendRequest;
import org.metaroce.core.verbs.WcStatus;
import org.metaroce.core.verbs.WrOpcode;

/**
 * A WRITE stream to a peer whose ACKs come late now and then (a descheduled host, a collector's
 * pause), nothing lost: each spurious tail probe sets the probe timeout to cover the wait it
 * revealed, and nothing but a spurious retransmission or real losses brings it down again
 * [REL-065]. Before, each spurious probe doubled the timeout and every 4,096 delivered PSNs
 * halved it again, so a bulk stream was back at twice its SRTT within milliseconds and probed
 * at every pause (issue 14: write_bw and send_bw retransmitted 30–40 packets per run without
 * any loss).
 */
class PausingPeerProbeTest {
    // Seeded: TwoNodeFixture prints its seed.
    private static final int LENGTH = 16 * 1024;
    private static final int OUTSTANDING = 16;
    private static final long QP_TIMEOUT_NS = 67_108_864L;
    private static final int PAUSES = 40;
    private static final long PERIOD_NS = 10_000_000;
    /** Pause lengths, cycled: what a descheduled host or a young-generation collection costs. */
    private static final long[] PAUSE_NS = {1_000_000, 3_000_000, 500_000, 2_000_000, 4_000_000};

    @Test
    void aWriteStreamToAPausingPeerProbesOnlyWhileLearningHowLongItPauses() {
        // The tools' timers: perftest's QP timeout (67 ms) as the RTO and its floor, so only probes can misfire.
        final TwoNodeFixture f = new TwoNodeFixture(8302, LinkProfile.perfect(),
            new EndpointConfig().minRtoNs(QP_TIMEOUT_NS), QueuePairCapabilities.defaults(), 4096)
            .connect(1024, 7, 7, QP_TIMEOUT_NS);
        final int posted = stream(f, pauseResponder(f));
        final String story = posted + " WRITEs, SRTT " + f.a.qp.smoothedRttNs() + " ns; A " + f.a.endpoint.counters()
            + " B " + f.b.endpoint.counters();
        System.out.println(story);
        assertThat(f.a.sendCompletions).as(story).hasSize(posted).extracting(wc -> wc.status())
            .containsOnly(WcStatus.SUCCESS);
        // Before: 224 probes, 5 or 6 per pause. Now the first pause costs its probe series (twice
        // SRTT, doubling up to the 1 ms pause: 6 probes with this seed), and each longer pause
        // after it (3 and 4 ms) one more at most.
        assertThat(f.a.endpoint.counters().get(EndpointCounter.RETRANSMITS_TAIL_PROBE)).as(story)
            .isLessThanOrEqualTo(8);
        assertThat(f.a.endpoint.counters().get(EndpointCounter.TIMEOUTS)).as(story).isZero();
    }

    /**
     * The same pausing peer, but the requester's window is full and more WRITEs wait behind it, as
     * in write_bw and send_bw: each probe is the next new packet past the window, so the pauses cost
     * no retransmission at all [REL-026], and the probes' round trips, which measure the pauses, are
     * no congestion-control samples; the timers take them (v1.0.8), and the ordinary samples
     * after each pause bring SRTT back to the path's [REL-020]. Before (v1.0.5) every probe resent the newest packet: 6 needless
     * copies with this seed, and on real sockets 1–3 per 3 s run without loss.
     */
    @Test
    void aWindowLimitedStreamProbesAPausingPeerWithNewPacketsAndResendsNothing() {
        final TwoNodeFixture f = windowLimited(8303, LinkProfile.perfect());
        final int posted = stream(f, pauseResponder(f));
        final long srtt = f.a.qp.smoothedRttNs();
        final String story = posted + " WRITEs, SRTT " + srtt + " ns; A " + f.a.endpoint.counters()
            + " B " + f.b.endpoint.counters();
        System.out.println(story);
        assertThat(f.a.sendCompletions).as(story).hasSize(posted).extracting(wc -> wc.status())
            .containsOnly(WcStatus.SUCCESS);
        assertThat(f.a.endpoint.counters().get(EndpointCounter.TAIL_PROBES_NEW)).as(story).isGreaterThanOrEqualTo(PAUSES);
        assertThat(f.a.endpoint.counters().get(EndpointCounter.RETRANSMITS_TAIL_PROBE)).as(story).isZero();
        assertThat(f.a.endpoint.counters().get(EndpointCounter.TIMEOUTS)).as(story).isZero();
        // The pauses the probes measured do not stay in SRTT: the ordinary samples after them
        // bring it back to the path's microseconds.
        assertThat(srtt).as(story).isLessThan(100_000);
    }

    /**
     * A new packet as the probe still repairs a lost tail: its ACK's SACK shows the hole and
     * time-based detection declares it lost [REL-026, REL-023]. 5% loss on the requests, window
     * full, every WRITE completes and what was resent stays near what was lost.
     */
    @Test
    void newPacketProbesRepairTailLosses() {
        final TwoNodeFixture f = windowLimited(8304, LinkProfile.builder().loss(0.05).build());
        final int posted = stream(f, f.wire.now() + 100_000_000L);
        final long dropped = f.wire.stats().dropped();
        final long resent = f.a.endpoint.counters().get(EndpointCounter.RETRANSMITS_TAIL_PROBE)
            + f.a.endpoint.counters().get(EndpointCounter.RETRANSMITS_TIMEOUT)
            + f.a.endpoint.counters().get(EndpointCounter.RETRANSMITS_LOSS_DETECTED);
        final String story = posted + " WRITEs, " + dropped + " dropped, " + resent + " resent; A "
            + f.a.endpoint.counters() + " B " + f.b.endpoint.counters();
        System.out.println(story);
        assertThat(f.a.sendCompletions).as(story).hasSize(posted).extracting(wc -> wc.status())
            .containsOnly(WcStatus.SUCCESS);
        assertThat(dropped).as(story).isGreaterThan(20);
        assertThat(f.a.endpoint.counters().get(EndpointCounter.TAIL_PROBES_NEW)).as(story).isPositive();
        assertThat(resent).as(story).isLessThanOrEqualTo(dropped + dropped / 2);
    }

    /**
     * The responder's host stops now and then ({@link #PAUSE_NS}, every {@link #PERIOD_NS}): its
     * ACKs leave when it wakes, nothing is lost.
     *
     * @return when the last period ends
     */
    private static long pauseResponder(final TwoNodeFixture f) {
        final long start = f.wire.now() + PERIOD_NS;
        final LinkProfile.Builder pausing = LinkProfile.builder();
        for (int i = 0; i < PAUSES; i++) {
            final long at = start + i * PERIOD_NS;
            pausing.pause(at, at + PAUSE_NS[i % PAUSE_NS.length]);
        }
        f.wire.link(f.b.node, f.a.node, pausing.build());
        return start + PAUSES * PERIOD_NS;
    }

    /** A requester whose congestion window (16 packets) is smaller than what is posted (16 WRITEs of 16 packets). */
    private static TwoNodeFixture windowLimited(final long seed, final LinkProfile profile) {
        final TwoNodeFixture f = new TwoNodeFixture(seed, profile,
            new EndpointConfig().minRtoNs(QP_TIMEOUT_NS), QueuePairCapabilities.defaults(), 4096)
            .connect(1024, 7, 7, QP_TIMEOUT_NS);
        f.a.qp.congestionControl(new org.metaroce.core.congestion.FixedWindowCongestionControl(16));
        return f;
    }

    /** Keeps {@link #OUTSTANDING} WRITEs posted until {@code endNs}, then lets them finish; returns how many. */
    private static int stream(final TwoNodeFixture f, final long endNs) {
        int posted = 0;
        while (posted < OUTSTANDING) {
            postWrite(f, posted++);
        }
        while (f.wire.now() < endNs) {
            final int before = f.a.sendCompletions.size();
            assertThat(f.runUntilCompletions(before + 1, 0)).isTrue();
            while (posted - f.a.sendCompletions.size() < OUTSTANDING) {
                postWrite(f, posted++);
            }
        }
        assertThat(f.runUntilQuiet()).isTrue();
        f.a.drain();
        return posted;
    }

    private static void postWrite(final TwoNodeFixture f, final int i) {
        final long offset = (long) (i % OUTSTANDING) * LENGTH;
        f.a.qp.postSend(new SendRequest(1).wrId(i).opcode(WrOpcode.RDMA_WRITE).sendFlags(SendFlags.SIGNALED)
            .addSge(f.a.address(offset), LENGTH, f.a.mr.lkey()).remoteAddr(f.b.address(offset)).rkey(f.b.mr.rkey()));
    }
}
