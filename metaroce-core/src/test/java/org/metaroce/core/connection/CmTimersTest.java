// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.connection;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class CmTimersTest {
    private static final long MS = 1_000_000L;

    @Test
    void retransmitsFromTheFirstSendDoublingUpToTheMaximum() {
        // [CM-022] 100 ms, doubling after each retransmission, up to 1 s.
        final CmTimers t = new CmTimers();
        assertThat(t.nextNs()).isEqualTo(Long.MAX_VALUE);
        t.arm(100 * MS, 0);
        assertThat(t.sendPending()).isTrue();
        assertThat(t.retransmitDue(Long.MAX_VALUE - 1)).as("nothing to repeat before the first send").isFalse();
        t.sent(5 * MS);
        assertThat(t.sendPending()).isFalse();
        assertThat(t.nextNs()).isEqualTo(105 * MS);
        assertThat(t.retransmitDue(104 * MS)).isFalse();
        long now = 105 * MS;
        final long[] intervals = {200, 400, 800, 1000, 1000};
        for (final long interval : intervals) {
            assertThat(t.retransmitDue(now)).isTrue();
            t.retransmitted(now, 1000 * MS);
            assertThat(t.nextNs()).isEqualTo(now + interval * MS);
            now += interval * MS;
        }
        t.stop();
        assertThat(t.retransmitDue(Long.MAX_VALUE - 1)).isFalse();
        assertThat(t.nextNs()).isEqualTo(Long.MAX_VALUE);
    }

    @Test
    void theStateDeadlineRunsFromTheFirstSendAndSurvivesARearm() {
        // [CM-023] CONNECT_TIMEOUT after the first CONNECT_REQUEST; a challenge re-arms without restarting it.
        final CmTimers t = new CmTimers();
        t.arm(100 * MS, 3000 * MS);
        assertThat(t.deadlineDue(Long.MAX_VALUE - 1)).as("not before the first send").isFalse();
        t.sent(10 * MS);
        assertThat(t.deadlineDue(3009 * MS)).isFalse();
        assertThat(t.deadlineDue(3010 * MS)).isTrue();
        t.arm(100 * MS, 0);
        t.sent(50 * MS);
        assertThat(t.nextNs()).isEqualTo(150 * MS);
        assertThat(t.deadlineDue(3010 * MS)).isTrue();
        t.stop();
        assertThat(t.deadlineDue(3010 * MS)).as("stopping the retransmission keeps the deadline").isTrue();
        t.clearDeadline();
        assertThat(t.deadlineDue(Long.MAX_VALUE - 1)).isFalse();
        t.deadline(42);
        assertThat(t.nextNs()).isEqualTo(42);
    }

    @Test
    void stoppingBeforeTheFirstSendDropsItsPendingDeadline() {
        final CmTimers t = new CmTimers();
        t.arm(100 * MS, 1000 * MS);
        t.stop();
        assertThat(t.sendPending()).isFalse();
        t.sent(0); // a stale send does not start the dropped deadline
        assertThat(t.nextNs()).isEqualTo(Long.MAX_VALUE);
    }
}
