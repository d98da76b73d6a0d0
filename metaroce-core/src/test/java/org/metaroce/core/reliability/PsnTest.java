// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.reliability;

import static org.assertj.core.api.Assertions.assertThat;

import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import org.junit.jupiter.api.Test;

/**
 * Serial-number arithmetic on 32-bit PSNs (specification conventions and 3.1, RFC 1982): {@code a}
 * is before {@code b} when {@code (int) (b − a) > 0} [WIRE-001].
 */
class PsnTest {
    @Test
    void orderAcrossTheWrap() {
        assertThat(Psn.before(0xFFFF_FFFF, 0)).as("2^32 - 1 is before 0").isTrue();
        assertThat(Psn.before(0, 0xFFFF_FFFF)).isFalse();
        assertThat(Psn.before(5, 5)).isFalse();
        assertThat(Psn.beforeOrEqual(5, 5)).isTrue();
        assertThat(Psn.before(0x7FFF_FFFF, 0x8000_0000)).isTrue();
        assertThat(Psn.distance(0xFFFF_FFFE, 3)).isEqualTo(5);
        assertThat(Psn.distance(3, 0xFFFF_FFFE)).isEqualTo(-5);
    }

    @Property
    void beforeIsAStrictOrderWithinHalfTheSpace(@ForAll final int a, @ForAll @IntRange(min = 1, max = Integer.MAX_VALUE) final int d) {
        final int b = a + d;
        assertThat(Psn.before(a, b)).isTrue();
        assertThat(Psn.before(b, a)).isFalse();
        assertThat(Psn.beforeOrEqual(a, b)).isTrue();
        assertThat(Psn.distance(a, b)).isEqualTo(d);
        assertThat(Psn.distance(b, a)).isEqualTo(-d);
    }
}
