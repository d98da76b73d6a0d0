// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteOrder;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

import org.agrona.BitUtil;
import org.agrona.IoUtil;
import org.agrona.concurrent.AtomicBuffer;
import org.agrona.concurrent.SystemEpochClock;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.status.CountersManager;
import org.agrona.concurrent.status.CountersReader;
import org.metaroce.core.engine.EventTrace;

/**
 * A device's counters file: a memory-mapped file holding a small header and an Agrona counters
 * metadata and values buffer, the layout Aeron's command-and-control (CnC) file gives its counters,
 * so another process reads them with a plain {@link CountersReader} while the device writes them.
 *
 * <pre>
 *   0  int   magic "MRCF"
 *   4  int   layout version, written last with a release store: a reader sees 0 until the file is ready
 *   8  int   metadata buffer length
 *  12  int   values buffer length
 *  16  long  pid of the writing process
 *  24  long  epoch ms the file was created
 *  32  long  epoch ms of the latest publication (a reader's "last update")
 *  40  int   length of the description (ASCII), which follows at 64 (at most 960 bytes)
 *  44  int   trace capacity, records (a power of two; 0: no trace)
 *  48  long  trace position: records written so far, stored with release after the records
 * 1024       counters metadata buffer ({@link CountersReader#METADATA_LENGTH} per counter)
 *            counters values buffer ({@link CountersReader#COUNTER_LENGTH} per counter)
 *            trace ring: record {@code n} at {@code (n % capacity) * EventTrace.RECORD_BYTES}
 * </pre>
 *
 * <p>The trace ring holds copies of the engine's {@code EventTrace} records; a reader copies the
 * records it wants, then re-reads the position: records older than position - capacity may have
 * been overwritten meanwhile and are discarded.
 *
 * <p>Writer: {@link #create}, owned by one thread. Readers: {@link #map}, any process.
 */
public final class CounterFile implements AutoCloseable {
    /** "MRCF" little-endian: identifies a MetaRoCE counters file. */
    public static final int MAGIC = 0x4643524d;
    /** Layout version; a reader refuses files of another version. */
    public static final int VERSION = 1;
    /** Bytes before the counters metadata buffer. */
    public static final int HEADER_LENGTH = 1024;

    private static final int MAGIC_OFFSET = 0;
    private static final int VERSION_OFFSET = 4;
    private static final int METADATA_LENGTH_OFFSET = 8;
    private static final int VALUES_LENGTH_OFFSET = 12;
    private static final int PID_OFFSET = 16;
    private static final int START_MS_OFFSET = 24;
    private static final int HEARTBEAT_MS_OFFSET = 32;
    private static final int DESCRIPTION_LENGTH_OFFSET = 40;
    private static final int TRACE_CAPACITY_OFFSET = 44;
    private static final int TRACE_POSITION_OFFSET = 48;
    private static final int DESCRIPTION_OFFSET = 64;
    private static final int MAX_DESCRIPTION_LENGTH = HEADER_LENGTH - DESCRIPTION_OFFSET;

    private final Path path;
    private final MappedByteBuffer mapped;
    private final UnsafeBuffer header;
    private final CountersReader reader;
    private final CountersManager manager;
    private final UnsafeBuffer trace;
    private final int traceCapacity;
    private boolean closed;

    private CounterFile(final Path path, final MappedByteBuffer mapped, final boolean writer) {
        this.path = path;
        this.mapped = mapped;
        this.header = new UnsafeBuffer(mapped, 0, HEADER_LENGTH);
        final int metadataLength = header.getInt(METADATA_LENGTH_OFFSET);
        final int valuesLength = header.getInt(VALUES_LENGTH_OFFSET);
        final AtomicBuffer metadata = new UnsafeBuffer(mapped, HEADER_LENGTH, metadataLength);
        final AtomicBuffer values = new UnsafeBuffer(mapped, HEADER_LENGTH + metadataLength, valuesLength);
        traceCapacity = header.getInt(TRACE_CAPACITY_OFFSET);
        trace = new UnsafeBuffer(mapped, HEADER_LENGTH + metadataLength + valuesLength,
            traceCapacity * EventTrace.RECORD_BYTES);
        if (writer) {
            // Freed counter ids are reused at once: the writer frees a QP's counters only after
            // it published their final values, and a reader sees the slot relabelled.
            manager = new CountersManager(metadata, values, StandardCharsets.US_ASCII, SystemEpochClock.INSTANCE, 0);
            reader = manager;
        } else {
            manager = null;
            reader = new CountersReader(metadata, values, StandardCharsets.US_ASCII);
        }
    }

    /**
     * Creates (truncating any old one) and maps a counters file with room for {@code capacity}
     * counters, and marks it ready.
     *
     * @param path where
     * @param capacity how many counters it holds
     * @param description what the file describes (e.g. the device's address), ASCII
     * @return the writer's view
     * @throws UncheckedIOException if the file cannot be created
     */
    public static CounterFile create(final Path path, final int capacity, final String description) {
        return create(path, capacity, 0, description);
    }

    /**
     * Creates (truncating any old one) and maps a counters file with room for {@code capacity}
     * counters and a trace ring of {@code traceCapacity} records, and marks it ready.
     *
     * @param path where
     * @param capacity how many counters it holds
     * @param traceCapacity trace records it holds: 0 or a power of two
     * @param description what the file describes (e.g. the device's address), ASCII
     * @return the writer's view
     * @throws UncheckedIOException if the file cannot be created
     */
    public static CounterFile create(final Path path, final int capacity, final int traceCapacity,
                                     final String description) {
        if (capacity < 1) {
            throw new IllegalArgumentException("capacity must be at least 1: " + capacity);
        }
        if (traceCapacity < 0 || traceCapacity > 0 && !BitUtil.isPowerOfTwo(traceCapacity)) {
            throw new IllegalArgumentException("trace capacity must be 0 or a power of two: " + traceCapacity);
        }
        final int metadataLength = capacity * CountersReader.METADATA_LENGTH;
        final int valuesLength = capacity * CountersReader.COUNTER_LENGTH;
        final long length = (long) HEADER_LENGTH + metadataLength + valuesLength
            + (long) traceCapacity * EventTrace.RECORD_BYTES;
        try {
            final MappedByteBuffer mapped;
            // TRUNCATE_EXISTING: an old file of that name (or one reserved empty) starts over.
            try (FileChannel channel = FileChannel.open(path, StandardOpenOption.CREATE, StandardOpenOption.READ,
                StandardOpenOption.WRITE, StandardOpenOption.TRUNCATE_EXISTING)) {
                // A sparse file: tmpfs and disks back only the pages counters touch.
                channel.truncate(length);
                mapped = channel.map(FileChannel.MapMode.READ_WRITE, 0, length);
            }
            mapped.order(ByteOrder.LITTLE_ENDIAN);
            final UnsafeBuffer header = new UnsafeBuffer(mapped, 0, HEADER_LENGTH);
            header.putInt(MAGIC_OFFSET, MAGIC);
            header.putInt(METADATA_LENGTH_OFFSET, metadataLength);
            header.putInt(VALUES_LENGTH_OFFSET, valuesLength);
            header.putInt(TRACE_CAPACITY_OFFSET, traceCapacity);
            header.putLong(PID_OFFSET, ProcessHandle.current().pid());
            final long now = System.currentTimeMillis();
            header.putLong(START_MS_OFFSET, now);
            header.putLong(HEARTBEAT_MS_OFFSET, now);
            final byte[] text = description.getBytes(StandardCharsets.US_ASCII);
            final int n = Math.min(text.length, MAX_DESCRIPTION_LENGTH);
            header.putInt(DESCRIPTION_LENGTH_OFFSET, n);
            header.putBytes(DESCRIPTION_OFFSET, text, 0, n);
            final CounterFile file = new CounterFile(path, mapped, true);
            header.putIntRelease(VERSION_OFFSET, VERSION);
            return file;
        } catch (final IOException ex) {
            throw new UncheckedIOException("cannot create counters file " + path + ": " + ex.getMessage(), ex);
        }
    }

    /**
     * Maps an existing counters file read-only, as {@code metaroce stat} does.
     *
     * @param path the file
     * @return the reader's view
     * @throws IOException if it cannot be read
     * @throws IllegalStateException if it is not a ready counters file of this {@link #VERSION}
     */
    public static CounterFile map(final Path path) throws IOException {
        final MappedByteBuffer mapped;
        try (FileChannel channel = FileChannel.open(path, StandardOpenOption.READ)) {
            final long size = channel.size();
            if (size < HEADER_LENGTH) {
                throw new IllegalStateException(path + " is not a counters file (" + size + " bytes)");
            }
            mapped = channel.map(FileChannel.MapMode.READ_ONLY, 0, size);
        }
        mapped.order(ByteOrder.LITTLE_ENDIAN);
        final UnsafeBuffer header = new UnsafeBuffer(mapped, 0, HEADER_LENGTH);
        if (header.getInt(MAGIC_OFFSET) != MAGIC) {
            IoUtil.unmap(mapped);
            throw new IllegalStateException(path + " is not a MetaRoCE counters file");
        }
        final int version = header.getIntVolatile(VERSION_OFFSET);
        if (version != VERSION) {
            IoUtil.unmap(mapped);
            throw new IllegalStateException(path + (version == 0 ? " is not ready yet"
                : " has layout version " + version + ", this reader knows " + VERSION));
        }
        final long needed = (long) HEADER_LENGTH + header.getInt(METADATA_LENGTH_OFFSET)
            + header.getInt(VALUES_LENGTH_OFFSET) + (long) header.getInt(TRACE_CAPACITY_OFFSET) * EventTrace.RECORD_BYTES;
        if (needed > mapped.capacity() || !BitUtil.isAligned(header.getInt(METADATA_LENGTH_OFFSET),
            CountersReader.METADATA_LENGTH)) {
            IoUtil.unmap(mapped);
            throw new IllegalStateException(path + " is truncated or corrupt");
        }
        return new CounterFile(path, mapped, false);
    }

    /** @return the file */
    public Path path() {
        return path;
    }

    /** @return the counters, readable from any thread or process */
    public CountersReader reader() {
        return reader;
    }

    /**
     * Looks a counter up by its label, as {@code metaroce stat} prints it (e.g. {@code "driver
     * DUTY_CYCLES"}, {@code "coll rank 0/2 OPERATIONS"}). Walks every counter: for scripts and
     * checks, not for a loop that samples.
     *
     * @param counters a reader of a counters file ({@link #reader()})
     * @param label the counter's label
     * @return its id, or -1 when no allocated counter has that label
     */
    public static int counterId(final CountersReader counters, final String label) {
        final int[] found = {-1};
        counters.forEach((id, l) -> {
            if (l.equals(label)) {
                found[0] = id;
            }
        });
        return found[0];
    }

    /** @return the counters manager (allocation and values); only in the writer's view */
    CountersManager manager() {
        if (manager == null) {
            throw new IllegalStateException("a reader's view cannot allocate counters");
        }
        return manager;
    }

    /** @return trace records the ring holds (0: the file has no trace) */
    public int traceCapacity() {
        return traceCapacity;
    }

    /** @return trace records written so far (the next record's sequence number) */
    public long tracePosition() {
        return header.getLongVolatile(TRACE_POSITION_OFFSET);
    }

    /**
     * Copies trace records {@code from} (inclusive) to the current position into {@code into}, as
     * long as they were not overwritten while being copied.
     *
     * @param from sequence number of the first record wanted
     * @param into receives each record: a buffer and the record's offset in it, with its sequence number
     * @return the sequence number after the last record copied (pass it as {@code from} next time)
     */
    public long readTrace(final long from, final TraceRecordConsumer into) {
        if (traceCapacity == 0) {
            return from;
        }
        final long end = tracePosition();
        final long start = Math.max(from, end - traceCapacity);
        final UnsafeBuffer copy = new UnsafeBuffer(new byte[(int) (end - start) * EventTrace.RECORD_BYTES]);
        for (long n = start; n < end; n++) {
            copy.putBytes((int) (n - start) * EventTrace.RECORD_BYTES, trace,
                (int) (n & (traceCapacity - 1)) * EventTrace.RECORD_BYTES, EventTrace.RECORD_BYTES);
        }
        // Records the writer may have overwritten while they were being copied are dropped.
        final long valid = Math.max(start, tracePosition() - traceCapacity);
        for (long n = valid; n < end; n++) {
            into.accept(n, copy, (int) (n - start) * EventTrace.RECORD_BYTES);
        }
        return end;
    }

    /** Receives trace records read from a {@link CounterFile}. */
    @FunctionalInterface
    public interface TraceRecordConsumer {
        /**
         * @param sequence the record's sequence number
         * @param buffer holds the record (in {@link EventTrace}'s layout)
         * @param offset where
         */
        void accept(long sequence, org.agrona.DirectBuffer buffer, int offset);
    }

    /**
     * Writer: appends a record copied from an engine's trace ring (the position moves with
     * {@link #publishTrace}).
     */
    void putTraceRecord(final long sequence, final org.agrona.DirectBuffer source, final int offset) {
        trace.putBytes((int) (sequence & (traceCapacity - 1)) * EventTrace.RECORD_BYTES, source, offset,
            EventTrace.RECORD_BYTES);
    }

    /** Writer: makes records before {@code position} visible to readers. */
    void publishTrace(final long position) {
        header.putLongRelease(TRACE_POSITION_OFFSET, position);
    }

    /** @return pid of the process that writes the file */
    public long pid() {
        return header.getLong(PID_OFFSET);
    }

    /** @return epoch ms the file was created */
    public long startTimeMs() {
        return header.getLong(START_MS_OFFSET);
    }

    /** @return epoch ms of the writer's latest publication */
    public long heartbeatMs() {
        return header.getLongVolatile(HEARTBEAT_MS_OFFSET);
    }

    void heartbeat(final long epochMs) {
        header.putLongRelease(HEARTBEAT_MS_OFFSET, epochMs);
    }

    /** @return what the writer said the file describes */
    public String description() {
        final int n = header.getInt(DESCRIPTION_LENGTH_OFFSET);
        return header.getStringWithoutLengthAscii(DESCRIPTION_OFFSET, Math.max(0, Math.min(n, MAX_DESCRIPTION_LENGTH)));
    }

    /**
     * @return whether the writing process still runs: its pid is alive and did not start after the
     *     file was created (a recycled pid belongs to another process: the file is stale)
     */
    public boolean isWriterAlive() {
        return CounterDirectory.isAlive(pid(), startTimeMs());
    }

    /** Unmaps the file (the writer deletes it with {@link CounterDirectory}); idempotent. */
    @Override
    public void close() {
        if (!closed) {
            closed = true;
            IoUtil.unmap(mapped);
        }
    }

    @Override
    public String toString() {
        return "CounterFile{" + path + ", pid=" + pid() + ", " + description() + '}';
    }
}
