// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.reliability;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.BitSet;
import java.util.SplittableRandom;

import org.junit.jupiter.api.Test;

import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;

/** The responder's PSN classification and cumulative/SACK bookkeeping [REL-001], [REL-002], [WIRE-060]. */
class ReceiveWindowTest {
    @Test
    void classificationFollowsTheTableOfRel002() {
        final int e = 0xFFFF_FF00; // close to the wrap, on purpose
        final ReceiveWindow w = new ReceiveWindow(1024, e);
        assertThat(w.classify(e)).isEqualTo(ReceiveWindow.NEW);
        assertThat(w.classify(e + 1023)).isEqualTo(ReceiveWindow.NEW);
        assertThat(w.classify(e + 1024)).isEqualTo(ReceiveWindow.BEYOND_WINDOW);
        assertThat(w.classify(e + (1 << 30) - 1)).isEqualTo(ReceiveWindow.BEYOND_WINDOW);
        assertThat(w.classify(e + (1 << 30))).isEqualTo(ReceiveWindow.OUT_OF_RANGE);
        assertThat(w.classify(e - 1)).isEqualTo(ReceiveWindow.DUPLICATE);
        assertThat(w.classify(e - (1 << 30))).isEqualTo(ReceiveWindow.DUPLICATE);
        assertThat(w.classify(e - (1 << 30) - 1)).isEqualTo(ReceiveWindow.OUT_OF_RANGE);
        w.markReceived(e + 5);
        assertThat(w.classify(e + 5)).isEqualTo(ReceiveWindow.DUPLICATE);
        assertThat(w.hasGap()).isTrue();
    }

    @Test
    void windowSizeMustBeAPowerOfTwoOfAtLeast64() {
        assertThatThrownBy(() -> new ReceiveWindow(32, 0)).hasMessageContaining(">= 64");
        assertThatThrownBy(() -> new ReceiveWindow(100, 0)).hasMessageContaining("power of two");
    }

    @Test
    void markingOutsideTheWindowIsRejected() {
        final ReceiveWindow w = new ReceiveWindow(64, 10);
        assertThatThrownBy(() -> w.markReceived(9)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> w.markReceived(74)).isInstanceOf(IllegalArgumentException.class);
    }

    /** Any arrival order yields the same cumulative point and bitmap as a plain set model. */
    @Property(tries = 400)
    void cumulativePointAndBitmapMatchASetModel(@ForAll final long seed, @ForAll final int start,
                                                @ForAll @IntRange(min = 1, max = 300) final int arrivals,
                                                @ForAll @IntRange(min = 6, max = 10) final int sizeBits) {
        matchesASetModel(seed, start, arrivals, sizeBits);
    }

    /**
     * [OPS-043] The same with the first expected PSN at most 300 before 2^32, so that the arrivals
     * (up to 200 PSNs beyond the cumulative point) cross the PSN wrap.
     */
    @Property(tries = 200)
    void cumulativePointAndBitmapMatchASetModelAcrossThePsnWrap(
            @ForAll final long seed, @ForAll @IntRange(min = 1, max = 300) final int lead,
            @ForAll @IntRange(min = 1, max = 300) final int arrivals,
            @ForAll @IntRange(min = 6, max = 10) final int sizeBits) {
        matchesASetModel(seed, -lead, arrivals, sizeBits);
    }

    private static void matchesASetModel(final long seed, final int start, final int arrivals, final int sizeBits) {
        // Windows of 64 (the smallest: the bitmap covers the whole ring) to 1024 PSNs.
        final int size = 1 << sizeBits;
        final ReceiveWindow w = new ReceiveWindow(size, start);
        final BitSet model = new BitSet();
        final SplittableRandom random = new SplittableRandom(seed);
        for (int i = 0; i < arrivals; i++) {
            final int offset = random.nextInt(Math.min(200, size));
            final int psn = start + offset;
            final int cls = w.classify(psn);
            assertThat(cls == ReceiveWindow.NEW).isEqualTo(!model.get(offset) && offset >= model.nextClearBit(0));
            if (cls == ReceiveWindow.NEW) {
                w.markReceived(psn);
            }
            model.set(offset);
            final int cumulative = model.nextClearBit(0);
            assertThat(w.expectedPsn()).isEqualTo(start + cumulative);
            long bitmap = 0;
            for (int b = 0; b < 64; b++) {
                if (model.get(cumulative + 1 + b)) {
                    bitmap |= 1L << b;
                }
            }
            assertThat(w.sackBitmap()).isEqualTo(bitmap);
        }
    }
}
