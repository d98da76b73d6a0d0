// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.engine;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.metaroce.core.congestion.CongestionControlAlgorithm;
import org.metaroce.core.testwire.LinkProfile;
import org.metaroce.core.wire.ConnectHeader;

/**
 * Receiver credit against an 8:1 incast on the in-memory wire: eight requesters write into one
 * responder behind a 10 Gb/s port with a 256 KiB buffer [CC-018], [CC-019].
 */
class ReceiverCreditIncastTest {
    private static final long PORT = 10_000_000_000L;
    private static final int MTU = 4096;
    private static final int SENDERS = 8;
    private static final int MESSAGE = 128 * 1024;
    private static final int MESSAGES = 8;

    private static IncastFixture run(final String name, final CongestionControlAlgorithm cc, final int caps,
                                     final StringBuilder log) {
        final EndpointConfig config = new EndpointConfig().linkRateBitsPerSecond(PORT);
        final IncastFixture f = new IncastFixture(8201, SENDERS, config, caps, cc, MTU, MESSAGE * 2,
            LinkProfile.builder().delayNs(2_000).build());
        f.wire.bottleneck(f.receiverNode, PORT, 256 * 1024, 256 * 1024);
        f.postWrites(MESSAGES, MESSAGE);
        assertThat(f.runUntilDone(5_000_000_000L)).as(f.wire.toString()).isTrue();
        final long failed = f.senders.stream().filter(s -> s.failed).count();
        final long bytes = (long) SENDERS * MESSAGES * MESSAGE;
        log.append(name).append(": failed QPs ").append(failed).append(", drops ").append(f.wire.stats().droppedQueue()).append(", max queue ")
            .append(f.wire.stats().maxQueueBytes()).append(" B, retransmits ").append(f.totalRetransmits())
            .append(", timeouts ").append(f.totalTimeouts()).append(", goodput ")
            .append(String.format("%.2f", bytes * 8.0 / f.lastCompletionNs())).append(" Gb/s; ");
        return f;
    }

    @Test
    @DisplayName("[CC-018] [CC-019] credit holds an 8:1 incast to about one BDP: no drops, where a fixed window overflows the port")
    void creditTamesIncast() {
        final StringBuilder log = new StringBuilder("seed=8201: ");
        final IncastFixture fixed = run("FIXED", CongestionControlAlgorithm.FIXED, 0, log);
        final IncastFixture credit = run("RECEIVER_CREDIT", CongestionControlAlgorithm.RECEIVER_CREDIT,
            ConnectHeader.CAP_RECEIVER_CREDIT, log);
        final IncastFixture combined = run("DEFAULT+credit", CongestionControlAlgorithm.DEFAULT,
            ConnectHeader.CAP_RECEIVER_CREDIT, log);
        System.out.println(log);

        // Without congestion control the port overflows; losses repeat until senders give up.
        assertThat(fixed.wire.stats().droppedQueue()).as(log.toString()).isPositive();
        assertThat(fixed.totalRetransmits()).as(log.toString()).isPositive();
        for (final IncastFixture f : new IncastFixture[] {credit, combined}) {
            assertThat(f.senders).noneMatch(s -> s.failed);
            assertThat(f.dataIntact(MESSAGE * 2)).isTrue();
            assertThat(f.wire.stats().droppedQueue()).as(log.toString()).isZero();
            // Nothing is lost; the odd probe may fire while the first round trip queues.
            assertThat(f.totalRetransmits() * 100).as(log.toString()).isLessThan(fixed.totalRetransmits());
            assertThat(f.totalTimeouts()).as(log.toString()).isZero();
            // At most one BDP per sender in the first round trip (3 packets at 10 Gb/s x 10 us), then
            // the shares of one BDP: a few packets, never a window each.
            assertThat(f.wire.stats().maxQueueBytes()).as(log.toString())
                .isLessThanOrEqualTo(SENDERS * 3L * (MTU + 100));
        }
    }
}
