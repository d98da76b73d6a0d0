// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.engine;

import org.metaroce.core.wire.AckHeader;
import org.metaroce.core.wire.Flags;

/**
 * When, and with which triggering packet, the responder's acknowledgements go out (specification
 * 6.4.1). It alone owns two things:
 * <ul>
 *   <li>the <em>coalesced ACK</em>: whether one is pending, how many accepted packets it answers,
 *       its triggering packet (PSN, Transmit Timestamp, Path ID, arrival time and ACK Flags) and
 *       when it is due. It is due at once after a packet with ACK_REQ or LAST, one that creates,
 *       extends or fills a gap [REL-008], or one that uses up the advertised credit [REL-014];
 *       otherwise after ACK_COALESCE_PACKETS accepted packets or ACK_COALESCE_DELAY after the
 *       oldest unacknowledged one arrived, whichever comes first [REL-009]. Its trigger is the
 *       latest packet it answers, or the latest with ACK_REQ among them [REL-011];</li>
 *   <li>the <em>own queue</em>: ACKs and NACKs that each need their own triggering packet — NACKs
 *       [REL-015], ACKs of duplicates [REL-042], of packets beyond the SACK bitmap [REL-010] and of
 *       probes. It is bounded; when full the oldest entry is dropped, since the requester's timers
 *       recover from a lost acknowledgement.</li>
 * </ul>
 * The {@link Responder} tells it what it accepted or wants answered, asks what is due at a given
 * time and writes the packets, reading the trigger fields from here; the cumulative PSN, SACK
 * bitmap and credit an ACK carries are the responder's current state [REL-012] and stay there.
 * Arrival times come in as arguments: ACK Delay runs from a packet's arrival at the host
 * [REL-066], which only the caller knows.
 *
 * <p>Primitive fields and parallel arrays, walked from the head, so that nothing is allocated per
 * packet.
 */
final class AckScheduler {
    /** The endpoint's configuration, read at each decision as the responder always did. */
    private final EndpointConfig config;

    // The coalesced ACK.
    private boolean ackPending;
    /** Due at the next transmission opportunity, whatever the deadline [REL-008]. */
    private boolean ackNow;
    private int unackedPackets;
    /** ACK_COALESCE_DELAY after the oldest unacknowledged packet; MAX_VALUE when none waits [REL-009]. */
    private long ackDeadlineNs = Long.MAX_VALUE;
    /** Whether the trigger carries ACK_REQ: later packets without it do not replace it [REL-011]. */
    private boolean triggerAckReq;
    private int triggerPsn;
    private int triggerTimestamp;
    private int triggerPathId;
    private long triggerArrivalNs;
    private int triggerAckFlags;

    // The own queue, a ring by slot: entry i of ownCount is at (ownHead + i) % ownCapacity.
    // Sized to the receive window (at least 64): every packet of one batch can need its own ACK.
    private final int ownCapacity;
    /** 0 for an ACK, else the NACK reason code. */
    private final int[] ownReason;
    private final int[] ownNackPsn;
    private final int[] ownRnrUnits;
    private final int[] ownTriggerPsn;
    private final int[] ownTimestamp;
    private final int[] ownPathId;
    private final long[] ownArrivalNs;
    private final int[] ownAckFlags;
    private int ownHead;
    private int ownCount;

    AckScheduler(final EndpointConfig config) {
        this.config = config;
        ownCapacity = Math.max(64, config.receiveWindowPackets());
        ownReason = new int[ownCapacity];
        ownNackPsn = new int[ownCapacity];
        ownRnrUnits = new int[ownCapacity];
        ownTriggerPsn = new int[ownCapacity];
        ownTimestamp = new int[ownCapacity];
        ownPathId = new int[ownCapacity];
        ownArrivalNs = new long[ownCapacity];
        ownAckFlags = new int[ownCapacity];
    }

    /** The ACK Flags an acknowledgement of a packet carries [REL-012]. */
    static int ackFlags(final boolean ce, final boolean duplicate) {
        return (ce ? AckHeader.FLAG_ECN_ECHO : 0) | (duplicate ? AckHeader.FLAG_DUPLICATE : 0);
    }

    // ------------------------------------------------------------------ the coalesced ACK

    /**
     * A new SEND, WRITE or atomic packet was accepted: the coalesced ACK answers it, at once
     * [REL-008, REL-014] or within the coalescing limits [REL-009].
     *
     * @param flags      the packet's Base Header flags (ACK_REQ, LAST)
     * @param distance   its PSN minus ePSN before it was marked: above 0 it creates or extends a gap
     * @param hadGap     whether PSNs beyond ePSN had arrived before it: then it extends or fills a gap
     * @param lastCredit whether it used up the credit last advertised [REL-014]
     * @param arrivalNs  when it reached the host [REL-066]
     * @param deferrable whether DEFERRED_ACK is in effect: then LAST without ACK_REQ does not make
     *     the ACK immediate, which waits at most ACK_DEFER_DELAY instead [REL-073]
     */
    void accepted(final long nowNs, final int psn, final int flags, final int timestamp, final int pathId,
                  final long arrivalNs, final boolean ce, final int distance, final boolean hadGap,
                  final boolean lastCredit, final boolean deferrable) {
        answer(psn, flags, timestamp, pathId, arrivalNs, ackFlags(ce, false));
        final boolean last = (flags & Flags.LAST) != 0;
        if ((flags & Flags.ACK_REQ) != 0 || (last && !deferrable) || distance > 0 || hadGap
            || unackedPackets >= config.ackCoalescePackets() || config.ackCoalesceDelayNs() == 0 || lastCredit) {
            ackNow = true;
        } else if (last) {
            // The requester does not wait for this one: hold it for a request to carry [REL-073].
            startDelay(nowNs, config.ackDeferDelayNs());
        } else {
            startDelay(nowNs, config.ackCoalesceDelayNs());
        }
    }

    /**
     * A READ_REQUEST was accepted (new, or a repeat executed again [REL-044]). Only a gap makes
     * its ACK immediate: ACK_REQ, LAST and the packet count are not consulted, since its
     * READ_RESPONSEs answer it; otherwise it waits ACK_COALESCE_DELAY. This is the responder's
     * behaviour as it was, kept unchanged.
     */
    void acceptedRead(final long nowNs, final int psn, final int flags, final int timestamp, final int pathId,
                      final long arrivalNs, final boolean ce, final boolean duplicate, final int distance,
                      final boolean hadGap) {
        answer(psn, flags, timestamp, pathId, arrivalNs, ackFlags(ce, duplicate));
        if (distance > 0 || hadGap) {
            ackNow = true;
        } else {
            startDelay(nowNs, config.ackCoalesceDelayNs());
        }
    }

    /**
     * A duplicate READ_REQUEST whose READ is held or being answered: an immediate ACK with the
     * DUPLICATE flag, and nothing else, since its answer is on its way [REL-042, REL-044].
     */
    void duplicateOfHeld(final int psn, final int flags, final int timestamp, final int pathId,
                         final long arrivalNs, final boolean ce) {
        answer(psn, flags, timestamp, pathId, arrivalNs, ackFlags(ce, true));
        ackNow = true;
    }

    /** Counts one more answered packet and makes it the trigger unless an ACK_REQ one holds [REL-011]. */
    private void answer(final int psn, final int flags, final int timestamp, final int pathId,
                        final long arrivalNs, final int ackFlags) {
        ackPending = true;
        unackedPackets++;
        final boolean ackReq = (flags & Flags.ACK_REQ) != 0;
        if (triggerAckReq && !ackReq && unackedPackets > 1) {
            // The trigger of a coalesced ACK is the latest packet with ACK_REQ [REL-011].
            return;
        }
        triggerAckReq = ackReq;
        triggerPsn = psn;
        triggerTimestamp = timestamp;
        triggerPathId = pathId;
        triggerArrivalNs = arrivalNs;
        triggerAckFlags = ackFlags;
    }

    /**
     * The delay runs from the oldest unacknowledged packet: later ones do not push it back
     * [REL-009]; a shorter one (ACK_COALESCE_DELAY after a held ACK_DEFER_DELAY) brings it forward
     * [REL-073].
     */
    private void startDelay(final long nowNs, final long delayNs) {
        ackDeadlineNs = Math.min(ackDeadlineNs, nowNs + delayNs);
    }

    /** @return whether a coalesced ACK waits, due or not */
    boolean ackPending() {
        return ackPending;
    }

    /** @return whether the coalesced ACK must go out at {@code nowNs} */
    boolean ackDue(final long nowNs) {
        return ackPending && (ackNow || nowNs >= ackDeadlineNs);
    }

    /**
     * @return when the coalesced ACK is due: MIN_VALUE if at once, MAX_VALUE if none waits, else
     *     its ACK_COALESCE_DELAY deadline
     */
    long ackDeadlineNs() {
        if (!ackPending) {
            return Long.MAX_VALUE;
        }
        return ackNow ? Long.MIN_VALUE : ackDeadlineNs;
    }

    /** The coalesced ACK was written: the next one starts from nothing. */
    void ackSent() {
        ackPending = false;
        ackNow = false;
        triggerAckReq = false;
        unackedPackets = 0;
        ackDeadlineNs = Long.MAX_VALUE;
    }

    /**
     * Drops the pending coalesced ACK with everything it had counted (the QP flushes or resets), as
     * {@link #ackSent()} does: a queue pair reset and used again must not answer its first packets
     * early for packets of its previous life, nor keep an old trigger with ACK_REQ that the new
     * packets cannot replace [REL-011].
     */
    void cancelAck() {
        ackSent();
    }

    int triggerPsn() {
        return triggerPsn;
    }

    int triggerTimestamp() {
        return triggerTimestamp;
    }

    int triggerPathId() {
        return triggerPathId;
    }

    long triggerArrivalNs() {
        return triggerArrivalNs;
    }

    int triggerAckFlags() {
        return triggerAckFlags;
    }

    /** @return accepted packets the pending coalesced ACK answers */
    int unackedPackets() {
        return unackedPackets;
    }

    // ------------------------------------------------------------------ the own queue

    /**
     * Queues an acknowledgement with its own triggering packet, due at once; when the queue is full
     * the oldest is dropped.
     *
     * @param reason     0 for an ACK, else the NACK reason code
     * @param nackPsn    the NACK PSN (0 for an ACK) [REL-015]
     * @param rnrUnits   the RNR Timer (NACK RNR only, else 0)
     * @param triggerPsn the triggering packet's PSN, echoed in the Base Header [REL-012]
     * @param arrivalNs  when the triggering packet reached the host: ACK Delay runs from there [REL-066]
     * @param ackFlags   see {@link #ackFlags}
     */
    void queue(final int reason, final int nackPsn, final int rnrUnits, final int triggerPsn, final int timestamp,
               final int pathId, final long arrivalNs, final int ackFlags) {
        if (ownCount == ownCapacity) {
            ownHead = (ownHead + 1) % ownCapacity;
            ownCount--;
        }
        final int j = (ownHead + ownCount) % ownCapacity;
        ownReason[j] = reason;
        ownNackPsn[j] = nackPsn;
        ownRnrUnits[j] = rnrUnits;
        ownTriggerPsn[j] = triggerPsn;
        ownTimestamp[j] = timestamp;
        ownPathId[j] = pathId;
        ownArrivalNs[j] = arrivalNs;
        ownAckFlags[j] = ackFlags;
        ownCount++;
    }

    /** @return whether acknowledgements of their own wait; they are always due at once */
    boolean hasOwn() {
        return ownCount > 0;
    }

    int ownCount() {
        return ownCount;
    }

    int ownCapacity() {
        return ownCapacity;
    }

    // The oldest queued acknowledgement, the next to write; only while hasOwn().

    int ownReason() {
        return ownReason[ownHead];
    }

    int ownNackPsn() {
        return ownNackPsn[ownHead];
    }

    int ownRnrUnits() {
        return ownRnrUnits[ownHead];
    }

    int ownTriggerPsn() {
        return ownTriggerPsn[ownHead];
    }

    int ownTimestamp() {
        return ownTimestamp[ownHead];
    }

    int ownPathId() {
        return ownPathId[ownHead];
    }

    long ownArrivalNs() {
        return ownArrivalNs[ownHead];
    }

    int ownAckFlags() {
        return ownAckFlags[ownHead];
    }

    /** The oldest queued acknowledgement was written. */
    void ownSent() {
        ownHead = (ownHead + 1) % ownCapacity;
        ownCount--;
    }

    /** Forgets every queued acknowledgement. */
    void clearOwn() {
        ownCount = 0;
    }

    /**
     * Keeps only the latest queued acknowledgement with NACK reason {@code reason}, or nothing if
     * there is none: in ERR only the fatal NACK may still leave [REL-052].
     */
    void keepOnlyLatest(final int reason) {
        while (ownCount > 0 && ownReason[(ownHead + ownCount - 1) % ownCapacity] != reason) {
            ownCount--;
        }
        while (ownCount > 1) {
            ownHead = (ownHead + 1) % ownCapacity;
            ownCount--;
        }
    }
}
