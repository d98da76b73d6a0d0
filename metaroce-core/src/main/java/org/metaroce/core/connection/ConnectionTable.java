// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.connection;

import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

import org.agrona.collections.Int2ObjectHashMap;

/**
 * The connections a manager knows: every one not yet freed, in the order the poll visits them,
 * with the parameters it was made with, and those that hold a local QPN, by that QPN (how a CM
 * packet to a QPN and a queue pair's report find their connection).
 *
 * <p>The parameters (and the event handler in them) are kept here, not in the {@link Connection}:
 * a connection is the application's handle that every {@link CmEvent} names, and the handler
 * takes the event, so a connection that pointed at its parameters would make the public types a
 * cycle (issue 19).
 */
final class ConnectionTable {
    /** Every connection that has a local QPN and is not yet closed, by that QPN. */
    private final Int2ObjectHashMap<Connection> byQpn = new Int2ObjectHashMap<>();
    /** Every connection not yet freed; scanned by the poll when something changed or a timer is due. */
    private final List<Connection> active = new ArrayList<>();
    /** The parameters of each connection in {@link #active}: a client's own copy, or its listener's. */
    private final Map<Connection, QpParams<?>> params = new IdentityHashMap<>();

    /**
     * @param c a new connection, visited by polls until it is freed and {@link #removeAt removed}
     * @param p the parameters it was made with (its event handler among them); not copied
     */
    void add(final Connection c, final QpParams<?> p) {
        active.add(c);
        params.put(c, p);
    }

    /** @return the parameters a connection was made with, null once it is removed */
    QpParams<?> params(final Connection c) {
        return params.get(c);
    }

    /** @return the number of connections not yet removed */
    int size() {
        return active.size();
    }

    /** @return the connection at {@code index}, 0 ≤ index &lt; {@link #size()} */
    Connection get(final int index) {
        return active.get(index);
    }

    /** Removes the connection at {@code index}; the last one takes its place (order is not kept). */
    void removeAt(final int index) {
        params.remove(active.get(index));
        final int last = active.size() - 1;
        active.set(index, active.get(last));
        active.remove(last);
    }

    /** @return connections neither freed nor closed */
    int liveCount() {
        int n = 0;
        for (int i = 0, size = active.size(); i < size; i++) {
            final Connection c = active.get(i);
            if (!c.freed && c.state() != ConnectionState.CLOSED) {
                n++;
            }
        }
        return n;
    }

    /** @return the connection holding a local QPN, or null */
    Connection byQpn(final int qpn) {
        return byQpn.get(qpn);
    }

    /** @return whether a connection holds the local QPN */
    boolean holdsQpn(final int qpn) {
        return byQpn.containsKey(qpn);
    }

    /** Files a connection under its {@link Connection#localQpn}, in place of any other. */
    void putQpn(final Connection c) {
        byQpn.put(c.localQpn, c);
        c.inQpnTable = true;
    }

    /** Forgets a connection's QPN, if it still holds it. */
    void removeQpn(final Connection c) {
        if (c.inQpnTable && byQpn.get(c.localQpn) == c) {
            byQpn.remove(c.localQpn);
        }
        c.inQpnTable = false;
    }
}
