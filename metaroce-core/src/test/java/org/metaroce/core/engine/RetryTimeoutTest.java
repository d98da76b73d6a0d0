// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.engine;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.metaroce.core.testwire.LinkProfile;
import org.metaroce.core.testwire.PacketFilter;
import org.metaroce.core.testwire.PacketMatcher;
import org.metaroce.core.verbs.QpAttributes;
import org.metaroce.core.verbs.QpState;
import org.metaroce.core.verbs.SendFlags;
import org.metaroce.core.verbs.SendRequest;
import org.metaroce.core.verbs.WcStatus;
import org.metaroce.core.verbs.WrOpcode;

/**
 * RETRY_TIMEOUT, the retry budget as a time [REL-060]: a stalled or black-holed peer is waited
 * for (a GC pause, a busy host, a link flap), and a dead one is given up on within the budget
 * plus one RTO_MAX, whichever of the retransmission timer [REL-029], the transmission limit
 * [REL-030] or keepalive [CM-030] notices first. Virtual time; each fixture prints its seed.
 */
class RetryTimeoutTest {
    private static final long MS = 1_000_000L;
    private static final long S = 1_000_000_000L;
    private static final int MESSAGES = 14;
    private static final int LENGTH = 64 * 1024;

    /**
     * Both directions go dark for 10 s in the middle of a 0.9 MB transfer (as a peer stopped with
     * SIGSTOP would look): with the default budget of 15 s, the transfer completes, every byte
     * arrives, neither QP leaves RTS, and the retransmission timer fired more than RETRY_CNT times
     * (which alone, as in verbs, would have ended the connection within a second).
     */
    @Test
    void aTenSecondBlackholeIsRiddenOutWithTheDefaultRetryTimeout() {
        final TwoNodeFixture f = new TwoNodeFixture(7101).connect(1024);
        final long start = f.wire.now() + 300_000;
        f.wire.linkBoth(f.a.node, f.b.node, LinkProfile.builder().rateBitsPerSecond(10_000_000_000L)
            .blackhole(start, start + 10 * S).build());
        fill(f);
        postWrites(f);
        assertThat(f.wire.runUntil(() -> {
            f.a.drain();
            return f.a.sendCompletions.size() == MESSAGES;
        }, 30 * S)).isTrue();
        final String story = "A " + f.a.endpoint.counters() + " B " + f.b.endpoint.counters();
        assertThat(f.wire.stats().droppedBlackhole()).as(story).isPositive();
        assertThat(f.a.sendCompletions).as(story).extracting(wc -> wc.status()).containsOnly(WcStatus.SUCCESS);
        assertThat(f.a.endpoint.counters().get(EndpointCounter.TIMEOUTS)).as(story).isGreaterThan(7);
        assertThat(f.a.qp.state()).isEqualTo(QpState.RTS);
        assertThat(f.b.qp.state()).isEqualTo(QpState.RTS);
        assertThat(f.a.endpoint.counters().get(EndpointCounter.PEERS_DEAD)
            + f.b.endpoint.counters().get(EndpointCounter.PEERS_DEAD)).isZero();
        for (int i = 0; i < MESSAGES * LENGTH; i++) {
            if (f.a.mr.buffer().getByte(i) != f.b.mr.buffer().getByte(i)) {
                throw new AssertionError("byte " + i + " differs; " + story);
            }
        }
    }

    /** A peer that never answers again: RETRY_EXC_ERR between 15 s and 15 s + RTO_MAX after the last progress. */
    @Test
    void aPeerSilentForLongerThanTheDefaultBudgetFailsWithinItPlusOneSecond() {
        final TwoNodeFixture f = new TwoNodeFixture(7102).connect(1024);
        assertThat(f.a.qp.retryTimeoutNs()).isEqualTo(EndpointConfig.DEFAULT_RETRY_TIMEOUT_NS);
        final long failedAfter = silenceAndFail(f, 20 * S);
        assertThat(failedAfter).isBetween(EndpointConfig.DEFAULT_RETRY_TIMEOUT_NS,
            EndpointConfig.DEFAULT_RETRY_TIMEOUT_NS + S);
    }

    /** The RETRY_TIMEOUT attribute of one queue pair overrides the endpoint's, in RTS too. */
    @Test
    void aQueuePairsOwnRetryTimeoutDecides() {
        final TwoNodeFixture f = new TwoNodeFixture(7103).connect(1024);
        f.a.qp.modify(QpState.RTS, new QpAttributes().retryTimeoutNs(3 * S));
        final long failedAfter = silenceAndFail(f, 10 * S);
        assertThat(failedAfter).isBetween(3 * S, 4 * S);
    }

    /**
     * An idle queue pair whose peer falls silent keeps probing every KEEPALIVE_INTERVAL past the
     * five probes of CM-030 and declares the peer dead once RETRY_TIMEOUT has passed since it last
     * heard from it, not after 2 s [CM-030], [REL-060].
     */
    @Test
    void keepaliveWaitsOutTheRetryTimeoutBeforeDeclaringThePeerDead() {
        final TwoNodeFixture f = new TwoNodeFixture(7104).connect(1024);
        f.wire.runFor(1_000);
        f.wire.filter(PacketFilter.dropMatching((from, to, buf, off, len) -> true));
        final long silentFrom = f.wire.now();
        f.wire.runFor(10 * S);
        assertThat(f.a.qp.state()).as("still waiting after 10 s of silence").isEqualTo(QpState.RTS);
        assertThat(f.wire.runUntil(() -> f.a.qp.state() == QpState.ERR, 10 * S)).isTrue();
        final long deadAfter = f.wire.now() - silentFrom;
        final EndpointConfig config = new EndpointConfig();
        // (The last packet heard left just before the filter went on.)
        assertThat(deadAfter).isBetween(EndpointConfig.DEFAULT_RETRY_TIMEOUT_NS - MS,
            EndpointConfig.DEFAULT_RETRY_TIMEOUT_NS + config.keepaliveIntervalNs() + MS);
        // Idle 1 s, then one probe per interval until the budget is spent.
        assertThat(f.a.endpoint.counters().get(EndpointCounter.KEEPALIVES_OUT))
            .isGreaterThan(config.keepaliveProbes() * 10L);
        assertThat(f.a.endpoint.counters().get(EndpointCounter.PEERS_DEAD)).isEqualTo(1);
        assertThat(f.a.qp.isPeerDead()).isTrue();
    }

    /**
     * Drops everything A sends from now on, posts one WRITE and runs until it completes.
     *
     * @return time from the post to the RETRY_EXC_ERR completion
     */
    private static long silenceAndFail(final TwoNodeFixture f, final long limitNs) {
        f.wire.filter(PacketFilter.dropMatching(PacketMatcher.from(f.a.node)));
        final long posted = f.wire.now();
        f.a.qp.postSend(new SendRequest(1).wrId(1).opcode(WrOpcode.RDMA_WRITE).sendFlags(SendFlags.SIGNALED)
            .addSge(f.a.address(0), 2048, f.a.mr.lkey()).remoteAddr(f.b.address(0)).rkey(f.b.mr.rkey()));
        assertThat(f.wire.runUntil(() -> {
            f.a.drain();
            return !f.a.sendCompletions.isEmpty();
        }, limitNs)).isTrue();
        final long failedAfter = f.wire.now() - posted;
        final String story = "after " + failedAfter + " ns; A " + f.a.endpoint.counters();
        assertThat(f.a.sendCompletions.get(0).status()).as(story).isEqualTo(WcStatus.RETRY_EXC_ERR);
        assertThat(f.a.qp.state()).as(story).isEqualTo(QpState.ERR);
        return failedAfter;
    }

    private static void fill(final TwoNodeFixture f) {
        for (int i = 0; i < MESSAGES * LENGTH; i++) {
            f.a.mr.buffer().putByte(i, (byte) (i * 31 + 7));
        }
    }

    private static void postWrites(final TwoNodeFixture f) {
        for (int i = 0; i < MESSAGES; i++) {
            assertThat(f.a.qp.postSend(new SendRequest(1).wrId(i).opcode(WrOpcode.RDMA_WRITE)
                .sendFlags(SendFlags.SIGNALED).addSge(f.a.address((long) i * LENGTH), LENGTH, f.a.mr.lkey())
                .remoteAddr(f.b.address((long) i * LENGTH)).rkey(f.b.mr.rkey())))
                .isEqualTo(org.metaroce.core.verbs.PostStatus.OK);
        }
    }
}
