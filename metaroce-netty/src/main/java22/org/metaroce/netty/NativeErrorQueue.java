// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty;

import org.metaroce.netty.linux.Errno;
import org.metaroce.netty.linux.LinuxUdpSocket;
import org.metaroce.netty.linux.QueuedError;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The error queue of a {@link NativeUdpSocket}, which sets {@code IP_RECVERR} so that
 * {@code sendmmsg} reports host queue drops ({@code ENOBUFS}): with the option every ICMP error
 * for the socket waits on that queue, and while anything waits there {@code epoll} reports
 * {@code EPOLLERR} for the socket, which would end every wait of a blocked driver. The queue is
 * read empty when {@code epoll} reports {@code EPOLLERR} ({@link #drainAfterEpollError()}) and
 * whenever a send or a read of the socket failed ({@link #drain()}), and each entry is counted by
 * kind in the device's {@link DriverCounters}; malformed or unknown entries are counted too, never
 * thrown. Reads into memory allocated once: nothing is allocated per error.
 *
 * <p>Owning thread only.
 */
final class NativeErrorQueue implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(NativeErrorQueue.class);
    /**
     * Entries read per drain at most. The queue is bounded by the socket's receive buffer (a few
     * hundred entries at most); the bound only keeps a flood from holding the duty cycle.
     */
    static final int MAX_ENTRIES_PER_DRAIN = 1024;

    private final LinuxUdpSocket socket;
    private final DriverCounters counters;
    private final QueuedError entry = new QueuedError();
    /** Whether the last drain read an ICMP "fragmentation needed" (the error a send may have reported for it). */
    private boolean fragmentationNeeded;

    NativeErrorQueue(final LinuxUdpSocket socket, final DriverCounters counters) {
        this.socket = socket;
        this.counters = counters;
    }

    /**
     * Reads the queue until it is empty and counts every entry.
     *
     * @return entries read
     */
    int drain() {
        fragmentationNeeded = false;
        int read = 0;
        while (read < MAX_ENTRIES_PER_DRAIN) {
            final int r = socket.receiveError(entry);
            if (r == 0) {
                break;
            }
            if (r < 0) {
                if (-r == Errno.EINTR) {
                    continue;
                }
                // EBADF after a close, or a kernel that refuses: nothing more to read now.
                counters.increment(DriverCounter.UNKNOWN_ERRORS);
                break;
            }
            read++;
            count(entry.origin(), entry.errno());
            if (counterOf(entry.origin(), entry.errno()) == DriverCounter.ICMP_FRAGMENTATION_NEEDED) {
                fragmentationNeeded = true;
                if (LOG.isDebugEnabled()) {
                    LOG.debug("{}: ICMP fragmentation needed, path MTU {}", socket, entry.info());
                }
            }
        }
        return read;
    }

    /**
     * {@code epoll} reported {@code EPOLLERR}: reads the queue empty; when it held nothing, takes the
     * error the kernel keeps for the next call instead (an ICMP error whose entry the full queue
     * could not keep), which also ends {@code EPOLLERR}.
     */
    void drainAfterEpollError() {
        if (drain() > 0) {
            return;
        }
        final int pending = socket.takePendingError(entry);
        if (pending > 0) {
            count(QueuedError.ORIGIN_ICMP, pending); // with IP_RECVERR only ICMP errors set it
        } else if (pending < 0) {
            counters.increment(DriverCounter.UNKNOWN_ERRORS);
        }
    }

    /**
     * @return whether the last {@link #drain()} read an ICMP "fragmentation needed": a send that
     *     failed with {@code EMSGSIZE} just before reported that error, not one of its own
     */
    boolean sawFragmentationNeeded() {
        return fragmentationNeeded;
    }

    private void count(final int origin, final int errno) {
        counters.increment(counterOf(origin, errno));
    }

    /** @return the counter of an entry of {@code origin} standing for {@code errno} */
    static DriverCounter counterOf(final int origin, final int errno) {
        if (origin == QueuedError.ORIGIN_LOCAL) {
            return DriverCounter.LOCAL_ERRORS;
        }
        if (origin != QueuedError.ORIGIN_ICMP && origin != QueuedError.ORIGIN_ICMP6) {
            return DriverCounter.UNKNOWN_ERRORS; // no extended error, or timestamping and zerocopy reports
        }
        // The kernel's own mapping of ICMP type and code to errno (icmp_err_convert, icmpv6_err_convert).
        return switch (errno) {
            case Errno.ECONNREFUSED -> DriverCounter.ICMP_PORT_UNREACHABLE;
            case Errno.EHOSTUNREACH -> DriverCounter.ICMP_HOST_UNREACHABLE;
            case Errno.ENETUNREACH -> DriverCounter.ICMP_NET_UNREACHABLE;
            case Errno.EMSGSIZE -> DriverCounter.ICMP_FRAGMENTATION_NEEDED;
            default -> DriverCounter.ICMP_OTHER;
        };
    }

    @Override
    public void close() {
        entry.close();
    }
}
