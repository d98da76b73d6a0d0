// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.verbs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.metaroce.core.verbs.AccessFlags.LOCAL_WRITE;
import static org.metaroce.core.verbs.AccessFlags.REMOTE_ATOMIC;
import static org.metaroce.core.verbs.AccessFlags.REMOTE_READ;
import static org.metaroce.core.verbs.AccessFlags.REMOTE_WRITE;

import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import org.junit.jupiter.api.Test;

class AccessFlagsTest {
    @Test
    void constantsHaveTheVerbsValues() {
        assertThat(new int[] {LOCAL_WRITE, REMOTE_WRITE, REMOTE_READ, REMOTE_ATOMIC}).containsExactly(1, 2, 4, 8);
        assertThat(AccessFlags.ALL).isEqualTo(15);
    }

    @Test
    void validCombinationsPass() {
        assertThat(AccessFlags.validate(0)).isZero();
        assertThat(AccessFlags.validate(LOCAL_WRITE)).isEqualTo(LOCAL_WRITE);
        assertThat(AccessFlags.validate(REMOTE_READ)).isEqualTo(REMOTE_READ);
        assertThat(AccessFlags.validate(LOCAL_WRITE | REMOTE_WRITE)).isEqualTo(3);
        assertThat(AccessFlags.validate(LOCAL_WRITE | REMOTE_ATOMIC)).isEqualTo(9);
        assertThat(AccessFlags.validate(AccessFlags.ALL)).isEqualTo(15);
    }

    @Test
    void remoteWriteWithoutLocalWriteNamesTheRule() {
        assertThatThrownBy(() -> AccessFlags.validate(REMOTE_WRITE | REMOTE_READ))
            .isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("REMOTE_WRITE or REMOTE_ATOMIC requires LOCAL_WRITE")
            .hasMessageContaining("REMOTE_WRITE|REMOTE_READ");
    }

    @Test
    void remoteAtomicWithoutLocalWriteNamesTheRule() {
        assertThatThrownBy(() -> AccessFlags.validate(REMOTE_ATOMIC))
            .isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("requires LOCAL_WRITE");
    }

    @Test
    void unknownBitsAreRejected() {
        assertThatThrownBy(() -> AccessFlags.validate(LOCAL_WRITE | 0x40))
            .isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("unknown access flag bits 0x40");
        assertThatThrownBy(() -> AccessFlags.requireKnown(0x100))
            .isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("0x100");
        assertThat(AccessFlags.requireKnown(REMOTE_WRITE)).isEqualTo(REMOTE_WRITE);
    }

    @Test
    void hasChecksEveryBitOfTheFlag() {
        assertThat(AccessFlags.has(LOCAL_WRITE | REMOTE_READ, REMOTE_READ)).isTrue();
        assertThat(AccessFlags.has(REMOTE_READ, REMOTE_WRITE)).isFalse();
        assertThat(AccessFlags.has(REMOTE_READ, REMOTE_READ | REMOTE_WRITE)).isFalse();
    }

    @Test
    void toStringRendersNames() {
        assertThat(AccessFlags.toString(0)).isEqualTo("NONE");
        assertThat(AccessFlags.toString(AccessFlags.ALL)).isEqualTo("LOCAL_WRITE|REMOTE_WRITE|REMOTE_READ|REMOTE_ATOMIC");
        assertThat(AccessFlags.toString(REMOTE_READ | 0x30)).isEqualTo("REMOTE_READ|0x30");
        assertThat(AccessFlags.toString(0x20)).isEqualTo("0x20");
    }

    @Property
    void validateAcceptsExactlyTheLegalCombinations(@ForAll final int access) {
        final boolean known = (access & ~AccessFlags.ALL) == 0;
        final boolean ruleHolds = (access & (REMOTE_WRITE | REMOTE_ATOMIC)) == 0 || (access & LOCAL_WRITE) != 0;
        boolean accepted;
        try {
            AccessFlags.validate(access);
            accepted = true;
        } catch (final IllegalArgumentException ex) {
            accepted = false;
        }
        assertThat(accepted).isEqualTo(known && ruleHolds);
    }

    @Test
    void validateAcceptsExactlyTheLegalCombinationsExhaustively() {
        int accepted = 0;
        for (int access = 0; access < 64; access++) {
            try {
                AccessFlags.validate(access);
                accepted++;
                assertThat(access & ~AccessFlags.ALL).isZero();
            } catch (final IllegalArgumentException ex) {
                // counted by difference
            }
        }
        // 16 known combinations minus those with REMOTE_WRITE/ATOMIC but no LOCAL_WRITE (6)
        assertThat(accepted).isEqualTo(10);
    }
}
