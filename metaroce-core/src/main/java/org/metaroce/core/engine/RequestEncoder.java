// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.engine;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;
import org.metaroce.core.verbs.MemoryRegion;
import org.metaroce.core.verbs.SendFlags;
import org.metaroce.core.wire.Flags;
import org.metaroce.core.wire.IntegrityCheck;
import org.metaroce.core.wire.Opcode;
import org.metaroce.core.wire.WireConstants;

/**
 * Turns one request packet of a send work request into its bytes (specification 3 and 5): the
 * opcode of the work request's operation, the packet's Message Offset and payload [OPS-002], a
 * READ_REQUEST's requested range [OPS-020], the flags LAST [WIRE-015], ACK_REQ, RETRANSMIT
 * [WIRE-016] and SOLICITED, the headers, written with the endpoint's {@link PacketWriter}, and the
 * trailer of an ACK that rides on the packet ({@link AckTrailer}, [REL-071]). A
 * retransmission differs from the original only in its flags, Transmit Timestamp and Path ID
 * [REL-031].
 *
 * <p>It knows neither the scoreboard nor the window: the {@link Requester} gives it the work
 * request and the packet's index, PSN, transmission kind and path, and keeps the path choice, the
 * claim and commit of the sink's room and the record of the transmission. That takes two steps,
 * because the room to claim depends on the packet and the claim on the path (its entropy value):
 * {@link #layout} fixes the packet and returns the most bytes it takes, {@link #write} writes the
 * packet last laid out into the room claimed for it.
 *
 * <p>Primitive fields only, so that nothing is allocated per packet.
 */
final class RequestEncoder {
    private final PacketWriter writer;
    /** The queue pair's ACK that may ride on its next request packet [REL-071]. */
    private final AckTrailer trailer;

    // The packet last laid out.
    private SendWqe wqe;
    private Opcode opcode;
    private long messageOffset;
    private int payload;
    /** The bytes a READ_REQUEST asks for [OPS-020]. */
    private long dmaLength;
    private boolean last;
    /** Whether the packet carries the attached ACK's trailer after its payload [WIRE-071]. */
    private boolean attach;
    /** ACK_DEFER_DELAY [REL-073]. */
    private final long ackDeferDelayNs;
    /** How long the responder may hold the last packet written's ACK: ACK_DEFER_DELAY or 0 [REL-074]. */
    private long ackHoldNs;

    RequestEncoder(final PacketWriter writer, final AckTrailer trailer, final long ackDeferDelayNs) {
        this.writer = writer;
        this.trailer = trailer;
        this.ackDeferDelayNs = ackDeferDelayNs;
    }

    /**
     * Lays out packet {@code index} of {@code wqe}.
     *
     * @param readSegments for a READ, the response PSNs the READ_REQUEST asks for (a first request
     *     a whole chunk, a re-request one lost run [REL-046]); ignored otherwise
     * @param mtu the path MTU
     * @return the most bytes the packet takes, integrity check included
     */
    int layout(final SendWqe wqe, final int index, final int readSegments, final int mtu) {
        this.wqe = wqe;
        opcode = switch (wqe.opcode) {
            case SEND -> Opcode.SEND;
            case SEND_WITH_IMM -> Opcode.SEND_WITH_IMM;
            case RDMA_WRITE -> Opcode.WRITE;
            case RDMA_WRITE_WITH_IMM -> Opcode.WRITE_WITH_IMM;
            case RDMA_READ -> Opcode.READ_REQUEST;
            case ATOMIC_FETCH_ADD -> Opcode.FETCH_ADD;
            case ATOMIC_CMP_SWAP -> Opcode.CMP_SWAP;
        };
        payload = 0;
        dmaLength = 0;
        if (opcode == Opcode.READ_REQUEST) {
            messageOffset = (long) index * mtu;
            dmaLength = Math.min((long) readSegments * mtu, wqe.length - messageOffset);
            last = messageOffset + dmaLength == wqe.length;
        } else if (wqe.isAtomic()) {
            messageOffset = 0;
            last = true;
        } else {
            messageOffset = (long) index * mtu;
            payload = (int) Math.min(mtu, wqe.length - messageOffset);
            last = index == wqe.psnCount - 1;
        }
        attach = trailer.fits(opcode.headerLength(), payload, mtu);
        return opcode.headerLength() + payload + (attach ? WireConstants.ATTACHED_ACK_LENGTH : 0)
            + WireConstants.INTEGRITY_CHECK_LENGTH;
    }

    /** @return how long the responder may hold the ACK of the packet last written [REL-073, REL-074] */
    long ackHoldNs() {
        return ackHoldNs;
    }

    /**
     * @return whether the packet last laid out is the LAST of an unsignaled SEND or WRITE (with or
     *     without immediate), whose ACK its requester does not wait for: a READ_REQUEST is answered
     *     by its responses and an atomic by its response, and a signaled request's completion waits
     *     for its ACK [REL-074]
     */
    private boolean lastOfUnsignaledData() {
        return last && (wqe.sendFlags & SendFlags.SIGNALED) == 0
            && (opcode == Opcode.SEND || opcode == Opcode.SEND_WITH_IMM || opcode == Opcode.WRITE
            || opcode == Opcode.WRITE_WITH_IMM);
    }

    /** @return whether a message of this opcode completes a receive that SOLICITED concerns [OPS-040] */
    private static boolean solicitable(final Opcode opcode) {
        return opcode == Opcode.SEND || opcode == Opcode.SEND_WITH_IMM || opcode == Opcode.WRITE_WITH_IMM;
    }

    /**
     * Writes the packet last laid out at {@code offset} of {@code sink}'s buffer and seals it,
     * offering the sink the payload by reference ({@link TransmitSink#reference}) when one
     * scatter/gather entry holds it: a driver that takes it sends it from the registered memory,
     * and the packet costs no copy of its payload in the engine.
     *
     * @param retransmit whether the PSN was sent before: RETRANSMIT and ACK_REQ are set [WIRE-016]
     * @param probe whether the packet is a tail probe: ACK_REQ is set [REL-026]
     * @param mayDefer whether the LAST packet of an unsignaled SEND or WRITE may go without ACK_REQ
     *     (DEFERRED_ACK in effect, a first transmission with room for more after it) [REL-074]
     * @return the packet's length
     */
    int write(final TransmitSink sink, final int offset, final int psn, final boolean retransmit,
              final boolean probe, final boolean mayDefer, final int pathId, final long nowNs, final int destQpn,
              final int sourceQpn) {
        final MutableDirectBuffer buffer = sink.buffer();
        final boolean deferAck = mayDefer && lastOfUnsignaledData();
        ackHoldNs = deferAck ? ackDeferDelayNs : 0;
        int flags = last && !deferAck || probe ? Flags.ACK_REQ : 0;
        if (last) {
            flags |= Flags.LAST;
        }
        if (retransmit) {
            flags |= Flags.RETRANSMIT | Flags.ACK_REQ;
        }
        if (attach) {
            flags |= Flags.ATTACHED_ACK;
        }
        if ((wqe.sendFlags & SendFlags.SOLICITED) != 0 && solicitable(opcode)) {
            // Every packet of the message, so that all carry the same flags [OPS-003, OPS-040]: a
            // responder may take the flag from any of them (and a middle packet may arrive last).
            flags |= Flags.SOLICITED;
        }
        writer.header(buffer, offset, opcode, flags, destQpn, psn, payload, pathId, nowNs, sourceQpn);
        writer.msg(buffer, offset, opcode).msn(wqe.msn).messageOffset(messageOffset)
            .messageLength(wqe.isAtomic() ? 8 : wqe.length).rsn(wqe.rsn);
        if (opcode.rethOffset() != Opcode.ABSENT) {
            writer.reth(buffer, offset, opcode).virtualAddress(wqe.remoteAddr).rkey(wqe.rkey)
                .dmaLength(opcode == Opcode.READ_REQUEST ? dmaLength : wqe.length);
        }
        if (opcode.immOffset() != Opcode.ABSENT) {
            writer.imm(buffer, offset, opcode).immediateData(wqe.immData);
        }
        if (opcode.atomicOffset() != Opcode.ABSENT) {
            writer.atomic(buffer, offset, opcode).virtualAddress(wqe.remoteAddr).rkey(wqe.rkey)
                .swapOrAdd(opcode == Opcode.FETCH_ADD ? wqe.compareAdd : wqe.swap)
                .compare(opcode == Opcode.FETCH_ADD ? 0 : wqe.compareAdd);
        }
        final DirectBuffer referenced = payload > 0 ? referencePayload(sink, buffer, offset) : null;
        if (payload > 0 && referenced == null) {
            wqe.gather(messageOffset, buffer, offset + opcode.headerLength(), payload);
        }
        final int trailerLength = attach ? WireConstants.ATTACHED_ACK_LENGTH : 0;
        if (attach) {
            // Between payload and Integrity Check; Payload Length leaves it out [WIRE-071].
            trailer.write(nowNs, writer, buffer, offset + opcode.headerLength() + payload);
        }
        if (referenced != null) {
            return writer.sealAround(buffer, offset, opcode, referenced, (int) wqe.sliceOffset, payload, trailerLength);
        }
        return writer.seal(buffer, offset, opcode, payload + trailerLength);
    }

    /**
     * Offers the sink the payload by reference when one scatter/gather entry holds it and the
     * integrity check can read it in place (the region is a direct ByteBuffer's, as the packet
     * buffer must be too: the JDK's intrinsic CRC).
     *
     * @return the region's buffer (the payload at {@code wqe.sliceOffset}) if the sink took the
     *     reference, else null: the payload is to be copied
     */
    private DirectBuffer referencePayload(final TransmitSink sink, final MutableDirectBuffer buffer, final int offset) {
        final MemoryRegion region = wqe.sliceRegion(messageOffset, payload);
        if (region == null || !IntegrityCheck.intrinsic(region.buffer()) || !IntegrityCheck.intrinsic(buffer)) {
            return null;
        }
        final DirectBuffer memory = region.buffer();
        return sink.reference(offset + opcode.headerLength(), memory.addressOffset() + wqe.sliceOffset, payload)
            ? memory : null;
    }
}
