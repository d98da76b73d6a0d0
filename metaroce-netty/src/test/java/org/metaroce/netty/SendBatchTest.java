// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.InetAddress;
import java.net.InetSocketAddress;

import org.junit.jupiter.api.Test;

/** What a socket took leaves a {@link SendBatch} consistent: offsets, counts, and segmented entries kept whole. */
class SendBatchTest {
    private final DirectSendChunks chunks = new DirectSendChunks();
    private final SendChunk chunk = chunks.allocate(1 << 16);
    private final InetSocketAddress to = new InetSocketAddress(InetAddress.getLoopbackAddress(), 4796);

    @Test
    void takingPartOfARunOfSeparateDatagramsMovesItsStart() {
        final SendBatch batch = new SendBatch();
        batch.add(chunk, 100, 2500, 1000, false, to); // 1000 + 1000 + 500
        batch.add(chunk, 2600, 4000, 1000, true, null); // one GSO message of 4
        assertThat(batch.datagrams()).isEqualTo(7);
        assertThat(batch.datagrams(0)).isEqualTo(3);

        batch.consume(2);
        assertThat(batch.removedBytes()).isEqualTo(2000);
        assertThat(batch.size()).isEqualTo(2);
        assertThat(batch.offset(0)).isEqualTo(2100);
        assertThat(batch.bytes(0)).isEqualTo(500);
        assertThat(batch.datagrams()).isEqualTo(5);

        assertThatThrownBy(() -> batch.consume(3)).isInstanceOf(IllegalStateException.class)
            .hasMessageContaining("part of a segmented entry");
    }

    @Test
    void droppingTheFirstDropsOneDatagramOrAWholeGsoMessage() {
        final SendBatch batch = new SendBatch();
        batch.add(chunk, 0, 4000, 1000, true, to);
        batch.add(chunk, 4000, 2000, 1000, false, to);
        assertThat(batch.dropFirst()).isEqualTo(4);
        assertThat(batch.dropFirst()).isEqualTo(1);
        assertThat(batch.offset(0)).isEqualTo(5000);
        assertThat(batch.dropFirst()).isEqualTo(1);
        assertThat(batch.size()).isZero();
        assertThat(batch.dropFirst()).isZero();
    }

    @Test
    void entriesSurviveGrowthAndCompaction() {
        final SendBatch batch = new SendBatch();
        int added = 0;
        int removed = 0;
        for (int round = 0; round < 50; round++) {
            for (int i = 0; i < 7; i++) {
                batch.add(chunk, added, 1, 1, false, to);
                added++;
            }
            batch.consume(5);
            removed += 5;
            assertThat(batch.size()).isEqualTo(added - removed);
            for (int i = 0; i < batch.size(); i++) {
                assertThat(batch.offset(i)).isEqualTo(removed + i);
            }
        }
        assertThat(batch.references(chunk)).isTrue();
        batch.clear();
        assertThat(batch.references(chunk)).isFalse();
        assertThat(batch.datagrams()).isZero();
    }
}
