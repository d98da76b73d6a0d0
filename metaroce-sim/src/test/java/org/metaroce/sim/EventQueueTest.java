// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.sim;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

import org.junit.jupiter.api.Test;

class EventQueueTest {
    @Test
    void eventsRunInTimeOrderAndTiesInInsertionOrder() {
        final long seed = 7;
        System.out.println("seed=" + seed);
        final SplittableRandom random = new SplittableRandom(seed);
        final EventQueue q = new EventQueue(4);
        final List<long[]> fired = new ArrayList<>();
        final int n = 5_000;
        for (int i = 0; i < n; i++) {
            final long t = random.nextInt(500); // many ties
            q.add(t, (now, subject, arg) -> fired.add(new long[] {now, arg}), null, i);
        }
        while (!q.isEmpty()) {
            q.pollAndRun();
        }
        assertThat(fired).hasSize(n);
        for (int i = 1; i < n; i++) {
            final long[] a = fired.get(i - 1);
            final long[] b = fired.get(i);
            assertThat(a[0] < b[0] || (a[0] == b[0] && a[1] < b[1])).as("event %d after %d", b[1], a[1]).isTrue();
        }
    }

    @Test
    void simulatorRefusesThePastAndStopsOnRequest() {
        final Simulator sim = new Simulator(1);
        final int[] count = new int[1];
        sim.schedule(10, (now, s, a) -> {
            count[0]++;
            sim.schedule(now + 5, (n2, s2, a2) -> count[0]++, null, 0);
            sim.stop();
        }, null, 0);
        assertThat(sim.run(1_000)).isTrue();
        assertThat(sim.nowNs()).isEqualTo(10);
        assertThat(count[0]).isEqualTo(1);
        assertThatThrownBy(() -> sim.schedule(9, (n, s, a) -> { }, null, 0))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("past");
        assertThat(sim.run(12)).isFalse();
        assertThat(sim.nowNs()).isEqualTo(12);
        assertThat(sim.run(1_000)).isTrue();
        assertThat(count[0]).isEqualTo(2);
        assertThat(sim.eventsRun()).isEqualTo(2);
    }
}
