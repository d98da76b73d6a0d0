// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.engine;

import java.nio.ByteOrder;

import org.agrona.MutableDirectBuffer;

/**
 * How the driver's peer identifiers relate to hosts. A driver gives every remote UDP address
 * (IP address and port) it talks to or hears from a {@code peerId}; a queue pair sends to its
 * peer's endpoint address, but receives its peer's packets from many source ports (one per
 * entropy value), and must not use the source port to identify the peer [ENC-004]. So the
 * engine checks a packet's origin by host: the IP address of the sender must be the QP's remote
 * IP address [QP spec, check 13]. The in-memory wire and the simulator use one id per host, so
 * the identity mapping serves them.
 *
 * <p>The connection manager needs two more things from the driver, both with defaults that suit
 * the in-memory wire and the simulator: the bytes of a peer's address, which its stateless cookie
 * authenticates ([CM-015]), and a way to keep a peer id alive once a handshake has proved that
 * the peer receives packets at its address ({@link #pin}/{@link #unpin}): a driver may hand out
 * transient ids for sources it has only heard from (a spoofed flood creates many) and recycle
 * them, but must not recycle an id that a connection still uses.
 */
@FunctionalInterface
public interface PeerDirectory {
    /** One id per host: the peer id is the host id. */
    PeerDirectory IDENTITY = peerId -> peerId;

    /**
     * Most bytes {@link #addressBytes} writes: a 16-byte IPv6 address (IPv4 as IPv4-mapped
     * {@code ::ffff:a.b.c.d}) followed by the 2-byte UDP port, both big-endian, which is exactly
     * the address part of the cookie message of [CM-015].
     */
    int MAX_ADDRESS_BYTES = 18;

    /**
     * @param peerId a peer id the driver handed to the endpoint or that a QP sends to
     * @return an id equal for exactly the peer ids that share an IP address
     */
    int hostOf(int peerId);

    /**
     * Writes the address (IP address and UDP port) that {@code peerId} stands for. A driver with
     * real sockets writes the 18-byte form described at {@link #MAX_ADDRESS_BYTES}; the default
     * writes the 4-byte peer id, which identifies the address uniquely on the in-memory wire and
     * in the simulator. Must not allocate (it runs for every CONNECT_REQUEST, spoofed or not).
     *
     * @param peerId a peer id the driver handed to the endpoint
     * @param dst where to write
     * @param offset first byte to write in {@code dst}
     * @return number of bytes written, 1..{@link #MAX_ADDRESS_BYTES}
     */
    default int addressBytes(final int peerId, final MutableDirectBuffer dst, final int offset) {
        dst.putInt(offset, peerId, ByteOrder.BIG_ENDIAN);
        return Integer.BYTES;
    }

    /**
     * Makes a peer id permanent: called by the connection manager once a peer has proved that
     * it receives packets at its address (cookie verified, or a connection initiated locally),
     * before any queue pair is bound to the id. Pins count: each call is matched by one
     * {@link #unpin} when the connection has ended.
     *
     * @param peerId a peer id the driver handed to the endpoint, possibly transient
     * @return the id to use for this address from now on (the default returns {@code peerId})
     */
    default int pin(final int peerId) {
        return peerId;
    }

    /**
     * Releases one {@link #pin}; when none remain the driver may recycle the id.
     *
     * @param peerId the id {@link #pin} returned
     */
    default void unpin(final int peerId) {
        // Identity directories keep nothing.
    }
}
