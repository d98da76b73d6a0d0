// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.examples;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.metaroce.core.connection.RegionInfo;

/** Each example end to end on loopback, checked on both sides. */
class TwoSidedExamplesTest {
    @Test
    void sendRecvDeliversTheRequestAndItsReply() throws Exception {
        final TwoSided.Outcome<String, String> outcome = SendRecvExample.runOnLoopback();
        assertThat(outcome.server()).isEqualTo(SendRecvExample.REQUEST);
        assertThat(outcome.client()).isEqualTo(SendRecvExample.REQUEST.toUpperCase(java.util.Locale.ROOT));
    }

    @Test
    void readFetchesTheServersRegion() throws Exception {
        final TwoSided.Outcome<RegionInfo, byte[]> outcome = RdmaReadExample.runOnLoopback();
        assertThat(outcome.server().length()).isEqualTo(RdmaReadExample.PUBLISHED.length);
        assertThat(new String(outcome.client(), StandardCharsets.UTF_8))
            .isEqualTo(new String(RdmaReadExample.PUBLISHED, StandardCharsets.UTF_8));
    }

    @Test
    void fetchAddThenCompareSwapReturnTheValuesFoundAndLeaveTheSwap() throws Exception {
        final TwoSided.Outcome<Long, AtomicsExample.Results> outcome = AtomicsExample.runOnLoopback();
        assertThat(outcome.client().fetchAddReturned()).isEqualTo(AtomicsExample.INITIAL);
        assertThat(outcome.client().compareSwapReturned()).isEqualTo(AtomicsExample.INITIAL + AtomicsExample.ADDEND);
        assertThat(outcome.server()).isEqualTo(AtomicsExample.SWAP);
    }

    @Test
    void fourRanksAllReduceToTheExactSums() throws Exception {
        final List<float[]> sums = AllReduceExample.runOnLoopback();
        assertThat(sums).hasSize(AllReduceExample.RANKS);
        for (int r = 0; r < sums.size(); r++) {
            assertThat(sums.get(r)).hasSize(AllReduceExample.COUNT);
            assertThat(AllReduceExample.mismatch(AllReduceExample.RANKS, sums.get(r))).as("rank %d", r).isNull();
        }
        // Spot values: 4 ranks contribute 1..4 plus (i % 7) each.
        assertThat(sums.get(3)[0]).isEqualTo(10f);
        assertThat(sums.get(0)[6]).isEqualTo(10f + 4 * 6);
    }
}
