// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.collectives;

import java.util.ArrayDeque;

import org.metaroce.core.engine.QueuePair;

/**
 * The reliable connection to one peer and the state of both directed streams over it [COLL-005]:
 * chunks this rank writes into the peer's slots (admitted by the peer's grants) and chunks the
 * peer writes into this rank's slots (granted back as they are consumed). Sequence numbers count
 * chunks since the communicator was created and carry across operations, so a fast sender may
 * fill granted slots for the next operation before this rank has started it.
 */
final class Link {
    final int peer;
    final QueuePair qp;
    /** Peer memory: the first of the peer's slots reserved for this rank's chunks. */
    final long remoteBase;
    final int remoteRkey;
    final int remoteSlots;
    /** Local memory: the first of this rank's slots reserved for the peer's chunks. */
    final long localBase;
    final int localSlots;

    /** Data chunks posted to the peer (the next chunk's sequence number). */
    long sent;
    /**
     * Data chunks known to have completed successfully: every chunk posted before a signaled work
     * request whose completion arrived (the send queue completes in post order, so its completion
     * means every earlier request of the queue pair completed) [COLL-038]. Chunks posted inline
     * and unsignaled after it may have completed too, unseen: a lower bound.
     */
    long sendDone;
    /** {@link #sent} after the last data chunk that was not posted inline: the operation waits for these [COLL-010]. */
    long awaited;
    /** Cumulative slots the peer granted (starts at its slot count, granted at connection time). */
    long granted;
    /**
     * Work requests (data and grants) posted on the send queue, and known to have completed (a
     * lower bound, like {@link #sendDone}): {@code sqPosted - sqCompleted} bounds the requests the
     * queue holds, exactly or from above [COLL-038].
     */
    long sqPosted;
    long sqCompleted;
    /** {@link #sqPosted} after the last signaled request, and after the last grant or region grant. */
    long lastSignaled;
    long grantsPosted;
    /**
     * The signaled requests not yet completed, oldest first, as a ring of send queue depth
     * entries (no more can be outstanding): for each, {@link #sqPosted} and {@link #sent} right
     * after it was posted, what its completion sets {@link #sqCompleted} and {@link #sendDone} to.
     */
    private final long[] signaledSq;
    private final long[] signaledSent;
    private long signaledHead;
    private long signaledTail;
    /** Data chunks arrived from the peer, and consumed by this rank. */
    long arrived;
    long consumed;
    /** Cumulative slots this rank has announced to the peer. */
    long grantsAnnounced;
    /** Length of the chunk in each local slot, recorded on arrival. */
    final int[] slotLength;
    /** Whether the chunk recorded at each slot position arrived placed (COLL-033) instead of in the slot. */
    final boolean[] slotPlaced;

    /** Chunks of the operations started so far, each way: the sequence number of the next transfer's chunk 0. */
    long sendPlanned;
    long recvPlanned;

    /**
     * Regions the peer granted for placed chunks (COLL-033), oldest first, as a ring: the first
     * chunk number, the chunk count, the address of the first chunk, its length in bytes and rkey.
     */
    final long[] regionFirst;
    final int[] regionChunks;
    final long[] regionAddress;
    final long[] regionBytes;
    final int[] regionRkey;
    int regionHead;
    int regionCount;

    /**
     * Why the connection failed (a failed completion: the peer died or closed its communicator),
     * or null. Operations that need this link fail with it; others go on [COLL-026].
     */
    String failure;
    /**
     * The status that failed the connection: the first error other than WR_FLUSH_ERR if one came,
     * else WR_FLUSH_ERR (the queue pair went to ERR with no request of its own failing: the peer
     * disconnected, it closed its communicator) [COLL-039]. Null while the connection works.
     */
    org.metaroce.core.verbs.WcStatus failedWith;

    /** Receive buffers (COLL-004): {@code receives} buffers of {@link Engine#CONTROL_BYTES} from {@code controlBase}. */
    long controlBase;
    int controlLkey;
    /** Source buffers of region grants (one per send queue entry, reused in turn), and how many were posted. */
    long controlOutBase;
    long regionsPosted;

    /** The running operation's placed receives on this link, in order, and the first not fully region-granted. */
    final java.util.ArrayList<Transfer> placedRecvs = new java.util.ArrayList<>();
    int placedCursor;

    final ArrayDeque<Transfer> sends = new ArrayDeque<>();
    final ArrayDeque<Transfer> recvs = new ArrayDeque<>();

    Link(final int peer, final QueuePair qp, final long remoteBase, final int remoteRkey, final int remoteSlots,
         final long localBase, final int localSlots, final int sqDepth) {
        this.peer = peer;
        this.qp = qp;
        this.remoteBase = remoteBase;
        this.remoteRkey = remoteRkey;
        this.remoteSlots = remoteSlots;
        this.localBase = localBase;
        this.localSlots = localSlots;
        this.granted = remoteSlots;
        this.grantsAnnounced = localSlots;
        this.slotLength = new int[localSlots];
        this.slotPlaced = new boolean[localSlots];
        // The peer grants regions only for chunks inside its window (below its cumulative grant):
        // at most remoteSlots chunks not yet written, each region at least one chunk.
        final int regions = remoteSlots + 8;
        this.regionFirst = new long[regions];
        this.regionChunks = new int[regions];
        this.regionAddress = new long[regions];
        this.regionBytes = new long[regions];
        this.regionRkey = new int[regions];
        this.signaledSq = new long[sqDepth];
        this.signaledSent = new long[sqDepth];
    }

    /**
     * Records the signaled request just posted ({@link #sqPosted} and {@link #sent} already count
     * it), whose completion will come.
     */
    void postedSignaled() {
        final int at = (int) (signaledTail % signaledSq.length);
        signaledSq[at] = sqPosted;
        signaledSent[at] = sent;
        signaledTail++;
        lastSignaled = sqPosted;
    }

    /**
     * The oldest outstanding signaled request completed successfully, and with it every request
     * posted before it.
     *
     * @return false when no signaled request was outstanding (a completion this link did not ask for)
     */
    boolean completedSignaled() {
        if (signaledHead == signaledTail) {
            return false;
        }
        final int at = (int) (signaledHead % signaledSq.length);
        sqCompleted = signaledSq[at];
        sendDone = signaledSent[at];
        signaledHead++;
        return true;
    }

    /**
     * @return whether the running operation still needs the connection: chunks to write or, not
     *     posted inline, not yet acknowledged (inline ones it does not wait for, COLL-038), or
     *     chunks to receive that have not arrived (arrived ones are in local memory already and
     *     need nothing from the peer)
     */
    boolean inUse() {
        if (!sends.isEmpty() || sendDone < awaited) {
            return true;
        }
        long expected = 0;
        for (final Transfer t : recvs) {
            expected += t.chunks - t.progressed;
        }
        return expected > arrived - consumed;
    }

    @Override
    public String toString() {
        return "link to rank " + peer + " (sent " + sent + "/granted " + granted + ", done " + sendDone
            + "; arrived " + arrived + ", consumed " + consumed + ")";
    }
}
