// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.conformance;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.metaroce.conformance.proxy.FaultProfile;
import org.metaroce.conformance.proxy.FaultProxy;
import org.metaroce.conformance.proxy.PacketMutator;
import org.metaroce.conformance.tester.LowerTester;
import org.metaroce.conformance.tester.Packet;

/** The fault proxy applies its seeded profile: reproducible loss, duplication, corruption, blackholes [CONF-018]. */
class FaultProxyTest {
    private static final InetSocketAddress ANY = new InetSocketAddress(InetAddress.getLoopbackAddress(), 0);

    /** Sends {@code n} numbered datagrams through a proxy and returns the numbers that arrived, in order. */
    private static List<Integer> throughProxy(final FaultProfile profile, final long seed, final int n) {
        try (LowerTester sink = new LowerTester(ANY, null);
             FaultProxy proxy = new FaultProxy(ANY, sink.localAddress(), profile, FaultProfile.NONE, seed,
                 PacketMutator.NONE);
             LowerTester source = new LowerTester(ANY, null)) {
            source.target(proxy.listenAddress());
            for (int i = 0; i < n; i++) {
                source.inject(new byte[] {(byte) (i >> 8), (byte) i, 0, 0, 0, 0, 0, 0});
                if (i % 50 == 0) {
                    LowerTester.sleep(1);
                }
            }
            final List<Integer> got = new ArrayList<>();
            for (final Packet p : sink.collect(p -> true, 300)) {
                got.add(((p.bytes()[0] & 0xFF) << 8) | (p.bytes()[1] & 0xFF));
            }
            return got;
        }
    }

    @Test
    void lossIsSeededAndReproducible() {
        final FaultProfile loss = FaultProfile.parse("loss=20");
        final List<Integer> a = throughProxy(loss, 99, 500);
        final List<Integer> b = throughProxy(loss, 99, 500);
        System.out.println("fault proxy seed 99: " + a.size() + " of 500 delivered");
        assertThat(a).isEqualTo(b);
        assertThat(a.size()).isBetween(330, 470);
        assertThat(throughProxy(loss, 100, 500)).isNotEqualTo(a);
    }

    @Test
    void burstsDuplicatesAndBlackholes() {
        assertThat(throughProxy(FaultProfile.parse("loss=100"), 1, 50)).isEmpty();
        assertThat(throughProxy(FaultProfile.parse("dup=100"), 1, 50)).hasSize(100);
        assertThat(throughProxy(FaultProfile.parse("blackhole=0-60000"), 1, 50)).isEmpty();
        final List<Integer> bursty = throughProxy(FaultProfile.parse("loss=5,burst=4"), 7, 400);
        assertThat(bursty.size()).isLessThan(400);
        // Every run of lost packets (except one cut short by the end) is a whole number of bursts.
        int expected = 0;
        for (final int got : bursty) {
            assertThat((got - expected) % 4).as("run of losses before " + got).isZero();
            expected = got + 1;
        }
        assertThat(throughProxy(FaultProfile.parse("rate=100"), 1, 300).size()).isLessThan(200);
    }

    @Test
    void corruptionStaysInItsByteRange() {
        try (LowerTester sink = new LowerTester(ANY, null);
             FaultProxy proxy = new FaultProxy(ANY, sink.localAddress(), FaultProfile.parse("corrupt=100@4-6"),
                 FaultProfile.NONE, 3, PacketMutator.NONE);
             LowerTester source = new LowerTester(ANY, null)) {
            source.target(proxy.listenAddress());
            for (int i = 0; i < 20; i++) {
                source.inject(new byte[16]);
            }
            final List<Packet> got = sink.collect(p -> true, 200);
            assertThat(got).hasSize(20);
            for (final Packet p : got) {
                int changed = 0;
                for (int i = 0; i < 16; i++) {
                    if (p.bytes()[i] != 0) {
                        assertThat(i).isBetween(4, 5);
                        changed++;
                    }
                }
                assertThat(changed).isEqualTo(1);
            }
        }
    }

    @Test
    void badProfilesAreRejectedByName() {
        assertThatThrownBy(() -> FaultProfile.parse("loss=150")).hasMessageContaining("loss");
        assertThatThrownBy(() -> FaultProfile.parse("wobble=1")).hasMessageContaining("wobble");
        assertThatThrownBy(() -> FaultProfile.parse("corrupt=1@x-y")).hasMessageContaining("corrupt=1@x-y");
        assertThatThrownBy(() -> FaultProfile.parse("blackhole=5-1")).hasMessageContaining("blackhole");
    }
}
