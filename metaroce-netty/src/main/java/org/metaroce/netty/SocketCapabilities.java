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
 */
public record SocketCapabilities(boolean gso, boolean gro, boolean ecn, boolean connect) {
}
