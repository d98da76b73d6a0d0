// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.testwire;

import static org.assertj.core.api.Assertions.assertThat;

import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.DoubleRange;
import net.jqwik.api.constraints.IntRange;

/**
 * Whatever the seed and fault mix, the wire neither invents nor silently loses packets: every
 * packet sent is dropped by exactly one cause or delivered, duplicates add exactly one delivery,
 * and the trace agrees with the counters. jqwik prints the seed of any failing run.
 */
class WireConservationProperties {
    @Property(tries = 40)
    void everyPacketIsAccountedFor(@ForAll final long seed,
                                   @ForAll @DoubleRange(min = 0, max = 0.3) final double loss,
                                   @ForAll @DoubleRange(min = 0, max = 0.3) final double duplicate,
                                   @ForAll @DoubleRange(min = 0, max = 0.3) final double reorder,
                                   @ForAll @DoubleRange(min = 0, max = 0.3) final double corrupt,
                                   @ForAll @IntRange(min = 0, max = 10) final int nth) {
        final InMemoryWire wire = new InMemoryWire(seed, LinkProfile.builder().jitterNs(1_000).loss(loss)
            .burstLoss(0.01, 0.5, 0.5).duplicate(duplicate).reorder(reorder).corrupt(corrupt).ceMark(0.1)
            .blackhole(100_000, 110_000).build());
        if (nth > 0) {
            wire.filter(PacketFilter.dropNth(nth, PacketMatcher.any()));
        }
        final PingEndpoint pinger = PingEndpoint.paced(1, 300, 1_000);
        final EchoEndpoint echo = new EchoEndpoint();
        wire.attach(pinger);
        wire.attach(echo);

        assertThat(wire.runUntil(() -> pinger.done() && wire.inFlight() == 0, 10_000_000)).as(wire.toString()).isTrue();

        final WireStats s = wire.stats();
        assertThat(s.sent()).isEqualTo(300 + echo.echoed);
        assertThat(s.sent() + s.duplicated()).isEqualTo(s.delivered() + s.dropped());
        assertThat(s.droppedFilter()).isEqualTo(nth > 0 ? 1 : 0);
        assertThat(pinger.receivedPsns.size() + pinger.corrupted).isEqualTo((int) wire.trace()
            .count(e -> e.fate() == PacketFate.DELIVERED && e.to() == 0));
        assertThat(wire.trace().count(PacketFate.DELIVERED)).isEqualTo(s.delivered());
        assertThat(wire.trace().count(e -> e.fate().isDrop())).isEqualTo(s.dropped());
        assertThat(wire.trace().count(PacketFate.CORRUPTED)).isEqualTo(s.corrupted());
    }
}
