// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.reliability;

/**
 * The responder's view of which PSNs have arrived: a cumulative point (the expected PSN, before
 * which everything has arrived) and a bitmap of the PSNs received beyond it. This is what makes
 * selective repeat possible: out-of-order arrivals are kept, and the ACK reports exactly which are
 * missing. Fixed size, no allocation after construction.
 */
public final class ReceiveWindow {
    /** Result of {@link #classify(int)}: the PSN is new and inside the window. */
    public static final int NEW = 0;
    /** Result of {@link #classify(int)}: the PSN was received before (or is before the window). */
    public static final int DUPLICATE = 1;
    /** Result of {@link #classify(int)}: the PSN is beyond the window (but within 2^30). */
    public static final int BEYOND_WINDOW = 2;
    /** Result of {@link #classify(int)}: the PSN is 2^30 or more away: dropped without answer [REL-002]. */
    public static final int OUT_OF_RANGE = 3;
    private static final int RANGE = 1 << 30;

    private final int size;
    private final int mask;
    private final long[] bits;
    private int expectedPsn;
    private int highestReceived;
    private boolean anyReceived;

    /**
     * @param size window size in PSNs; a power of two of at least 64
     * @param initialPsn the first PSN expected
     */
    public ReceiveWindow(final int size, final int initialPsn) {
        if (size < 64 || Integer.bitCount(size) != 1) {
            throw new IllegalArgumentException("receive window size must be a power of two >= 64, got " + size);
        }
        this.size = size;
        this.mask = size - 1;
        this.bits = new long[size >>> 6];
        reset(initialPsn);
    }

    /**
     * Forgets everything and expects {@code initialPsn} next.
     *
     * @param initialPsn first expected PSN
     */
    public void reset(final int initialPsn) {
        java.util.Arrays.fill(bits, 0L);
        expectedPsn = initialPsn;
        highestReceived = initialPsn - 1;
        anyReceived = false;
    }

    /** @return window size in PSNs */
    public int size() {
        return size;
    }

    /** @return the cumulative point: every PSN before it has arrived, this one has not */
    public int expectedPsn() {
        return expectedPsn;
    }

    /** @return the highest PSN received so far (meaningless before the first arrival) */
    public int highestReceived() {
        return highestReceived;
    }

    /** @return whether there is a hole: something beyond the expected PSN has arrived */
    public boolean hasGap() {
        return anyReceived && Psn.before(expectedPsn, highestReceived);
    }

    /**
     * Classifies a request PSN as specification REL-002 prescribes.
     *
     * @param psn a PSN
     * @return {@link #NEW}, {@link #DUPLICATE}, {@link #BEYOND_WINDOW} or {@link #OUT_OF_RANGE}
     */
    public int classify(final int psn) {
        final int d = psn - expectedPsn;
        if (d >= RANGE || d < -RANGE) {
            return OUT_OF_RANGE;
        }
        if (d < 0) {
            return DUPLICATE;
        }
        if (d >= size) {
            return BEYOND_WINDOW;
        }
        return isSet(psn) ? DUPLICATE : NEW;
    }

    /** @return whether {@code psn} has been received */
    public boolean isReceived(final int psn) {
        final int d = psn - expectedPsn;
        if (d < 0) {
            return true;
        }
        return d < size && isSet(psn);
    }

    /**
     * Records an arrival and advances the cumulative point over any run of received PSNs.
     *
     * @param psn a PSN that {@link #classify(int)} called {@link #NEW}
     * @return how far the cumulative point moved
     */
    public int markReceived(final int psn) {
        final int d = psn - expectedPsn;
        if (d < 0 || d >= size) {
            throw new IllegalArgumentException("PSN " + Integer.toUnsignedString(psn) + " outside window at "
                + Integer.toUnsignedString(expectedPsn));
        }
        set(psn);
        if (!anyReceived || Psn.before(highestReceived, psn)) {
            highestReceived = psn;
        }
        anyReceived = true;
        int advanced = 0;
        while (isSet(expectedPsn)) {
            clear(expectedPsn);
            expectedPsn++;
            advanced++;
        }
        return advanced;
    }

    /**
     * The selective-ack bitmap of specification 3.5.6: bit i set when PSN
     * {@code expectedPsn + 1 + i} has arrived.
     *
     * @return the 64-bit bitmap
     */
    public long sackBitmap() {
        if (!hasGap()) {
            // Nothing beyond the cumulative point has arrived (the in-order case of every ACK).
            return 0;
        }
        // The 64 bits from expectedPsn + 1 on, read whole words at a time from the ring (its size
        // is a multiple of 64, so the second word wraps to the first when the run crosses the end).
        final int start = (expectedPsn + 1) & mask;
        final int word = start >>> 6;
        final int shift = start & 63;
        long bitmap = bits[word] >>> shift;
        if (shift != 0) {
            bitmap |= bits[(word + 1) & (bits.length - 1)] << (64 - shift);
        }
        // With a 64-PSN window bit 63 is the slot of expectedPsn itself, which is never set.
        return bitmap;
    }

    private boolean isSet(final int psn) {
        final int index = psn & mask;
        return (bits[index >>> 6] & (1L << (index & 63))) != 0;
    }

    private void set(final int psn) {
        final int index = psn & mask;
        bits[index >>> 6] |= 1L << (index & 63);
    }

    private void clear(final int psn) {
        final int index = psn & mask;
        bits[index >>> 6] &= ~(1L << (index & 63));
    }
}
