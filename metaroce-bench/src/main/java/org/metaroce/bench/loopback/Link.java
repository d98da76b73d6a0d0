// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.bench.loopback;

/**
 * How the MetaRoCE devices of a bandwidth contender (MetaRoCE and raw UDP) use the link: the path
 * MTU (payload bytes per datagram) and UDP generic receive offload. The default is what the
 * {@code metaroce} tools use on loopback; the others let a run show what the per-datagram cost of
 * the kernel's UDP path takes from the bandwidth.
 *
 * @param pathMtu payload bytes per datagram: 256, 512, 1024, 2048, 4096 or 8192
 * @param gro whether the receiving sockets coalesce datagrams (UDP GRO), or null for the device's
 *     default (on with the native transport, off with Netty's)
 */
public record Link(int pathMtu, Boolean gro) {
    /** The tools' loopback default: path MTU 4096, GRO as the transport's default. */
    public static final Link DEFAULT = new Link(4096, null);

    /** @throws IllegalArgumentException for a path MTU the protocol does not have */
    public Link {
        if (Integer.bitCount(pathMtu) != 1 || pathMtu < 256 || pathMtu > 8192) {
            throw new IllegalArgumentException("path MTU must be 256, 512, 1024, 2048, 4096 or 8192, got " + pathMtu);
        }
    }
}
