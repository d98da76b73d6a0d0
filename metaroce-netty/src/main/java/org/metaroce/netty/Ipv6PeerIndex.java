// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty;

import java.util.Arrays;

/**
 * Peer ids of IPv6 senders keyed by the raw address (two longs) and port, so that a transport
 * reporting raw addresses finds a known sender without building an {@code InetSocketAddress}.
 * Open addressing with linear probing; removal shifts later entries back, so no tombstones
 * accumulate while transient senders come and go. Grows at half full; allocates nothing on a
 * lookup. Owning thread only.
 */
final class Ipv6PeerIndex {
    private static final int EMPTY = -1;

    private long[] high = new long[64];
    private long[] low = new long[64];
    private int[] port = new int[64];
    private int[] id = new int[64];
    private int size;

    Ipv6PeerIndex() {
        Arrays.fill(id, EMPTY);
    }

    /** @return the id stored for the address, or {@code missing} */
    int get(final long addressHigh, final long addressLow, final int udpPort, final int missing) {
        final int mask = id.length - 1;
        for (int i = slot(addressHigh, addressLow, udpPort, mask); ; i = (i + 1) & mask) {
            if (id[i] == EMPTY) {
                return missing;
            }
            if (high[i] == addressHigh && low[i] == addressLow && port[i] == udpPort) {
                return id[i];
            }
        }
    }

    /** Stores (or replaces) the id of an address. */
    void put(final long addressHigh, final long addressLow, final int udpPort, final int peerId) {
        if ((size + 1) * 2 > id.length) {
            grow();
        }
        final int mask = id.length - 1;
        for (int i = slot(addressHigh, addressLow, udpPort, mask); ; i = (i + 1) & mask) {
            if (id[i] == EMPTY) {
                high[i] = addressHigh;
                low[i] = addressLow;
                port[i] = udpPort;
                id[i] = peerId;
                size++;
                return;
            }
            if (high[i] == addressHigh && low[i] == addressLow && port[i] == udpPort) {
                id[i] = peerId;
                return;
            }
        }
    }

    /** Forgets an address (nothing happens if it is not there). */
    void remove(final long addressHigh, final long addressLow, final int udpPort) {
        final int mask = id.length - 1;
        int i = slot(addressHigh, addressLow, udpPort, mask);
        while (true) {
            if (id[i] == EMPTY) {
                return;
            }
            if (high[i] == addressHigh && low[i] == addressLow && port[i] == udpPort) {
                break;
            }
            i = (i + 1) & mask;
        }
        id[i] = EMPTY;
        size--;
        // Backward shift: an entry after the hole moves into it unless its home slot lies
        // cyclically in (hole, entry], where a lookup would still find it.
        int hole = i;
        for (int j = (i + 1) & mask; id[j] != EMPTY; j = (j + 1) & mask) {
            final int home = slot(high[j], low[j], port[j], mask);
            final boolean reachable = hole <= j ? hole < home && home <= j : hole < home || home <= j;
            if (!reachable) {
                high[hole] = high[j];
                low[hole] = low[j];
                port[hole] = port[j];
                id[hole] = id[j];
                id[j] = EMPTY;
                hole = j;
            }
        }
    }

    /** @return entries stored */
    int size() {
        return size;
    }

    private void grow() {
        final long[] oldHigh = high;
        final long[] oldLow = low;
        final int[] oldPort = port;
        final int[] oldId = id;
        final int n = oldId.length * 2;
        high = new long[n];
        low = new long[n];
        port = new int[n];
        id = new int[n];
        Arrays.fill(id, EMPTY);
        size = 0;
        for (int i = 0; i < oldId.length; i++) {
            if (oldId[i] != EMPTY) {
                put(oldHigh[i], oldLow[i], oldPort[i], oldId[i]);
            }
        }
    }

    private static int slot(final long addressHigh, final long addressLow, final int udpPort, final int mask) {
        long h = addressHigh * 0x9E3779B97F4A7C15L ^ addressLow * 0xC2B2AE3D27D4EB4FL ^ udpPort * 0x165667B19E3779F9L;
        h ^= h >>> 29;
        h *= 0xBF58476D1CE4E5B9L;
        return (int) (h ^ h >>> 32) & mask;
    }
}
