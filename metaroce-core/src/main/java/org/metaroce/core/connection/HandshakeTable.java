// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.connection;

import org.agrona.DirectBuffer;
import org.agrona.collections.Int2IntHashMap;
import org.agrona.collections.Long2ObjectHashMap;

/**
 * The server's handshake table [CM-012]: the verified requests it remembers, by (client address,
 * Transaction ID), so that a duplicate second CONNECT_REQUEST is answered with what was sent
 * instead of creating a second connection [CM-025]. It is the only per-client state a server
 * keeps before the application accepts [CM-011], so it is bounded twice: in all
 * ({@link CmConfig#maxHandshakes()}, [SEC-009]) and per client host
 * ({@link CmConfig#maxHandshakesPerHost()}, [CM-040]), so that one host completing handshakes as
 * fast as it can cannot lock every other client out.
 *
 * <p>Entries are found by Transaction ID in a hash map and told apart by address on a short
 * chain (two clients picking the same random 64-bit ID is rare but legal). An entry is kept for
 * the cookie lifetime plus two seconds: a duplicate can arrive as long as its cookie is fresh,
 * and the cookie's issue time has one-second resolution. The owner asks
 * {@link Connection#handshakeExpiryNs()} when to {@link #remove} it.
 */
final class HandshakeTable {
    private static final long NS_PER_S = 1_000_000_000L;

    /** What {@link #admit} says about a new verified request. */
    enum Admission {
        /** There is room: {@link #insert} it. */
        ADMITTED,
        /** The table holds {@link CmConfig#maxHandshakes()} entries [SEC-009]. */
        TABLE_FULL,
        /** The client's host holds {@link CmConfig#maxHandshakesPerHost()} entries [CM-040]. */
        HOST_FULL
    }

    /** One remembered request: the connection it created and the key it was found by. */
    static final class Entry {
        final Connection connection;
        final int host;
        final byte[] address;
        final long expiresAtNs;
        Entry next;

        Entry(final Connection connection, final byte[] address, final long expiresAtNs) {
            this.connection = connection;
            this.host = connection.remoteHost;
            this.address = address;
            this.expiresAtNs = expiresAtNs;
        }
    }

    private final int capacity;
    private final int perHostBound;
    private final long lifetimeNs;
    /** Heads of the chains of entries with the same Transaction ID. */
    private final Long2ObjectHashMap<Entry> byTransaction = new Long2ObjectHashMap<>();
    /** Entries per client host; 0 is the map's missing value, so hosts with none are removed. */
    private final Int2IntHashMap perHost = new Int2IntHashMap(0);
    private int size;

    /**
     * @param capacity most entries in all
     * @param perHostBound most entries of one client host
     * @param cookieLifetimeSeconds how long a cookie is fresh, and so how long duplicates can come
     */
    HandshakeTable(final int capacity, final int perHostBound, final int cookieLifetimeSeconds) {
        this.capacity = capacity;
        this.perHostBound = perHostBound;
        this.lifetimeNs = (cookieLifetimeSeconds + 2L) * NS_PER_S;
    }

    /** @return entries held */
    int size() {
        return size;
    }

    /**
     * @param host a client host (the peer directory's host id)
     * @return entries held for it
     */
    int entriesOf(final int host) {
        return perHost.get(host);
    }

    /**
     * Looks up a verified request [CM-012].
     *
     * @param transactionId the request's Transaction ID
     * @param address the client's address bytes, from offset 0
     * @param addressLength their number
     * @return the connection of the same request seen before, or null
     */
    Connection find(final long transactionId, final DirectBuffer address, final int addressLength) {
        for (Entry e = byTransaction.get(transactionId); e != null; e = e.next) {
            if (sameAddress(e.address, address, addressLength)) {
                return e.connection;
            }
        }
        return null;
    }

    /**
     * @param host the client host of a new verified request
     * @return whether the table has room for it; the whole table is checked before the host's share
     */
    Admission admit(final int host) {
        if (size >= capacity) {
            return Admission.TABLE_FULL;
        }
        return perHost.get(host) >= perHostBound ? Admission.HOST_FULL : Admission.ADMITTED;
    }

    /**
     * Remembers a new connection's request until {@code nowNs} plus the entry lifetime.
     *
     * @param c a server connection, not in the table, whose remote host is set
     * @param address the client's address bytes, from offset 0; copied
     * @param addressLength their number
     * @param nowNs the time now
     */
    void insert(final Connection c, final DirectBuffer address, final int addressLength, final long nowNs) {
        final byte[] key = new byte[addressLength];
        address.getBytes(0, key);
        final Entry e = new Entry(c, key, nowNs + lifetimeNs);
        e.next = byTransaction.get(c.transactionId);
        byTransaction.put(c.transactionId, e);
        c.handshakeExpiresAtNs = e.expiresAtNs;
        size++;
        perHost.put(e.host, perHost.get(e.host) + 1);
    }

    /**
     * Forgets a connection's request; does nothing if it is not in the table.
     *
     * @param c the connection
     */
    void remove(final Connection c) {
        // The connection keeps no pointer to its entry (so it does not depend on this table): the
        // entry is found on its Transaction ID's chain, which two clients share only by chance.
        Entry previous = null;
        Entry e = byTransaction.get(c.transactionId);
        while (e != null && e.connection != c) {
            previous = e;
            e = e.next;
        }
        if (e == null) {
            return;
        }
        if (previous == null) {
            if (e.next == null) {
                byTransaction.remove(c.transactionId);
            } else {
                byTransaction.put(c.transactionId, e.next);
            }
        } else {
            previous.next = e.next;
        }
        e.next = null;
        c.handshakeExpiresAtNs = Long.MAX_VALUE;
        size--;
        final int left = perHost.get(e.host) - 1;
        if (left > 0) {
            perHost.put(e.host, left);
        } else {
            perHost.remove(e.host);
        }
    }

    private static boolean sameAddress(final byte[] key, final DirectBuffer address, final int length) {
        if (key.length != length) {
            return false;
        }
        for (int i = 0; i < length; i++) {
            if (key[i] != address.getByte(i)) {
                return false;
            }
        }
        return true;
    }
}
