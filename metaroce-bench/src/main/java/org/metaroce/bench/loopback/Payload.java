// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.bench.loopback;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

/**
 * The bytes every contender moves: a deterministic pattern, with the message's sequence number in
 * its first 8 bytes where a message is at least 8 bytes long. Receivers check the first messages
 * of a run byte for byte (the self-check), then only count.
 */
public final class Payload {
    private Payload() {
    }

    /** @return the pattern byte at {@code index} of every message */
    public static byte at(final int index) {
        return (byte) (index * 31 + 7 + (index >>> 8));
    }

    /** Fills {@code length} bytes at {@code offset} with the pattern. */
    public static void fill(final MutableDirectBuffer buffer, final int offset, final int length) {
        for (int i = 0; i < length; i++) {
            buffer.putByte(offset + i, at(i));
        }
    }

    /** Writes the sequence number into a message filled with the pattern (if it has room). */
    public static void stamp(final MutableDirectBuffer buffer, final int offset, final int length, final long seq) {
        if (length >= Long.BYTES) {
            buffer.putLong(offset, seq);
        }
    }

    /**
     * @return null if the message holds the pattern (and {@code seq}, if it has room), else a
     *     description of the first difference
     */
    public static String check(final DirectBuffer buffer, final int offset, final int length, final long seq) {
        int from = 0;
        if (length >= Long.BYTES) {
            final long got = buffer.getLong(offset);
            if (got != seq) {
                return "message " + seq + " carries sequence number " + got;
            }
            from = Long.BYTES;
        }
        for (int i = from; i < length; i++) {
            if (buffer.getByte(offset + i) != at(i)) {
                return "message " + seq + " differs at byte " + i + " of " + length + ": " + buffer.getByte(offset + i)
                    + " instead of " + at(i);
            }
        }
        return null;
    }
}
