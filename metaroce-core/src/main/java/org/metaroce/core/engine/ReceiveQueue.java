// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.engine;

import org.metaroce.core.verbs.PostStatus;
import org.metaroce.core.verbs.ProtectionDomain;
import org.metaroce.core.verbs.RecvRequest;
import org.metaroce.core.verbs.ScatterGatherEntry;

/**
 * A queue pair's posted receives in post order (the receive queue of verbs), each found by the
 * RSN a SEND or WRITE_WITH_IMM names [OPS-043] and retired oldest first. What completes a receive,
 * and when, is the responder's; this class only keeps the ring.
 *
 * <p>A receive's slot comes from its distance to the oldest, never from its RSN modulo the depth:
 * RSNs wrap at 2^32, and unless the depth divides 2^32 that modulo jumps at the wrap and maps two
 * posted receives to one slot [OPS-043].
 */
final class ReceiveQueue {
    private final RecvWqe[] ring;
    /** RSN of the oldest receive not yet retired; the ring holds RSNs head..head+posted-1. */
    private int headRsn;
    /** Slot of the receive with RSN {@link #headRsn}. */
    private int headSlot;
    private int posted;

    /**
     * @param depth most receives posted at once (the QP's receive queue depth)
     * @param maxSge most scatter-gather entries of a receive
     */
    ReceiveQueue(final int depth, final int maxSge) {
        ring = new RecvWqe[depth];
        for (int i = 0; i < depth; i++) {
            ring[i] = new RecvWqe(maxSge);
            ring[i].reset();
        }
    }

    /**
     * The RSN of the first receive posted instead of 0 (the QP's test hook). Only with none posted.
     */
    void startRsn(final int rsn) {
        headRsn = rsn;
    }

    /** @return receives posted and not yet retired */
    int posted() {
        return posted;
    }

    /**
     * Copies a receive work request in as the newest receive; its buffers' regions are resolved now
     * and checked when a message is placed [OPS-015].
     *
     * @param pd the protection domain the lkeys are looked up in
     * @return {@link PostStatus#OK}, or {@link PostStatus#QUEUE_FULL} with nothing posted
     */
    int post(final RecvRequest wr, final ProtectionDomain pd) {
        if (posted >= ring.length) {
            return PostStatus.QUEUE_FULL;
        }
        final RecvWqe wqe = ring[slot(posted)];
        wqe.reset();
        wqe.wrId = wr.wrId();
        final int n = wr.numSge();
        long capacity = 0;
        for (int i = 0; i < n; i++) {
            final ScatterGatherEntry sge = wr.sge(i);
            wqe.sgeAddr[i] = sge.addr();
            wqe.sgeLength[i] = sge.length();
            wqe.sgeRegion[i] = pd.lookupLkey(sge.lkey());
            capacity += sge.length();
        }
        wqe.numSge = n;
        wqe.capacity = capacity;
        posted++;
        return PostStatus.OK;
    }

    /** @return the posted receive with this RSN, or null if it is not posted (an RNR [OPS-043]) */
    RecvWqe forRsn(final int rsn) {
        final int d = rsn - headRsn;
        if (d < 0 || d >= posted) {
            return null;
        }
        return ring[slot(d)];
    }

    /** @return the oldest posted receive, or null if none is posted */
    RecvWqe head() {
        return posted > 0 ? ring[headSlot] : null;
    }

    /** Retires the oldest receive (its completion is written): the next one, by RSN and by slot, becomes the oldest. */
    void retireHead() {
        ring[headSlot].reset();
        headRsn++;
        headSlot = slot(1);
        posted--;
    }

    /** Drops every receive without completing it, and starts again at RSN 0 (modify to RESET). */
    void clear() {
        for (int i = 0; i < posted; i++) {
            ring[slot(i)].reset();
        }
        posted = 0;
        headRsn = 0;
        headSlot = 0;
    }

    /** @return the slot of the receive {@code distance} (0..depth-1) places after the oldest */
    private int slot(final int distance) {
        final int slot = headSlot + distance;
        return slot >= ring.length ? slot - ring.length : slot;
    }
}
