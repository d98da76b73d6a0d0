// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty;

import java.net.Inet4Address;
import java.net.InetSocketAddress;

import org.agrona.MutableDirectBuffer;

/** The 16-byte address form {@link PcapWriter} takes (IPv4 as ::ffff:a.b.c.d), for a device's own address. */
final class CapturedAddress {
    private CapturedAddress() {
    }

    /**
     * Writes the address (setup time: allocates).
     *
     * @param address a socket address
     * @param dst where, at offset 0 (16 bytes)
     */
    static void write(final InetSocketAddress address, final MutableDirectBuffer dst) {
        final byte[] raw = address.getAddress().getAddress();
        if (address.getAddress() instanceof Inet4Address) {
            dst.setMemory(0, 10, (byte) 0);
            dst.putByte(10, (byte) 0xFF);
            dst.putByte(11, (byte) 0xFF);
            dst.putBytes(12, raw);
        } else {
            dst.putBytes(0, raw);
        }
    }
}
