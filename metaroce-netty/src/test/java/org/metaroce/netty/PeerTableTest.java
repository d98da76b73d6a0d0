// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;

import org.junit.jupiter.api.Test;

class PeerTableTest {
    private static InetSocketAddress v4(final int a, final int b, final int c, final int d, final int port) {
        try {
            return new InetSocketAddress(InetAddress.getByAddress(new byte[] {(byte) a, (byte) b, (byte) c, (byte) d}),
                port);
        } catch (final UnknownHostException ex) {
            throw new AssertionError(ex);
        }
    }

    private static InetSocketAddress v6(final int last, final int port) {
        final byte[] bytes = new byte[16];
        bytes[0] = 0x20;
        bytes[1] = 0x01;
        bytes[2] = 0x0d;
        bytes[3] = (byte) 0xb8;
        bytes[15] = (byte) last;
        try {
            return new InetSocketAddress(InetAddress.getByAddress(bytes), port);
        } catch (final UnknownHostException ex) {
            throw new AssertionError(ex);
        }
    }

    @Test
    void pinnedIdsAreStableAndDense() {
        final PeerTable t = new PeerTable(16);
        final int a = t.peerId(v4(10, 0, 0, 1, 4796));
        final int b = t.peerId(v4(10, 0, 0, 2, 4796));
        assertThat(a).isEqualTo(0);
        assertThat(b).isEqualTo(1);
        assertThat(t.peerId(v4(10, 0, 0, 1, 4796))).isEqualTo(a);
        assertThat(t.address(a)).isEqualTo(v4(10, 0, 0, 1, 4796));
        assertThat(t.lookup(v4(10, 0, 0, 2, 4796))).isEqualTo(b);
        assertThat(t.pinnedCount()).isEqualTo(2);
    }

    @Test
    void sendersFromManySourcePortsShareTheHostOfThePinnedEndpointAddress() {
        final PeerTable t = new PeerTable(16);
        final int endpoint = t.peerId(v4(192, 168, 7, 1, 4796));
        final int fromEntropyA = t.lookupOrAssign(v4(192, 168, 7, 1, 50000));
        final int fromEntropyB = t.lookupOrAssign(v4(192, 168, 7, 1, 50001));
        final int otherHost = t.lookupOrAssign(v4(192, 168, 7, 2, 50000));
        assertThat(PeerTable.isTransient(fromEntropyA)).isTrue();
        assertThat(fromEntropyA).isNotEqualTo(fromEntropyB);
        assertThat(t.hostOf(fromEntropyA)).isEqualTo(t.hostOf(endpoint)).isEqualTo(t.hostOf(fromEntropyB));
        assertThat(t.hostOf(otherHost)).isNotEqualTo(t.hostOf(endpoint));
        // Known senders keep their id.
        assertThat(t.lookupOrAssign(v4(192, 168, 7, 1, 50000))).isEqualTo(fromEntropyA);
    }

    @Test
    void aTransientSenderWhoseHostIsPinnedLaterSharesTheHost() {
        final PeerTable t = new PeerTable(16);
        final int early = t.lookupOrAssign(v4(10, 9, 9, 9, 51000));
        final int endpoint = t.peerId(v4(10, 9, 9, 9, 4796));
        assertThat(t.hostOf(early)).isEqualTo(t.hostOf(endpoint));
    }

    @Test
    void theTransientRingIsBoundedAndStaleIdsAreUnknown() {
        final PeerTable t = new PeerTable(16);
        final int pinned = t.peerId(v4(10, 0, 0, 1, 4796));
        final int first = t.lookupOrAssign(v4(10, 0, 0, 1, 40000));
        for (int i = 1; i < 10_000; i++) {
            // A flood of spoofed sources: every one a new address.
            t.lookupOrAssign(v4(172, 16, i >> 8, i & 0xFF, 1000 + (i % 50_000)));
        }
        assertThat(t.transientCount()).isEqualTo(16);
        assertThat(t.hostCount()).isLessThanOrEqualTo(16 + 1);
        assertThat(t.pinnedCount()).isEqualTo(1);
        // The first transient id was overwritten: it names nothing now, and no host.
        assertThat(t.address(first)).isNull();
        assertThat(t.hostOf(first)).isNotEqualTo(t.hostOf(pinned)).isNegative();
        assertThat(t.lookup(v4(10, 0, 0, 1, 40000))).isEqualTo(PeerTable.NO_PEER);
        // The pinned one survives the flood.
        assertThat(t.address(pinned)).isEqualTo(v4(10, 0, 0, 1, 4796));
        // The same slot reused gives a different id (generation).
        final int again = t.lookupOrAssign(v4(10, 0, 0, 1, 40000));
        assertThat(again).isNotEqualTo(first);
        assertThat(t.hostOf(again)).isEqualTo(t.hostOf(pinned));
    }

    @Test
    void pinningATransientIdGivesAPermanentIdForTheSameAddress() {
        final PeerTable t = new PeerTable(16);
        final InetSocketAddress client = v4(10, 1, 1, 1, 33333);
        final int transientId = t.lookupOrAssign(client);
        final int sibling = t.lookupOrAssign(v4(10, 1, 1, 1, 50000));
        final int host = t.hostOf(transientId);
        final int pinned = t.pin(transientId);
        assertThat(PeerTable.isTransient(pinned)).isFalse();
        assertThat(t.address(pinned)).isEqualTo(client);
        assertThat(t.address(transientId)).isNull();
        assertThat(t.lookupOrAssign(client)).isEqualTo(pinned);
        assertThat(t.hostOf(pinned)).isEqualTo(host).isEqualTo(t.hostOf(sibling));
        assertThat(t.pin(pinned)).isEqualTo(pinned);
        assertThatThrownBy(() -> t.pin(transientId)).isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("unknown or expired");
        // peerId() of an address known as transient pins it too.
        final int viaPeerId = t.peerId(v4(10, 1, 1, 1, 50000));
        assertThat(PeerTable.isTransient(viaPeerId)).isFalse();
        assertThat(t.address(sibling)).isNull();
    }

    @Test
    void hostIdsOfEvictedSendersAreRecycled() {
        final PeerTable t = new PeerTable(16);
        for (int i = 0; i < 1000; i++) {
            t.lookupOrAssign(v4(10, 2, i >> 8, i & 0xFF, 7000));
        }
        assertThat(t.hostCount()).isEqualTo(16);
        final int a = t.lookupOrAssign(v4(10, 3, 0, 1, 7000));
        final int b = t.lookupOrAssign(v4(10, 3, 0, 2, 7000));
        assertThat(t.hostOf(a)).isBetween(0, 16).isNotEqualTo(t.hostOf(b));
    }

    @Test
    void ipv6AddressesWork() {
        final PeerTable t = new PeerTable(16);
        final int endpoint = t.peerId(v6(1, 4796));
        final int entropy = t.lookupOrAssign(v6(1, 50000));
        final int other = t.lookupOrAssign(v6(2, 50000));
        assertThat(t.lookupOrAssign(v6(1, 50000))).isEqualTo(entropy);
        assertThat(t.hostOf(entropy)).isEqualTo(t.hostOf(endpoint));
        assertThat(t.hostOf(other)).isNotEqualTo(t.hostOf(endpoint));
        assertThat(t.address(endpoint)).isEqualTo(v6(1, 4796));
    }

    @Test
    void unknownIdsMatchNoHostAndBadAddressesAreRejected() {
        final PeerTable t = new PeerTable(16);
        final int endpoint = t.peerId(v4(10, 0, 0, 1, 4796));
        assertThat(t.hostOf(12345)).isNegative().isNotEqualTo(t.hostOf(endpoint)).isNotEqualTo(t.hostOf(12346));
        assertThat(t.address(12345)).isNull();
        assertThat(t.address(-1)).isNull();
        assertThatThrownBy(() -> t.peerId(InetSocketAddress.createUnresolved("example.invalid", 4796)))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("unresolved");
        assertThatThrownBy(() -> t.peerId(v4(10, 0, 0, 1, 0))).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new PeerTable(100)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void inet4AddressesAreReadWithoutSurprises() throws Exception {
        // The allocation-free path reads Inet4Address.hashCode(); it must equal the address bytes.
        final InetAddress ip = InetAddress.getByAddress(new byte[] {(byte) 203, 0, 113, 77});
        assertThat(PeerTable.ipv4((java.net.Inet4Address) ip)).isEqualTo((203 << 24) | (113 << 8) | 77);
    }

    @Test
    void pinsCountAndAReleasedIdIsRecycled() {
        final PeerTable t = new PeerTable(16);
        final InetSocketAddress client = v4(10, 5, 5, 5, 40000);
        final int id = t.pin(t.lookupOrAssign(client));
        assertThat(t.pin(id)).isEqualTo(id);
        t.unpin(id);
        assertThat(t.address(id)).isEqualTo(client);
        t.unpin(id);
        // No pins left: forgotten, and the next sender from that address is transient again.
        assertThat(t.address(id)).isNull();
        assertThat(t.pinnedCount()).isZero();
        assertThat(t.hostCount()).isZero();
        assertThat(PeerTable.isTransient(t.lookupOrAssign(client))).isTrue();
        assertThatThrownBy(() -> t.unpin(id)).isInstanceOf(IllegalArgumentException.class);
        // The id is handed out again.
        assertThat(t.peerId(v4(10, 5, 5, 6, 4796))).isEqualTo(id);
    }

    @Test
    void permanentIdsSurviveUnpinning() {
        final PeerTable t = new PeerTable(16);
        final InetSocketAddress server = v4(10, 6, 6, 6, 4796);
        final int id = t.peerId(server);
        assertThat(t.pin(id)).isEqualTo(id);
        t.unpin(id);
        assertThat(t.address(id)).isEqualTo(server);
        assertThatThrownBy(() -> t.unpin(id)).isInstanceOf(IllegalArgumentException.class);
        // A transient sender made permanent by peerId() holds no counted pin either.
        final int fromTransient = t.peerId(t.address(t.lookupOrAssign(v4(10, 6, 6, 7, 4796))));
        assertThatThrownBy(() -> t.unpin(fromTransient)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void addressBytesAreTheEighteenByteFormOfTheCookie() throws Exception {
        final PeerTable t = new PeerTable(16);
        final org.agrona.concurrent.UnsafeBuffer out = new org.agrona.concurrent.UnsafeBuffer(new byte[32]);
        final int v4Id = t.lookupOrAssign(v4(192, 0, 2, 1, 0x1234));
        assertThat(t.addressBytes(v4Id, out, 2)).isEqualTo(PeerTable.MAX_ADDRESS_BYTES);
        final byte[] bytes = new byte[18];
        out.getBytes(2, bytes);
        assertThat(bytes).containsExactly(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, (byte) 0xFF, (byte) 0xFF, (byte) 192, 0, 2, 1,
            0x12, 0x34);
        final InetSocketAddress six = v6(9, 4796);
        final int v6Id = t.peerId(six);
        assertThat(t.addressBytes(v6Id, out, 0)).isEqualTo(18);
        out.getBytes(0, bytes);
        assertThat(java.util.Arrays.copyOf(bytes, 16)).containsExactly(six.getAddress().getAddress());
        assertThat(bytes[16]).isEqualTo((byte) (4796 >> 8));
        assertThat(bytes[17]).isEqualTo((byte) (4796 & 0xFF));
        // Unknown ids write their own 4 bytes.
        assertThat(t.addressBytes(777, out, 0)).isEqualTo(4);
        assertThat(out.getInt(0, java.nio.ByteOrder.BIG_ENDIAN)).isEqualTo(777);
    }
}
