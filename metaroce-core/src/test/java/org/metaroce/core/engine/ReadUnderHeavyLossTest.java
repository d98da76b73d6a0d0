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
 * read_bw's shape at 20% loss both ways, with the tools' timer settings (perftest's default QP
 * timeout, 67 ms, as the RTO floor; a 250 ms TIMEOUT): 64 KiB READs at MTU 4096, 16 outstanding.
 * Every lost re-request or lost answer to one used to wait for the retransmission timer (one tail
 * probe per episode, and the RTO's backoff kept after progress), so 400 READs took 21 s of virtual
 * time and read_bw crawled at a few hundred KB/s on real sockets (issue 14). Repeated tail probes
 * [REL-026] and a backoff that ends with progress [REL-028] recover within round trips.
 */
class ReadUnderHeavyLossTest {
    private static final int LENGTH = 64 * 1024;
    private static final int DEPTH = 16;
    private static final int READS = 400;
    private static final long PERFTEST_QP_TIMEOUT_NS = 67_108_864L;

    @Test
    void readsAtTwentyPercentLossBothWaysRecoverWithinRoundTripsNotTimeouts() {
        final long seed = 77;
        final TwoNodeFixture f = new TwoNodeFixture(seed,
            LinkProfile.builder().delayNs(30_000).rateBitsPerSecond(10_000_000_000L).loss(0.2).build(),
            new EndpointConfig().minRtoNs(PERFTEST_QP_TIMEOUT_NS), QueuePairCapabilities.defaults(), 4096)
            .connect(4096, 7, 7, 250_000_000L);
        for (int i = 0; i < 8 * LENGTH; i++) {
            f.b.mr.buffer().putByte(i, (byte) (i * 7 + 3));
        }
        int posted = 0;
        final long start = f.wire.now();
        while (f.a.sendCompletions.size() < READS) {
            while (posted < READS && posted - f.a.sendCompletions.size() < DEPTH) {
                final long off = (long) (posted % 8) * LENGTH;
                f.a.qp.postSend(new SendRequest(1).wrId(posted).opcode(WrOpcode.RDMA_READ)
                    .sendFlags(SendFlags.SIGNALED).addSge(f.a.address(off + 8 * LENGTH), LENGTH, f.a.mr.lkey())
                    .remoteAddr(f.b.address(off)).rkey(f.b.mr.rkey()));
                posted++;
            }
            final int want = f.a.sendCompletions.size() + 1;
            assertThat(f.wire.runUntil(() -> {
                f.a.drain();
                f.b.drain();
                return f.a.sendCompletions.size() >= want;
            }, 60_000_000_000L)).as("READ %d completes (seed %d)", want, seed).isTrue();
        }
        final long elapsedNs = f.wire.now() - start;
        final String story = "seed " + seed + ", " + elapsedNs / 1_000_000 + " ms virtual; A "
            + f.a.endpoint.counters() + " B " + f.b.endpoint.counters();
        System.out.println(story);
        assertThat(f.a.sendCompletions).as(story).extracting(wc -> wc.status()).containsOnly(WcStatus.SUCCESS);
        for (int i = 0; i < 8 * LENGTH; i++) {
            if (f.a.mr.buffer().getByte(8 * LENGTH + i) != f.b.mr.buffer().getByte(i)) {
                throw new AssertionError("byte " + i + " differs; " + story);
            }
        }
        // Before the fix: 190 timeouts and 21.5 s. A handful of RTOs is each 67 ms or more.
        assertThat(f.a.endpoint.counters().get(EndpointCounter.TIMEOUTS)).as(story).isLessThanOrEqualTo(2);
        assertThat(elapsedNs).as(story).isLessThan(1_000_000_000L);
    }
}
