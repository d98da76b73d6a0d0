// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.cli;

import java.nio.ByteOrder;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * What the two ends tell each other: the client's parameters in the private data of each
 * CONNECT_REQUEST (the server takes them, as perftest's servers take the client's), the server's
 * memory (address, rkey, length) in the private data of its CONNECT_REPLY, and two control
 * messages on the control queue pair: DONE (client, after the run, with its numbers) and RESULT
 * (server, with the outcome of its verification and its receive-side measurements).
 */
final class Messages {
    static final int MAGIC = 0x4D52_5046; // "MRPF"
    static final int VERSION = 2;
    static final ByteOrder ORDER = ByteOrder.BIG_ENDIAN;

    static final int FLAG_VERIFY = 1;
    static final int FLAG_COMPARE_SWAP = 2;

    static final int DONE = 1;
    static final int RESULT = 2;
    /** Client to server: the measured window of a raw bandwidth test starts now (after warm-up and margin). */
    static final int MARK = 3;
    static final int CONTROL_LENGTH = 64;

    static final int VERIFY_NOT_REQUESTED = 0;
    static final int VERIFY_PASSED = 1;
    static final int VERIFY_FAILED = 2;

    private Messages() {
    }

    /** The client's parameters, carried by every CONNECT_REQUEST of a run. */
    record Hello(TestKind kind, int index, int qps, int size, int slots, int flags, int txDepth, int rxDepth,
                 long regionAddress, int rkey, int mtu, long regionLength) {

        boolean verify() {
            return (flags & FLAG_VERIFY) != 0;
        }

        boolean compareSwap() {
            return (flags & FLAG_COMPARE_SWAP) != 0;
        }

        byte[] encode() {
            final UnsafeBuffer b = new UnsafeBuffer(new byte[56]);
            b.putInt(0, MAGIC, ORDER);
            b.putByte(4, (byte) VERSION);
            b.putByte(5, (byte) kind.ordinal());
            b.putShort(6, (short) index, ORDER);
            b.putInt(8, qps, ORDER);
            b.putInt(12, size, ORDER);
            b.putInt(16, slots, ORDER);
            b.putInt(20, flags, ORDER);
            b.putInt(24, txDepth, ORDER);
            b.putInt(28, rxDepth, ORDER);
            b.putLong(32, regionAddress, ORDER);
            b.putInt(40, rkey, ORDER);
            b.putInt(44, mtu, ORDER);
            b.putLong(48, regionLength, ORDER);
            return b.byteArray();
        }

        /** @return the parameters, or null if {@code data} is not a hello of this version */
        static Hello decode(final byte[] data) {
            if (data.length < 56) {
                return null;
            }
            final UnsafeBuffer b = new UnsafeBuffer(data);
            if (b.getInt(0, ORDER) != MAGIC || b.getByte(4) != VERSION) {
                return null;
            }
            final TestKind kind = TestKind.of(b.getByte(5));
            if (kind == null) {
                return null;
            }
            return new Hello(kind, b.getShort(6, ORDER) & 0xFFFF, b.getInt(8, ORDER), b.getInt(12, ORDER),
                b.getInt(16, ORDER), b.getInt(20, ORDER), b.getInt(24, ORDER), b.getInt(28, ORDER),
                b.getLong(32, ORDER), b.getInt(40, ORDER), b.getInt(44, ORDER), b.getLong(48, ORDER));
        }
    }

    /** The server's memory for one connection. */
    record Region(long address, int rkey, long length) {
        byte[] encode() {
            final UnsafeBuffer b = new UnsafeBuffer(new byte[24]);
            b.putInt(0, MAGIC, ORDER);
            b.putLong(4, address, ORDER);
            b.putInt(12, rkey, ORDER);
            b.putLong(16, length, ORDER);
            return b.byteArray();
        }

        static Region decode(final byte[] data) {
            if (data.length < 24) {
                return null;
            }
            final UnsafeBuffer b = new UnsafeBuffer(data);
            if (b.getInt(0, ORDER) != MAGIC) {
                return null;
            }
            return new Region(b.getLong(4, ORDER), b.getInt(12, ORDER), b.getLong(16, ORDER));
        }
    }

    /** The client's DONE report, read back by the server. */
    record Done(long iterations, long messages, long elapsedNs, double peakBps, long perQpAll) {
    }

    /** The server's RESULT report, read back by the client. */
    record Result(int verify, long checked, long mismatch, int qp, int slot, long rawDatagrams, long rawNs,
                  double rawPeakBps, long rawWindowDatagrams) {
    }

    /**
     * @return the DONE message at {@code at}, or null when the slot holds another message
     */
    static Done readDone(final DirectBuffer b, final int at) {
        if (b.getInt(at, ORDER) != DONE) {
            return null;
        }
        return new Done(b.getLong(at + 8, ORDER), b.getLong(at + 16, ORDER),
            b.getLong(at + 24, ORDER), Double.longBitsToDouble(b.getLong(at + 32, ORDER)), b.getLong(at + 40, ORDER));
    }

    /**
     * @return the RESULT message at {@code at}, or null when the slot holds another message
     */
    static Result readResult(final DirectBuffer b, final int at) {
        if (b.getInt(at, ORDER) != RESULT) {
            return null;
        }
        return new Result(b.getInt(at + 4, ORDER), b.getLong(at + 8, ORDER), b.getLong(at + 16, ORDER),
            b.getInt(at + 24, ORDER), b.getInt(at + 28, ORDER), b.getLong(at + 32, ORDER), b.getLong(at + 40, ORDER),
            Double.longBitsToDouble(b.getLong(at + 48, ORDER)), b.getLong(at + 56, ORDER));
    }

    // DONE: type, reserved (0), iterations per QP, total messages, elapsed ns, peak bits/s, writes per QP (all)
    static void putDone(final MutableDirectBuffer b, final int at, final long iterations, final long messages,
                        final long elapsedNs, final double peakBps, final long perQpAll) {
        b.putInt(at, DONE, ORDER);
        b.putInt(at + 4, 0, ORDER);
        b.putLong(at + 8, iterations, ORDER);
        b.putLong(at + 16, messages, ORDER);
        b.putLong(at + 24, elapsedNs, ORDER);
        b.putLong(at + 32, Double.doubleToRawLongBits(peakBps), ORDER);
        b.putLong(at + 40, perQpAll, ORDER);
    }

    // MARK: type only
    static void putMark(final MutableDirectBuffer b, final int at) {
        b.putInt(at, MARK, ORDER);
        b.putInt(at + 4, 0, ORDER);
    }

    /** @return whether the slot at {@code at} holds a MARK */
    static boolean isMark(final DirectBuffer b, final int at) {
        return b.getInt(at, ORDER) == MARK;
    }

    // RESULT: type, verify status, bytes checked, mismatch offset, qp, slot, raw datagrams (all received),
    // raw ns (of the measured window), raw peak, raw datagrams received in the measured window
    static void putResult(final MutableDirectBuffer b, final int at, final int verify, final long checked,
                          final long mismatch, final int qp, final int slot, final long rawDatagrams,
                          final long rawNs, final double rawPeakBps, final long rawWindowDatagrams) {
        b.putInt(at, RESULT, ORDER);
        b.putInt(at + 4, verify, ORDER);
        b.putLong(at + 8, checked, ORDER);
        b.putLong(at + 16, mismatch, ORDER);
        b.putInt(at + 24, qp, ORDER);
        b.putInt(at + 28, slot, ORDER);
        b.putLong(at + 32, rawDatagrams, ORDER);
        b.putLong(at + 40, rawNs, ORDER);
        b.putLong(at + 48, Double.doubleToRawLongBits(rawPeakBps), ORDER);
        b.putLong(at + 56, rawWindowDatagrams, ORDER);
    }
}
