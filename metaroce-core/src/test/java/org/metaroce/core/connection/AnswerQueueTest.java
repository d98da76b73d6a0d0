// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.connection;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class AnswerQueueTest {
    private static final int SLOT = CmPacketWriter.HEADER;

    @Test
    void answersLeaveInTheOrderTheyWereQueued() {
        final AnswerQueue q = new AnswerQueue(4);
        assertThat(q.isEmpty()).isTrue();
        for (int i = 0; i < 3; i++) {
            final int at = q.reserve();
            assertThat(at).isEqualTo(i * SLOT);
            q.buffer().putInt(at, 100 + i);
            q.commit(10 + i);
        }
        assertThat(q.size()).isEqualTo(3);
        for (int i = 0; i < 3; i++) {
            assertThat(q.headPeer()).isEqualTo(10 + i);
            assertThat(q.buffer().getInt(q.headOffset())).isEqualTo(100 + i);
            q.removeHead();
        }
        assertThat(q.isEmpty()).isTrue();
    }

    @Test
    void aFullQueueRefusesAndAReservationWithoutCommitQueuesNothing() {
        // [SEC-008] a flood of requests cannot grow the queue.
        final AnswerQueue q = new AnswerQueue(2);
        assertThat(q.reserve()).isEqualTo(0);
        assertThat(q.reserve()).as("not committed: the same slot again").isEqualTo(0);
        q.commit(1);
        q.commit(2);
        assertThat(q.reserve()).isEqualTo(-1);
        assertThat(q.size()).isEqualTo(2);
    }

    @Test
    void slotsAreReusedAroundTheRing() {
        final AnswerQueue q = new AnswerQueue(3);
        for (int round = 0; round < 10; round++) {
            final int at = q.reserve();
            assertThat(at).isEqualTo((round % 3) * SLOT);
            q.buffer().putInt(at, round);
            q.commit(round);
            if (round >= 1) {
                assertThat(q.headPeer()).isEqualTo(round - 1);
                assertThat(q.buffer().getInt(q.headOffset())).isEqualTo(round - 1);
                q.removeHead();
            }
            assertThat(q.size()).isEqualTo(1);
        }
    }
}
