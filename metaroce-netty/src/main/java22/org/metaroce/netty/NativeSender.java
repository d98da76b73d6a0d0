// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty;

import java.net.Inet4Address;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;

import org.metaroce.netty.linux.Errno;
import org.metaroce.netty.linux.LinuxUdpSocket;

/**
 * The send path of a {@link NativeUdpSocket}: turns the runs of a {@link SendBatch} into the
 * messages of one {@code sendmmsg} each (a separate datagram per message, a segmented run as one
 * message with a {@code UDP_SEGMENT} control message) that point straight into the driver's
 * chunks, and reports what the kernel took. A batch of one datagram to the connected peer goes
 * with {@code send} instead, which costs less than a {@code sendmmsg} of one message. A datagram
 * whose chunk names payloads by reference ({@link SendChunk#references()}) is gathered: its
 * message's pieces are the chunk's bytes around each such range and the range's own memory, so
 * the kernel's copy is the payload's only one. Allocates
 * nothing per call: the native batch is built once, and a recipient's address is read as raw
 * values ({@code Inet4Address.hashCode()} is the address; an IPv6 address is read once per change
 * of recipient).
 *
 * <p>Owning thread only.
 */
final class NativeSender implements AutoCloseable {
    /** Messages per {@code sendmmsg}: a duty cycle's batch for one socket rarely holds more. */
    static final int MESSAGES_PER_CALL = 64;
    /**
     * Pieces ({@code iovec}s) per call: a message takes one, plus two per payload by reference
     * (a GSO message of 64 segments, 129); a call ends early rather than split a message.
     */
    static final int PIECES_PER_CALL = 2048;

    private final LinuxUdpSocket socket;
    private final NativeErrorQueue errors;
    private final org.metaroce.netty.linux.SendBatch messages =
        new org.metaroce.netty.linux.SendBatch(MESSAGES_PER_CALL, PIECES_PER_CALL);
    /** Datagrams each message of the current call carries (a GSO message carries several). */
    private final int[] datagramsOf = new int[MESSAGES_PER_CALL];
    // The IPv6 recipient last read: its raw form is reused while the recipient object stays the same.
    private InetSocketAddress lastIpv6;
    private long lastHigh;
    private long lastLow;

    /** @param errors the socket's error queue, read whenever a send fails */
    NativeSender(final LinuxUdpSocket socket, final NativeErrorQueue errors) {
        this.socket = socket;
        this.errors = errors;
    }

    /**
     * @return datagrams the kernel took from the front of {@code batch}; when fewer than queued,
     *     the reason is set with {@link SendBatch#stopBecause}
     */
    int send(final SendBatch batch) {
        if (batch.size() == 1 && batch.recipient(0) == null && !batch.segmented(0)
            && (batch.segmentBytes(0) == 0 || batch.segmentBytes(0) >= batch.bytes(0))
            && references(batch.chunk(0), batch.offset(0), batch.bytes(0)) == 0) {
            return sendLone(batch);
        }
        int taken = 0;
        int entry = 0;
        int within = 0; // next datagram of a non-segmented entry
        while (entry < batch.size()) {
            messages.clear();
            // Fill one call's messages from (entry, within) on.
            while (entry < batch.size() && messages.count() < MESSAGES_PER_CALL) {
                final SendChunk chunk = batch.chunk(entry);
                final int offset = batch.offset(entry);
                final int bytes = batch.bytes(entry);
                final int segment = batch.segmentBytes(entry) == 0 ? bytes : batch.segmentBytes(entry);
                final InetSocketAddress to = batch.recipient(entry);
                final int m;
                if (batch.segmented(entry)) {
                    if (!fits(chunk, offset, bytes)) {
                        break; // the rest goes in the next call (never the first message: see fits)
                    }
                    m = add(chunk, offset, bytes);
                    messages.segmentSize(m, segment);
                    datagramsOf[m] = batch.datagrams(entry);
                    entry++;
                } else {
                    final int at = within * segment;
                    final int length = Math.min(segment, bytes - at);
                    if (!fits(chunk, offset + at, length)) {
                        break;
                    }
                    m = add(chunk, offset + at, length);
                    datagramsOf[m] = 1;
                    if (at + segment >= bytes) {
                        entry++;
                        within = 0;
                    } else {
                        within++;
                    }
                }
                address(m, to);
            }
            int first = 0;
            boolean retried = false;
            while (first < messages.count()) {
                // A message the kernel refused after others of the call went (ENOBUFS from a full
                // qdisc, say) is reported by the count alone (sendmmsg drops that error): it heads
                // the next call, whose error, if it is refused again, is reported and dropped.
                final int r = socket.send(messages, first);
                if (r > 0) {
                    for (int i = first; i < first + r; i++) {
                        taken += datagramsOf[i];
                    }
                    first += r;
                    retried = false;
                } else if (r == 0) {
                    batch.stopBecause(SendFailure.WOULD_BLOCK);
                    return taken;
                } else if (-r != Errno.EINTR) {
                    if (onceMore(-r, retried)) {
                        retried = true;
                        continue;
                    }
                    batch.stopBecause(SendFailures.of(-r));
                    return taken;
                }
            }
        }
        return taken;
    }

    /** @return how many ranges of {@code chunk} in {@code [offset, offset + length)} are sent by reference */
    private static int references(final SendChunk chunk, final int offset, final int length) {
        final PayloadReferences refs = chunk.references();
        return refs == null || refs.size() == 0 ? 0 : refs.countIn(offset, offset + length);
    }

    /**
     * @return whether a message of these bytes has the pieces it needs in this call
     * @throws IllegalStateException if it would not have them in an empty call either (a message
     *     of more than 1,023 references: a GSO message has at most 64 datagrams, one reference each)
     */
    private boolean fits(final SendChunk chunk, final int offset, final int length) {
        final int pieces = 1 + 2 * references(chunk, offset, length);
        if (pieces <= messages.piecesLeft()) {
            return true;
        }
        if (messages.count() == 0) {
            throw new IllegalStateException("a message of " + pieces + " pieces does not fit a call of "
                + PIECES_PER_CALL);
        }
        return false;
    }

    /**
     * Adds a message of the chunk's bytes {@code [offset, offset + length)}: one piece, or, around
     * each range sent by reference, the chunk's bytes before it and the range's own memory.
     *
     * @return the message's index
     */
    private int add(final SendChunk chunk, final int offset, final int length) {
        final long base = chunk.address();
        final PayloadReferences refs = chunk.references();
        if (refs == null || refs.size() == 0) {
            return messages.add(base + offset, length);
        }
        final int m = messages.begin();
        final int end = offset + length;
        int position = offset;
        for (int k = refs.firstFrom(offset); k < refs.size() && refs.at(k) < end; k++) {
            final int at = refs.at(k);
            if (at > position) {
                messages.append(base + position, at - position);
            }
            messages.append(refs.address(k), refs.length(k));
            position = at + refs.length(k);
        }
        if (end > position) {
            messages.append(base + position, end - position);
        }
        return m;
    }

    /**
     * The batch's one datagram, to the connected peer, with {@code send} rather than a
     * {@code sendmmsg} of one message: the reply of a request-reply exchange (see
     * {@link LinuxUdpSocket#sendConnected}). The same outcomes as {@link #send}.
     */
    private int sendLone(final SendBatch batch) {
        final long address = batch.chunk(0).address() + batch.offset(0);
        final int bytes = batch.bytes(0);
        boolean retried = false;
        while (true) {
            final int r = socket.sendConnected(address, bytes);
            if (r > 0) {
                return 1;
            }
            if (r == 0) {
                batch.stopBecause(SendFailure.WOULD_BLOCK);
                return 0;
            }
            if (-r != Errno.EINTR) {
                if (onceMore(-r, retried)) {
                    retried = true;
                    continue;
                }
                batch.stopBecause(SendFailures.of(-r));
                return 0;
            }
        }
    }

    /**
     * After a send failed with {@code errno}: reads the error queue where the error may be an ICMP
     * error's, and tells whether to try the same message once more.
     *
     * @param retried whether this message was tried once more already
     */
    private boolean onceMore(final int errno, final boolean retried) {
        // The error may be an ICMP error's, queued for an earlier datagram and reported by this
        // call: read the queue, so it is counted and epoll stops reporting it. Not for a host
        // queue drop: no ICMP error stands for ENOBUFS, and a full queue refuses datagram after
        // datagram, each not worth another system call.
        if (errno != Errno.ENOBUFS && errno != Errno.ENOMEM) {
            errors.drain();
        }
        // "Fragmentation needed" came back for an earlier datagram: not this message's size, and
        // the report is consumed now. Once more.
        return errno == Errno.EMSGSIZE && errors.sawFragmentationNeeded() && !retried;
    }

    /** Names message {@code m}'s destination; none for the connected peer. */
    private void address(final int m, final InetSocketAddress to) {
        if (to == null) {
            return;
        }
        final InetAddress ip = to.getAddress();
        if (!socket.isIpv6()) {
            // Inet4Address.hashCode() is the address itself: read without a copy.
            messages.destinationIpv4(m, ip.hashCode(), to.getPort());
            return;
        }
        if (ip instanceof Inet6Address v6 && v6.getScopeId() != 0) {
            messages.destination(m, socket, to); // link-local with a scope: rare, read in full
            return;
        }
        if (to != lastIpv6) {
            if (ip instanceof Inet4Address) {
                lastHigh = 0L;
                lastLow = 0xFFFF_0000_0000L | (ip.hashCode() & 0xFFFF_FFFFL); // IPv4-mapped
            } else {
                final byte[] b = ip.getAddress();
                lastHigh = half(b, 0);
                lastLow = half(b, 8);
            }
            lastIpv6 = to;
        }
        messages.destinationIpv6(m, lastHigh, lastLow, to.getPort());
    }

    private static long half(final byte[] b, final int from) {
        long v = 0;
        for (int i = from; i < from + 8; i++) {
            v = v << 8 | (b[i] & 0xFFL);
        }
        return v;
    }

    @Override
    public void close() {
        messages.close();
    }
}
