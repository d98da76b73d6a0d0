// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.collectives;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/** A plan reuses its transfers from operation to operation, and a reused transfer keeps nothing of its last use. */
class PlanTest {
    @Test
    void aReusedTransferStartsAsANewOne() {
        final Plan plan = new Plan();
        final Transfer first = plan.send(1, 4096, 7, 8192, 4096).placedAbove(512);
        final Transfer second = plan.copy(2, 1 << 20, 8192, 4096).placedAbove(512, 9).guardedBy(first).after(first);
        second.progressed = 2;
        second.regionGranted = 2;
        second.firstSeq = 40;
        first.inline = true;
        assertThat(plan.size()).isEqualTo(2);

        final Transfer reused = plan.clear().reduce(3, 8, 16, 100, 64, DataType.INT32, ReduceOp.MAX);
        assertThat(reused).as("the first transfer object, set again").isSameAs(first);
        assertThat(plan.size()).isEqualTo(1);
        assertThat(reused.kind).isEqualTo(Transfer.Kind.RECV_REDUCE);
        assertThat(reused.chunks).isEqualTo(2);
        assertThat(reused.type).isEqualTo(DataType.INT32);
        assertThat(reused.inline).isFalse();
        assertThat(reused.placed).isFalse();

        final Transfer again = plan.discard(0, 10, 4);
        assertThat(again).isSameAs(second);
        assertThat(again.kind).isEqualTo(Transfer.Kind.RECV_DISCARD);
        assertThat(again.dependsOn).isNull();
        assertThat(again.guard).isNull();
        assertThat(again.placed).isFalse();
        assertThat(again.rkey).isZero();
        assertThat(again.regionAddress).isZero();
        assertThat(again.regionGranted).isZero();
        assertThat(again.progressed).isZero();
        assertThat(again.firstSeq).isEqualTo(-1);
        assertThat(again.type).isNull();
        assertThat(again.chunks).isEqualTo(3);

        final Transfer grown = plan.send(1, 0, 1, 1, 1);
        assertThat(grown).isNotIn(first, second);
        assertThat(plan.toList()).containsExactly(first, second, grown);
        assertThatThrownBy(() -> plan.get(3)).isInstanceOf(IndexOutOfBoundsException.class)
            .hasMessageContaining("transfer 3 of a plan of 3");
    }

    @Test
    void aPlanGrowsPastItsFirstCapacityInOrder() {
        final Plan plan = new Plan();
        for (int i = 0; i < 100; i++) {
            plan.send(i % 7, i, 1, i + 1, 4096);
        }
        assertThat(plan.size()).isEqualTo(100);
        for (int i = 0; i < 100; i++) {
            assertThat(plan.get(i).bytes).isEqualTo(i + 1);
        }
    }

    @Test
    void marksAreClearedForEachPlanAndTwoAreLentAtOnce() {
        final Plan plan = new Plan();
        final Transfer t = plan.send(1, 0, 1, 1, 1);
        final Transfer[] a = plan.marks(0, 4);
        final Transfer[] b = plan.marks(1, 4);
        a[3] = t;
        b[3] = t;
        assertThat(a).isNotSameAs(b);
        assertThat(plan.marks(0, 4)[3]).as("cleared when lent again").isNull();
        assertThat(b[3]).as("the other array is untouched").isSameAs(t);
        assertThat(plan.marks(1, 100)).hasSizeGreaterThanOrEqualTo(100).containsOnlyNulls();
    }
}
