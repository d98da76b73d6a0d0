// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.cli;

import org.metaroce.core.engine.QueuePair;
import org.metaroce.core.verbs.PostStatus;
import org.metaroce.core.verbs.RecvRequest;
import org.metaroce.core.verbs.SendRequest;
import org.metaroce.netty.WorkRequestPoster;

/**
 * Posts work requests for the benchmark thread through the driver's {@link WorkRequestPoster}
 * (directly in INVOKER mode, through its ring otherwise) and turns a refused post into a
 * {@link BenchException}: at once when the post was direct, at the next {@link #check()} when it
 * was refused on the owning thread.
 */
final class Poster {
    private final WorkRequestPoster poster;

    Poster(final WorkRequestPoster poster) {
        this.poster = poster;
    }

    /** Posts (or queues) a copy of {@code wr}; the request may be refilled when this returns. */
    void postSend(final QueuePair qp, final SendRequest wr) {
        if (poster.postSend(qp, wr) != PostStatus.OK) {
            throw new BenchException(poster.refusal().toString());
        }
    }

    /** Posts (or queues) a copy of {@code wr}. */
    void postRecv(final QueuePair qp, final RecvRequest wr) {
        if (poster.postRecv(qp, wr) != PostStatus.OK) {
            throw new BenchException(poster.refusal().toString());
        }
    }

    /** Hands what was queued since the last call to the owning thread. */
    void flush() {
        poster.flush();
    }

    /** @throws BenchException if a post was refused */
    void check() {
        final WorkRequestPoster.Refusal refusal = poster.refusal();
        if (refusal != null) {
            throw new BenchException(refusal.toString());
        }
    }

    /** @return the text of a receive refused by a direct post (setup, on the owning thread) */
    static String recvRefusal(final QueuePair qp, final RecvRequest wr, final int status) {
        return new WorkRequestPoster.Refusal(qp.qpn(), false, wr.wrId(), status).toString();
    }
}
