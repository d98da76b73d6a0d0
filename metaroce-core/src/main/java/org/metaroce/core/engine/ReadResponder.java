// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.engine;

import java.util.Arrays;

import org.agrona.MutableDirectBuffer;
import org.metaroce.core.reliability.Psn;
import org.metaroce.core.verbs.MemoryRegion;
import org.metaroce.core.wire.Flags;
import org.metaroce.core.wire.Opcode;
import org.metaroce.core.wire.WireConstants;

/**
 * The responder's READs (specification 5.6 and 6.9.2), from the moment a checked READ_REQUEST is
 * held until its last READ_RESPONSE is written: the held READ jobs in PSN order, when the oldest
 * may run [OPS-029], its READ_RESPONSE packets one PMTU each, and forgetting a job once answered or
 * failed. A duplicate READ_REQUEST whose READ is not held is held again and answered again with
 * RETRANSMIT set [REL-044]; the responder keeps no copy of response data.
 *
 * <p>The {@link Responder} decides whether a READ_REQUEST may be held (window, access and rkey
 * checks, which it shares with WRITEs and atomics) and what a region lost while being read means
 * for the queue pair [MEM-006]; the cumulative PSN and the oldest held atomic come in as values,
 * and packets go out through a {@link ResponseOut}, so that this class holds no queue pair.
 *
 * <p>Parallel arrays indexed by the {@link PsnOrderedQueue}'s slot, so that nothing is allocated
 * per packet.
 */
final class ReadResponder {
    // READs held and not yet fully answered, in PSN order [OPS-029]; fields by the queue's slot.
    private final PsnOrderedQueue reads;
    /** The source region, null for a zero-length READ, which reads nothing [OPS-023]. */
    private final MemoryRegion[] readRegion;
    /** The READ's Virtual Address as an offset in its region's buffer. */
    private final long[] readRegionOffset;
    private final long[] readMessageOffset;
    private final long[] readMessageLength;
    private final int[] readMsn;
    /** READ_RESPONSE packets of the job (at least 1), and the next one to write. */
    private final int[] readCount;
    private final int[] readNext;
    /** The DMA Length: bytes this job answers, from its Message Offset. */
    private final long[] readBytes;
    /** Whether the held READ re-executes a duplicate request (responses carry RETRANSMIT) [REL-044]. */
    private final boolean[] readRepeat;

    /** @param jobs READs held or being answered at once */
    ReadResponder(final int jobs) {
        reads = new PsnOrderedQueue(jobs);
        readRegion = new MemoryRegion[jobs];
        readRegionOffset = new long[jobs];
        readMessageOffset = new long[jobs];
        readMessageLength = new long[jobs];
        readMsn = new int[jobs];
        readCount = new int[jobs];
        readNext = new int[jobs];
        readBytes = new long[jobs];
        readRepeat = new boolean[jobs];
    }

    /** @return the READ_RESPONSE packets (and PSNs) a READ of {@code dmaLength} bytes takes: at least one */
    static int responseCount(final long dmaLength, final int mtu) {
        return (int) Math.max(1, (dmaLength + mtu - 1) / mtu);
    }

    // ------------------------------------------------------------------ admission

    /**
     * @return whether the READ whose request has this PSN is held or being answered: a duplicate
     *     of it needs no second answer, its answer is on its way [REL-044]
     */
    boolean isHeld(final int psn) {
        return reads.contains(psn);
    }

    /** @return whether no READ can be held now (answered later: the requester's timers resend it [REL-006]) */
    boolean isFull() {
        return reads.isFull();
    }

    /**
     * Holds a checked READ in PSN order, so that READs run in PSN order [OPS-029]; only if not
     * {@link #isFull()}. A repeated request is simply executed again: READ is idempotent [REL-044].
     *
     * @param region        the source region, checked [MEM-009]; null for a zero-length READ
     * @param regionOffset  the Virtual Address as an offset in {@code region}'s buffer (0 without region)
     * @param count         READ_RESPONSE packets, {@link #responseCount}
     * @param dmaLength     bytes to answer from {@code messageOffset}
     * @param repeat        whether it re-executes a duplicate request: its responses carry RETRANSMIT [REL-044]
     */
    void hold(final int psn, final MemoryRegion region, final long regionOffset, final long messageOffset,
              final long messageLength, final int msn, final int count, final long dmaLength, final boolean repeat) {
        final int j = reads.insert(psn);
        readRegion[j] = region;
        readRegionOffset[j] = regionOffset;
        readMessageOffset[j] = messageOffset;
        readMessageLength[j] = messageLength;
        readMsn[j] = msn;
        readCount[j] = count;
        readNext[j] = 0;
        readBytes[j] = dmaLength;
        readRepeat[j] = repeat;
    }

    // ------------------------------------------------------------------ the oldest READ

    /** @return whether a READ is held or being answered */
    boolean hasHeld() {
        return !reads.isEmpty();
    }

    /** @return the PSN of the oldest held READ's request; only while {@link #hasHeld()} */
    int oldestPsn() {
        return reads.psnAt(0);
    }

    /**
     * The oldest held READ may run once every earlier PSN arrived and earlier atomics ran [OPS-029];
     * only while {@link #hasHeld()}.
     *
     * @param expectedPsn     the receive window's ePSN
     * @param atomicHeld      whether an atomic is held, not yet executed
     * @param oldestAtomicPsn the oldest such atomic's PSN (when {@code atomicHeld})
     */
    boolean oldestMayRun(final int expectedPsn, final boolean atomicHeld, final int oldestAtomicPsn) {
        final int psn = reads.psnAt(0);
        return Psn.before(psn, expectedPsn) && (!atomicHeld || Psn.before(psn, oldestAtomicPsn));
    }

    /**
     * @return whether the oldest READ's source region was deregistered while it was being answered
     *     [MEM-006]; only while {@link #hasHeld()}. The responder then fails it (and the queue pair).
     */
    boolean oldestLostItsRegion() {
        final MemoryRegion mr = readRegion[reads.slotAt(0)];
        return mr != null && !mr.isValid();
    }

    /**
     * Writes the next READ_RESPONSE of the oldest READ, one PMTU of its range, with LAST on the
     * packet that ends the message and RETRANSMIT on a repeat [REL-044]; forgets the READ after its
     * last response. Only while {@link #hasHeld()} and its region is valid.
     *
     * @return false when the sink had no room (nothing written)
     */
    boolean emitResponse(final long nowNs, final TransmitSink sink, final ResponseOut out, final int mtu) {
        final int r = reads.slotAt(0);
        final int k = readNext[r];
        final long within = (long) k * mtu;
        final int payload = (int) Math.min(mtu, readBytes[r] - within);
        final Opcode opcode = Opcode.READ_RESPONSE;
        final MemoryRegion mr = readRegion[r];
        final int offset = out.claim(sink, nowNs, opcode.headerLength() + payload + WireConstants.INTEGRITY_CHECK_LENGTH);
        if (offset == TransmitSink.NO_ROOM) {
            return false;
        }
        final MutableDirectBuffer buffer = sink.buffer();
        final long messageOffset = readMessageOffset[r] + within;
        final int flags = (messageOffset + payload == readMessageLength[r] ? Flags.LAST : 0)
            | (readRepeat[r] ? Flags.RETRANSMIT : 0);
        final PacketWriter w = out.header(buffer, offset, opcode, flags, reads.psnAt(0) + k, payload, nowNs);
        w.msg(buffer, offset, opcode).msn(readMsn[r]).messageOffset(messageOffset)
            .messageLength(readMessageLength[r]).rsn(0);
        if (payload > 0 && mr != null) {
            buffer.putBytes(offset + opcode.headerLength(), mr.buffer(), (int) (readRegionOffset[r] + messageOffset),
                payload);
        }
        out.commit(sink, offset, opcode, payload);
        if (++readNext[r] == readCount[r]) {
            forgetOldest();
        }
        return true;
    }

    /** Forgets the oldest held READ and its region: answered, or failed. */
    void forgetOldest() {
        readRegion[reads.slotAt(0)] = null;
        reads.removeHead();
    }

    /** Forgets every held READ and the regions they hold on to (flush or reset). */
    void clear() {
        Arrays.fill(readRegion, null);
        reads.clear();
    }
}
