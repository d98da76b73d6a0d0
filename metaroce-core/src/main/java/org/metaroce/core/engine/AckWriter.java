// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.engine;

import java.util.function.LongToIntFunction;

import org.agrona.MutableDirectBuffer;
import org.metaroce.core.reliability.ReceiveWindow;
import org.metaroce.core.wire.AckHeader;
import org.metaroce.core.wire.Opcode;
import org.metaroce.core.wire.WireConstants;

/**
 * Writes the responder's ACKs, NACKs and CNPs, and the ACKs attached to the queue pair's own request
 * packets [REL-071]. Every ACK and NACK carries the responder's state
 * when it leaves [REL-012, REL-013]: the cumulative PSN and SACK bitmap of the receive window,
 * the count of CE-marked packets, a fresh Credit and, with SENDER_COUNT, the Sender Count
 * [CC-038]. The cumulative PSN and Credit last sent are
 * kept: they are what the requester may send [REL-019], so they tell whether a packet used up the
 * last credit and its ACK must not wait [REL-014]. When to send what is the {@link AckScheduler}'s.
 */
final class AckWriter {
    /** The Credit a requester assumes before any ACK [REL-019]. */
    private static final long INITIAL_CREDIT = 64;

    /** How the responder grants Credit (its queue pair's receive share [CC-018]). */
    @FunctionalInterface
    interface CreditSource {
        /**
         * @param window the receive window's size in packets
         * @return the Credit to carry in an acknowledgement sent now
         */
        int creditToGrant(long nowNs, int window);
    }

    private final ReceiveWindow window;
    private final ResponseOut out;
    private final CreditSource credit;
    /** The Sender Count to carry at a time, 0 without SENDER_COUNT [CC-038]. */
    private final LongToIntFunction senderCount;
    private final EndpointCounters counters;
    /** CE-marked request packets received [CC-020], carried in every acknowledgement. */
    private int ceCount;
    /** The Cumulative PSN and Credit of the latest acknowledgement sent: what the requester may send [REL-019]. */
    private int advertisedCumulative;
    private long advertisedCredit = INITIAL_CREDIT;

    AckWriter(final ReceiveWindow window, final ResponseOut out, final CreditSource credit,
              final LongToIntFunction senderCount, final EndpointCounters counters) {
        this.window = window;
        this.out = out;
        this.credit = credit;
        this.senderCount = senderCount;
        this.counters = counters;
    }

    /** The window starts at {@code expectedPsn}; nothing is advertised yet but the initial Credit. */
    void start(final int expectedPsn) {
        advertisedCumulative = expectedPsn;
        advertisedCredit = INITIAL_CREDIT;
    }

    /** A CE-marked request packet arrived. */
    void ceMarked() {
        ceCount++;
    }

    /** The queue pair went back to RESET: no CE-marked packet counted. */
    void resetCeCount() {
        ceCount = 0;
    }

    /**
     * @return whether accepting {@code psn} used up the Credit last advertised, so that the
     *     requester can send nothing more until it hears from us [REL-014]
     */
    boolean usesLastCredit(final int psn) {
        return (long) (psn + 1 - advertisedCumulative) >= advertisedCredit;
    }

    /**
     * Writes an ACK (reason 0) or NACK for the given triggering packet with the responder's current
     * state.
     *
     * @return false when the sink had no room (nothing written, nothing advertised)
     */
    boolean ack(final long nowNs, final TransmitSink sink, final int reason, final int nackPsn, final int rnrUnits,
                final int triggerPsn, final int echoedTimestamp, final long triggerArrivalNs, final int echoedPathId,
                final int ackFlags) {
        final boolean nack = reason != 0;
        final Opcode opcode = nack ? Opcode.NACK : Opcode.ACK;
        final int offset = out.claimAck(sink, nowNs, opcode.headerLength() + WireConstants.INTEGRITY_CHECK_LENGTH);
        if (offset == TransmitSink.NO_ROOM) {
            return false;
        }
        final MutableDirectBuffer buffer = sink.buffer();
        final PacketWriter w = out.header(buffer, offset, opcode, 0, triggerPsn, 0, nowNs);
        state(nowNs, w.ack(buffer, offset, opcode), echoedTimestamp, triggerArrivalNs, echoedPathId, ackFlags);
        if (nack) {
            w.nack(buffer, offset, opcode).reason(reason).rnrTimer(rnrUnits).nackPsn(nackPsn);
            counters.increment(EndpointCounter.NACKS_OUT);
        } else {
            counters.increment(EndpointCounter.ACKS_OUT);
        }
        out.commit(sink, offset, opcode, 0);
        return true;
    }

    /**
     * Writes an ACK attached to a request packet of this queue pair, at {@code trailerOffset}: the
     * triggering PSN, then the ACK header with the responder's current state, as a bare ACK would
     * carry it [WIRE-071], [REL-071]. The caller seals the packet.
     */
    void attached(final long nowNs, final PacketWriter w, final MutableDirectBuffer buffer, final int trailerOffset,
                  final int triggerPsn, final int echoedTimestamp, final long triggerArrivalNs, final int echoedPathId,
                  final int ackFlags) {
        state(nowNs, w.attachedAck(buffer, trailerOffset, triggerPsn), echoedTimestamp, triggerArrivalNs,
            echoedPathId, ackFlags);
        counters.increment(EndpointCounter.ACKS_ATTACHED_OUT);
    }

    /**
     * Fills an ACK header, bare or attached, with the responder's state as it leaves [REL-012],
     * [REL-013], and remembers the Cumulative PSN and Credit advertised [REL-014]. ACK Delay runs
     * to {@code nowNs}, the transmission of the packet that carries it.
     */
    private void state(final long nowNs, final AckHeader header, final int echoedTimestamp,
                       final long triggerArrivalNs, final int echoedPathId, final int ackFlags) {
        final int granted = credit.creditToGrant(nowNs, window.size());
        advertisedCumulative = window.expectedPsn();
        advertisedCredit = granted;
        header.cumulativePsn(advertisedCumulative).sackBitmap(window.sackBitmap())
            .echoedTimestamp(echoedTimestamp).ackDelay(Math.max(0, nowNs - triggerArrivalNs)).ceCount(ceCount)
            .credit(granted).echoedPathId(echoedPathId).ackFlags(ackFlags)
            .senderCount(senderCount.applyAsInt(nowNs));
    }

    /**
     * A CNP: Destination QPN the peer, PSN of the CE-marked packet, no extension headers [CC-020],
     * [WIRE-065].
     *
     * @return false when the sink had no room
     */
    boolean cnp(final long nowNs, final TransmitSink sink, final int psn) {
        final Opcode opcode = Opcode.CNP;
        final int offset = out.claim(sink, nowNs, opcode.headerLength() + WireConstants.INTEGRITY_CHECK_LENGTH);
        if (offset == TransmitSink.NO_ROOM) {
            return false;
        }
        out.header(sink.buffer(), offset, opcode, 0, psn, 0, nowNs);
        out.commit(sink, offset, opcode, 0);
        counters.increment(EndpointCounter.CNPS_OUT);
        return true;
    }
}
