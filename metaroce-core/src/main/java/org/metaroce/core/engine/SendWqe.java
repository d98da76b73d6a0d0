// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.engine;

import org.agrona.MutableDirectBuffer;
import org.metaroce.core.verbs.MemoryRegion;
import org.metaroce.core.verbs.WcStatus;
import org.metaroce.core.verbs.WrOpcode;

/**
 * One posted send work request as the requester tracks it: a copy of the request (so the caller
 * may reuse its object at once), resolved memory regions, and progress. Preallocated per send
 * queue slot and reused. An INLINE request's payload lives in the send queue's {@link InlineArena},
 * not here: storage per slot cost every QP depth x its inline limit up front.
 */
final class SendWqe {
    long wrId;
    WrOpcode opcode;
    int sendFlags;
    int immData;
    long remoteAddr;
    int rkey;
    long compareAdd;
    long swap;
    int numSge;
    final long[] sgeAddr;
    final int[] sgeLength;
    final MemoryRegion[] sgeRegion;
    /** Where INLINE payloads are copied at post time: the send queue's, shared by its slots. */
    final InlineArena arena;
    /** Whether the INLINE flag was set: the payload is in {@link #arena} at {@link #inlineAt}. */
    boolean isInline;
    /** Logical position of the inline payload in {@link #arena} (valid while {@link #isInline}). */
    long inlineAt;
    /** Offset in its region's buffer of the bytes the latest {@link #sliceRegion} found. */
    long sliceOffset;
    long length;

    /** Message sequence number, assigned when the first packet is emitted. */
    int msn;
    /** Receive sequence number for SEND, SEND_WITH_IMM and WRITE_WITH_IMM. */
    int rsn;
    boolean started;
    /** PSN of the first packet (or first reserved response PSN for READ). */
    int firstPsn;
    /** PSNs the whole request takes: data packets, READ response packets, or 1 for an atomic. */
    int psnCount;
    /** PSNs already assigned (packets emitted, or response PSNs requested). */
    int psnsAssigned;
    /** PSNs whose delivery is confirmed (ACKed data, arrived responses). */
    int psnsDelivered;
    /** Error status decided for this request, or null. */
    WcStatus error;

    SendWqe(final int maxSge, final InlineArena arena) {
        sgeAddr = new long[maxSge];
        sgeLength = new int[maxSge];
        sgeRegion = new MemoryRegion[maxSge];
        this.arena = arena;
    }

    void reset() {
        started = false;
        psnsAssigned = 0;
        psnsDelivered = 0;
        error = null;
        isInline = false;
        for (int i = 0; i < numSge; i++) {
            sgeRegion[i] = null;
        }
        numSge = 0;
    }

    boolean isComplete() {
        return started && psnsAssigned == psnCount && psnsDelivered == psnCount;
    }

    boolean isReadOrAtomic() {
        return opcode == WrOpcode.RDMA_READ || opcode == WrOpcode.ATOMIC_CMP_SWAP || opcode == WrOpcode.ATOMIC_FETCH_ADD;
    }

    /** @return whether the message consumes a receive at the responder (SEND, SEND_WITH_IMM, WRITE_WITH_IMM) */
    boolean consumesReceive() {
        return opcode == WrOpcode.SEND || opcode == WrOpcode.SEND_WITH_IMM || opcode == WrOpcode.RDMA_WRITE_WITH_IMM;
    }

    boolean isAtomic() {
        return opcode == WrOpcode.ATOMIC_CMP_SWAP || opcode == WrOpcode.ATOMIC_FETCH_ADD;
    }

    /**
     * The region holding {@code length} message bytes from {@code messageOffset} when one
     * scatter/gather entry holds them all (not an INLINE request, whose bytes are in the arena),
     * for a driver to send them from where they are; their offset in the region's buffer is then
     * {@link #sliceOffset}.
     *
     * @return the region, or null when the bytes are inline or span entries
     */
    MemoryRegion sliceRegion(final long messageOffset, final int length) {
        if (isInline) {
            return null;
        }
        long skip = messageOffset;
        for (int i = 0; i < numSge; i++) {
            final int len = sgeLength[i];
            if (skip >= len) {
                skip -= len;
                continue;
            }
            if (skip + length > len) {
                return null;
            }
            final MemoryRegion mr = sgeRegion[i];
            sliceOffset = mr.offsetOf(sgeAddr[i]) + skip;
            return mr;
        }
        return null;
    }

    /**
     * Copies {@code length} bytes of the message starting at {@code messageOffset} out of the
     * local scatter-gather list (or the inline copy) into {@code dst}.
     */
    void gather(final long messageOffset, final MutableDirectBuffer dst, final int dstOffset, final int length) {
        if (isInline) {
            arena.get(inlineAt, messageOffset, dst, dstOffset, length);
            return;
        }
        ScatterGather.gather(numSge, sgeAddr, sgeLength, sgeRegion, messageOffset, dst, dstOffset, length);
    }

    /**
     * @return whether every scatter/gather entry still addresses live memory of the QP's protection
     *     domain that this WR may write (READ destinations, atomic result buffers): a region
     *     deregistered after the post makes the WR fail LOC_PROT_ERR [MEM-014, REL-050]
     */
    boolean destinationsValid() {
        for (int i = 0; i < numSge; i++) {
            final MemoryRegion mr = sgeRegion[i];
            if (mr == null || mr.checkLocal(sgeAddr[i], sgeLength[i], true)
                != org.metaroce.core.verbs.MemoryAccessResult.OK) {
                return false;
            }
        }
        return true;
    }

    /** Writes response payload into the local scatter-gather list at {@code messageOffset}. */
    void scatter(final long messageOffset, final org.agrona.DirectBuffer src, final int srcOffset, final int length) {
        ScatterGather.scatter(numSge, sgeAddr, sgeLength, sgeRegion, messageOffset, src, srcOffset, length);
    }
}
