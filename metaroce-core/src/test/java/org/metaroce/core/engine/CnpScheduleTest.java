// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.engine;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class CnpScheduleTest {
    @Test
    void oneCnpWaitsAndAnotherOnlyAfterTheInterval() {
        final CnpSchedule cnps = new CnpSchedule();
        assertThat(cnps.isPending()).isFalse();
        cnps.marked(1_000, 10, 50_000);
        cnps.marked(2_000, 11, 50_000);
        assertThat(cnps.isPending()).isTrue();
        assertThat(cnps.psn()).isEqualTo(10);
        cnps.done();
        cnps.marked(50_999, 12, 50_000);
        assertThat(cnps.isPending()).as("within CNP_INTERVAL of the first").isFalse();
        cnps.marked(51_000, 13, 50_000);
        assertThat(cnps.isPending()).isTrue();
        assertThat(cnps.psn()).isEqualTo(13);
    }

    @Test
    void resetStartsAfreshButDoneKeepsTheInterval() {
        final CnpSchedule cnps = new CnpSchedule();
        cnps.marked(Long.MIN_VALUE + 1, 1, 50_000);
        cnps.done();
        cnps.marked(Long.MIN_VALUE + 2, 2, 50_000);
        assertThat(cnps.isPending()).isFalse();
        cnps.reset();
        cnps.marked(Long.MIN_VALUE + 3, 3, 50_000);
        assertThat(cnps.isPending()).isTrue();
        assertThat(cnps.psn()).isEqualTo(3);
    }
}
