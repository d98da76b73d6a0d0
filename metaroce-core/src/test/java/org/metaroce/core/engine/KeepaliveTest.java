// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.engine;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.metaroce.core.testwire.PacketFilter;
import org.metaroce.core.verbs.QpState;
import org.metaroce.core.wire.Opcode;

/** Keepalive of idle QPs [CM-027], [CM-028], [CM-030]. */
class KeepaliveTest {
    @Test
    void idleButAlivePeersKeepEachOtherAlive() {
        final TwoNodeFixture f = new TwoNodeFixture(6001).connect(1024);
        f.wire.runFor(10_000_000_000L);
        assertThat(f.a.qp.state()).isEqualTo(QpState.RTS);
        assertThat(f.b.qp.state()).isEqualTo(QpState.RTS);
        assertThat(f.a.endpoint.counters().get(EndpointCounter.KEEPALIVES_OUT)).isPositive();
        assertThat(f.a.endpoint.counters().get(EndpointCounter.PEERS_DEAD)).isZero();
        assertThat(f.wire.trace().count(e -> e.opcode() == Opcode.KEEPALIVE.value())).isPositive();
    }

    @Test
    void aSilentPeerIsDeclaredDeadAfterFiveProbes() {
        // [CM-038] the fixture connects the QPs by hand, without the CM: keepalive applies all the same.
        final TwoNodeFixture f = TwoNodeFixture.countingRetriesOnly(6002).connect(1024);
        f.wire.runFor(1_000);
        f.wire.filter(PacketFilter.dropMatching((from, to, buf, off, len) -> true));
        final long start = f.wire.now();
        assertThat(f.wire.runUntil(() -> f.a.qp.state() == QpState.ERR, 5_000_000_000L)).isTrue();
        final long deadAfter = f.wire.now() - start;
        // Idle 1 s, then probes every 200 ms; dead 2 s after the last packet heard.
        assertThat(deadAfter).isBetween(1_990_000_000L, 2_000_010_000L);
        assertThat(f.a.endpoint.counters().get(EndpointCounter.KEEPALIVES_OUT)).isEqualTo(5);
        assertThat(f.a.endpoint.counters().get(EndpointCounter.PEERS_DEAD)).isEqualTo(1);
        assertThat(f.a.qp.isPeerDead()).isTrue();
        // The first event is the RTS modify's CC_FALLBACK (default DEFAULT without ECN runs FIXED [CC-034]).
        assertThat(f.a.endpoint.asyncEvents().peekType()).isEqualTo(AsyncEventType.CC_FALLBACK);
        f.a.endpoint.asyncEvents().remove();
        assertThat(f.a.endpoint.asyncEvents().peekType()).isEqualTo(AsyncEventType.QP_FATAL);
    }

    @Test
    void aPollAfterALongStallProbesBeforeDeclaringThePeerDead() {
        // CM-030: dead only after KEEPALIVE_PROBES unanswered probes. An endpoint whose driver was
        // not scheduled for 3 s must not declare a live peer dead at its first poll.
        final TwoNodeFixture f = TwoNodeFixture.countingRetriesOnly(6003).connect(1024);
        f.wire.runFor(1_000);
        final org.metaroce.core.testwire.PacketFilterFreeSink sink = new org.metaroce.core.testwire.PacketFilterFreeSink();
        final long later = f.wire.now() + 3_000_000_000L;
        f.a.endpoint.poll(later, sink);
        assertThat(f.a.qp.state()).isEqualTo(QpState.RTS);
        assertThat(f.a.endpoint.counters().get(EndpointCounter.KEEPALIVES_OUT)).isEqualTo(1);
        // Polled again at once: the next probe waits an interval, and nobody is declared dead.
        f.a.endpoint.poll(later + 1_000, sink);
        assertThat(f.a.endpoint.counters().get(EndpointCounter.KEEPALIVES_OUT)).isEqualTo(1);
        // Four more probes an interval apart, all unanswered (the sink discards them): dead one
        // interval after the fifth.
        for (int i = 1; i <= 4; i++) {
            f.a.endpoint.poll(later + i * 200_000_000L, sink);
        }
        assertThat(f.a.endpoint.counters().get(EndpointCounter.KEEPALIVES_OUT)).isEqualTo(5);
        assertThat(f.a.qp.state()).isEqualTo(QpState.RTS);
        f.a.endpoint.poll(later + 5 * 200_000_000L, sink);
        assertThat(f.a.qp.state()).isEqualTo(QpState.ERR);
        assertThat(f.a.endpoint.counters().get(EndpointCounter.PEERS_DEAD)).isEqualTo(1);
    }
}
