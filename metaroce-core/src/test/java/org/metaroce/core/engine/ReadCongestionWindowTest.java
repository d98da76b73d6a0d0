// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.engine;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.metaroce.core.congestion.CongestionControlAlgorithm;
import org.metaroce.core.congestion.DelayBasedCongestionControl;
import org.metaroce.core.testwire.LinkProfile;
import org.metaroce.core.verbs.SendFlags;
import org.metaroce.core.verbs.SendRequest;
import org.metaroce.core.verbs.WcStatus;
import org.metaroce.core.verbs.WrOpcode;
import org.metaroce.core.wire.ConnectHeader;

/**
 * A queue pair that only reads gets its congestion feedback from the responses [CC-040]: the
 * default algorithm, started at one packet, grows its window over a run of READs as it does over
 * a run of WRITEs. Before, only ACKs reached the algorithm and no ACK delivers a READ slot, so a
 * reader's window never grew from where a retransmission timeout (or, here, the configured start)
 * left it.
 */
class ReadCongestionWindowTest {
    private static final long SEED = 4040;
    private static final int LENGTH = 16 * 1024;
    private static final int OPERATIONS = 300;
    private static final int DEPTH = 8;

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"RDMA_READ", "RDMA_WRITE"})
    @DisplayName("[CC-040] a reader's window grows from one packet as a writer's does")
    void theWindowGrowsFromResponsesAsFromAcks(final String operation) {
        final WrOpcode opcode = WrOpcode.valueOf(operation);
        for (final int caps : new int[] {0, ConnectHeader.CAP_ECN}) {
            final TwoNodeFixture f = new TwoNodeFixture(SEED,
                LinkProfile.builder().delayNs(10_000).rateBitsPerSecond(10_000_000_000L).build())
                .connect(4096, caps, CongestionControlAlgorithm.DEFAULT, 1);
            final DelayBasedCongestionControl cc = (DelayBasedCongestionControl) f.a.qp.congestionControl();
            final double start = cc.windowBytes();
            int posted = 0;
            while (f.a.sendCompletions.size() < OPERATIONS) {
                while (posted < OPERATIONS && posted - f.a.sendCompletions.size() < DEPTH) {
                    final long off = (long) (posted % 8) * LENGTH;
                    assertThat(f.a.qp.postSend(new SendRequest(1).wrId(posted).opcode(opcode)
                        .sendFlags(SendFlags.SIGNALED).addSge(f.a.address(off), LENGTH, f.a.mr.lkey())
                        .remoteAddr(f.b.address(off)).rkey(f.b.mr.rkey()))).isZero();
                    posted++;
                }
                final int want = f.a.sendCompletions.size() + 1;
                assertThat(f.wire.runUntil(() -> {
                    f.a.drain();
                    f.b.drain();
                    return f.a.sendCompletions.size() >= want;
                }, 10_000_000_000L)).as("%s %d completes (seed %d)", opcode, want, SEED).isTrue();
            }
            final String story = String.format("seed %d, %s, capabilities %d: window %.0f B -> %.0f B, %s", SEED, opcode,
                caps, start, cc.windowBytes(), cc);
            System.out.println(story);
            assertThat(f.a.sendCompletions).as(story).extracting(wc -> wc.status()).containsOnly(WcStatus.SUCCESS);
            assertThat(start).as(story).isEqualTo(4096.0);
            assertThat(cc.windowBytes()).as("grown from the feedback of %d operations: %s", OPERATIONS, story)
                .isGreaterThan(4 * 4096.0);
        }
    }
}
