// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.conformance.tester;

import org.metaroce.core.wire.Flags;
import org.metaroce.core.wire.Opcode;

/**
 * The lower tester's side of one connection with the IUT: its own QPN and PSN space, and what the
 * handshake told it about the IUT's queue pair. Cases move the counters explicitly; nothing here
 * runs a protocol engine.
 */
public final class TesterQp {
    /** The tester's QPN (the IUT's DEST_QPN). */
    public final int qpn;
    /** The IUT's QPN. */
    public final int iutQpn;
    /** The first PSN the IUT's requester uses (its initial PSN). */
    public final int iutInitialPsn;
    /** The tester's initial PSN (the IUT responder's first ePSN). */
    public final int initialPsn;
    /** Negotiated path MTU. */
    public final int pmtu;
    /** Transaction ID and Service ID of the connection. */
    public final long transactionId;
    public final long serviceId;
    /** The next PSN the tester will use for a request. */
    public int sendPsn;
    /** The IUT's Responder Resources as negotiated in the handshake [CM-019] (0 when unknown). */
    public int responderResources;
    /** Path Count negotiated for the connection [MP-001] (0 when unknown). */
    public int pathCount;
    /** The CONNECT_REPLY the tester sent, when it was the server (to send a duplicate, CM-026). */
    public byte[] handshakeReply;
    /** Capability Flags negotiated for the connection [CM-019]. */
    public int capabilities;
    /** The next MSN and RSN of the tester's requests. */
    public int msn;
    public int rsn;

    public TesterQp(final int qpn, final int iutQpn, final int initialPsn, final int iutInitialPsn, final int pmtu,
                    final long transactionId, final long serviceId) {
        this.qpn = qpn;
        this.iutQpn = iutQpn;
        this.initialPsn = initialPsn;
        this.iutInitialPsn = iutInitialPsn;
        this.pmtu = pmtu;
        this.transactionId = transactionId;
        this.serviceId = serviceId;
        this.sendPsn = initialPsn;
    }

    /** @return a packet addressed to the IUT's QP from this QP, with PSN {@link #sendPsn} and MSN {@link #msn} */
    public PacketBuilder request(final Opcode opcode) {
        return PacketBuilder.of(opcode).destQpn(iutQpn).srcQpn(qpn).psn(sendPsn).msn(msn)
            .timestamp((int) System.nanoTime());
    }

    /**
     * @param triggering the IUT packet being acknowledged
     * @param cumulative Cumulative PSN to report
     * @return an ACK to the IUT's requester echoing the triggering packet
     */
    public PacketBuilder ack(final Packet triggering, final int cumulative) {
        return PacketBuilder.of(Opcode.ACK).destQpn(iutQpn).srcQpn(qpn).psn(triggering.psn())
            .cumulativePsn(cumulative).echoedTimestamp(triggering.timestamp()).echoedPathId(triggering.pathId())
            .credit(1024).timestamp((int) System.nanoTime());
    }

    /** @return a NACK with {@code reason} about {@code triggering} (cumulative = its PSN) */
    public PacketBuilder nack(final Packet triggering, final int reason) {
        return PacketBuilder.of(Opcode.NACK).destQpn(iutQpn).srcQpn(qpn).psn(triggering.psn())
            .cumulativePsn(triggering.psn()).echoedTimestamp(triggering.timestamp())
            .echoedPathId(triggering.pathId()).credit(1024).nack(reason, triggering.psn())
            .timestamp((int) System.nanoTime());
    }

    /** @return a packet for the CM of the IUT's QP (READY_TO_USE, DISCONNECT_*) of this connection */
    public PacketBuilder cm(final Opcode opcode) {
        return PacketBuilder.of(opcode).destQpn(iutQpn).srcQpn(qpn).serviceId(serviceId)
            .transactionId(transactionId);
    }

    /** @return whether {@code p} was sent by the IUT's QP to this one */
    public boolean fromIut(final Packet p) {
        return p.wellFormed() && p.destQpn() == qpn && p.sourceQpn() == iutQpn;
    }

    /** @return whether {@code p} is a request packet (SEND..CMP_SWAP) of the IUT to this QP */
    public boolean isRequest(final Packet p) {
        return fromIut(p) && p.opcode().isRequest();
    }

    /** @return whether {@code p} is a retransmission [WIRE-016] */
    public static boolean isRetransmit(final Packet p) {
        return p.has(Flags.RETRANSMIT);
    }
}
