// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.collectives;

/**
 * What a communicator counts, published in its device's counters file as "coll rank R/N NAME"
 * (type COLLECTIVES, key the rank) and read with {@code metaroce stat}. Names are stable: tools
 * and scripts refer to them.
 */
public enum CollectiveCounter {
    /** Operations that ran over the network and completed (one-rank and empty operations send nothing and are not counted). */
    OPERATIONS,
    /** Operations that failed: a peer failed or disagreed, the device closed, or the operation timed out. */
    OPERATIONS_FAILED,
    /** Chunk WRITEs posted, into slots and into granted regions. */
    CHUNKS_SENT,
    /** Bytes of the chunks posted. */
    CHUNK_BYTES_SENT,
    /** Chunks received into a slot (then copied or reduced out of it) [COLL-006]. */
    CHUNKS_RECEIVED_SLOT,
    /** Chunks received in place, through a granted region [COLL-034]. */
    CHUNKS_RECEIVED_PLACED,
    /** Slot grants sent as messages of their own (those riding on a chunk are free, COLL-035). */
    GRANT_MESSAGES_SENT,
    /** Region grants sent [COLL-033]. */
    REGION_GRANTS_SENT;

    private static final CollectiveCounter[] VALUES = values();

    /** @return the counters' names, in ordinal order (a {@code CounterGroup}'s names) */
    static String[] names() {
        final String[] names = new String[VALUES.length];
        for (int i = 0; i < names.length; i++) {
            names[i] = VALUES[i].name();
        }
        return names;
    }
}
