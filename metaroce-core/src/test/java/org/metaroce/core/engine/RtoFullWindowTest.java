// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.engine;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.metaroce.core.congestion.CongestionControlAlgorithm;
import org.metaroce.core.testwire.LinkProfile;

/**
 * [CC-001] [REL-028]: after an RTO expiry one retransmission may leave although the window is
 * full. The RTO cuts the default algorithm's window to one packet [CC-003]; the packets lost in a
 * black hole still count as in flight, so without the exemption the window stays full, no
 * retransmission leaves, and the QP spends its RETRY_CNT expiries without sending anything.
 */
class RtoFullWindowTest {
    private static final long RATE = 10_000_000_000L;

    @Test
    @DisplayName("[CC-001] [REL-028] a black hole of 1 ms under a full window: RTO retransmissions leave and the QP recovers")
    void rtoRetransmitsThroughAFullWindow() {
        final EndpointConfig config = new EndpointConfig().linkRateBitsPerSecond(RATE);
        // 50 us each way: about 30 packets of 4 KiB in flight at 10 Gb/s.
        final IncastFixture f = new IncastFixture(9101, 1, config, 0, CongestionControlAlgorithm.DEFAULT, 4096,
            1 << 20, LinkProfile.builder().delayNs(50_000).rateBitsPerSecond(RATE).build());
        final int sender = f.senders.get(0).node;
        f.wire.filter((from, to, buf, off, len, now) -> from == sender && now >= 300_000 && now < 1_300_000);
        f.postWrites(32, 64 * 1024);
        assertThat(f.runUntilDone(2_000_000_000L)).as(f.wire.toString()).isTrue();
        final EndpointCounters c = f.senders.get(0).endpoint.counters();
        System.out.println("seed=9101 " + c);
        assertThat(f.senders.get(0).failed).as("QP ended by RETRY_EXC_ERR").isFalse();
        assertThat(c.get(EndpointCounter.TIMEOUTS)).isPositive();
        assertThat(c.get(EndpointCounter.RETRANSMITS_TIMEOUT)).as("every expiry sends its retransmission")
            .isEqualTo(c.get(EndpointCounter.TIMEOUTS));
        assertThat(f.dataIntact(1 << 20)).isTrue();
    }
}
