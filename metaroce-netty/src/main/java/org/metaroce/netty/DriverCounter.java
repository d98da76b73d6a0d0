// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty;

/** Everything a device's driver counts (the endpoint has its own counters). Names are stable. */
public enum DriverCounter {
    /** Datagrams read from the endpoint socket and handed to the endpoint. */
    DATAGRAMS_RECEIVED,
    /** UDP payload bytes of those datagrams. */
    BYTES_RECEIVED,
    /** Datagrams handed to the sockets (a GSO write counts each of its segments). */
    DATAGRAMS_SENT,
    /** UDP payload bytes of those datagrams. */
    BYTES_SENT,
    /** Writes that carried several datagrams as one UDP GSO super-packet. */
    GSO_WRITES,
    /** Datagrams sent inside GSO writes. */
    GSO_SEGMENTS,
    /** Datagrams (or GSO messages) whose send failed, each {@link SendFailure} but a full buffer (lost; the protocol retransmits). */
    SEND_ERRORS,
    /** Packets the endpoint committed for a peer id the peer table does not know (dropped). */
    UNROUTABLE_PACKETS,
    /** Packets whose entropy value is not one of this device's ports; sent from the endpoint port instead. */
    ENTROPY_FALLBACKS,
    /** Claims the sink refused (per-cycle budget reached or sockets backed up). */
    SINK_FULL,
    /** Exceptions thrown by the engine or the pipeline while processing (a bug; logged). */
    ENGINE_ERRORS,
    /** Duty cycles run. */
    DUTY_CYCLES,
    /** Commands run on the owning thread. */
    COMMANDS_RUN,
    /** Commands refused because the command queue was full or the device closed. */
    COMMANDS_REJECTED,
    /** Batches handed to a socket ({@link UdpSocket#send}; each may be one sendmmsg). */
    FLUSHES,
    /** Received datagrams discarded by the configured {@link InboundFaults}. */
    FAULT_DROPPED,
    /** Received datagrams held back by the configured {@link InboundFaults} and delivered late. */
    FAULT_REORDERED,
    /** Reads of the endpoint socket that failed (POLLED receive path; e.g. an ICMP error reported on the socket). */
    RECEIVE_ERRORS,
    /** Datagrams sent with one {@code sendto} straight on an epoll socket, past Netty's pipeline (lone or short runs). */
    DIRECT_SENDS,
    /** Entropy sockets connected to the peer they first sent to (datagrams to it go without an address). */
    CONNECTED_SOCKETS;

    private static final DriverCounter[] VALUES = values();

    static DriverCounter ofOrdinal(final int ordinal) {
        return VALUES[ordinal];
    }

    static int count() {
        return VALUES.length;
    }
}
