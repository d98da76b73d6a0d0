// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.metaroce.core.testwire.LinkProfile;
import org.metaroce.core.verbs.WrOpcode;

/**
 * Sequence spaces across 2^32 with fixed scenarios [OPS-043]; {@link WrapAroundProperties}
 * randomises depths, start values and operations.
 */
class WrapAroundTest {
    /**
     * Issue 14 item 4: a receive queue of depth 300 (not a power of two) with RSNs from 0xFFFFFF00.
     * Mapping RSN r to slot r mod 300 puts RSN 0 into the slot of RSN 0xFFFFFF3C (both 0), which
     * is still posted: 44 receives completed with the wrong wr_id, data landed in another
     * request's buffer and the QP went to ERR. Receive WR r is the one posted (r - head) places
     * after the oldest, whatever the depth [OPS-010, OPS-043].
     */
    @Test
    void receiveQueueOfDepth300SurvivesTheRsnWrap() {
        final List<WrapAroundRun.Op> ops = new ArrayList<>();
        for (int i = 0; i < 600; i++) {
            ops.add(new WrapAroundRun.Op(i % 3 == 2 ? WrOpcode.SEND_WITH_IMM : WrOpcode.SEND, 100 + (i % 7) * 50,
                0x5EED0000L + i));
        }
        final WrapAroundRun run = new WrapAroundRun(1414, LinkProfile.perfect(), 1024, 256, 300,
            new WrapAroundRun.Start(0x1234_5678, 0, 0xFFFF_FF00), false, ops);
        run.execute();
    }

    /**
     * Every operation kind while PSN, MSN and RSN all cross 2^32, with send and receive queues of
     * depths 300 and 37, 1% loss, and sends posted ahead of their receives, so that some meet RNR
     * [OPS-013, OPS-043].
     */
    @Test
    void everyOperationAcrossAllThreeWrapsWithOddDepthsAndLoss() {
        final WrOpcode[] kinds = {WrOpcode.SEND, WrOpcode.RDMA_WRITE, WrOpcode.SEND_WITH_IMM, WrOpcode.RDMA_READ,
            WrOpcode.RDMA_WRITE_WITH_IMM, WrOpcode.ATOMIC_FETCH_ADD, WrOpcode.ATOMIC_CMP_SWAP};
        final List<WrapAroundRun.Op> ops = new ArrayList<>();
        for (int i = 0; i < 420; i++) {
            ops.add(new WrapAroundRun.Op(kinds[i % kinds.length], (i * 397) % 1800, 0xA70_0000L + i));
        }
        final WrapAroundRun run = new WrapAroundRun(1415, LinkProfile.builder().loss(0.01).build(), 512, 300, 37,
            new WrapAroundRun.Start(-150, -100, -50), true, ops);
        assertThat(run.wrapped()).containsExactly(true, true, true);
        run.execute();
        assertThat(run.responderCounters().get(EndpointCounter.RNR_NACKS_OUT)).as("RNR NACKs").isPositive();
    }
}
