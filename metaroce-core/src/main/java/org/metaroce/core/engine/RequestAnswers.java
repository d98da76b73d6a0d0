// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.engine;

import org.agrona.DirectBuffer;
import org.metaroce.core.wire.BaseHeader;
import org.metaroce.core.wire.Flags;
import org.metaroce.core.wire.NackReason;

/**
 * The answers a request packet earns of its own, each queued with that packet as its trigger
 * [REL-015] for the {@link AckScheduler}: an ACK of its own (a duplicate [REL-042], a KEEPALIVE
 * probe [CM-028], a packet beyond the SACK bitmap [REL-010]), the NACKs that leave the queue pair
 * running (PSN_WINDOW, TRIMMED, RNR, and go-back-N's SEQUENCE_GAP once per ePSN [REL-053]), and a
 * fatal NACK, which fails the queue pair [REL-007] and is repeated to retransmissions of the
 * offending request in ERR [REL-052].
 *
 * <p>State: when the packet being answered reached the host, since every answer reports ACK Delay
 * from there [REL-012, REL-066] (set by each entry point, so that the many paths that queue an
 * answer need not carry it), and the ePSN a SEQUENCE_GAP NACK was sent for.
 */
final class RequestAnswers {
    private final ResponderContext qp;
    private final AckScheduler acks;
    private final FatalNack fatalNack;
    private final EndpointCounters counters;
    private long arrivalNs;
    private boolean gapNacked;
    private int gapNackedPsn;

    RequestAnswers(final ResponderContext qp, final AckScheduler acks, final FatalNack fatalNack,
                   final EndpointCounters counters) {
        this.qp = qp;
        this.acks = acks;
        this.fatalNack = fatalNack;
        this.counters = counters;
    }

    /** A packet to answer reached the host at {@code arrivalNs} (at most now). */
    void arrived(final long arrivalNs) {
        this.arrivalNs = arrivalNs;
    }

    /** @return when the packet being handled reached the host */
    long arrivalNs() {
        return arrivalNs;
    }

    /**
     * Queues an acknowledgement whose triggering packet is the one at {@code offset} [REL-015]:
     * reason 0 = ACK, else a NACK reason code.
     */
    void own(final int reason, final int nackPsn, final int rnrUnits, final DirectBuffer buffer, final int offset,
             final boolean ce, final boolean duplicate) {
        acks.queue(reason, nackPsn, rnrUnits, BaseHeader.psn(buffer, offset), BaseHeader.timestamp(buffer, offset),
            BaseHeader.pathId(buffer, offset), arrivalNs, AckScheduler.ackFlags(ce, duplicate));
    }

    /** RNR NACK: no receive was posted for the message; the requester waits at least MIN_RNR_TIMER. */
    void rnr(final int psn, final DirectBuffer buffer, final int offset, final boolean ce) {
        own(NackReason.RNR.code(), psn, (int) Math.min(255, Math.max(1, qp.minRnrTimerNs() / 10_000)), buffer, offset,
            ce, false);
        counters.increment(EndpointCounter.RNR_NACKS_OUT);
    }

    /**
     * Go-back-N: a new packet beyond ePSN is dropped unaccepted; the first for each value of ePSN
     * is answered by NACK SEQUENCE_GAP with NACK PSN = ePSN [REL-053].
     */
    void sequenceGap(final int expectedPsn, final DirectBuffer buffer, final int offset, final boolean ce) {
        counters.increment(EndpointCounter.SEQUENCE_GAP);
        if (gapNacked && gapNackedPsn == expectedPsn) {
            return;
        }
        gapNacked = true;
        gapNackedPsn = expectedPsn;
        own(NackReason.SEQUENCE_GAP.code(), expectedPsn, 0, buffer, offset, ce, false);
        counters.increment(EndpointCounter.NACKS_OUT_SEQUENCE_GAP);
    }

    /** Sends {@code reason} for {@code psn} and moves the QP to ERR [REL-007]. */
    void fatal(final NackReason reason, final int psn, final DirectBuffer buffer, final int offset, final boolean ce) {
        final EndpointCounter counter = RequestChecks.nackCounter(reason);
        counters.increment(counter);
        own(reason.code(), psn, 0, buffer, offset, ce, false);
        fatalNack.set(reason.code(), psn);
        qp.recordFailure("the peer's request at PSN " + Integer.toUnsignedString(psn) + " was refused with NACK "
            + reason + " (" + counter + ") [REL-007]");
        qp.enterError(reason == NackReason.INVALID_REQUEST ? AsyncEventType.QP_REQ_ERR
            : reason == NackReason.REMOTE_ACCESS ? AsyncEventType.QP_ACCESS_ERR : AsyncEventType.QP_FATAL);
    }

    /**
     * In ERR, a responder that failed a request answers retransmissions of the offending packet with
     * the same NACK, at most 8 times, so that a lost NACK still reaches the requester [REL-052].
     */
    void inError(final DirectBuffer buffer, final int offset) {
        if (repeatsFatalNack(buffer, offset)) {
            fatalNack.repeated();
            own(fatalNack.reason(), fatalNack.psn(), 0, buffer, offset, false, true);
            return;
        }
        // Any other request in ERR is dropped unanswered, and counted like every packet the state
        // table drops [QP-011].
        counters.increment(EndpointCounter.INVALID_QP_STATE);
    }

    /** @return whether a request received in ERR is answered again with the fatal NACK [REL-052] */
    boolean repeatsFatalNack(final DirectBuffer buffer, final int offset) {
        return fatalNack.answersAgain(BaseHeader.psn(buffer, offset));
    }

    /** A KEEPALIVE with ACK_REQ is answered at once with an ACK carrying the current state [CM-028], [WIRE-065]. */
    void keepalive(final DirectBuffer buffer, final int offset) {
        if ((BaseHeader.flags(buffer, offset) & Flags.ACK_REQ) == 0) {
            // Only a probe asks for an answer; a KEEPALIVE without ACK_REQ just restarts the idle time.
            return;
        }
        own(0, 0, 0, buffer, offset, false, false);
    }

    /** Modify to RESET: no SEQUENCE_GAP NACK has been sent. */
    void reset() {
        gapNacked = false;
    }
}
