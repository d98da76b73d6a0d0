// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Instant;

import org.agrona.DirectBuffer;

/**
 * Writes MetaRoCE packets to a pcap file (nanosecond timestamps, link type RAW: each record is an
 * IPv4 or IPv6 header, a UDP header and the packet, as it appears on the wire after segmentation
 * offload), for Wireshark with {@code docs/wireshark/metaroce.lua}. Devices record into it when
 * {@link ObservabilityConfig#capture} names it; several devices may share one (records are
 * appended under a lock).
 *
 * <p>Bounded cost: a record is a copy of at most the snapshot length into a 1 MiB buffer, written
 * to the file when full and at least every {@value #FLUSH_INTERVAL_MS} ms by a daemon thread of
 * the writer's own, so a process that is killed (a hung run destroyed by a test harness) loses
 * only its last fraction of a second: before, a process that went quiet kept up to a megabyte,
 * the minutes before the hang, in memory and lost it. Once the file would exceed its size limit,
 * packets are counted in {@link #dropped()} instead of recorded. The IP headers are rebuilt from the addresses the driver
 * knows (no DSCP, ECN, TTL or IP id as the kernel set them; UDP checksum 0).
 */
public final class PcapWriter implements AutoCloseable {
    /** Size at which a capture stops recording by default: 256 MiB. */
    public static final long DEFAULT_MAX_BYTES = 256L << 20;
    /** Snapshot length by default: whole packets, so each Integrity Check can be verified. */
    public static final int DEFAULT_SNAP_LENGTH = 65535;

    private static final int MAGIC_NANOSECONDS = 0xA1B23C4D;
    private static final int LINKTYPE_RAW = 101;
    private static final int FILE_HEADER = 24;
    private static final int RECORD_HEADER = 16;
    private static final int UDP_HEADER = 8;
    private static final int BUFFER_BYTES = 1 << 20;
    /** How old the oldest buffered record may grow before the flusher writes it. */
    static final long FLUSH_INTERVAL_MS = 200;

    private final Path path;
    private final FileChannel channel;
    private final ByteBuffer buffer = ByteBuffer.allocateDirect(BUFFER_BYTES).order(ByteOrder.BIG_ENDIAN);
    private final int snapLength;
    private final long maxBytes;
    private final long epochNsAtStart;
    private final long nanoTimeAtStart;
    private long fileBytes;
    private long recorded;
    /** Records in {@link #buffer} not yet written to the file. */
    private long buffered;
    private long dropped;
    private boolean closed;
    private final Thread flusher;

    private PcapWriter(final Path path, final FileChannel channel, final int snapLength, final long maxBytes) {
        this.path = path;
        this.channel = channel;
        this.snapLength = snapLength;
        this.maxBytes = maxBytes;
        final Instant now = Instant.now();
        this.epochNsAtStart = now.getEpochSecond() * 1_000_000_000L + now.getNano();
        this.nanoTimeAtStart = System.nanoTime();
        buffer.order(ByteOrder.LITTLE_ENDIAN);
        buffer.putInt(MAGIC_NANOSECONDS).putShort((short) 2).putShort((short) 4).putInt(0).putInt(0)
            .putInt(snapLength).putInt(LINKTYPE_RAW);
        buffer.order(ByteOrder.BIG_ENDIAN);
        fileBytes = FILE_HEADER;
        flusher = new Thread(this::flushPeriodically, "metaroce-pcap-flush");
        flusher.setDaemon(true);
    }

    /** The flusher's loop: writes what is buffered every FLUSH_INTERVAL_MS until the writer closes. */
    private void flushPeriodically() {
        while (true) {
            synchronized (this) {
                if (closed) {
                    return;
                }
                if (buffer.position() > 0) {
                    drain();
                }
                try {
                    // wait() releases the lock, so records go on while the flusher sleeps; close() wakes it.
                    wait(FLUSH_INTERVAL_MS);
                } catch (final InterruptedException ex) {
                    return;
                }
            }
        }
    }

    /**
     * Creates (or truncates) a capture file with whole packets and the default size limit.
     *
     * @param path where
     * @return the writer
     */
    public static PcapWriter open(final Path path) {
        return open(path, DEFAULT_SNAP_LENGTH, DEFAULT_MAX_BYTES);
    }

    /**
     * Creates (or truncates) a capture file.
     *
     * @param path where
     * @param snapLength bytes kept of each packet, IP and UDP headers included (at least 128)
     * @param maxBytes size of the file beyond which packets are no longer recorded
     * @return the writer
     * @throws UncheckedIOException if the file cannot be created
     */
    public static PcapWriter open(final Path path, final int snapLength, final long maxBytes) {
        if (snapLength < 128 || snapLength > 65535) {
            throw new IllegalArgumentException("snapLength must be 128..65535, got " + snapLength);
        }
        if (maxBytes < FILE_HEADER + RECORD_HEADER + 128) {
            throw new IllegalArgumentException("maxBytes too small: " + maxBytes);
        }
        try {
            final FileChannel channel = FileChannel.open(path, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                StandardOpenOption.TRUNCATE_EXISTING);
            final PcapWriter writer = new PcapWriter(path, channel, snapLength, maxBytes);
            writer.flusher.start();
            return writer;
        } catch (final IOException ex) {
            throw new UncheckedIOException("cannot create capture file " + path + ": " + ex.getMessage(), ex);
        }
    }

    /**
     * Records one UDP datagram. Addresses are in the 16-byte IPv6 form (IPv4 as ::ffff:a.b.c.d,
     * recorded as IPv4). Allocates nothing.
     *
     * @param source holds the source address (16 bytes)
     * @param sourceOffset where in {@code source}
     * @param sourcePort source UDP port
     * @param destination holds the destination address (16 bytes)
     * @param destinationOffset where in {@code destination}
     * @param destinationPort destination UDP port
     * @param data the UDP payload (one MetaRoCE packet)
     * @param offset where it starts
     * @param length its length
     */
    public synchronized void record(final DirectBuffer source, final int sourceOffset, final int sourcePort,
                                    final DirectBuffer destination, final int destinationOffset,
                                    final int destinationPort, final DirectBuffer data, final int offset,
                                    final int length) {
        if (closed) {
            return;
        }
        final boolean v4 = isV4Mapped(source, sourceOffset) && isV4Mapped(destination, destinationOffset);
        final int ipHeader = v4 ? 20 : 40;
        final int wire = ipHeader + UDP_HEADER + length;
        final int kept = Math.min(wire, snapLength);
        final int recordBytes = RECORD_HEADER + kept;
        if (fileBytes + recordBytes > maxBytes || recordBytes > BUFFER_BYTES) {
            dropped++;
            return;
        }
        if (buffer.remaining() < recordBytes) {
            drain();
            if (closed) {
                dropped++;
                return;
            }
        }
        final long ns = epochNsAtStart + (System.nanoTime() - nanoTimeAtStart);
        buffer.order(ByteOrder.LITTLE_ENDIAN);
        buffer.putInt((int) (ns / 1_000_000_000L)).putInt((int) (ns % 1_000_000_000L)).putInt(kept).putInt(wire);
        buffer.order(ByteOrder.BIG_ENDIAN);
        final int start = buffer.position();
        if (v4) {
            buffer.put((byte) 0x45).put((byte) 0).putShort((short) wire).putShort((short) 0).putShort((short) 0x4000)
                .put((byte) 64).put((byte) 17).putShort((short) 0)
                .putInt(source.getInt(sourceOffset + 12, ByteOrder.BIG_ENDIAN))
                .putInt(destination.getInt(destinationOffset + 12, ByteOrder.BIG_ENDIAN));
            buffer.putShort(start + 10, ipv4Checksum(start));
        } else {
            buffer.putInt(0x60000000).putShort((short) (UDP_HEADER + length)).put((byte) 17).put((byte) 64);
            buffer.putLong(source.getLong(sourceOffset, ByteOrder.BIG_ENDIAN))
                .putLong(source.getLong(sourceOffset + 8, ByteOrder.BIG_ENDIAN))
                .putLong(destination.getLong(destinationOffset, ByteOrder.BIG_ENDIAN))
                .putLong(destination.getLong(destinationOffset + 8, ByteOrder.BIG_ENDIAN));
        }
        buffer.putShort((short) sourcePort).putShort((short) destinationPort).putShort((short) (UDP_HEADER + length))
            .putShort((short) 0);
        final int payloadKept = kept - ipHeader - UDP_HEADER;
        if (payloadKept > 0) {
            data.getBytes(offset, buffer, buffer.position(), payloadKept);
            buffer.position(buffer.position() + payloadKept);
        }
        fileBytes += recordBytes;
        recorded++;
        buffered++;
    }

    private static boolean isV4Mapped(final DirectBuffer address, final int offset) {
        return address.getLong(offset) == 0 && address.getInt(offset + 8, ByteOrder.BIG_ENDIAN) == 0x0000FFFF;
    }

    private short ipv4Checksum(final int start) {
        int sum = 0;
        for (int i = 0; i < 20; i += 2) {
            sum += buffer.getShort(start + i) & 0xFFFF;
        }
        while ((sum >>> 16) != 0) {
            sum = (sum & 0xFFFF) + (sum >>> 16);
        }
        return (short) ~sum;
    }

    /**
     * Writes what is buffered to the file; on an I/O error the capture stops (the device does not)
     * and the records still buffered count as dropped, not recorded. The caller's interrupt status
     * is set aside for the write: a FileChannel closes itself when a thread with the flag set
     * writes (ClosedByInterruptException), which lost the last buffer of a capture closed by a
     * thread that had been interrupted earlier, while {@link #recorded()} still counted it.
     */
    private void drain() {
        buffer.flip();
        final boolean interrupted = Thread.interrupted();
        try {
            while (buffer.hasRemaining()) {
                channel.write(buffer);
            }
            buffered = 0;
        } catch (final IOException ex) {
            closed = true;
            recorded -= buffered;
            dropped += buffered;
            buffered = 0;
        } finally {
            buffer.clear();
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** Writes what is buffered to the file (a reader then sees every packet recorded so far). */
    public synchronized void flush() {
        if (!closed) {
            drain();
        }
    }

    /** @return the capture file */
    public Path path() {
        return path;
    }

    /** @return packets recorded */
    public synchronized long recorded() {
        return recorded;
    }

    /** @return packets not recorded because the file reached its size limit (or could not be written) */
    public synchronized long dropped() {
        return dropped;
    }

    /** Flushes and closes the file; later records are ignored. Idempotent. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        drain();
        closed = true;
        notifyAll();
        try {
            channel.close();
        } catch (final IOException ex) {
            throw new UncheckedIOException("cannot close capture file " + path + ": " + ex.getMessage(), ex);
        }
    }
}
