// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty;

/**
 * What a {@link UdpSocket} can do; the shared send and receive logic asks these instead of
 * knowing the transport.
 *
 * @param gso sends a segmented {@link SendBatch} entry as one UDP GSO message ({@code UDP_SEGMENT})
 * @param gro may deliver GRO-coalesced datagrams (a segment size with
 *     {@link DatagramReceiver#onDatagram})
 * @param ecn reports the ECN field of received datagrams (otherwise it reports Not-ECT)
 * @param connect may be connected to a peer ({@link UdpSocket#connect}); the sink connects only such sockets
 * @param gather sends the bytes of a {@link SendBatch} entry that its chunk's
 *     {@link SendChunk#references()} name from where they point (a gathering system call), not
 *     from the chunk; the sink then takes payloads by reference ({@link #gather()} false: the
 *     engine copies every payload into the chunk)
 */
public record SocketCapabilities(boolean gso, boolean gro, boolean ecn, boolean connect, boolean gather) {
    /**
     * A socket that sends every byte from its chunk (no payload by reference).
     *
     * @param gso as the record's component
     * @param gro as the record's component
     * @param ecn as the record's component
     * @param connect as the record's component
     */
    public SocketCapabilities(final boolean gso, final boolean gro, final boolean ecn, final boolean connect) {
        this(gso, gro, ecn, connect, false);
    }
}
