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
 * A queue pair that only reads gets its RTT samples from the responses [REL-063], and from the
 * second answers that show a re-request was needless [REL-064]; a spurious tail probe lengthens
 * the probe timeout [REL-065]: the time from a READ request, sent once, to its answer is what its
 * timers must wait for. Before, only ACKs gave
 * samples, so read_bw's timers ran on the RTT of the control SENDs exchanged before the
 * measurement (microseconds) while each READ waited behind a megabyte of earlier answers:
 * whenever the answers paused for longer than twice that, a tail probe re-requested 64 KiB the
 * responder had already sent (issue 14: timer retransmissions without any loss).
 */
class ReadResponseRttTest {
    // Seeded: TwoNodeFixture prints its seed.
    private static final int LENGTH = 16 * 1024;
    private static final int OUTSTANDING = 16;
    private static final int READS = 400;

    /** The tools' timers: perftest's QP timeout (67 ms) as the RTO floor, so only probes can misfire. */
    @Test
    void aReadOnlyStreamWithJitteryAnswersBarelyProbes() {
        final Run run = readThroughJitter(new EndpointConfig().minRtoNs(67_108_864L));
        // Before: 213 tail probes for 400 READs, every one answered twice. The PTO now adapts to
        // the late answers its first spurious probes reveal.
        assertThat(run.a.get(EndpointCounter.RETRANSMITS_TAIL_PROBE)).as(run.story).isLessThanOrEqualTo(16);
        assertThat(run.a.get(EndpointCounter.TIMEOUTS)).as(run.story).isZero();
    }

    /**
     * The library's timers (RTO floor 100 µs): the RTO must follow what READs wait for. Measured
     * from the control traffic's RTT it expired over and over while every answer was on its way.
     */
    @Test
    void aReadOnlyStreamWithJitteryAnswersWaitsForThemWithoutTimeouts() {
        final Run run = readThroughJitter(new EndpointConfig());
        // Before: 83 timeouts and 97 retransmissions, SRTT stuck at 10 µs. Now the first spurious
        // ones teach the estimator (6 and 20 with this seed), then the answers keep it right.
        assertThat(run.a.get(EndpointCounter.TIMEOUTS)).as(run.story).isLessThanOrEqualTo(8);
        assertThat(run.a.retransmits()).as(run.story).isLessThanOrEqualTo(24);
    }

    private record Run(EndpointCounters a, String story) {
    }

    private static Run readThroughJitter(final EndpointConfig config) {
        final TwoNodeFixture f = new TwoNodeFixture(8301, LinkProfile.perfect(), config,
            QueuePairCapabilities.defaults(), 4096).connect(1024);
        // One WRITE on the quiet link: an RTT sample of about 10 µs, as the tools' control SENDs give.
        f.a.qp.postSend(new SendRequest(1).wrId(9_999).opcode(WrOpcode.RDMA_WRITE).sendFlags(SendFlags.SIGNALED)
            .addSge(f.a.address(0), 64, f.a.mr.lkey()).remoteAddr(f.b.address(0)).rkey(f.b.mr.rkey()));
        assertThat(f.runUntilQuiet()).isTrue();
        final long quietSrtt = f.a.qp.smoothedRttNs();
        // Then the answers come through a jittery path (a busy responder host): gaps of up to 1 ms,
        // in order, nothing lost.
        f.wire.link(f.b.node, f.a.node, LinkProfile.builder().jitterNs(1_000_000).build());
        int posted = 0;
        while (posted < OUTSTANDING) {
            postRead(f, posted++);
        }
        while (f.a.sendCompletions.size() < READS + 1) {
            final int before = f.a.sendCompletions.size();
            assertThat(f.runUntilCompletions(before + 1, 0)).isTrue();
            while (posted < READS && posted - (f.a.sendCompletions.size() - 1) < OUTSTANDING) {
                postRead(f, posted++);
            }
        }
        final String story = "quiet SRTT " + quietSrtt + " ns, now " + f.a.qp.smoothedRttNs() + " ns; A "
            + f.a.endpoint.counters() + " B " + f.b.endpoint.counters();
        System.out.println(story);
        assertThat(f.a.sendCompletions).as(story).extracting(wc -> wc.status()).containsOnly(WcStatus.SUCCESS);
        // The estimate follows what the READs wait for, far above the quiet link's RTT [REL-063].
        assertThat(f.a.qp.smoothedRttNs()).as(story).isGreaterThan(20 * quietSrtt);
        return new Run(f.a.endpoint.counters(), story);
    }

    private static void postRead(final TwoNodeFixture f, final int i) {
        final long offset = (long) (i % OUTSTANDING) * LENGTH;
        f.a.qp.postSend(new SendRequest(1).wrId(i).opcode(WrOpcode.RDMA_READ).sendFlags(SendFlags.SIGNALED)
            .addSge(f.a.address(offset), LENGTH, f.a.mr.lkey()).remoteAddr(f.b.address(offset)).rkey(f.b.mr.rkey()));
    }
}
