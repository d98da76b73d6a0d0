// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.connection;

import org.agrona.DirectBuffer;
import org.metaroce.core.wire.BaseHeader;

/** The private data a CM packet carries after its header [CM-021]. */
final class PrivateData {
    /** No private data; shared, never written. */
    static final byte[] NONE = new byte[0];

    private PrivateData() {
    }

    /**
     * @param b the packet
     * @param off where its base header starts
     * @return a copy of its payload, or {@link #NONE} if it has none
     */
    static byte[] of(final DirectBuffer b, final int off) {
        final int n = BaseHeader.payloadLength(b, off);
        if (n == 0) {
            return NONE;
        }
        final byte[] data = new byte[n];
        b.getBytes(off + CmPacketWriter.HEADER, data);
        return data;
    }
}
