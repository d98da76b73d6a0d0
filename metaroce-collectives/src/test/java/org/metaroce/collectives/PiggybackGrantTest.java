// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.collectives;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.List;
import java.util.Random;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Grants riding on short chunks [COLL-035]: the immediate's encoding across the 7-bit wrap, and
 * small all-reduces that send (almost) no grant messages of their own while their results stay exact,
 * for every slot count the wrap must disambiguate (1, 2, 4 and 64).
 */
class PiggybackGrantTest {
    static final long SEED = Long.getLong("metaroce.seed", 35L);

    @Test
    @DisplayName("COLL-035: a grant up to 64 (the most slots) past the known one decodes exactly, lengths intact")
    void encodingAcrossTheWrap() {
        System.out.println("PiggybackGrantTest seed=" + SEED);
        final Random random = new Random(SEED);
        for (int i = 0; i < 100_000; i++) {
            final long known = random.nextInt(1 << 20);
            final long grant = known + random.nextInt(65);
            final int length = random.nextInt(PiggybackGrant.MAX_LENGTH);
            final int imm = PiggybackGrant.encode(length, grant);
            assertThat(PiggybackGrant.apply(imm, known)).as("known %d grant %d", known, grant).isEqualTo(grant);
            assertThat(PiggybackGrant.length(imm)).isEqualTo(length);
        }
        // Without the flag: every length a chunk may have, no grant.
        for (final int length : new int[] {0, 8, PiggybackGrant.MAX_LENGTH, Engine.MAX_CHUNK_BYTES}) {
            assertThat(PiggybackGrant.length(length)).isEqualTo(length);
            assertThat(PiggybackGrant.apply(length, 77)).isEqualTo(77);
        }
    }

    @ParameterizedTest(name = "{0} slots")
    @ValueSource(ints = {1, 2, 4, 64})
    @DisplayName("COLL-035: 300 8-byte all-reduces on 4 ranks, exact; under one grant message per 10 (under half the old count with 2 slots)")
    void smallAllReducesSendFewGrantMessages(final int slots) throws Exception {
        System.out.println("PiggybackGrantTest seed=" + SEED);
        final int iterations = 300;
        // One-shot (the default at 8 bytes) and recursive doubling both send back to every rank they receive from.
        for (final long oneShot : new long[] {CommConfig.ONE_SHOT_DEFAULT_BYTES, 0}) {
        try (LocalCluster cluster = LocalCluster.start(4, new CommConfig().slots(slots).chunkBytes(4096)
            .oneShotAllReduceBytes(oneShot))) {
            final List<long[]> results = cluster.run(c -> {
                final ByteBuffer buf = ByteBuffer.allocateDirect(8).order(ByteOrder.nativeOrder());
                final long before = c.engine().counters.get(CollectiveCounter.GRANT_MESSAGES_SENT.ordinal());
                long wrong = 0;
                for (int i = 0; i < iterations; i++) {
                    buf.putFloat(0, c.rank() + i).putFloat(4, -c.rank());
                    c.allReduce(buf, 2, DataType.FLOAT32, ReduceOp.SUM);
                    wrong += buf.getFloat(0) == 6 + 4 * i && buf.getFloat(4) == -6 ? 0 : 1;
                }
                return new long[] {wrong, c.engine().counters.get(CollectiveCounter.GRANT_MESSAGES_SENT.ordinal()) - before};
            }, Duration.ofSeconds(120));
            for (final long[] r : results) {
                assertThat(r[0]).as("wrong results").isZero();
                // Before COLL-035: one grant per chunk received, 2 per all-reduce. With 2 slots a peer
                // that used both before the grant rode back still needs a grant message now and then.
                if (slots >= 4) {
                    assertThat(r[1]).as("grant messages").isLessThan(iterations / 10);
                } else if (slots == 2) {
                    assertThat(r[1]).as("grant messages").isLessThan(iterations);
                }
            }
        }
        }
    }
}
