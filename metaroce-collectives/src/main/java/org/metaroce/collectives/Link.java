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
    /** Data chunks whose WRITE completed successfully. */
    long sendDone;
    /** Cumulative slots the peer granted (starts at its slot count, granted at connection time). */
    long granted;
    /** Work requests (data and grants) posted and completed on the send queue. */
    long sqPosted;
    long sqCompleted;
    /** Data chunks arrived from the peer, and consumed by this rank. */
    long arrived;
    long consumed;
    /** Cumulative slots this rank has announced to the peer. */
    long grantsAnnounced;
    /** Length of the chunk in each local slot, recorded on arrival. */
    final int[] slotLength;

    /**
     * Why the connection failed (a failed completion: the peer died or closed its communicator),
     * or null. Operations that need this link fail with it; others go on [COLL-026].
     */
    String failure;

    final ArrayDeque<Transfer> sends = new ArrayDeque<>();
    final ArrayDeque<Transfer> recvs = new ArrayDeque<>();

    Link(final int peer, final QueuePair qp, final long remoteBase, final int remoteRkey, final int remoteSlots,
         final long localBase, final int localSlots) {
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
    }

    /**
     * @return whether the running operation still needs the connection: chunks to write or not yet
     *     acknowledged, or chunks to receive that have not arrived (arrived ones are in local
     *     memory already and need nothing from the peer)
     */
    boolean inUse() {
        if (!sends.isEmpty() || sendDone < sent) {
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
