// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.engine;

import java.util.Arrays;

import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.metaroce.core.reliability.Psn;
import org.metaroce.core.verbs.MemoryRegion;
import org.metaroce.core.wire.Flags;
import org.metaroce.core.wire.Opcode;
import org.metaroce.core.wire.WireConstants;

/**
 * The responder's atomics (specification 5.7 and 6.9.3), from the moment a checked atomic is held
 * until its ATOMIC_RESPONSE is written. It owns three things, all sized to {@code slots}:
 * <ul>
 *   <li>the <em>held</em> atomics, in PSN order, executed only once every earlier PSN has arrived
 *       and every earlier READ has run [OPS-029];</li>
 *   <li>the <em>responses</em> of executed and replayed atomics, waiting to be written, in the
 *       order they were queued;</li>
 *   <li>the <em>replay cache</em>: PSN, MSN and original value of the latest executed atomics,
 *       which answers a duplicate without executing it twice [REL-047].</li>
 * </ul>
 * The {@link Responder} checks an atomic (opcode, access, rkey, alignment), decides whether it is
 * new or a duplicate, and tells this class; what must wait for the cumulative PSN or for READs is
 * passed in as values, so that this class needs neither the receive window nor the READs.
 *
 * <p>Primitive fields and parallel arrays indexed by the {@link PsnOrderedQueue}'s slot or by a
 * ring position, so that nothing is allocated per packet.
 */
final class AtomicExecutor {
    /** Bound on held atomics plus queued responses together, and the replay cache's size. */
    private final int slots;

    // Held atomics, in PSN order; fields by the queue's slot.
    private final PsnOrderedQueue held;
    private final int[] heldMsn;
    private final boolean[] heldCompareSwap;
    private final MemoryRegion[] heldRegion;
    private final int[] heldIndex;
    private final long[] heldSwapAdd;
    private final long[] heldCompare;

    // Responses to write, a ring: entry i of outCount is at (outHead + i) % slots.
    private final int[] outPsn;
    private final int[] outMsn;
    private final long[] outValue;
    /** Whether the queued ATOMIC_RESPONSE replays a retained result (sent with RETRANSMIT) [REL-047]. */
    private final boolean[] outReplay;
    private int outHead;
    private int outCount;

    // The replay cache, a ring overwritten oldest first: the latest `slots` executed atomics [REL-047].
    private final int[] cachePsn;
    private final int[] cacheMsn;
    private final long[] cacheValue;
    private final boolean[] cacheValid;
    private int cacheNext;

    /** @param slots atomics held or answered at once, and executed atomics retained [REL-047] */
    AtomicExecutor(final int slots) {
        this.slots = slots;
        held = new PsnOrderedQueue(slots);
        heldMsn = new int[slots];
        heldCompareSwap = new boolean[slots];
        heldRegion = new MemoryRegion[slots];
        heldIndex = new int[slots];
        heldSwapAdd = new long[slots];
        heldCompare = new long[slots];
        outPsn = new int[slots];
        outMsn = new int[slots];
        outValue = new long[slots];
        outReplay = new boolean[slots];
        cachePsn = new int[slots];
        cacheMsn = new int[slots];
        cacheValue = new long[slots];
        cacheValid = new boolean[slots];
    }

    // ------------------------------------------------------------------ holding and executing

    /**
     * @return whether a new atomic has no room: held atomics and unwritten responses together use
     *     every slot (the requester's timer resends it)
     */
    boolean isFull() {
        return held.size() + outCount >= slots;
    }

    /**
     * Holds a checked atomic until every earlier PSN has arrived [OPS-029]; only if not
     * {@link #isFull()}.
     *
     * @param compareSwap true for CMP_SWAP, false for FETCH_ADD
     * @param region      the target's region, already checked [MEM-009]
     * @param index       the target's offset in {@code region}'s buffer
     * @param swapAdd     the Swap Data or Add Data
     * @param compare     the Compare Data (CMP_SWAP only)
     */
    void hold(final int psn, final int msn, final boolean compareSwap, final MemoryRegion region, final int index,
              final long swapAdd, final long compare) {
        final int j = held.insert(psn);
        heldMsn[j] = msn;
        heldCompareSwap[j] = compareSwap;
        heldRegion[j] = region;
        heldIndex[j] = index;
        heldSwapAdd[j] = swapAdd;
        heldCompare[j] = compare;
    }

    /** @return whether an atomic is held, not yet executed */
    boolean hasHeld() {
        return !held.isEmpty();
    }

    /** @return the PSN of the oldest held atomic; only while {@link #hasHeld()} */
    int oldestHeldPsn() {
        return held.psnAt(0);
    }

    /**
     * Executes held atomics whose turn has come: every earlier PSN has arrived and every earlier
     * READ has been answered, so atomics and READs take effect in PSN order [OPS-029]. Each result
     * is retained for replays [REL-047] and its response queued.
     *
     * @param expectedPsn   the receive window's ePSN: atomics before it have every earlier PSN
     * @param readHeld      whether a READ is held or being answered
     * @param oldestReadPsn the oldest such READ's PSN (when {@code readHeld}): atomics after it wait
     */
    void executeReady(final int expectedPsn, final boolean readHeld, final int oldestReadPsn) {
        while (!held.isEmpty()) {
            final int psn = held.psnAt(0);
            if (!Psn.before(psn, expectedPsn)) {
                return;
            }
            if (readHeld && Psn.before(oldestReadPsn, psn)) {
                return;
            }
            final int h = held.slotAt(0);
            final UnsafeBuffer target = heldRegion[h].buffer();
            final int index = heldIndex[h];
            final long original;
            if (!heldCompareSwap[h]) {
                original = target.getAndAddLong(index, heldSwapAdd[h]);
            } else {
                final long compare = heldCompare[h];
                final long swap = heldSwapAdd[h];
                long seen;
                do {
                    seen = target.getLongVolatile(index);
                } while (seen == compare && !target.compareAndSetLong(index, compare, swap));
                original = seen;
            }
            cachePsn[cacheNext] = psn;
            cacheMsn[cacheNext] = heldMsn[h];
            cacheValue[cacheNext] = original;
            cacheValid[cacheNext] = true;
            cacheNext = (cacheNext + 1) % slots;
            queueResponse(psn, heldMsn[h], original, false);
            heldRegion[h] = null;
            held.removeHead();
        }
    }

    /**
     * A retransmitted atomic is answered from the cache, never executed twice [REL-047]; one whose
     * PSN is not retained gets nothing here (only the duplicate ACK of REL-042). Nor does one that
     * finds every slot in use: the held atomics' responses need the ring's room when they execute,
     * and the requester's timer resends the duplicate.
     *
     * @return whether a replayed response was queued
     */
    boolean replay(final int psn) {
        for (int i = 0; i < slots; i++) {
            if (cacheValid[i] && cachePsn[i] == psn) {
                if (!isFull()) {
                    queueResponse(psn, cacheMsn[i], cacheValue[i], true);
                    return true;
                }
                return false;
            }
        }
        return false;
    }

    private void queueResponse(final int psn, final int msn, final long value, final boolean replay) {
        final int j = (outHead + outCount) % slots;
        outReplay[j] = replay;
        outPsn[j] = psn;
        outMsn[j] = msn;
        outValue[j] = value;
        outCount++;
    }

    // ------------------------------------------------------------------ responses

    /** @return whether ATOMIC_RESPONSEs wait to be written */
    boolean hasResponses() {
        return outCount > 0;
    }

    /**
     * Writes the oldest queued ATOMIC_RESPONSE (a replay with RETRANSMIT [REL-047]); only while
     * {@link #hasResponses()}.
     *
     * @return false when the sink had no room (nothing written, the response stays queued)
     */
    boolean emitResponse(final long nowNs, final TransmitSink sink, final ResponseOut out) {
        final Opcode opcode = Opcode.ATOMIC_RESPONSE;
        final int offset = out.claim(sink, nowNs, opcode.headerLength() + WireConstants.INTEGRITY_CHECK_LENGTH);
        if (offset == TransmitSink.NO_ROOM) {
            return false;
        }
        final MutableDirectBuffer buffer = sink.buffer();
        final int j = outHead;
        final PacketWriter w = out.header(buffer, offset, opcode, Flags.LAST | (outReplay[j] ? Flags.RETRANSMIT : 0),
            outPsn[j], 0, nowNs);
        w.msg(buffer, offset, opcode).msn(outMsn[j]).messageOffset(0).messageLength(8).rsn(0);
        w.aack(buffer, offset, opcode).originalData(outValue[j]);
        out.commit(sink, offset, opcode, 0);
        outHead = (outHead + 1) % slots;
        outCount--;
        return true;
    }

    // ------------------------------------------------------------------ flush and reset

    /** Forgets the held atomics, unexecuted, and the regions they hold on to (flush or reset). */
    void dropHeld() {
        Arrays.fill(heldRegion, null);
        held.clear();
    }

    /** Forgets the responses not yet written (flush or reset): in ERR no response leaves [REL-052]. */
    void dropResponses() {
        outCount = 0;
    }

    /**
     * Forgets every retained result (reset only): a queue pair used again must not answer a
     * duplicate of its new connection with a result of the old one. A flush keeps them, as it
     * always did: in ERR no response leaves anyway.
     */
    void forgetResults() {
        Arrays.fill(cacheValid, false);
    }
}
