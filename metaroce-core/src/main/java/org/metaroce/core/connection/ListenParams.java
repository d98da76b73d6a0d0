// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.connection;

/**
 * How a server serves one Service ID: the resources of each accepted connection's queue pair,
 * its side of the negotiation (s in [CM-019]), and the bound of pending plus established
 * connections.
 */
public final class ListenParams extends QpParams<ListenParams> {
    int limit;

    /**
     * @param limit most pending plus established connections of this listener [CM-012]; 0 (the
     *     default) takes {@link CmConfig#listenerLimit()}
     * @return this
     */
    public ListenParams limit(final int limit) {
        this.limit = range("limit", limit, 0, 1 << 20);
        return this;
    }

    ListenParams copy() {
        final ListenParams c = new ListenParams();
        copyTo(c);
        c.limit = limit;
        return c;
    }
}
