// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.engine;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

import org.agrona.BitUtil;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * A fixed-size ring of binary records of what the endpoint's queue pairs did (state changes,
 * retransmissions and their cause, timer expiries, RNR waits, dead peers): the last
 * {@link #capacity()} events, overwritten oldest first. Written by the endpoint's owning thread
 * without allocating; a queue pair that enters ERR keeps the last of its own events
 * ({@link QueuePair#failureTrace()}), and a driver may copy records out (e.g. to shared memory).
 *
 * <pre>
 *  0 long  time, ns (the endpoint's clock; Long.MIN_VALUE before it was given any)
 *  8 int   QPN
 * 12 short event ({@link TraceEvent} ordinal)
 * 14 short reserved
 * 16 int   PSN
 * 20 int   a
 * 24 int   b
 * 28 int   reserved
 * 32 long  c        (records are 40 bytes, padded to 48)
 * </pre>
 */
public final class EventTrace {
    /** Bytes per record. */
    public static final int RECORD_BYTES = 48;
    /** Records an endpoint keeps by default. */
    public static final int DEFAULT_CAPACITY = 2048;

    static final int TIME_OFFSET = 0;
    static final int QPN_OFFSET = 8;
    static final int EVENT_OFFSET = 12;
    static final int PSN_OFFSET = 16;
    static final int A_OFFSET = 20;
    static final int B_OFFSET = 24;
    static final int C_OFFSET = 32;

    private final UnsafeBuffer buffer;
    private final int mask;
    private long position;

    /**
     * @param capacity records kept, a power of two
     */
    public EventTrace(final int capacity) {
        if (capacity < 1 || !BitUtil.isPowerOfTwo(capacity)) {
            throw new IllegalArgumentException("capacity must be a power of two, got " + capacity);
        }
        this.buffer = new UnsafeBuffer(new byte[capacity * RECORD_BYTES]);
        this.mask = capacity - 1;
    }

    /** Appends a record (owning thread; allocates nothing). */
    void record(final long timeNs, final int qpn, final TraceEvent event, final int psn, final int a, final int b,
                final long c) {
        final int at = (int) (position & mask) * RECORD_BYTES;
        buffer.putLong(at + TIME_OFFSET, timeNs);
        buffer.putInt(at + QPN_OFFSET, qpn);
        buffer.putShort(at + EVENT_OFFSET, (short) event.ordinal());
        buffer.putInt(at + PSN_OFFSET, psn);
        buffer.putInt(at + A_OFFSET, a);
        buffer.putInt(at + B_OFFSET, b);
        buffer.putLong(at + C_OFFSET, c);
        position++;
    }

    /**
     * Records a connection-manager event of a QP's connection (the manager lives outside this
     * package). Owning thread; allocates nothing.
     *
     * @param timeNs when
     * @param qpn the connection's queue pair, or 0 before it has one
     * @param cmEventType the {@code CmEventType} ordinal
     * @param reason the event's reason code
     */
    public void recordConnectionEvent(final long timeNs, final int qpn, final int cmEventType, final int reason) {
        record(timeNs, qpn, TraceEvent.CM_EVENT, 0, cmEventType, reason, 0);
    }

    /** @return records written since the endpoint started (the next record's sequence number) */
    public long position() {
        return position;
    }

    /** @return records kept */
    public int capacity() {
        return mask + 1;
    }

    /**
     * @return the records, record {@code n} at offset {@code (n % capacity) * RECORD_BYTES} while
     *     {@code n >= position() - capacity()}; owning thread (copy out from there)
     */
    public DirectBuffer buffer() {
        return buffer;
    }

    /**
     * The last events of one queue pair, oldest first, each as "-12.345 ms QP 0x00abcd EVENT ...",
     * the time relative to {@code nowNs}. Cold path: allocates.
     *
     * @param qpn the queue pair
     * @param max at most this many
     * @param nowNs the time the lines are relative to
     * @return the lines
     */
    public List<String> last(final int qpn, final int max, final long nowNs) {
        final byte[] records = copyLast(qpn, max);
        return describeAll(new UnsafeBuffer(records), records.length / RECORD_BYTES, nowNs);
    }

    /**
     * Copies the last records of one queue pair, oldest first, without formatting them: what a
     * failing queue pair keeps, to be put into words only if someone asks ({@link #describeAll}).
     * Cold path: allocates one array of at most {@code max} records.
     *
     * @param qpn the queue pair
     * @param max at most this many
     * @return the records, {@link #RECORD_BYTES} each
     */
    byte[] copyLast(final int qpn, final int max) {
        final long oldest = Math.max(0, position - capacity());
        int count = 0;
        long first = position;
        for (long n = position - 1; n >= oldest && count < max; n--) {
            if (buffer.getInt((int) (n & mask) * RECORD_BYTES + QPN_OFFSET) == qpn) {
                count++;
                first = n;
            }
        }
        final byte[] records = new byte[count * RECORD_BYTES];
        int to = 0;
        for (long n = first; to < records.length; n++) {
            final int at = (int) (n & mask) * RECORD_BYTES;
            if (buffer.getInt(at + QPN_OFFSET) == qpn) {
                buffer.getBytes(at, records, to, RECORD_BYTES);
                to += RECORD_BYTES;
            }
        }
        return records;
    }

    /**
     * @param records records in this layout, from offset 0
     * @param count how many
     * @param referenceNs the time the lines are relative to
     * @return each record as text ({@link #describe}), in order
     */
    static List<String> describeAll(final DirectBuffer records, final int count, final long referenceNs) {
        final List<String> lines = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            lines.add(describe(records, i * RECORD_BYTES, referenceNs));
        }
        return lines;
    }

    /**
     * @param records a buffer of records in this layout
     * @param offset where a record starts
     * @param referenceNs the time the record's is shown relative to
     * @return the record as text, e.g. "-1.204 ms QP 0x00abcd RTO_EXPIRED psn 77 (...)"
     */
    public static String describe(final DirectBuffer records, final int offset, final long referenceNs) {
        final TraceEvent event = TraceEvent.ofOrdinal(records.getShort(offset + EVENT_OFFSET));
        final String what = event == null ? "event " + records.getShort(offset + EVENT_OFFSET)
            : event.describe(records.getInt(offset + PSN_OFFSET), records.getInt(offset + A_OFFSET),
                records.getInt(offset + B_OFFSET), records.getLong(offset + C_OFFSET));
        final long timeNs = records.getLong(offset + TIME_OFFSET);
        // Long.MIN_VALUE: recorded before the endpoint was given any time (setup before traffic).
        final String when = timeNs == Long.MIN_VALUE ? "(before traffic)"
            : String.format(Locale.ROOT, "%+.3f ms", (timeNs - referenceNs) / 1e6);
        return String.format(Locale.ROOT, "%s QP 0x%06x %s", when, records.getInt(offset + QPN_OFFSET), what);
    }
}
