// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.engine;

import static org.assertj.core.api.Assertions.assertThat;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.metaroce.core.multipath.PathSelector;
import org.metaroce.core.testwire.LinkProfile;
import org.metaroce.core.verbs.SendFlags;
import org.metaroce.core.verbs.SendRequest;
import org.metaroce.core.verbs.WrOpcode;
import org.metaroce.core.wire.BaseHeader;
import org.metaroce.core.wire.Opcode;

/**
 * Spraying over four paths where one path loses packets: the lossy path gets markedly less
 * traffic while it is bad, every loss is attributed to it, all data arrives, and the path
 * recovers its share once it is healthy again [MP-006], [MP-009], [MP-010], [MP-011], [MP-013].
 */
class MultipathTest {
    private static final int BAD_PATH = 2;

    @Test
    void aLossyPathGetsLessTrafficUntilItRecovers() {
        // 25 Gb/s serialization spreads packets in time so feedback arrives while data flows.
        final TwoNodeFixture f = new TwoNodeFixture(4001,
            LinkProfile.builder().rateBitsPerSecond(25_000_000_000L).build()).connect(4096);
        final boolean[] lossy = {true};
        final int[] seen = {0};
        f.wire.filter((from, to, buf, off, len, now) -> {
            if (!lossy[0] || from != f.a.node || buf.getByte(off + 1) != Opcode.WRITE.value()
                || BaseHeader.pathId(buf, off) != BAD_PATH) {
                return false;
            }
            return ++seen[0] % 2 == 0; // half of the bad path's data packets are lost
        });
        final UnsafeBuffer src = f.a.mr.buffer();
        for (int i = 0; i < 65536; i++) {
            src.putByte(i, (byte) (i * 13));
        }
        final PathSelector paths = f.a.qp.paths();
        runWrites(f, 200);
        final long[] sentWhileBad = new long[4];
        for (int p = 0; p < 4; p++) {
            sentWhileBad[p] = paths.sent(p);
            System.out.printf("while bad: path %d sent=%d losses=%d weight=%.3f%n", p, paths.sent(p),
                paths.losses(p), paths.weight(p));
        }
        final long good = (sentWhileBad[0] + sentWhileBad[1] + sentWhileBad[3]) / 3;
        assertThat(sentWhileBad[BAD_PATH]).as("lossy path share").isLessThan(good / 2);
        assertThat(sentWhileBad[BAD_PATH]).as("still probed").isPositive();
        assertThat(paths.losses(BAD_PATH)).isPositive();
        assertThat(paths.losses(0) + paths.losses(1) + paths.losses(3)).isZero();

        // The path heals; after a few half-lives (H = max(200 us, 16 x SRTT)) it carries its full
        // share again. The fixed window queues deeply in the 25 Gb/s serializer, so SRTT is large.
        lossy[0] = false;
        final long halfLife = Math.max(200_000, 16 * f.a.qp.smoothedRttNs());
        System.out.printf("srtt=%d ns, half-life=%d ns%n", f.a.qp.smoothedRttNs(), halfLife);
        f.wire.runFor(6 * halfLife);
        runWrites(f, 200);
        final long badAfter = paths.sent(BAD_PATH) - sentWhileBad[BAD_PATH];
        final long goodAfter = (paths.sent(0) - sentWhileBad[0]) + (paths.sent(1) - sentWhileBad[1])
            + (paths.sent(3) - sentWhileBad[3]);
        System.out.printf("after recovery: bad path %d packets, others %d on average, weight %.3f%n", badAfter,
            goodAfter / 3, paths.weight(BAD_PATH));
        assertThat(paths.weight(BAD_PATH)).as("penalty decayed").isGreaterThan(0.75);
        assertThat(badAfter).isGreaterThan(goodAfter / 3 * 8 / 10);
    }

    private static void runWrites(final TwoNodeFixture f, final int count) {
        for (int i = 0; i < count; i++) {
            final int signaled = i == count - 1 ? SendFlags.SIGNALED : 0;
            while (f.a.qp.postSend(new SendRequest(1).wrId(i).opcode(WrOpcode.RDMA_WRITE).sendFlags(signaled)
                .addSge(f.a.address(0), 65536, f.a.mr.lkey()).remoteAddr(f.b.address(131072)).rkey(f.b.mr.rkey()))
                != org.metaroce.core.verbs.PostStatus.OK) {
                f.wire.runFor(10_000);
            }
        }
        assertThat(f.runUntilQuiet()).isTrue();
        f.a.drain();
        for (int i = 0; i < 65536; i++) {
            if (f.b.mr.buffer().getByte(131072 + i) != (byte) (i * 13)) {
                throw new AssertionError("data differs at " + i);
            }
        }
    }
}
