// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.cli;

import java.net.DatagramSocket;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.NetworkInterface;
import java.net.SocketException;

/**
 * Chooses a path MTU that fits the link, so that no datagram needs IP fragmentation [ENC-020],
 * [ENC-021]: a MetaRoCE data packet is IP (20 or 40) + UDP (8) + header (at most 68) + payload +
 * integrity check (4) bytes, and the payload is the path MTU.
 */
final class LinkMtu {
    /** The preferred path MTU when the link allows it: a page, and what GSO batches best. */
    static final int PREFERRED = 4096;
    private static final int UDP_AND_PROTOCOL_OVERHEAD = 8 + 68 + 4;

    private LinkMtu() {
    }

    /**
     * @param linkMtu the interface MTU in bytes
     * @param ipv6 whether the path is IPv6
     * @return the largest legal path MTU (256..8192, power of two, at most {@link #PREFERRED})
     *     whose datagrams fit the link, or 256 when even that does not fit
     */
    static int pathMtuFor(final int linkMtu, final boolean ipv6) {
        final int room = linkMtu - (ipv6 ? 40 : 20) - UDP_AND_PROTOCOL_OVERHEAD;
        int pmtu = PREFERRED;
        while (pmtu > 256 && pmtu > room) {
            pmtu >>= 1;
        }
        return pmtu;
    }

    /**
     * The path MTU for reaching {@code peer}: the MTU of the interface the kernel routes it
     * through (found by connecting a UDP socket, which sends nothing).
     *
     * @param peer the remote address
     * @return a legal path MTU; {@link #PREFERRED} when the interface cannot be determined
     */
    static int towards(final InetAddress peer) {
        try (DatagramSocket probe = new DatagramSocket()) {
            probe.connect(new InetSocketAddress(peer, 9));
            final InetAddress local = probe.getLocalAddress();
            final NetworkInterface nif = local == null ? null : NetworkInterface.getByInetAddress(local);
            if (nif == null || nif.getMTU() <= 0) {
                return PREFERRED;
            }
            return pathMtuFor(nif.getMTU(), peer instanceof Inet6Address);
        } catch (final SocketException ex) {
            return PREFERRED;
        }
    }
}
