// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.connection;

import static org.assertj.core.api.Assertions.assertThat;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

class HandshakeTableTest {
    private static final long S = 1_000_000_000L;

    private static UnsafeBuffer address(final int... bytes) {
        final byte[] b = new byte[bytes.length];
        for (int i = 0; i < bytes.length; i++) {
            b[i] = (byte) bytes[i];
        }
        return new UnsafeBuffer(b);
    }

    private static Connection request(final long transactionId, final int host) {
        final Connection c = new Connection(true, 7, transactionId, null);
        c.remoteHost = host;
        return c;
    }

    /** Inserts a new request from a host at time 0. */
    private static Connection insert(final HandshakeTable t, final long transactionId, final int host,
                                     final UnsafeBuffer address) {
        final Connection c = request(transactionId, host);
        t.insert(c, address, address.capacity(), 0);
        return c;
    }

    @Test
    void findsARequestByTransactionIdAndAddress() {
        // [CM-012] the key is (client address, Transaction ID); [CM-025] a hit is a duplicate.
        final HandshakeTable t = new HandshakeTable(16, 16, 5);
        final UnsafeBuffer a = address(10, 0, 0, 1, 0x12, 0x34);
        assertThat(t.find(99, a, 6)).isNull();
        final Connection c = request(99, 1);
        t.insert(c, a, 6, 0);
        assertThat(t.find(99, a, 6)).isSameAs(c);
        assertThat(t.find(98, a, 6)).isNull();
        assertThat(t.find(99, address(10, 0, 0, 1, 0x12, 0x35), 6)).isNull();
        assertThat(t.find(99, a, 5)).as("a shorter address is another address").isNull();
        assertThat(t.size()).isEqualTo(1);
    }

    @Test
    void keepsClientsThatChoseTheSameTransactionIdApart() {
        final HandshakeTable t = new HandshakeTable(16, 16, 5);
        final UnsafeBuffer a = address(1, 1);
        final UnsafeBuffer b = address(2, 2);
        final UnsafeBuffer d = address(3, 3);
        final Connection ca = insert(t, 5, 1, a);
        final Connection cb = insert(t, 5, 2, b);
        final Connection cd = insert(t, 5, 3, d);
        assertThat(t.find(5, a, 2)).isSameAs(ca);
        assertThat(t.find(5, b, 2)).isSameAs(cb);
        assertThat(t.find(5, d, 2)).isSameAs(cd);

        t.remove(cb); // from the middle of the chain
        assertThat(t.find(5, b, 2)).isNull();
        assertThat(t.find(5, a, 2)).isSameAs(ca);
        assertThat(t.find(5, d, 2)).isSameAs(cd);
        t.remove(cd); // the head
        assertThat(t.find(5, a, 2)).isSameAs(ca);
        assertThat(t.find(5, d, 2)).isNull();
        t.remove(ca);
        assertThat(t.find(5, a, 2)).isNull();
        assertThat(t.size()).isZero();
    }

    @Test
    void countsEntriesPerHostAndForgetsHostsWithNone() {
        final HandshakeTable t = new HandshakeTable(16, 16, 5);
        final Connection c1 = insert(t, 1, 4, address(4));
        final Connection c2 = insert(t, 2, 4, address(4));
        final Connection c3 = insert(t, 3, 5, address(5));
        assertThat(t.entriesOf(4)).isEqualTo(2);
        assertThat(t.entriesOf(5)).isEqualTo(1);
        t.remove(c1);
        t.remove(c1); // not in the table any more: nothing happens
        assertThat(t.entriesOf(4)).isEqualTo(1);
        assertThat(t.size()).isEqualTo(2);
        t.remove(c2);
        t.remove(c3);
        assertThat(t.entriesOf(4)).isZero();
        assertThat(t.entriesOf(5)).isZero();
        assertThat(t.size()).isZero();
    }

    @Test
    void admitsUpToTheTableBoundAndTheHostBound() {
        // [SEC-009] the table is bounded; [CM-040] so is one host's share of it.
        final HandshakeTable t = new HandshakeTable(3, 2, 5);
        assertThat(t.admit(1)).isEqualTo(HandshakeTable.Admission.ADMITTED);
        insert(t, 1, 1, address(1));
        insert(t, 2, 1, address(1));
        assertThat(t.admit(1)).isEqualTo(HandshakeTable.Admission.HOST_FULL);
        assertThat(t.admit(2)).isEqualTo(HandshakeTable.Admission.ADMITTED);
        insert(t, 3, 2, address(2));
        assertThat(t.admit(2)).isEqualTo(HandshakeTable.Admission.TABLE_FULL);
        assertThat(t.admit(1)).as("the whole table is checked first").isEqualTo(HandshakeTable.Admission.TABLE_FULL);
    }

    @Test
    void remembersARequestForTheCookieLifetimePlusTwoSeconds() {
        // A duplicate can come while its cookie is fresh, and the cookie's time has 1 s resolution.
        final HandshakeTable t = new HandshakeTable(16, 16, 5);
        final Connection c = request(1, 1);
        assertThat(c.handshakeExpiryNs()).isEqualTo(Long.MAX_VALUE);
        t.insert(c, address(1), 1, 3 * S);
        assertThat(c.handshakeExpiryNs()).isEqualTo(10 * S);
        assertThat(c.nextDeadlineNs()).isEqualTo(10 * S);
        t.remove(c);
        assertThat(c.handshakeExpiryNs()).isEqualTo(Long.MAX_VALUE);
        assertThat(t.find(1, address(1), 1)).isNull();
        assertThat(t.size()).isZero();
    }
}
