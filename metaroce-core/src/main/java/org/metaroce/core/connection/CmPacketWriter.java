// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.connection;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;
import org.metaroce.core.wire.BaseHeader;
import org.metaroce.core.wire.ConnectHeader;
import org.metaroce.core.wire.IntegrityCheck;
import org.metaroce.core.wire.Opcode;
import org.metaroce.core.wire.WireConstants;

/**
 * Builds connection-manager packets (base header, CM header, private data) with the field values
 * of [CM-002], from a connection's identity and negotiated values or, for the server's stateless
 * answers, from the request being answered. Packets are built without their Integrity Check into
 * a connection's buffers or the answer queue and kept there, so that a retransmission or re-sent
 * answer repeats every field [CM-041]; {@link #seal} stamps and seals each copy as it leaves.
 *
 * <p>Holds only flyweights: one writer per connection manager, used from its thread.
 */
final class CmPacketWriter {
    /** Offset of the CM header in every connection-manager packet. */
    static final int CM = WireConstants.BASE_HEADER_LENGTH;
    /** Base header plus CM header: the length of a packet without private data. */
    static final int HEADER = WireConstants.MAX_HEADER_LENGTH;
    private static final int COOKIE = CM + ConnectHeader.COOKIE_OFFSET;

    private final BaseHeader base = new BaseHeader();
    private final ConnectHeader cm = new ConnectHeader();
    private final IntegrityCheck crc = new IntegrityCheck();

    /**
     * A client's first CONNECT_REQUEST, cookie zero, with its proposal [CM-005]; the cookie is
     * filled in later, in place, from a CONNECT_CHALLENGE [CM-006].
     *
     * @return the packet's length
     */
    int request(final Connection c, final MutableDirectBuffer dst) {
        proposal(identity(dst, 0, Opcode.CONNECT_REQUEST, WireConstants.CONNECTION_MANAGER_QPN, c.localQpn, c,
            c.localPrivateData.length).initialPsn(c.localInitialPsn), c);
        return withPrivateData(dst, c.localPrivateData);
    }

    /**
     * The server's CONNECT_REPLY with the negotiated values [CM-012, CM-019].
     *
     * @return the packet's length
     */
    int reply(final Connection c, final MutableDirectBuffer dst) {
        negotiated(identity(dst, 0, Opcode.CONNECT_REPLY, c.remoteQpn, c.localQpn, c, c.localPrivateData.length), c);
        return withPrivateData(dst, c.localPrivateData);
    }

    /**
     * The server's CONNECT_REJECT of a verified request, from QPN 0, echoing the client's proposal
     * [CM-012].
     *
     * @param data the application's private data, possibly empty
     * @return the packet's length
     */
    int reject(final Connection c, final int reason, final byte[] data, final MutableDirectBuffer dst) {
        proposal(identity(dst, 0, Opcode.CONNECT_REJECT, c.remoteQpn, 0, c, data.length), c).reason(reason);
        return withPrivateData(dst, data);
    }

    /**
     * READY_TO_USE and DISCONNECT_* of a connection [CM-002]: the connection's identity, no
     * payload; {@link #HEADER} bytes long.
     */
    void headerOnly(final MutableDirectBuffer dst, final int at, final Connection c, final Opcode opcode,
                    final int reason) {
        negotiated(identity(dst, at, opcode, c.remoteQpn, c.localQpn, c, 0), c).reason(reason);
    }

    /**
     * Writes the base header and the connection's Service ID and Transaction ID, every other field
     * zero, and leaves the CM header's flyweight on the packet for the caller's values.
     */
    private ConnectHeader identity(final MutableDirectBuffer dst, final int at, final Opcode opcode,
                                   final int destQpn, final int sourceQpn, final Connection c, final int payload) {
        base.wrap(dst, at).initialize(opcode).destQpn(destQpn).sourceQpn(sourceQpn).payloadLength(payload);
        return cm.wrap(dst, at + CM).initialize().serviceId(c.serviceId).transactionId(c.transactionId);
    }

    /** The client's proposal (c of [CM-019]). */
    private static ConnectHeader proposal(final ConnectHeader h, final Connection c) {
        return h.pathMtu(c.proposedMtu).capabilities(c.proposedCapabilities).initiatorDepth(c.proposedInitiatorDepth)
            .responderResources(c.proposedResponderResources).pathCount(c.proposedPathCount);
    }

    /** This side's initial PSN and the negotiated values, as carried in CONNECT_REPLY [CM-019]. */
    private static ConnectHeader negotiated(final ConnectHeader h, final Connection c) {
        return h.initialPsn(c.localInitialPsn).pathMtu(c.mtu).capabilities(c.capabilities)
            .initiatorDepth(c.replyInitiatorDepth).responderResources(c.replyResponderResources)
            .pathCount(c.pathCount);
    }

    private static int withPrivateData(final MutableDirectBuffer dst, final byte[] data) {
        dst.putBytes(HEADER, data);
        return HEADER + data.length;
    }

    /**
     * A CONNECT_REJECT answering a request for which the server keeps no state (steps 1, 2 and 5
     * of [CM-010], or a full handshake table): the request's header turned around, initial PSN and
     * cookie zero, no private data; {@link #HEADER} bytes long, never more than the request [SEC-005].
     */
    void statelessReject(final MutableDirectBuffer dst, final int at, final DirectBuffer request, final int off,
                         final int reason) {
        turnAround(dst, at, request, off, Opcode.CONNECT_REJECT, reason);
        dst.setMemory(at + COOKIE, WireConstants.COOKIE_LENGTH, (byte) 0);
    }

    /**
     * A CONNECT_CHALLENGE answering a request (steps 3 and 4 of [CM-010]): the request's header
     * turned around; the caller issues the cookie into the returned offset [CM-015].
     *
     * @return the offset of the cookie in {@code dst}
     */
    int challenge(final MutableDirectBuffer dst, final int at, final DirectBuffer request, final int off) {
        turnAround(dst, at, request, off, Opcode.CONNECT_CHALLENGE, 0);
        return at + COOKIE;
    }

    /** Echoes the request's header [CM-002] back to its Source QPN from QPN 0. */
    private void turnAround(final MutableDirectBuffer dst, final int at, final DirectBuffer request, final int off,
                            final Opcode opcode, final int reason) {
        dst.putBytes(at, request, off, HEADER);
        base.wrap(dst, at).initialize(opcode).destQpn(BaseHeader.sourceQpn(request, off)).sourceQpn(0);
        cm.wrap(dst, at + CM).initialPsn(0).reason(reason);
    }

    /**
     * Stamps a built packet with the time of this transmission [WIRE-013, CM-041] and appends its
     * Integrity Check.
     *
     * @param length the packet's length without the Integrity Check
     * @return its length with it
     */
    int seal(final MutableDirectBuffer dst, final int at, final int length, final long nowNs) {
        base.wrap(dst, at).timestamp((int) nowNs);
        return crc.seal(dst, at, length);
    }
}
