// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.testwire;

import java.nio.ByteOrder;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;
import org.agrona.collections.IntArrayList;
import org.agrona.collections.LongArrayList;
import org.metaroce.core.engine.DatagramEndpoint;
import org.metaroce.core.engine.TransmitSink;

/**
 * Fake endpoint for wire tests: sends {@code count} numbered datagrams to one peer, starting at
 * its first poll, either all at once or one every {@code intervalNs} (paced by its deadline), and
 * records everything it receives. Datagram {@code i} carries PSN {@code i} at offset 8, its
 * complement at offset 12 and opcode {@link #opcodeFor(int)} at offset 1, with every other byte
 * fixed, so any single flipped bit is detected as corruption.
 */
final class PingEndpoint implements DatagramEndpoint {
    static final int MIN_LENGTH = 16;
    static final int OPCODE_SEND = 0x01;
    static final int OPCODE_WRITE = 0x03;
    private static final byte VERSION_BYTE = 0x10;

    private final int peer;
    private final int count;
    private final long intervalNs;
    private final int length;
    private boolean started;
    private long startNs;
    private int next;

    final LongArrayList sentTimes = new LongArrayList();
    final IntArrayList receivedPsns = new IntArrayList();
    final LongArrayList receivedTimes = new LongArrayList();
    final IntArrayList receivedFrom = new IntArrayList();
    int corrupted;
    int ceMarked;
    int lastEcn = -1;

    PingEndpoint(final int peer, final int count, final long intervalNs, final int length) {
        if (length < MIN_LENGTH) {
            throw new IllegalArgumentException("length < " + MIN_LENGTH);
        }
        this.peer = peer;
        this.count = count;
        this.intervalNs = intervalNs;
        this.length = length;
    }

    /** @return an endpoint that sends {@code count} datagrams to {@code peer} on its first poll */
    static PingEndpoint burst(final int peer, final int count) {
        return new PingEndpoint(peer, count, 0, MIN_LENGTH);
    }

    /** @return an endpoint that sends datagram {@code i} at first poll + {@code i * intervalNs} */
    static PingEndpoint paced(final int peer, final int count, final long intervalNs) {
        return new PingEndpoint(peer, count, intervalNs, MIN_LENGTH);
    }

    /** @return an endpoint that only receives */
    static PingEndpoint receiver() {
        return new PingEndpoint(0, 0, 0, MIN_LENGTH);
    }

    /** Opcode of datagram {@code psn}: every third one (0, 3, 6, ...) is a WRITE, the rest SENDs. */
    static int opcodeFor(final int psn) {
        return psn % 3 == 0 ? OPCODE_WRITE : OPCODE_SEND;
    }

    static void write(final MutableDirectBuffer buf, final int offset, final int length, final int psn) {
        buf.setMemory(offset, length, (byte) 0);
        buf.putByte(offset, VERSION_BYTE);
        buf.putByte(offset + 1, (byte) opcodeFor(psn));
        buf.putInt(offset + 8, psn, ByteOrder.BIG_ENDIAN);
        buf.putInt(offset + 12, ~psn, ByteOrder.BIG_ENDIAN);
    }

    static boolean intact(final DirectBuffer buf, final int offset, final int length) {
        if (length < MIN_LENGTH || buf.getByte(offset) != VERSION_BYTE) {
            return false;
        }
        final int psn = buf.getInt(offset + 8, ByteOrder.BIG_ENDIAN);
        if (buf.getInt(offset + 12, ByteOrder.BIG_ENDIAN) != ~psn || (buf.getByte(offset + 1) & 0xFF) != opcodeFor(psn)) {
            return false;
        }
        for (int i = 2; i < 8; i++) {
            if (buf.getByte(offset + i) != 0) {
                return false;
            }
        }
        for (int i = MIN_LENGTH; i < length; i++) {
            if (buf.getByte(offset + i) != 0) {
                return false;
            }
        }
        return true;
    }

    boolean done() {
        return next == count;
    }

    @Override
    public void onDatagram(final long nowNs, final DirectBuffer buffer, final int offset, final int length,
                           final int peerId, final int ecn) {
        lastEcn = ecn;
        if (ecn == ECN_CE) {
            ceMarked++;
        }
        if (!intact(buffer, offset, length)) {
            corrupted++;
            return;
        }
        receivedPsns.addInt(buffer.getInt(offset + 8, ByteOrder.BIG_ENDIAN));
        receivedTimes.addLong(nowNs);
        receivedFrom.addInt(peerId);
    }

    @Override
    public int poll(final long nowNs, final TransmitSink sink) {
        if (!started) {
            started = true;
            startNs = nowNs;
        }
        int sent = 0;
        while (next < count && (intervalNs == 0 || nowNs >= startNs + next * intervalNs)) {
            final int offset = sink.claim(length);
            if (offset == TransmitSink.NO_ROOM) {
                break;
            }
            write(sink.buffer(), offset, length, next);
            sink.commit(offset, length, peer, 49152 + (next & 0xFF));
            sentTimes.addLong(nowNs);
            next++;
            sent++;
        }
        return sent;
    }

    @Override
    public long nextDeadlineNs() {
        return started && intervalNs > 0 && next < count ? startNs + next * intervalNs : Long.MAX_VALUE;
    }
}
