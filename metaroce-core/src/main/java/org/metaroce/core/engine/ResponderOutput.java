// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.engine;

import org.metaroce.core.reliability.ReceiveWindow;
import org.metaroce.core.verbs.QpState;
import org.metaroce.core.wire.NackReason;

/**
 * What a responder sends at a poll, and in which order: its own ACKs and NACKs first (in ERR the
 * only ones [REL-052]), then an ACK announcing the Sender Count [CC-038], a CNP [CC-020], the
 * coalesced ACK [REL-008], atomic responses, and READ responses whose turn has come [OPS-029].
 * The {@link Responder} decides what is due as requests arrive; this class only drains it, and
 * tells the endpoint's schedule when it next has something to send.
 *
 * <p>State: whether the Sender Count ACK is due; the rest belongs to the parts handed in.
 */
final class ResponderOutput {
    private final ResponderContext qp;
    private final ReceiveWindow window;
    private final AckScheduler acks;
    private final AckWriter ackWriter;
    private final CnpSchedule cnps;
    private final ReadResponder reads;
    private final AtomicExecutor atomics;
    private final ExecutionOrder order;
    private final FatalNack fatalNack;
    private final ResponseOut out;
    private final EndpointCounters counters;
    /** An ACK announcing the Sender Count to a requester that has sent nothing yet is due [CC-038]. */
    private boolean senderCountPending;

    ResponderOutput(final ResponderContext qp, final ReceiveWindow window, final AckScheduler acks,
                    final AckWriter ackWriter, final CnpSchedule cnps, final ReadResponder reads,
                    final AtomicExecutor atomics, final ExecutionOrder order, final FatalNack fatalNack,
                    final ResponseOut out, final EndpointCounters counters) {
        this.qp = qp;
        this.window = window;
        this.acks = acks;
        this.ackWriter = ackWriter;
        this.cnps = cnps;
        this.reads = reads;
        this.atomics = atomics;
        this.order = order;
        this.fatalNack = fatalNack;
        this.out = out;
        this.counters = counters;
    }

    /** An ACK with the current Sender Count is to be sent, once however often this is called before it leaves [CC-038]. */
    void announceSenderCount() {
        senderCountPending = true;
    }

    /** The Sender Count ACK is no longer due (ERR, RESET). */
    void cancelSenderCount() {
        senderCountPending = false;
    }

    /**
     * Writes what is due, at most {@code budget} packets.
     *
     * @return the packets written
     */
    int emit(final long nowNs, final TransmitSink sink, final int budget) {
        int emitted = 0;
        while (acks.hasOwn() && emitted < budget) {
            if (!ackWriter.ack(nowNs, sink, acks.ownReason(), acks.ownNackPsn(), acks.ownRnrUnits(), acks.ownTriggerPsn(),
                acks.ownTimestamp(), acks.ownArrivalNs(), acks.ownPathId(), acks.ownAckFlags())) {
                return emitted;
            }
            acks.ownSent();
            emitted++;
        }
        if (qp.state() == QpState.ERR) {
            return emitted;
        }
        if (senderCountPending && emitted < budget) {
            // A count of 1 tells nothing the initial window does not assume: not sent. Otherwise
            // no packet triggered it: the PSN before the expected one (never outstanding at the
            // requester), no echo, no hold; the state is the responder's current one [CC-038].
            if (qp.senderCountToAdvertise(nowNs) > 1) {
                if (!ackWriter.ack(nowNs, sink, 0, 0, 0, window.expectedPsn() - 1, 0, nowNs, 0, 0)) {
                    return emitted;
                }
                emitted++;
            }
            senderCountPending = false;
        }
        if (cnps.isPending() && emitted < budget) {
            if (!ackWriter.cnp(nowNs, sink, cnps.psn())) {
                return emitted;
            }
            cnps.done();
            emitted++;
        }
        if (acks.ackDue(nowNs) && emitted < budget) {
            if (!ackWriter.ack(nowNs, sink, 0, 0, 0, acks.triggerPsn(), acks.triggerTimestamp(), acks.triggerArrivalNs(),
                acks.triggerPathId(), acks.triggerAckFlags())) {
                return emitted;
            }
            acks.ackSent();
            emitted++;
        }
        while (atomics.hasResponses() && emitted < budget) {
            if (!atomics.emitResponse(nowNs, sink, out)) {
                return emitted;
            }
            counters.increment(EndpointCounter.ATOMIC_RESPONSES_OUT);
            emitted++;
        }
        while (reads.hasHeld() && emitted < budget && order.readExecutable()) {
            if (reads.oldestLostItsRegion()) {
                failReadWithoutRegion(nowNs);
            } else if (reads.emitResponse(nowNs, sink, out, qp.pathMtu())) {
                counters.increment(EndpointCounter.READ_RESPONSES_OUT);
            } else {
                return emitted;
            }
            emitted++;
            order.executeReadyAtomics();
        }
        return emitted;
    }

    /**
     * The oldest READ's region was deregistered while it was being answered: the requester gets
     * REM_ACCESS_ERR, with the READ_REQUEST's PSN as NACK PSN whatever response was next [MEM-006].
     */
    private void failReadWithoutRegion(final long nowNs) {
        final int psn = reads.oldestPsn();
        reads.forgetOldest();
        counters.increment(EndpointCounter.NACKS_OUT_REMOTE_ACCESS);
        // No packet caused it directly: the READ_REQUEST's PSN is the trigger, with no echo.
        acks.queue(NackReason.REMOTE_ACCESS.code(), psn, 0, psn, 0, 0, nowNs, 0);
        // No earlier NACK was answered again: this runs before ERR, and leaving ERR clears it.
        fatalNack.set(NackReason.REMOTE_ACCESS.code(), psn);
        qp.recordFailure("a READ at PSN " + Integer.toUnsignedString(psn) + " lost its source region while being "
            + "answered: NACK REMOTE_ACCESS [MEM-014]");
        qp.enterError(AsyncEventType.QP_ACCESS_ERR);
    }

    /**
     * @return whether the only thing to send is the coalesced ACK (no NACK or ACK of its own, CNP,
     *     atomic or READ response): it may then follow the QP's requests [REL-008]
     */
    boolean onlyCoalescedAckPending() {
        return acks.ackPending() && !acks.hasOwn() && !cnps.isPending() && !atomics.hasResponses() && !reads.hasHeld();
    }

    /** @return when {@link #emit} next has something to send: MIN_VALUE for now, MAX_VALUE for never */
    long nextDeadlineNs() {
        if (acks.hasOwn()) {
            return Long.MIN_VALUE;
        }
        if (qp.state() == QpState.ERR) {
            return Long.MAX_VALUE;
        }
        if (senderCountPending || cnps.isPending() || atomics.hasResponses() || (reads.hasHeld() && order.readExecutable())) {
            return Long.MIN_VALUE;
        }
        return acks.ackDeadlineNs();
    }
}
