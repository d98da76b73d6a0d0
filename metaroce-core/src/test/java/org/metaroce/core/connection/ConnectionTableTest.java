// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.connection;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class ConnectionTableTest {
    private static Connection client(final long transactionId, final int qpn) {
        final Connection c = new Connection(false, 1, transactionId, null);
        c.localQpn = qpn;
        return c;
    }

    @Test
    void parametersStayWithTheirConnectionUntilItIsRemoved() {
        final ConnectionTable t = new ConnectionTable();
        final Connection a = client(1, 10);
        final Connection b = client(2, 11);
        final Connection c = client(3, 12);
        final ConnectParams pa = new ConnectParams();
        final ConnectParams pb = new ConnectParams();
        final ListenParams pc = new ListenParams();
        t.add(a, pa);
        t.add(b, pb);
        t.add(c, pc);

        t.removeAt(0);

        assertThat(t.size()).isEqualTo(2);
        assertThat(t.get(0)).as("the last takes the removed one's place").isSameAs(c);
        assertThat(t.get(1)).isSameAs(b);
        assertThat(t.params(a)).as("removed with its connection").isNull();
        assertThat(t.params(b)).isSameAs(pb);
        assertThat(t.params(c)).isSameAs(pc);
    }

    @Test
    void theOldHolderOfAReusedQpnDoesNotTakeItFromTheNewOne() {
        final ConnectionTable t = new ConnectionTable();
        final Connection old = client(1, 7);
        final Connection fresh = client(2, 7);
        t.putQpn(old);
        t.putQpn(fresh);
        assertThat(old.inQpnTable).as("still flagged: only the lifecycle clears it").isTrue();

        t.removeQpn(old);

        assertThat(t.byQpn(7)).isSameAs(fresh);
        assertThat(old.inQpnTable).isFalse();
        t.removeQpn(fresh);
        assertThat(t.holdsQpn(7)).isFalse();
        assertThat(fresh.inQpnTable).isFalse();
    }

    @Test
    void liveConnectionsAreThoseNeitherClosedNorFreed() {
        final ConnectionTable t = new ConnectionTable();
        final Connection live = client(1, 1);
        final Connection closed = client(2, 2);
        final Connection freed = client(3, 3);
        closed.moveTo(ConnectionState.CLOSED);
        freed.moveTo(ConnectionState.CLOSED);
        freed.freed = true;
        t.add(live, null);
        t.add(closed, null);
        t.add(freed, null);

        assertThat(t.liveCount()).isEqualTo(1);
        assertThat(t.size()).as("all stay until the poll removes the freed").isEqualTo(3);
    }
}
