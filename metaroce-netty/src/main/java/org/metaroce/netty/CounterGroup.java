// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty;

import java.util.concurrent.atomic.AtomicLongArray;

/**
 * Counters of a layer above a device (the collectives' communicator) that the device publishes in
 * its {@link CounterFile} beside its own: attach them with {@link MetaRoceDevice#attachCounters}.
 *
 * <p>One thread writes them, with ordered stores (as the engine's and the driver's counters are
 * written); the device's owning thread reads them when it publishes. Counting is one array store
 * and allocates nothing, so it may run on a data path.
 */
public final class CounterGroup {
    private final CounterType type;
    private final String labelPrefix;
    private final int key;
    private final String[] names;
    private final AtomicLongArray values;

    /**
     * @param type the type id the counters get in the file (for {@code metaroce stat}'s rates and grouping)
     * @param labelPrefix what each label starts with, e.g. {@code "coll rank 2/4"}
     * @param key the counters' Agrona key (an int: the rank, the QPN)
     * @param names one per counter, in index order; a label is {@code labelPrefix + " " + name}
     */
    public CounterGroup(final CounterType type, final String labelPrefix, final int key, final String... names) {
        if (type == null || labelPrefix == null || names.length == 0) {
            throw new IllegalArgumentException("a counter group needs a type, a label prefix and at least one name");
        }
        this.type = type;
        this.labelPrefix = labelPrefix;
        this.key = key;
        this.names = names.clone();
        this.values = new AtomicLongArray(names.length);
    }

    /**
     * The writing thread only: adds one.
     *
     * @param index which counter
     */
    public void increment(final int index) {
        values.lazySet(index, values.get(index) + 1);
    }

    /**
     * The writing thread only: adds {@code delta}.
     *
     * @param index which counter
     * @param delta how much
     */
    public void add(final int index, final long delta) {
        values.lazySet(index, values.get(index) + delta);
    }

    /**
     * @param index which counter
     * @return its current value (any thread)
     */
    public long get(final int index) {
        return values.get(index);
    }

    /** @return how many counters the group has */
    public int size() {
        return names.length;
    }

    /** @return the type id the counters get in the file */
    public CounterType type() {
        return type;
    }

    /** @return the counters' Agrona key */
    public int key() {
        return key;
    }

    /**
     * @param index which counter
     * @return its label in the counters file
     */
    public String label(final int index) {
        return labelPrefix + " " + names[index];
    }

    @Override
    public String toString() {
        final StringBuilder sb = new StringBuilder(labelPrefix).append('{');
        for (int i = 0; i < names.length; i++) {
            sb.append(i == 0 ? "" : ", ").append(names[i]).append('=').append(values.get(i));
        }
        return sb.append('}').toString();
    }
}
