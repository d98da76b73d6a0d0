// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty.linux;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;

/**
 * Fixed receive slots for {@code recvmmsg}, allocated once in native memory: per slot the
 * payload buffer, an {@code mmsghdr}, its {@code iovec}, a source address and a control-message
 * buffer. {@link LinuxUdpSocket#receive(ReceiveBatch)} fills slots 0..n-1 and decodes what each
 * datagram carries (length, source, ECN, GRO segment size) into fields read by index: nothing is
 * allocated per datagram or per call.
 *
 * <p>A slot's payload stays valid until the next receive into this batch. It is exposed as a
 * native address, as a {@link MemorySegment} and as a {@link ByteBuffer} view (created once per
 * slot; its position is 0 and its limit the datagram's length after each receive), the form
 * array- and buffer-based checksums are fast on. One thread at a time.
 */
public final class ReceiveBatch implements AutoCloseable {
    /** {@link #ecn(int)} and {@link #trafficClass(int)} when the kernel reported no traffic class. */
    public static final int NOT_REPORTED = -1;
    /** {@link #arrivalNanoTime(int)} when the kernel reported no receive timestamp. */
    public static final long NO_TIMESTAMP = Long.MIN_VALUE;

    /**
     * Control-message room per slot: {@code IP_TOS} (1 B) or {@code IPV6_TCLASS} (4 B) and
     * {@code UDP_GRO} (4 B), each {@code CMSG_SPACE} 24 B, and {@code SCM_TIMESTAMPNS} (16 B,
     * {@code CMSG_SPACE} 32 B), with room to spare.
     */
    private static final int CONTROL_SPACE = 128;

    private final Arena arena;
    private final int slots;
    private final int slotSize;
    private final MemorySegment headers;
    private final MemorySegment iovecs;
    private final MemorySegment names;
    private final MemorySegment controls;
    private final MemorySegment payloads;
    private final MemorySegment[] slotSegments;
    private final ByteBuffer[] slotBuffers;
    private final long payloadsAddress;
    private final int[] lengths;
    private final int[] trafficClasses;
    private final int[] segmentSizes;
    private final boolean[] truncated;
    /** Receive timestamps (CLOCK_REALTIME), then arrivals on {@link System#nanoTime()}'s clock. */
    private final long[] arrivals;
    /** A {@code timespec} for reading CLOCK_REALTIME after each receive. */
    private final MemorySegment clock;
    /** Reads {@link #clock} and the monotonic clock for {@link ClockPairing}; made once, not per batch. */
    private final ClockPairing.Clocks clocks;
    /** The monotonic clock as {@link #clocks} last read it. */
    private long lastMonotonicNs;
    /** When the last receive's stamps were converted, on {@link System#nanoTime()}'s clock, or {@link #NO_TIMESTAMP}. */
    private long receivedNs = NO_TIMESTAMP;
    private int count;
    /** Slots whose name and control lengths the kernel may have overwritten since {@link #prepare} last reset them. */
    private int overwritten;

    /**
     * @param slots datagrams per {@code recvmmsg} call (at most 1024, {@code UIO_MAXIOV})
     * @param slotSize bytes per slot: the largest datagram accepted whole; 65535 with UDP GRO on
     *     (a coalesced datagram can reach 64 KiB), else the path MTU's payload
     */
    public ReceiveBatch(final int slots, final int slotSize) {
        if (slots < 1 || slots > 1024) {
            throw new IllegalArgumentException("slots must be 1..1024 (UIO_MAXIOV), got " + slots);
        }
        if (slotSize < 1 || slotSize > 1 << 20) {
            throw new IllegalArgumentException("slot size must be 1..1 MiB, got " + slotSize);
        }
        this.slots = slots;
        // Nothing set yet: the first prepare() sets every header's lengths.
        this.overwritten = slots;
        this.slotSize = slotSize;
        arena = Arena.ofShared();
        headers = arena.allocate((long) slots * Msghdr.MMSGHDR_SIZE, 8);
        iovecs = arena.allocate((long) slots * Msghdr.IOVEC_SIZE, 8);
        names = arena.allocate((long) slots * Sockaddr.SLOT, 8);
        controls = arena.allocate((long) slots * CONTROL_SPACE, 8);
        // Page-aligned payloads: a 64-byte-aligned start per slot keeps the checksum's loads aligned.
        payloads = arena.allocate((long) slots * slotSize, 4096);
        payloadsAddress = payloads.address();
        slotSegments = new MemorySegment[slots];
        slotBuffers = new ByteBuffer[slots];
        lengths = new int[slots];
        trafficClasses = new int[slots];
        segmentSizes = new int[slots];
        truncated = new boolean[slots];
        arrivals = new long[slots];
        clock = arena.allocate(16, 8);
        clocks = new ClockPairing.Clocks() {
            @Override
            public long monotonicNs() {
                lastMonotonicNs = System.nanoTime();
                return lastMonotonicNs;
            }

            @Override
            public long realtimeNs() {
                // Libc.realtimeNs answers a failed clock_gettime with Long.MIN_VALUE, which is UNAVAILABLE.
                return Libc.realtimeNs(clock);
            }
        };
        final long iovecsAddress = iovecs.address();
        final long namesAddress = names.address();
        final long controlsAddress = controls.address();
        for (int i = 0; i < slots; i++) {
            final long h = (long) i * Msghdr.MMSGHDR_SIZE;
            headers.set(JAVA_LONG, h + Msghdr.NAME, namesAddress + (long) i * Sockaddr.SLOT);
            headers.set(JAVA_LONG, h + Msghdr.IOV, iovecsAddress + (long) i * Msghdr.IOVEC_SIZE);
            headers.set(JAVA_LONG, h + Msghdr.IOVLEN, 1L);
            headers.set(JAVA_LONG, h + Msghdr.CONTROL, controlsAddress + (long) i * CONTROL_SPACE);
            final long v = (long) i * Msghdr.IOVEC_SIZE;
            iovecs.set(JAVA_LONG, v + Msghdr.IOV_BASE, payloadsAddress + (long) i * slotSize);
            iovecs.set(JAVA_LONG, v + Msghdr.IOV_LEN, (long) slotSize);
            slotSegments[i] = payloads.asSlice((long) i * slotSize, slotSize);
            slotBuffers[i] = slotSegments[i].asByteBuffer();
        }
    }

    /** @return datagrams one call can receive */
    public int slots() {
        return slots;
    }

    /** @return bytes per slot */
    public int slotSize() {
        return slotSize;
    }

    /** @return datagrams the last receive delivered (slots 0..count-1 are valid) */
    public int count() {
        return count;
    }

    /** @return the payload length of the datagram in slot {@code i} (with GRO: of all its segments) */
    public int length(final int i) {
        return lengths[checkIndex(i)];
    }

    /** @return the native address of slot {@code i}'s payload */
    public long address(final int i) {
        return payloadsAddress + (long) checkIndex(i) * slotSize;
    }

    /** @return slot {@code i}'s payload memory, all {@link #slotSize()} bytes of it (the same object every time) */
    public MemorySegment segment(final int i) {
        return slotSegments[checkIndex(i)];
    }

    /**
     * @return a buffer view of slot {@code i} (the same object every time), position 0, limit
     *     the datagram's length
     */
    public ByteBuffer buffer(final int i) {
        return slotBuffers[checkIndex(i)];
    }

    /**
     * @return the ECN codepoint of the datagram in slot {@code i}: 0 Not-ECT, 1 ECT(1), 2 ECT(0),
     *     3 CE; {@link #NOT_REPORTED} unless the socket asked for it
     *     ({@link LinuxUdpSocket#setReceiveTrafficClass(boolean)})
     */
    public int ecn(final int i) {
        final int tc = trafficClasses[checkIndex(i)];
        return tc == NOT_REPORTED ? NOT_REPORTED : tc & 3;
    }

    /** @return the whole TOS / traffic class byte (DSCP and ECN), or {@link #NOT_REPORTED} */
    public int trafficClass(final int i) {
        return trafficClasses[checkIndex(i)];
    }

    /**
     * @return with UDP GRO on, the size of the datagrams the kernel coalesced into slot {@code i}
     *     (all but the last have it); 0 when the slot holds one datagram as sent
     */
    public int segmentSize(final int i) {
        return segmentSizes[checkIndex(i)];
    }

    /**
     * @return when the datagram in slot {@code i} reached the host, on {@link System#nanoTime()}'s
     *     clock (the kernel's receive timestamp, converted when the batch was received), or
     *     {@link #NO_TIMESTAMP} unless the socket asked for them
     *     ({@link LinuxUdpSocket#setReceiveTimestamps(boolean)})
     */
    public long arrivalNanoTime(final int i) {
        return arrivals[checkIndex(i)];
    }

    /**
     * @return the {@link System#nanoTime()} at which the last receive's stamps were converted, a
     *     moment after the call returned and no earlier than any {@link #arrivalNanoTime}: a clock
     *     reading the receiver may take for the batch's instead of reading the clock once more;
     *     {@link #NO_TIMESTAMP} when no datagram of the last receive had a receive timestamp
     */
    public long receivedNanoTime() {
        return receivedNs;
    }

    /** @return whether the datagram was larger than the slot and was cut ({@code MSG_TRUNC}) */
    public boolean truncated(final int i) {
        return truncated[checkIndex(i)];
    }

    /** @return whether the source of slot {@code i} is an IPv6 address (else IPv4) */
    public boolean sourceIsIpv6(final int i) {
        return Sockaddr.family(names, nameOffset(i)) == Uapi.AF_INET6;
    }

    /** @return the source IPv4 address of slot {@code i}, most significant byte first */
    public int sourceIpv4(final int i) {
        return Sockaddr.ipv4(names, nameOffset(i));
    }

    /** @return the first 8 bytes of slot {@code i}'s source IPv6 address, big-endian */
    public long sourceIpv6High(final int i) {
        return Sockaddr.ipv6High(names, nameOffset(i));
    }

    /** @return the last 8 bytes of slot {@code i}'s source IPv6 address, big-endian */
    public long sourceIpv6Low(final int i) {
        return Sockaddr.ipv6Low(names, nameOffset(i));
    }

    /** @return the source UDP port of slot {@code i} */
    public int sourcePort(final int i) {
        return Sockaddr.port(names, nameOffset(i));
    }

    /** @return the source of slot {@code i} as an object: for a peer seen for the first time (allocates) */
    public InetSocketAddress sourceAddress(final int i) {
        return Sockaddr.read(names, nameOffset(i));
    }

    /**
     * Resets what the kernel overwrote in the headers of the slots it filled: name and control
     * lengths. Only those: an idle spinning owner calls this before every {@code recvmmsg}, and
     * rewriting all 32 headers each time cost more than the call's own setup in user space.
     */
    void prepare() {
        count = 0;
        receivedNs = NO_TIMESTAMP;
        for (int i = 0; i < overwritten; i++) {
            final long h = (long) i * Msghdr.MMSGHDR_SIZE;
            headers.set(JAVA_INT, h + Msghdr.NAMELEN, Sockaddr.SLOT);
            headers.set(JAVA_LONG, h + Msghdr.CONTROLLEN, (long) CONTROL_SPACE);
        }
        // A failed call fills nothing; slot 0 is reset anyway, in case a kernel wrote its lengths.
        overwritten = 1;
    }

    /** @return the mmsghdr array, for the socket's call */
    MemorySegment headers() {
        return headers;
    }

    /**
     * Decodes the datagram of {@code length} bytes a {@code recvmsg} wrote into slot 0: such a call
     * returns the length rather than writing {@code msg_len}, so it is put there first.
     */
    void receivedOne(final int length) {
        headers.set(JAVA_INT, Msghdr.MSG_LEN, length);
        received(1);
    }

    /** Decodes what the kernel wrote for slots 0..n-1. */
    void received(final int n) {
        boolean stamped = false;
        for (int i = 0; i < n; i++) {
            final long h = (long) i * Msghdr.MMSGHDR_SIZE;
            final int length = headers.get(JAVA_INT, h + Msghdr.MSG_LEN);
            lengths[i] = length;
            truncated[i] = (headers.get(JAVA_INT, h + Msghdr.FLAGS) & Uapi.MSG_TRUNC) != 0;
            slotBuffers[i].limit(Math.min(length, slotSize)).position(0);
            decodeControl(i, headers.get(JAVA_LONG, h + Msghdr.CONTROLLEN));
            stamped |= arrivals[i] != NO_TIMESTAMP;
        }
        if (stamped) {
            toNanoTime(n);
        }
        count = n;
        overwritten = Math.max(n, 1);
    }

    /**
     * Converts the slots' CLOCK_REALTIME stamps to {@link System#nanoTime()}'s clock (CLOCK_MONOTONIC)
     * through the offset between the clocks, paired now ({@link ClockPairing}); a stamp that would
     * land after now (a step of the wall clock) counts as now.
     */
    private void toNanoTime(final int n) {
        final long offset = ClockPairing.realMinusMonotonicNs(clocks);
        // The pairing's last monotonic read is now: a fourth read, a few ns later, would tell nothing more.
        final long now = lastMonotonicNs;
        receivedNs = now;
        for (int i = 0; i < n; i++) {
            if (arrivals[i] != NO_TIMESTAMP) {
                arrivals[i] = offset == ClockPairing.UNAVAILABLE ? NO_TIMESTAMP : Math.min(now, arrivals[i] - offset);
            }
        }
    }

    /** Walks slot i's control messages (CMSG_FIRSTHDR/CMSG_NXTHDR) for the traffic class and GRO size. */
    private void decodeControl(final int i, final long controlLength) {
        int tc = NOT_REPORTED;
        int gro = 0;
        long stamp = NO_TIMESTAMP;
        final long base = (long) i * CONTROL_SPACE;
        long offset = 0;
        while (offset + Msghdr.CMSG_DATA <= controlLength) {
            final long length = controls.get(JAVA_LONG, base + offset + Msghdr.CMSG_LEN);
            if (length < Msghdr.CMSG_DATA || offset + length > controlLength) {
                break;
            }
            final int level = controls.get(JAVA_INT, base + offset + Msghdr.CMSG_LEVEL);
            final int type = controls.get(JAVA_INT, base + offset + Msghdr.CMSG_TYPE);
            final long data = base + offset + Msghdr.CMSG_DATA;
            final long dataLength = length - Msghdr.CMSG_DATA;
            if (level == Uapi.IPPROTO_IP && type == Uapi.IP_TOS) {
                // One byte (ip_cmsg_recv_tos puts the TOS octet).
                tc = controls.get(JAVA_BYTE, data) & 0xFF;
            } else if (level == Uapi.IPPROTO_IPV6 && type == Uapi.IPV6_TCLASS) {
                // An int (ip6_datagram_recv_specific_ctl puts the traffic class as int).
                tc = controls.get(JAVA_INT, data) & 0xFF;
            } else if (level == Uapi.SOL_UDP && type == Uapi.UDP_GRO) {
                // udp_cmsg_recv puts gso_size as an int; read a u16 should a kernel put less.
                gro = dataLength >= 4 ? controls.get(JAVA_INT, data) : controls.get(JAVA_SHORT, data) & 0xFFFF;
            } else if (level == Uapi.SOL_SOCKET && type == Uapi.SCM_TIMESTAMPNS && dataLength >= 16) {
                // struct timespec { long tv_sec; long tv_nsec; } (64-bit time on 64-bit Linux).
                stamp = controls.get(JAVA_LONG, data) * 1_000_000_000L + controls.get(JAVA_LONG, data + 8);
            }
            offset += Msghdr.cmsgAlign(length);
        }
        trafficClasses[i] = tc;
        segmentSizes[i] = gro;
        arrivals[i] = stamp;
    }

    /** Releases the native memory; the batch, its segments and buffers cannot be used afterwards. */
    @Override
    public void close() {
        arena.close();
    }

    private long nameOffset(final int i) {
        return (long) checkIndex(i) * Sockaddr.SLOT;
    }

    private int checkIndex(final int i) {
        if (i < 0 || i >= count) {
            throw new IndexOutOfBoundsException("slot " + i + " of " + count + " received");
        }
        return i;
    }
}
