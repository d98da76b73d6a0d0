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
    /**
     * Datagrams (or GSO messages) whose send failed, each {@link SendFailure} but a full buffer (lost; the protocol
     * retransmits): the sum of the {@code SEND_} counters of the failures ({@link #SEND_NO_BUFFERS} .. {@link #SEND_OTHER}).
     */
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
    /** Received datagrams discarded by the configured {@link InboundDropRule} or {@link InboundFaults}. */
    FAULT_DROPPED,
    /** Received datagrams held back by the configured {@link InboundFaults} and delivered late. */
    FAULT_REORDERED,
    /** Reads of the endpoint socket that failed (POLLED receive path; e.g. an ICMP error reported on the socket). */
    RECEIVE_ERRORS,
    /** Datagrams sent with one {@code sendto} straight on an epoll socket, past Netty's pipeline (lone or short runs). */
    DIRECT_SENDS,
    /** Entropy sockets connected to the peer they first sent to (datagrams to it go without an address). */
    CONNECTED_SOCKETS,
    // One counter per SendFailure, after the older counters so that their ids in a counters file stay.
    /** Hand-overs a socket stopped with its send buffer full ({@link SendFailure#WOULD_BLOCK}); nothing lost, the rest waits. */
    SEND_WOULD_BLOCK,
    /** Datagrams dropped with {@link SendFailure#NO_BUFFERS} ({@code ENOBUFS}: a queue of the host was full). */
    SEND_NO_BUFFERS,
    /** Datagrams dropped with {@link SendFailure#MESSAGE_TOO_LONG} ({@code EMSGSIZE}). */
    SEND_MESSAGE_TOO_LONG,
    /** Datagrams dropped with {@link SendFailure#PEER_UNREACHABLE} ({@code ECONNREFUSED}, ICMP errors). */
    SEND_PEER_UNREACHABLE,
    /** Datagrams dropped with {@link SendFailure#NOT_PERMITTED} ({@code EPERM}: a firewall rule). */
    SEND_NOT_PERMITTED,
    /** Datagrams dropped with {@link SendFailure#CLOSED} (the socket was closed). */
    SEND_CLOSED,
    /** Datagrams dropped with {@link SendFailure#IO_ERROR} ({@code EIO}: a GSO message the route cannot take). */
    SEND_IO_ERROR,
    /** Datagrams dropped with {@link SendFailure#OTHER}. */
    SEND_OTHER,
    // What the error queue of a native socket (IP_RECVERR) held: one count per entry read, after the
    // older counters so that their ids in a counters file stay. A send or read that the same error
    // made fail is counted besides, under its own counter.
    /** ICMP (or ICMPv6) port unreachable for a datagram sent: nothing listens on the peer's port ({@code ECONNREFUSED}). */
    ICMP_PORT_UNREACHABLE,
    /** ICMP host unreachable (also administratively prohibited, time exceeded) for a datagram sent ({@code EHOSTUNREACH}). */
    ICMP_HOST_UNREACHABLE,
    /** ICMP network unreachable (ICMPv6: no route) for a datagram sent ({@code ENETUNREACH}). */
    ICMP_NET_UNREACHABLE,
    /**
     * ICMP fragmentation needed / ICMPv6 packet too big for a datagram sent ({@code EMSGSIZE}): a link on the path
     * takes less than the datagram; the entry names the path MTU, logged at debug level.
     */
    ICMP_FRAGMENTATION_NEEDED,
    /** Any other ICMP error for a datagram sent (parameter problem, protocol unreachable, ...). */
    ICMP_OTHER,
    /** Errors of the host's own stack queued for a send (e.g. a datagram larger than the route takes, {@code EMSGSIZE}). */
    LOCAL_ERRORS,
    /** Error-queue entries of no kind above, without an extended error (malformed), or failed reads of the queue. */
    UNKNOWN_ERRORS,
    /**
     * Packets whose payload the socket sent from the work request's registered memory, gathered by
     * the kernel, instead of from a copy in the send chunk ({@link SocketCapabilities#gather()}).
     */
    PAYLOADS_BY_REFERENCE,
    /**
     * Payloads by reference that a socket left unsent (its buffer full), copied into the send
     * chunk in the duty cycle that wrote them, so that the retry no longer reads the work
     * request's memory.
     */
    PAYLOADS_COPIED_FOR_RETRY;

    private static final DriverCounter[] VALUES = values();

    /** @return the counter of one {@link SendFailure} */
    static DriverCounter of(final SendFailure failure) {
        return switch (failure) {
            case WOULD_BLOCK -> SEND_WOULD_BLOCK;
            case NO_BUFFERS -> SEND_NO_BUFFERS;
            case MESSAGE_TOO_LONG -> SEND_MESSAGE_TOO_LONG;
            case PEER_UNREACHABLE -> SEND_PEER_UNREACHABLE;
            case NOT_PERMITTED -> SEND_NOT_PERMITTED;
            case CLOSED -> SEND_CLOSED;
            case IO_ERROR -> SEND_IO_ERROR;
            case OTHER -> SEND_OTHER;
        };
    }

    static DriverCounter ofOrdinal(final int ordinal) {
        return VALUES[ordinal];
    }

    static int count() {
        return VALUES.length;
    }
}
