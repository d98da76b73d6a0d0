// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.metaroce.core.verbs.PostStatus;
import org.metaroce.core.verbs.RecvRequest;

/** Posting from an application thread: direct on an INVOKER device, through the ring otherwise. */
class WorkRequestPosterTest {
    @Test
    void invokerPostsDirectlyAndReportsARefusalAtOnce() {
        try (DevicePair pair = new DevicePair(Transport.AUTO, ThreadingMode.INVOKER, 2)) {
            final WorkRequestPoster poster = new WorkRequestPoster(pair.a.device, 64);
            // The QP is still in RESET: a receive is refused.
            final int status = poster.postRecv(pair.a.qp, new RecvRequest(1).wrId(1)
                .addSge(pair.a.address(0), 64, pair.a.mr.lkey()));
            assertThat(status).isEqualTo(PostStatus.INVALID_QP_STATE);
            assertThat(poster.refusal()).contains("postRecv on QP " + pair.a.qp.qpn() + " refused");
        }
    }

    @Test
    void dedicatedQueuesPostsEveryRequestOnTheOwningThreadAndRemembersTheFirstRefusal() throws Exception {
        try (DevicePair pair = new DevicePair(Transport.AUTO, ThreadingMode.DEDICATED, 2).connect(1024)) {
            // A ring of 32 and 200 receives (the receive queue holds 256): the producer waits for room.
            final WorkRequestPoster poster = new WorkRequestPoster(pair.b.device, 32);
            final RecvRequest recv = new RecvRequest(1);
            for (int i = 0; i < 200; i++) {
                recv.clear().wrId(i).addSge(pair.b.address(64L * (i % 64)), 64, pair.b.mr.lkey());
                assertThat(poster.postRecv(pair.b.qp, recv)).isEqualTo(PostStatus.OK);
                poster.flush();
            }
            poster.flush();
            assertThat(poster.refusal()).isNull();
            // A request with a bad lkey is refused on the owning thread and reported afterwards.
            poster.postRecv(pair.b.qp, recv.clear().wrId(5000).addSge(pair.b.address(0), 64, pair.b.mr.lkey() + 1));
            final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (poster.refusal() == null && System.nanoTime() - deadline < 0) {
                poster.flush();
                Thread.onSpinWait();
            }
            // The first refusal is this one: the 200 before it were all posted.
            assertThat(poster.refusal()).isEqualTo(WorkRequestPoster.describe(pair.b.qp, false, PostStatus.INVALID_LKEY));
        }
    }
}
