// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.engine;

import static org.assertj.core.api.Assertions.assertThat;

import org.agrona.BufferUtil;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.metaroce.core.SeededRandomSource;
import org.metaroce.core.verbs.AccessFlags;
import org.metaroce.core.verbs.MemoryKeySpace;
import org.metaroce.core.verbs.MemoryRegion;
import org.metaroce.core.verbs.PostStatus;
import org.metaroce.core.verbs.ProtectionDomain;
import org.metaroce.core.verbs.RecvRequest;

/**
 * The receive queue on its own: posted receives found by RSN across the 2^32 wrap with a depth
 * that does not divide 2^32 [OPS-043], the bound, retirement oldest first, and a reset.
 */
class ReceiveQueueTest {
    /** Not a divisor of 2^32: an RSN-modulo-depth slot would jump at the wrap. */
    private static final int DEPTH = 3;

    private final ProtectionDomain pd = new ProtectionDomain(1, new MemoryKeySpace(new SeededRandomSource(7)));
    private final MemoryRegion region = pd.registerMemory(
        new UnsafeBuffer(BufferUtil.allocateDirectAligned(4096, 64)), AccessFlags.ALL);
    private final ReceiveQueue queue = new ReceiveQueue(DEPTH, 2);

    private int post(final long wrId, final int length) {
        return queue.post(new RecvRequest(2).wrId(wrId).addSge(region.address(), length, region.lkey()), pd);
    }

    @Test
    void receivesAreFoundByRsnAcrossTheWrap() {
        queue.startRsn(0xFFFF_FFFE);
        assertThat(post(1, 100)).isEqualTo(PostStatus.OK);
        assertThat(post(2, 200)).isEqualTo(PostStatus.OK);
        assertThat(post(3, 300)).isEqualTo(PostStatus.OK);

        assertThat(queue.forRsn(0xFFFF_FFFE).wrId).isEqualTo(1);
        assertThat(queue.forRsn(0xFFFF_FFFF).wrId).isEqualTo(2);
        assertThat(queue.forRsn(0).wrId).isEqualTo(3);
        assertThat(queue.forRsn(0).capacity).isEqualTo(300);
        assertThat(queue.forRsn(0).sgeRegion[0]).isSameAs(region);
        assertThat(queue.forRsn(1)).as("not posted: an RNR").isNull();
        assertThat(queue.forRsn(0xFFFF_FFFD)).as("before the oldest").isNull();
    }

    @Test
    void aFullQueueRefusesAndRetiringMakesRoomInPostOrder() {
        queue.startRsn(0xFFFF_FFFF);
        post(1, 10);
        post(2, 20);
        post(3, 30);
        assertThat(post(4, 40)).isEqualTo(PostStatus.QUEUE_FULL);
        assertThat(queue.posted()).isEqualTo(DEPTH);

        assertThat(queue.head().wrId).isEqualTo(1);
        queue.retireHead();
        assertThat(post(4, 40)).isEqualTo(PostStatus.OK);

        assertThat(queue.forRsn(0xFFFF_FFFF)).as("retired").isNull();
        assertThat(queue.forRsn(2).wrId).as("reuses the retired slot with the next RSN").isEqualTo(4);
        final long[] order = new long[DEPTH];
        for (int i = 0; i < DEPTH; i++) {
            order[i] = queue.head().wrId;
            queue.retireHead();
        }
        assertThat(order).containsExactly(2, 3, 4);
        assertThat(queue.head()).isNull();
        assertThat(queue.posted()).isZero();
    }

    @Test
    void clearDropsEveryReceiveAndStartsAgainAtRsnZero() {
        queue.startRsn(41);
        post(1, 10);
        post(2, 20);
        queue.retireHead();

        queue.clear();

        assertThat(queue.posted()).isZero();
        assertThat(queue.head()).isNull();
        post(9, 90);
        assertThat(queue.forRsn(0).wrId).isEqualTo(9);
        assertThat(queue.forRsn(42)).as("the RSNs before the reset are gone").isNull();
    }
}
