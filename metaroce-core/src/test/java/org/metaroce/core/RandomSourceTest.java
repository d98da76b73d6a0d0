// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.security.SecureRandom;

import org.junit.jupiter.api.Test;

class RandomSourceTest {
    @Test
    void seededSourceIsDeterministicPerSeed() {
        final long seed = 0x5EEDL;
        System.out.println("RandomSourceTest seed=" + seed);
        final SeededRandomSource a = new SeededRandomSource(seed);
        final SeededRandomSource b = new SeededRandomSource(seed);
        for (int i = 0; i < 100; i++) {
            assertThat(a.nextInt()).isEqualTo(b.nextInt());
            assertThat(a.nextLong()).isEqualTo(b.nextLong());
            assertThat(a.nextInt(1000)).isEqualTo(b.nextInt(1000));
        }
    }

    @Test
    void differentSeedsGiveDifferentStreams() {
        final SeededRandomSource a = new SeededRandomSource(1);
        final SeededRandomSource b = new SeededRandomSource(2);
        boolean differs = false;
        for (int i = 0; i < 10; i++) {
            differs |= a.nextLong() != b.nextLong();
        }
        assertThat(differs).isTrue();
    }

    @Test
    void seedAccessorAndToStringReportTheSeed() {
        final SeededRandomSource source = new SeededRandomSource(-42L);
        assertThat(source.seed()).isEqualTo(-42L);
        assertThat(source.toString()).contains("-42");
    }

    @Test
    void boundedIntStaysInRange() {
        final RandomSource seeded = new SeededRandomSource(7);
        final RandomSource secure = new SecureRandomSource();
        for (int i = 0; i < 1000; i++) {
            assertThat(seeded.nextInt(10)).isBetween(0, 9);
            assertThat(secure.nextInt(10)).isBetween(0, 9);
            assertThat(seeded.nextInt(1)).isZero();
        }
    }

    @Test
    void nonPositiveBoundIsRejectedByBothSources() {
        for (final RandomSource source : new RandomSource[] {new SeededRandomSource(1), new SecureRandomSource()}) {
            assertThatThrownBy(() -> source.nextInt(0))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("bound must be positive, was 0");
            assertThatThrownBy(() -> source.nextInt(-5))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("was -5");
        }
    }

    @Test
    void secureSourceProducesVaryingValues() {
        final SecureRandomSource source = new SecureRandomSource(new SecureRandom());
        final long first = source.nextLong();
        boolean differs = false;
        for (int i = 0; i < 10; i++) {
            differs |= source.nextLong() != first | source.nextInt() != 0;
        }
        assertThat(differs).isTrue();
        assertThat(source.toString()).startsWith("SecureRandomSource{");
    }

    @Test
    void secureSourceRejectsNullGenerator() {
        assertThatThrownBy(() -> new SecureRandomSource(null)).isInstanceOf(NullPointerException.class);
    }
}
