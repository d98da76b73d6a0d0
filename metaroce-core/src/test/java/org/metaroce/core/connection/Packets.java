// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.connection;

import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.metaroce.core.wire.BaseHeader;
import org.metaroce.core.wire.ConnectHeader;
import org.metaroce.core.wire.IntegrityCheck;
import org.metaroce.core.wire.Opcode;

/** Builds and reads connection-manager packets for tests that play one side by hand. */
final class Packets {
    static final int CM = BaseHeader.LENGTH;

    private Packets() {
    }

    /** A CM packet with the given fields; returns a buffer holding exactly the sealed packet. */
    static UnsafeBuffer cm(final Opcode opcode, final int destQpn, final int sourceQpn, final long serviceId,
                           final long transactionId, final int initialPsn, final int mtu, final int caps,
                           final int depth, final int resources, final int pathCount, final int reason,
                           final DirectBuffer cookie, final byte[] privateData) {
        final int payload = privateData == null ? 0 : privateData.length;
        final UnsafeBuffer b = new UnsafeBuffer(new byte[opcode.headerLength() + payload + 4]);
        new BaseHeader().wrap(b, 0).initialize(opcode).destQpn(destQpn).sourceQpn(sourceQpn).payloadLength(payload);
        final ConnectHeader h = new ConnectHeader().wrap(b, CM).initialize().serviceId(serviceId)
            .transactionId(transactionId).initialPsn(initialPsn).pathMtu(mtu).capabilities(caps).initiatorDepth(depth)
            .responderResources(resources).pathCount(pathCount).reason(reason);
        if (cookie != null) {
            h.putCookie(cookie, 0);
        }
        if (payload > 0) {
            b.putBytes(opcode.headerLength(), privateData);
        }
        new IntegrityCheck().seal(b, 0, opcode.headerLength() + payload);
        return b;
    }

    /** A client's CONNECT_REQUEST with typical parameters. */
    static UnsafeBuffer request(final int sourceQpn, final long serviceId, final long transactionId,
                                final DirectBuffer cookie, final byte[] privateData) {
        return cm(Opcode.CONNECT_REQUEST, 0, sourceQpn, serviceId, transactionId, 0x1234_5678, 1024, 0, 4, 4, 2, 0,
            cookie, privateData);
    }

    /** @return a copy of the 20-byte cookie of a packet */
    static UnsafeBuffer cookieOf(final DirectBuffer packet) {
        final byte[] c = new byte[20];
        packet.getBytes(CM + ConnectHeader.COOKIE_OFFSET, c);
        return new UnsafeBuffer(c);
    }

    static int destQpn(final DirectBuffer p) {
        return BaseHeader.destQpn(p, 0);
    }

    static int sourceQpn(final DirectBuffer p) {
        return BaseHeader.sourceQpn(p, 0);
    }

    static int reason(final DirectBuffer p) {
        return ConnectHeader.reason(p, CM);
    }

    static long transactionId(final DirectBuffer p) {
        return ConnectHeader.transactionId(p, CM);
    }

    static int initialPsn(final DirectBuffer p) {
        return ConnectHeader.initialPsn(p, CM);
    }
}
