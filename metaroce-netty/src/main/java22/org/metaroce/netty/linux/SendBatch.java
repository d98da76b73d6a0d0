// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty.linux;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;

/**
 * The messages of one {@code sendmmsg} call, built in native memory allocated once: an
 * {@code mmsghdr} array, a pool of {@code iovec}s the messages share (a message's bytes may lie in
 * several places, gathered by the kernel), one destination address slot and one
 * {@code UDP_SEGMENT} control message per message. Filling a batch and sending it allocates
 * nothing; the payload stays in the caller's off-heap memory (each message points at it, nothing
 * is copied), which must stay valid until {@link LinuxUdpSocket#send} returns.
 *
 * <p>Use: {@link #clear()}, then per message {@link #add(long, int)} (or {@link #begin()} and
 * {@link #append} per piece) and optionally a destination ({@link #destinationIpv4},
 * {@link #destinationIpv6}; none on a connected socket) and a GSO segment size
 * ({@link #segmentSize}); then {@link LinuxUdpSocket#send(SendBatch, int)}. One thread at a time.
 */
public final class SendBatch implements AutoCloseable {
    /** {@code CMSG_SPACE(sizeof(uint16_t))}: a {@code UDP_SEGMENT} control message. */
    private static final int GSO_CMSG_SPACE = Msghdr.cmsgSpace(2);

    /** {@code UIO_MAXIOV}: the most pieces one message may have. */
    public static final int MAX_PIECES_PER_MESSAGE = 1024;

    private final Arena arena;
    private final int capacity;
    private final int iovecCapacity;
    /** iovecs used by the messages added since {@link #clear()}. */
    private int iovecCount;
    private final MemorySegment headers;
    /** {@code headers} from message i on: a partial send resumes there without slicing anew. */
    private final MemorySegment[] headersFrom;
    private final MemorySegment iovecs;
    private final MemorySegment names;
    private final MemorySegment controls;
    private final long iovecsAddress;
    private final long namesAddress;
    private final long controlsAddress;
    private int count;

    /**
     * A batch of one piece per message.
     *
     * @param capacity messages per call (the kernel takes at most {@code UIO_MAXIOV}, 1024)
     */
    public SendBatch(final int capacity) {
        this(capacity, capacity);
    }

    /**
     * @param capacity messages per call (the kernel takes at most {@code UIO_MAXIOV}, 1024)
     * @param pieces pieces ({@code iovec}s) the messages of one call may have in all, at least
     *     {@code capacity}
     */
    public SendBatch(final int capacity, final int pieces) {
        if (capacity < 1 || capacity > 1024) {
            throw new IllegalArgumentException("capacity must be 1..1024 (UIO_MAXIOV), got " + capacity);
        }
        if (pieces < capacity) {
            throw new IllegalArgumentException("pieces (" + pieces + ") must be at least the capacity (" + capacity
                + "): every message has one");
        }
        this.capacity = capacity;
        this.iovecCapacity = pieces;
        arena = Arena.ofShared();
        headers = arena.allocate((long) capacity * Msghdr.MMSGHDR_SIZE, 8);
        iovecs = arena.allocate((long) pieces * Msghdr.IOVEC_SIZE, 8);
        names = arena.allocate((long) capacity * Sockaddr.SLOT, 8);
        controls = arena.allocate((long) capacity * GSO_CMSG_SPACE, 8);
        iovecsAddress = iovecs.address();
        namesAddress = names.address();
        controlsAddress = controls.address();
        headersFrom = new MemorySegment[capacity];
        for (int i = 0; i < capacity; i++) {
            headersFrom[i] = headers.asSlice((long) i * Msghdr.MMSGHDR_SIZE);
            // The part that never changes: the cmsg header of its UDP_SEGMENT (only its u16
            // payload changes, and whether msg_control points at it).
            final long c = (long) i * GSO_CMSG_SPACE;
            controls.set(JAVA_LONG, c + Msghdr.CMSG_LEN, Msghdr.CMSG_DATA + 2L);
            controls.set(JAVA_INT, c + Msghdr.CMSG_LEVEL, Uapi.SOL_UDP);
            controls.set(JAVA_INT, c + Msghdr.CMSG_TYPE, Uapi.UDP_SEGMENT);
        }
    }

    /** @return the most messages one call can carry */
    public int capacity() {
        return capacity;
    }

    /** @return messages added since {@link #clear()} */
    public int count() {
        return count;
    }

    /** @return pieces ({@code iovec}s) the messages added since {@link #clear()} may still have in all */
    public int piecesLeft() {
        return iovecCapacity - iovecCount;
    }

    /** Forgets the messages added: the next {@link #add} is message 0. */
    public void clear() {
        count = 0;
        iovecCount = 0;
    }

    /**
     * Adds a message of {@code length} bytes at native {@code address}, to the connected peer
     * and without GSO until {@link #destinationIpv4}/{@link #segmentSize} say otherwise.
     *
     * @return the message's index
     * @throws IllegalStateException if the batch is full
     */
    public int add(final long address, final int length) {
        final int i = begin();
        append(address, length);
        return i;
    }

    /**
     * Adds a message of no bytes yet, to the connected peer and without GSO until
     * {@link #destinationIpv4}/{@link #segmentSize} say otherwise; {@link #append} gives it its
     * pieces, in order (a message left without one is an empty datagram).
     *
     * @return the message's index
     * @throws IllegalStateException if the batch is full
     */
    public int begin() {
        if (count == capacity) {
            throw new IllegalStateException("the batch is full (" + capacity + " messages)");
        }
        if (iovecCount == iovecCapacity) {
            throw new IllegalStateException("the batch has no pieces left (" + iovecCapacity + ")");
        }
        final int i = count++;
        final long h = (long) i * Msghdr.MMSGHDR_SIZE;
        headers.set(JAVA_LONG, h + Msghdr.IOV, iovecsAddress + (long) iovecCount * Msghdr.IOVEC_SIZE);
        headers.set(JAVA_LONG, h + Msghdr.IOVLEN, 0L);
        headers.set(JAVA_LONG, h + Msghdr.NAME, 0L);
        headers.set(JAVA_INT, h + Msghdr.NAMELEN, 0);
        headers.set(JAVA_LONG, h + Msghdr.CONTROL, 0L);
        headers.set(JAVA_LONG, h + Msghdr.CONTROLLEN, 0L);
        headers.set(JAVA_INT, h + Msghdr.FLAGS, 0);
        headers.set(JAVA_INT, h + Msghdr.MSG_LEN, 0);
        return i;
    }

    /**
     * Appends {@code length} bytes at native {@code address} to the message added last: the
     * kernel sends its pieces back to back as one message (one GSO message is still cut every
     * segment size, across pieces).
     *
     * @throws IllegalStateException if no message was added, the batch has no pieces left, or the
     *     message has {@link #MAX_PIECES_PER_MESSAGE} already
     */
    public void append(final long address, final int length) {
        if (count == 0) {
            throw new IllegalStateException("no message to append to: begin() one first");
        }
        if (iovecCount == iovecCapacity) {
            throw new IllegalStateException("the batch has no pieces left (" + iovecCapacity + ")");
        }
        final long h = (long) (count - 1) * Msghdr.MMSGHDR_SIZE;
        final long pieces = headers.get(JAVA_LONG, h + Msghdr.IOVLEN);
        if (pieces == MAX_PIECES_PER_MESSAGE) {
            throw new IllegalStateException("a message may have at most " + MAX_PIECES_PER_MESSAGE + " pieces (UIO_MAXIOV)");
        }
        final long v = (long) iovecCount * Msghdr.IOVEC_SIZE;
        iovecs.set(JAVA_LONG, v + Msghdr.IOV_BASE, address);
        iovecs.set(JAVA_LONG, v + Msghdr.IOV_LEN, length & 0xFFFF_FFFFL);
        iovecCount++;
        headers.set(JAVA_LONG, h + Msghdr.IOVLEN, pieces + 1);
    }

    /**
     * Adds a message whose payload is all of {@code data}, which must be native memory.
     *
     * @return the message's index
     */
    public int add(final MemorySegment data) {
        if (!data.isNative()) {
            throw new IllegalArgumentException("the payload must be native (off-heap) memory");
        }
        if (data.byteSize() > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("payload too large: " + data.byteSize() + " bytes");
        }
        return add(data.address(), (int) data.byteSize());
    }

    /**
     * Sends message {@code i} to an IPv4 address (for an {@code AF_INET} socket).
     *
     * @param ip the address, most significant byte first ({@code 127.0.0.1} is {@code 0x7F000001})
     * @param port the UDP port
     */
    public void destinationIpv4(final int i, final int ip, final int port) {
        final long offset = (long) checkIndex(i) * Sockaddr.SLOT;
        final int length = Sockaddr.writeIpv4(names, offset, ip, port);
        name(i, offset, length);
    }

    /**
     * Sends message {@code i} to an IPv6 address (for an {@code AF_INET6} socket).
     *
     * @param high the first 8 bytes of the address, big-endian
     * @param low the last 8 bytes of the address, big-endian
     * @param port the UDP port
     */
    public void destinationIpv6(final int i, final long high, final long low, final int port) {
        final long offset = (long) checkIndex(i) * Sockaddr.SLOT;
        final int length = Sockaddr.writeIpv6(names, offset, high, low, port);
        name(i, offset, length);
    }

    /**
     * Sends message {@code i} to {@code address} (slow path: reads the address object; an IPv4
     * address on an IPv6 socket becomes its IPv4-mapped form).
     *
     * @param socket the socket the batch will be sent on (its family decides the sockaddr)
     */
    public void destination(final int i, final LinuxUdpSocket socket, final InetSocketAddress address) {
        final long offset = (long) checkIndex(i) * Sockaddr.SLOT;
        final int length = Sockaddr.write(names, offset, socket.family(), address);
        name(i, offset, length);
    }

    /**
     * Makes message {@code i} a GSO message: the kernel cuts its payload into datagrams of
     * {@code segmentSize} bytes (the last may be shorter), at most 64 per message
     * ({@code UDP_MAX_SEGMENTS}), through a {@code UDP_SEGMENT} control message.
     *
     * @param segmentSize payload bytes per datagram, 1..65535; 0 turns GSO off for this message
     */
    public void segmentSize(final int i, final int segmentSize) {
        checkIndex(i);
        if (segmentSize < 0 || segmentSize > 0xFFFF) {
            throw new IllegalArgumentException("segment size must be 0..65535, got " + segmentSize);
        }
        final long h = (long) i * Msghdr.MMSGHDR_SIZE;
        if (segmentSize == 0) {
            headers.set(JAVA_LONG, h + Msghdr.CONTROL, 0L);
            headers.set(JAVA_LONG, h + Msghdr.CONTROLLEN, 0L);
            return;
        }
        final long c = (long) i * GSO_CMSG_SPACE;
        controls.set(JAVA_SHORT, c + Msghdr.CMSG_DATA, (short) segmentSize);
        headers.set(JAVA_LONG, h + Msghdr.CONTROL, controlsAddress + c);
        headers.set(JAVA_LONG, h + Msghdr.CONTROLLEN, (long) GSO_CMSG_SPACE);
    }

    /** @return bytes the kernel took for message {@code i} in the last call that sent it */
    public int sentBytes(final int i) {
        return headers.get(JAVA_INT, (long) checkIndex(i) * Msghdr.MMSGHDR_SIZE + Msghdr.MSG_LEN);
    }

    /** @return the mmsghdr array from message {@code first} on, for the socket's call */
    MemorySegment headersFrom(final int first) {
        return headersFrom[first];
    }

    /** Releases the native memory; the batch cannot be used afterwards. */
    @Override
    public void close() {
        arena.close();
    }

    private void name(final int i, final long offset, final int length) {
        final long h = (long) i * Msghdr.MMSGHDR_SIZE;
        headers.set(JAVA_LONG, h + Msghdr.NAME, namesAddress + offset);
        headers.set(JAVA_INT, h + Msghdr.NAMELEN, length);
    }

    private int checkIndex(final int i) {
        if (i < 0 || i >= count) {
            throw new IndexOutOfBoundsException("message " + i + " of " + count);
        }
        return i;
    }
}
