// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.wire;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

/** Flyweight over the 48-byte connection-manager header (CM, specification 3.5.8). */
public final class ConnectHeader extends HeaderFlyweight {
    public static final int SERVICE_ID_OFFSET = 0;
    public static final int TRANSACTION_ID_OFFSET = 8;
    public static final int INITIAL_PSN_OFFSET = 16;
    public static final int PATH_MTU_OFFSET = 20;
    public static final int CAPABILITIES_OFFSET = 22;
    public static final int INITIATOR_DEPTH_OFFSET = 24;
    public static final int RESPONDER_RESOURCES_OFFSET = 25;
    public static final int PATH_COUNT_OFFSET = 26;
    public static final int REASON_OFFSET = 27;
    public static final int COOKIE_OFFSET = 28;
    public static final int LENGTH = WireConstants.CM_HEADER_LENGTH;

    /** Capability: receiver-credit congestion control. */
    public static final int CAP_RECEIVER_CREDIT = 0x0001;
    /** Capability: go-back-N baseline loss recovery. */
    public static final int CAP_GO_BACK_N = 0x0002;
    /** Capability: ECN marks are visible and echoed. */
    public static final int CAP_ECN = 0x0004;
    /** Capability: the responder reports its Sender Count in every ACK and announces it to idle requesters [CC-038]. */
    public static final int CAP_SENDER_COUNT = 0x0008;
    /**
     * Capability: an ACK may ride on a request packet of the queue pair, in a trailer flagged
     * ATTACHED_ACK [WIRE-071], [REL-070], [REL-071] (v1.0.15).
     */
    public static final int CAP_ATTACHED_ACK = 0x0010;
    /**
     * Capability: the last packet of a message whose requester needs no prompt acknowledgement (an
     * unsignaled work request) goes without ACK_REQ, and the responder may hold its ACK for up to
     * ACK_DEFER_DELAY, so that it can ride on the queue pair's next request [REL-073], [REL-074] (v1.0.16).
     */
    public static final int CAP_DEFERRED_ACK = 0x0020;

    @Override
    public ConnectHeader wrap(final MutableDirectBuffer buffer, final int offset) {
        super.wrap(buffer, offset);
        return this;
    }

    /** Zeroes the header, including the cookie. */
    public ConnectHeader initialize() {
        buffer.setMemory(offset, LENGTH, (byte) 0);
        return this;
    }

    public static long serviceId(final DirectBuffer b, final int headerOffset) {
        return i64(b, headerOffset + SERVICE_ID_OFFSET);
    }

    public long serviceId() {
        return serviceId(buffer, offset);
    }

    public ConnectHeader serviceId(final long id) {
        buffer.putLong(offset + SERVICE_ID_OFFSET, id, NETWORK);
        return this;
    }

    public static long transactionId(final DirectBuffer b, final int headerOffset) {
        return i64(b, headerOffset + TRANSACTION_ID_OFFSET);
    }

    public long transactionId() {
        return transactionId(buffer, offset);
    }

    public ConnectHeader transactionId(final long id) {
        buffer.putLong(offset + TRANSACTION_ID_OFFSET, id, NETWORK);
        return this;
    }

    public static int initialPsn(final DirectBuffer b, final int headerOffset) {
        return i32(b, headerOffset + INITIAL_PSN_OFFSET);
    }

    public int initialPsn() {
        return initialPsn(buffer, offset);
    }

    public ConnectHeader initialPsn(final int psn) {
        buffer.putInt(offset + INITIAL_PSN_OFFSET, psn, NETWORK);
        return this;
    }

    public static int pathMtu(final DirectBuffer b, final int headerOffset) {
        return u16(b, headerOffset + PATH_MTU_OFFSET);
    }

    public int pathMtu() {
        return pathMtu(buffer, offset);
    }

    public ConnectHeader pathMtu(final int mtu) {
        buffer.putShort(offset + PATH_MTU_OFFSET, (short) mtu, NETWORK);
        return this;
    }

    public static int capabilities(final DirectBuffer b, final int headerOffset) {
        return u16(b, headerOffset + CAPABILITIES_OFFSET);
    }

    public int capabilities() {
        return capabilities(buffer, offset);
    }

    public ConnectHeader capabilities(final int capabilities) {
        buffer.putShort(offset + CAPABILITIES_OFFSET, (short) capabilities, NETWORK);
        return this;
    }

    public static int initiatorDepth(final DirectBuffer b, final int headerOffset) {
        return u8(b, headerOffset + INITIATOR_DEPTH_OFFSET);
    }

    public int initiatorDepth() {
        return initiatorDepth(buffer, offset);
    }

    public ConnectHeader initiatorDepth(final int depth) {
        buffer.putByte(offset + INITIATOR_DEPTH_OFFSET, (byte) depth);
        return this;
    }

    public static int responderResources(final DirectBuffer b, final int headerOffset) {
        return u8(b, headerOffset + RESPONDER_RESOURCES_OFFSET);
    }

    public int responderResources() {
        return responderResources(buffer, offset);
    }

    public ConnectHeader responderResources(final int resources) {
        buffer.putByte(offset + RESPONDER_RESOURCES_OFFSET, (byte) resources);
        return this;
    }

    public static int pathCount(final DirectBuffer b, final int headerOffset) {
        return u8(b, headerOffset + PATH_COUNT_OFFSET);
    }

    public int pathCount() {
        return pathCount(buffer, offset);
    }

    public ConnectHeader pathCount(final int count) {
        buffer.putByte(offset + PATH_COUNT_OFFSET, (byte) count);
        return this;
    }

    public static int reason(final DirectBuffer b, final int headerOffset) {
        return u8(b, headerOffset + REASON_OFFSET);
    }

    public int reason() {
        return reason(buffer, offset);
    }

    public ConnectHeader reason(final int reason) {
        buffer.putByte(offset + REASON_OFFSET, (byte) reason);
        return this;
    }

    /**
     * Copies the 20-byte cookie out.
     *
     * @param dst destination
     * @param dstOffset where to write in {@code dst}
     */
    public void getCookie(final MutableDirectBuffer dst, final int dstOffset) {
        dst.putBytes(dstOffset, buffer, offset + COOKIE_OFFSET, WireConstants.COOKIE_LENGTH);
    }

    /**
     * Copies a 20-byte cookie in.
     *
     * @param src source
     * @param srcOffset where the cookie starts in {@code src}
     * @return this flyweight
     */
    public ConnectHeader putCookie(final DirectBuffer src, final int srcOffset) {
        buffer.putBytes(offset + COOKIE_OFFSET, src, srcOffset, WireConstants.COOKIE_LENGTH);
        return this;
    }
}
