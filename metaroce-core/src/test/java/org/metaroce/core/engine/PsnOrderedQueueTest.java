// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.metaroce.core.reliability.Psn;

class PsnOrderedQueueTest {
    @Test
    void entriesLeaveInPsnOrderWhateverOrderTheyCameIn() {
        // [OPS-029] held READs and atomics execute in PSN order.
        final PsnOrderedQueue q = new PsnOrderedQueue(4);
        final int[] fields = new int[4];
        fields[q.insert(30)] = 300;
        fields[q.insert(10)] = 100;
        fields[q.insert(20)] = 200;
        assertThat(q.size()).isEqualTo(3);
        assertThat(q.contains(20)).isTrue();
        assertThat(q.contains(25)).isFalse();
        for (final int psn : new int[] {10, 20, 30}) {
            assertThat(q.psnAt(0)).isEqualTo(psn);
            assertThat(fields[q.slotAt(0)]).as("the fields stay with their entry").isEqualTo(psn * 10);
            q.removeHead();
        }
        assertThat(q.isEmpty()).isTrue();
    }

    @Test
    void ordersAcrossThePsnWrapAndKeepsEqualPsnsInArrivalOrder() {
        final PsnOrderedQueue q = new PsnOrderedQueue(4);
        final int a = q.insert(2);
        final int b = q.insert(0xFFFF_FFFE); // before 2 in serial arithmetic
        final int c = q.insert(2);
        assertThat(q.psnAt(0)).isEqualTo(0xFFFF_FFFE);
        assertThat(q.slotAt(0)).isEqualTo(b);
        assertThat(q.slotAt(1)).isEqualTo(a);
        assertThat(q.slotAt(2)).isEqualTo(c);
    }

    @Test
    void aFullQueueRefusesAndFreedSlotsAreReused() {
        final PsnOrderedQueue q = new PsnOrderedQueue(2);
        final int first = q.insert(1);
        q.insert(2);
        assertThat(q.isFull()).isTrue();
        assertThatThrownBy(() -> q.insert(3)).isInstanceOf(IllegalStateException.class);
        q.removeHead();
        assertThat(q.insert(3)).isEqualTo(first);
        q.clear();
        assertThat(q.isEmpty()).isTrue();
        assertThat(q.insert(9)).isZero();
    }

    @Test
    void matchesASortedListUnderRandomUse() {
        final Random r = new Random(29);
        final PsnOrderedQueue q = new PsnOrderedQueue(8);
        final List<int[]> model = new ArrayList<>(); // {psn, slot, arrival}
        int arrival = 0;
        final int base = r.nextInt();
        for (int step = 0; step < 20_000; step++) {
            if (!q.isFull() && (q.isEmpty() || r.nextBoolean())) {
                final int psn = base + r.nextInt(64);
                final int slot = q.insert(psn);
                model.add(new int[] {psn, slot, arrival++});
                model.sort(Comparator.<int[]>comparingInt(e -> e[0] - base).thenComparingInt(e -> e[2]));
            } else {
                assertThat(q.slotAt(0)).isEqualTo(model.get(0)[1]);
                q.removeHead();
                model.remove(0);
            }
            assertThat(q.size()).isEqualTo(model.size());
            final Set<Integer> slots = new HashSet<>();
            for (int i = 0; i < model.size(); i++) {
                assertThat(q.psnAt(i)).isEqualTo(model.get(i)[0]);
                assertThat(q.slotAt(i)).isEqualTo(model.get(i)[1]);
                slots.add(q.slotAt(i));
                if (i > 0) {
                    assertThat(Psn.before(q.psnAt(i), q.psnAt(i - 1))).isFalse();
                }
            }
            assertThat(slots).as("no slot is given out twice").hasSize(model.size());
        }
    }
}
