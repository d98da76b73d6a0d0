// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.engine;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.metaroce.core.wire.NackReason;

class FatalNackTest {
    @Test
    void onlyTheOffendingPsnIsAnsweredAgainAndAtMostEightTimes() {
        final FatalNack nack = new FatalNack();
        assertThat(nack.isSet()).isFalse();
        assertThat(nack.answersAgain(0)).isFalse();
        nack.set(NackReason.REMOTE_ACCESS.code(), -2);
        assertThat(nack.isSet()).isTrue();
        assertThat(nack.reason()).isEqualTo(NackReason.REMOTE_ACCESS.code());
        assertThat(nack.psn()).isEqualTo(-2);
        assertThat(nack.answersAgain(-1)).isFalse();
        for (int i = 0; i < FatalNack.MAX_REPEATS; i++) {
            assertThat(nack.answersAgain(-2)).as("repeat %d", i).isTrue();
            nack.repeated();
        }
        assertThat(nack.answersAgain(-2)).isFalse();
    }

    @Test
    void aNewFailureCountsItsRepeatsAfreshAndClearForgetsIt() {
        final FatalNack nack = new FatalNack();
        nack.set(NackReason.INVALID_REQUEST.code(), 7);
        for (int i = 0; i < FatalNack.MAX_REPEATS; i++) {
            nack.repeated();
        }
        nack.set(NackReason.INVALID_REQUEST.code(), 9);
        assertThat(nack.answersAgain(9)).isTrue();
        nack.clear();
        assertThat(nack.isSet()).isFalse();
        assertThat(nack.answersAgain(9)).isFalse();
        nack.set(NackReason.INVALID_REQUEST.code(), 9);
        assertThat(nack.answersAgain(9)).isTrue();
    }
}
