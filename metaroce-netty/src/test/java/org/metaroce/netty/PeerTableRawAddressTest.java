// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.HashMap;
import java.util.Map;
import java.util.SplittableRandom;

import org.junit.jupiter.api.Test;

/**
 * {@link PeerTable} lookups from raw addresses (what a native transport reports): the same ids as
 * the {@link InetSocketAddress} forms, an address object only for a new sender, no allocation for
 * a known one, and the raw IPv6 index kept in step when transient senders are evicted.
 */
class PeerTableRawAddressTest {
    private static long high(final InetAddress ip) {
        final byte[] b = ip.getAddress();
        long v = 0;
        for (int i = 0; i < 8; i++) {
            v = v << 8 | b[i] & 0xFF;
        }
        return v;
    }

    private static long low(final InetAddress ip) {
        final byte[] b = ip.getAddress();
        long v = 0;
        for (int i = 8; i < 16; i++) {
            v = v << 8 | b[i] & 0xFF;
        }
        return v;
    }

    @Test
    void rawIpv4FindsThePinnedIdAndANewSenderGetsItsAddress() throws Exception {
        final PeerTable t = new PeerTable();
        final InetSocketAddress server = new InetSocketAddress(InetAddress.getByName("192.0.2.10"), 4796);
        final int pinned = t.peerId(server);
        assertThat(t.lookupOrAssign(0xC000_020A, 4796)).isEqualTo(pinned);

        final int fresh = t.lookupOrAssign(0xC000_020A, 50_000);
        assertThat(PeerTable.isTransient(fresh)).isTrue();
        assertThat(t.address(fresh)).isEqualTo(new InetSocketAddress(InetAddress.getByName("192.0.2.10"), 50_000));
        assertThat(t.hostOf(fresh)).as("same host as the pinned id").isEqualTo(t.hostOf(pinned));
        assertThat(t.lookupOrAssign(new InetSocketAddress(InetAddress.getByName("192.0.2.10"), 50_000)))
            .isEqualTo(fresh);
    }

    @Test
    void rawIpv6FindsTheIdOfTheAddressObjectAndTheMappedFormIsIpv4() throws Exception {
        final PeerTable t = new PeerTable();
        final InetAddress ip = InetAddress.getByName("2001:db8::7");
        final int byObject = t.lookupOrAssign(new InetSocketAddress(ip, 7000));
        assertThat(t.lookupOrAssign(high(ip), low(ip), 7000)).isEqualTo(byObject);

        final int byRaw = t.lookupOrAssign(high(ip), low(ip), 7001);
        assertThat(byRaw).isNotEqualTo(byObject);
        assertThat(t.address(byRaw)).isEqualTo(new InetSocketAddress(ip, 7001));
        assertThat(t.lookupOrAssign(new InetSocketAddress(ip, 7001))).isEqualTo(byRaw);

        final int v4 = t.lookupOrAssign(new InetSocketAddress(InetAddress.getByName("10.1.2.3"), 9000));
        assertThat(t.lookupOrAssign(0L, 0xFFFF_0A01_0203L, 9000)).isEqualTo(v4);
    }

    @Test
    void anEvictedIpv6SenderIsNewAgainInRawLookups() throws Exception {
        final PeerTable t = new PeerTable(16);
        final InetAddress ip = InetAddress.getByName("2001:db8::1");
        final int first = t.lookupOrAssign(high(ip), low(ip), 1000);
        for (int port = 1001; port <= 1016; port++) {
            t.lookupOrAssign(high(ip), low(ip), port); // 16 more senders overwrite the ring once
        }
        assertThat(t.address(first)).as("evicted").isNull();
        final int again = t.lookupOrAssign(high(ip), low(ip), 1000);
        assertThat(again).isNotEqualTo(first);
        assertThat(t.address(again)).isEqualTo(new InetSocketAddress(ip, 1000));
        assertThat(t.transientCount()).isEqualTo(16);
    }

    @Test
    void knownSendersAreFoundWithoutAllocating() throws Exception {
        final PeerTable t = new PeerTable();
        final InetAddress v6 = InetAddress.getByName("2001:db8::42");
        final long h = high(v6);
        final long l = low(v6);
        for (int port = 0; port < 8; port++) {
            t.lookupOrAssign(0x0A00_0001, 50_000 + port);
            t.lookupOrAssign(h, l, 50_000 + port);
        }
        final com.sun.management.ThreadMXBean threads =
            (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        final long tid = Thread.currentThread().getId();
        long sum = 0;
        final long before = threads.getThreadAllocatedBytes(tid);
        for (int i = 0; i < 200_000; i++) {
            sum += t.lookupOrAssign(0x0A00_0001, 50_000 + (i & 7));
            sum += t.lookupOrAssign(h, l, 50_000 + (i & 7));
        }
        final long allocated = threads.getThreadAllocatedBytes(tid) - before;
        assertThat(sum).isNotZero();
        // One address object per lookup would be 400 000 objects (well over 9 MB).
        assertThat(allocated).as("bytes allocated by 400 000 lookups").isLessThan(10_000);
    }

    @Test
    void theRawIpv6IndexAgreesWithAMapThroughInsertsAndRemovals() {
        final Ipv6PeerIndex index = new Ipv6PeerIndex();
        final Map<String, Integer> reference = new HashMap<>();
        final SplittableRandom random = new SplittableRandom(42);
        for (int step = 0; step < 50_000; step++) {
            // A small key space, so that inserts, replacements and removals collide often.
            final long high = random.nextInt(4);
            final long low = random.nextInt(64);
            final int port = random.nextInt(4);
            final String key = high + "/" + low + "/" + port;
            if (random.nextInt(3) == 0) {
                index.remove(high, low, port);
                reference.remove(key);
            } else {
                final int id = random.nextInt(1 << 20);
                index.put(high, low, port, id);
                reference.put(key, id);
            }
            if (step % 997 == 0) {
                for (long hi = 0; hi < 4; hi++) {
                    for (long lo = 0; lo < 64; lo++) {
                        for (int p = 0; p < 4; p++) {
                            assertThat(index.get(hi, lo, p, -1)).as(hi + "/" + lo + "/" + p)
                                .isEqualTo(reference.getOrDefault(hi + "/" + lo + "/" + p, -1));
                        }
                    }
                }
            }
        }
        assertThat(index.size()).isEqualTo(reference.size());
    }
}
