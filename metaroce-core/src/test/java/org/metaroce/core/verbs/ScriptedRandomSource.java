// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.verbs;

import org.metaroce.core.RandomSource;

/** Returns a fixed sequence of ints (cycling), so tests can force collisions. */
final class ScriptedRandomSource implements RandomSource {
    private final int[] values;
    private int next;

    ScriptedRandomSource(final int... values) {
        this.values = values.clone();
    }

    @Override
    public int nextInt() {
        final int value = values[next];
        next = (next + 1) % values.length;
        return value;
    }

    @Override
    public long nextLong() {
        return nextInt();
    }

    @Override
    public int nextInt(final int bound) {
        return Math.floorMod(nextInt(), RandomSource.checkBound(bound));
    }

    @Override
    public String toString() {
        return "ScriptedRandomSource";
    }
}
