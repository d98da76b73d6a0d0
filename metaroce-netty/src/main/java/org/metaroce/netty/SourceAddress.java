// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty;

import java.net.InetSocketAddress;

/**
 * The sender of a received datagram, in whichever form the transport has it: a raw IPv4 address
 * and port, a raw IPv6 address (two longs) and port, or an {@link InetSocketAddress} the transport
 * got anyway (Netty, the JDK). A transport keeps one instance and refills it per datagram, so no
 * object is made per datagram; {@link #lookupOrAssign(PeerTable)} finds the peer id without
 * building an address unless the sender is new.
 *
 * <p>Owning thread only.
 */
public final class SourceAddress {
    /** Which form the address is in. */
    public enum Form {
        /** Nothing set yet. */
        NONE,
        /** {@link #ipv4()} and {@link #port()}. */
        IPV4,
        /** {@link #ipv6High()}, {@link #ipv6Low()} and {@link #port()}. */
        IPV6,
        /** {@link #socketAddress()}. */
        SOCKET_ADDRESS
    }

    private Form form = Form.NONE;
    private int ipv4;
    private long high;
    private long low;
    private int port;
    private InetSocketAddress address;

    /**
     * @param address IPv4 address, most significant byte first (192.0.2.1 is 0xC0000201)
     * @param udpPort UDP port
     * @return this
     */
    public SourceAddress ipv4(final int address, final int udpPort) {
        form = Form.IPV4;
        ipv4 = address;
        port = udpPort;
        this.address = null;
        return this;
    }

    /**
     * @param addressHigh first 8 bytes of the IPv6 address, big-endian
     * @param addressLow last 8 bytes, big-endian
     * @param udpPort UDP port
     * @return this
     */
    public SourceAddress ipv6(final long addressHigh, final long addressLow, final int udpPort) {
        form = Form.IPV6;
        high = addressHigh;
        low = addressLow;
        port = udpPort;
        this.address = null;
        return this;
    }

    /**
     * @param sender the sender as the transport reported it
     * @return this
     */
    public SourceAddress socketAddress(final InetSocketAddress sender) {
        form = Form.SOCKET_ADDRESS;
        address = sender;
        return this;
    }

    /** @return the form set last */
    public Form form() {
        return form;
    }

    /** @return the IPv4 address (form IPV4) */
    public int ipv4() {
        return ipv4;
    }

    /** @return first 8 bytes of the IPv6 address (form IPV6) */
    public long ipv6High() {
        return high;
    }

    /** @return last 8 bytes of the IPv6 address (form IPV6) */
    public long ipv6Low() {
        return low;
    }

    /** @return the UDP port (forms IPV4 and IPV6) */
    public int port() {
        return port;
    }

    /** @return the address (form SOCKET_ADDRESS) */
    public InetSocketAddress socketAddress() {
        return address;
    }

    /**
     * @param peers the device's peer table
     * @return the sender's peer id, assigned if new (see {@link PeerTable#lookupOrAssign(InetSocketAddress)})
     * @throws IllegalStateException if nothing was set
     */
    public int lookupOrAssign(final PeerTable peers) {
        switch (form) {
            case IPV4:
                return peers.lookupOrAssign(ipv4, port);
            case IPV6:
                return peers.lookupOrAssign(high, low, port);
            case SOCKET_ADDRESS:
                return peers.lookupOrAssign(address);
            default:
                throw new IllegalStateException("no source address set");
        }
    }

    @Override
    public String toString() {
        switch (form) {
            case IPV4:
                return (ipv4 >>> 24) + "." + (ipv4 >>> 16 & 0xFF) + "." + (ipv4 >>> 8 & 0xFF) + "." + (ipv4 & 0xFF) + ":"
                    + port;
            case IPV6:
                return "[" + Long.toHexString(high) + ":" + Long.toHexString(low) + "]:" + port;
            case SOCKET_ADDRESS:
                return String.valueOf(address);
            default:
                return "none";
        }
    }
}
