// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty;

import java.net.InetSocketAddress;

/**
 * How a {@link UdpTransport} opens a socket.
 *
 * @param bind local address and port (port 0: an ephemeral port)
 * @param receiveBufferBytes SO_RCVBUF
 * @param sendBufferBytes SO_SNDBUF
 * @param trafficClass IP_TOS / IPV6_TCLASS (DSCP in the upper six bits, ECN in the lower two)
 */
public record SocketOptions(InetSocketAddress bind, int receiveBufferBytes, int sendBufferBytes, int trafficClass) {
    /** Validates the values. */
    public SocketOptions {
        if (bind == null) {
            throw new IllegalArgumentException("bind address must not be null");
        }
        if (receiveBufferBytes < 1 || sendBufferBytes < 1) {
            throw new IllegalArgumentException("buffer sizes must be positive, got " + receiveBufferBytes + " and "
                + sendBufferBytes);
        }
        if (trafficClass < 0 || trafficClass > 255) {
            throw new IllegalArgumentException("trafficClass must be in 0..255, got " + trafficClass);
        }
    }
}
