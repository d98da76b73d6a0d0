// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.metaroce.core.engine.Scoreboard.IN_FLIGHT;
import static org.metaroce.core.engine.Scoreboard.KIND_DATA;
import static org.metaroce.core.engine.Scoreboard.KIND_READ;
import static org.metaroce.core.engine.Scoreboard.LOST;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.metaroce.core.testwire.LinkProfile;
import org.metaroce.core.testwire.PacketFilter;
import org.metaroce.core.testwire.PacketMatcher;
import org.metaroce.core.verbs.SendFlags;
import org.metaroce.core.verbs.SendRequest;
import org.metaroce.core.verbs.WcStatus;
import org.metaroce.core.verbs.WrOpcode;
import org.metaroce.core.wire.Opcode;

/**
 * The asking tail probe [REL-069]: on a queue pair that has lost nothing lately, a probe that no new
 * packet can be is a KEEPALIVE with ACK_REQ, and its answer tells a lost tail (resent once) from a
 * peer that only paused (nothing resent). Before, each such probe resent the newest packet, which a
 * paused peer then received twice: 1–4 needless retransmissions per loss-free run of write_bw,
 * send_bw and read_bw on real sockets (issue 14).
 */
class AskingProbeTest {
    /** perftest's QP timeout: the RTO and its floor, so that only probes can act within a pause. */
    private static final long QP_TIMEOUT_NS = 67_108_864L;
    private static final int LENGTH = 16 * 1024;

    // ------------------------------------------------------------------ the answer on its own

    private final Scoreboard scoreboard = new Scoreboard(256);
    private final List<Integer> lost = new ArrayList<>();
    private final AskingProbe probe = new AskingProbe(scoreboard, (nowNs, psn) -> lost.add(psn));

    /**
     * Assigns and sends PSNs [from, from + n) at {@code sentNs}: n WRITE packets, or the n response
     * slots of one READ (one work request, one request transmission).
     */
    private void send(final int from, final int n, final byte kind, final long sentNs) {
        for (int i = 0; i < n; i++) {
            final boolean data = kind == KIND_DATA;
            scoreboard.assign(from + i, data ? from + i : from, i, kind);
            scoreboard.sent(from + i, sentNs, data ? from + i : from, 0, false);
        }
    }

    @Test
    void onlyAnAnswerToTheOpenQuestionCounts() {
        probe.sent(5_000, 10, 1_000);
        assertThat(probe.answeredBy(11, 5_000)).as("another trigger").isFalse();
        assertThat(probe.answeredBy(10, 5_001)).as("another echo").isFalse();
        assertThat(probe.answeredBy(10, 5_000)).isTrue();
        assertThat(probe.answeredBy(10, 5_000)).as("answered once").isFalse();
        assertThat(probe.tailSentNs()).isEqualTo(1_000);
        // A second question of the same series keeps the first one's tail; after an answer it starts anew.
        probe.sent(6_000, 10, 1_000);
        probe.sent(7_000, 10, 6_000);
        assertThat(probe.answeredBy(10, 7_000)).isTrue();
        assertThat(probe.tailSentNs()).isEqualTo(1_000);
        probe.reset();
        assertThat(probe.answeredBy(10, 7_000)).as("reset closes the question").isFalse();
    }

    /**
     * What the answer lacks is lost — but only what it could have reported (within the SACK bitmap's
     * 64 PSNs after the Cumulative PSN) and what cannot still be on its way (sent at least a reorder
     * window before the question).
     */
    @Test
    void theAnswerDeclaresLostOnlyWhatItCouldHaveReported() {
        send(0, 100, KIND_DATA, 1_000);
        send(100, 2, KIND_DATA, 9_500);
        probe.sent(10_000, 102, 9_500);
        assertThat(probe.answeredBy(102, 10_000)).isTrue();
        // Cumulative 10: PSNs 0..9 were delivered by the ACK itself; SACK bits for 11..20.
        for (int p = 0; p < 10; p++) {
            scoreboard.delivered(p, 11_000);
        }
        final long bitmap = (1L << 10) - 1;
        for (int p = 11; p <= 20; p++) {
            scoreboard.delivered(p, 11_000);
        }
        final int n = probe.declareLosses(11_000, 0, 102, 10, bitmap, 1_000);
        // 10 and 21..74 (the bitmap reaches cumulative + 64 = 74); not 75..99, which the answer
        // could not report, nor 100..101, sent within the reorder window before the question.
        final List<Integer> expected = new ArrayList<>();
        expected.add(10);
        for (int p = 21; p <= 74; p++) {
            expected.add(p);
        }
        assertThat(lost).containsExactlyElementsOf(expected);
        assertThat(n).isEqualTo(expected.size());
        assertThat(scoreboard.lossCause(10)).isEqualTo(EndpointCounter.RETRANSMITS_TAIL_PROBE);
        assertThat(scoreboard.state(75)).isEqualTo(IN_FLIGHT);
        assertThat(scoreboard.state(100)).isEqualTo(IN_FLIGHT);
    }

    /** A READ slot the answer reports had its request delivered: late, not lost [REL-017]; one it does not is requested again whole. */
    @Test
    void aReadWhoseRequestTheAnswerReportsIsLeftToItsResponses() {
        send(0, 4, KIND_READ, 1_000);
        // Slot PSNs 4..7 are the second READ (one request transmission): requested again whole.
        send(4, 4, KIND_READ, 1_000);
        probe.sent(10_000, 8, 1_000);
        assertThat(probe.answeredBy(8, 10_000)).isTrue();
        // Cumulative 4: the first READ's request arrived, the second's did not.
        assertThat(probe.declareLosses(11_000, 0, 8, 4, 0, 1_000)).isEqualTo(1);
        assertThat(lost).containsExactly(4);
        for (int p = 0; p < 4; p++) {
            assertThat(scoreboard.state(p)).isEqualTo(IN_FLIGHT);
        }
        for (int p = 4; p < 8; p++) {
            assertThat(scoreboard.state(p)).isEqualTo(LOST);
        }
    }

    // ------------------------------------------------------------------ end to end, in memory

    /**
     * A peer that pauses while a WRITE is outstanding and nothing else waits to be sent: the probes
     * ask, the answer after the pause shows everything arrived, and nothing is resent. Fails before
     * REL-069, where the first probe resent the WRITE's last packet.
     */
    @Test
    void aPausedPeerIsAskedAndNothingIsResent() {
        final TwoNodeFixture f = fixture(8401);
        write(f, 0);
        assertThat(f.runUntilCompletions(1, 0)).isTrue();
        pauseResponderSoon(f);
        write(f, 1);
        assertThat(f.runUntilCompletions(2, 0)).isTrue();
        final String story = assertAskedAndNothingResent(f);
        assertThat(f.a.endpoint.counters().get(EndpointCounter.TIMEOUTS)).as(story).isZero();
    }

    /**
     * The same question when the WRITE's last packet was lost: the answer lacks it, and it is resent
     * once, long before the retransmission timer (67 ms here).
     */
    @Test
    void aLostTailIsFoundByTheAnswerAndResentOnce() {
        final TwoNodeFixture f = fixture(8402);
        write(f, 0);
        assertThat(f.runUntilCompletions(1, 0)).isTrue();
        // The fourth WRITE packet from now: the second WRITE's last.
        f.wire.filter(PacketFilter.dropNth(4, PacketMatcher.opcode(Opcode.WRITE.value())));
        final String story = assertRepairedAfterOneQuestion(f, () -> write(f, 1));
        assertThat(f.a.endpoint.counters().get(EndpointCounter.RETRANSMITS_TAIL_PROBE)).as(story).isEqualTo(1);
        assertThat(f.a.endpoint.counters().retransmits()).as(story).isEqualTo(1);
        assertSameBytes(f, 2, 0);
    }

    /**
     * READ responses held up by the responder's pause: the answer shows the request arrived, so the
     * READ is not requested again (before REL-069 the probe re-requested it and every response went
     * out twice).
     */
    @Test
    void aReadWhoseResponsesArePausedIsNotRequestedAgain() {
        final TwoNodeFixture f = fixture(8403);
        read(f, 0);
        assertThat(f.runUntilCompletions(1, 0)).isTrue();
        pauseResponderSoon(f);
        read(f, 1);
        assertThat(f.runUntilCompletions(2, 0)).isTrue();
        final String story = assertAskedAndNothingResent(f);
        assertThat(f.b.endpoint.counters().get(EndpointCounter.READ_RESPONSES_OUT)).as(story)
            .isEqualTo(2 * LENGTH / 4096);
        assertSameBytes(f, 0, 2);
    }

    /**
     * Every response of a READ lost: the answer shows the request arrived, so the question is not
     * asked again in that episode and the next probe requests the READ again, long before the
     * retransmission timer (67 ms here) [REL-069, REL-026].
     */
    @Test
    void aReadWhoseResponsesWereAllLostIsRequestedAgainByTheNextProbe() {
        final TwoNodeFixture f = fixture(8405);
        read(f, 0);
        assertThat(f.runUntilCompletions(1, 0)).isTrue();
        f.wire.filter(PacketFilter.dropFirst(4, PacketMatcher.opcode(Opcode.READ_RESPONSE.value())));
        final String story = assertRepairedAfterOneQuestion(f, () -> read(f, 1));
        assertThat(f.a.endpoint.counters().get(EndpointCounter.RETRANSMITS_TAIL_PROBE)).as(story).isPositive();
        assertSameBytes(f, 0, 2);
    }

    /**
     * A queue pair that has just repaired a loss probes a pause with a copy, as before REL-069: where
     * packets are lost, the copy repairs a lost tail a round trip sooner.
     */
    @Test
    void aQueuePairThatRepairedALossLatelyResendsInstead() {
        final TwoNodeFixture f = fixture(8404);
        write(f, 0);
        assertThat(f.runUntilCompletions(1, 0)).isTrue();
        // The second WRITE loses its second packet (found by time-based detection, not a probe).
        f.wire.filter(PacketFilter.dropNth(2, PacketMatcher.opcode(Opcode.WRITE.value())));
        write(f, 1);
        assertThat(f.runUntilCompletions(2, 0)).isTrue();
        f.wire.filter(null);
        assertThat(f.a.endpoint.counters().get(EndpointCounter.RETRANSMITS_LOSS_DETECTED)).isEqualTo(1);
        pauseResponderSoon(f);
        write(f, 2);
        assertThat(f.runUntilCompletions(3, 0)).isTrue();
        final String story = story(f);
        System.out.println(story);
        assertThat(f.a.sendCompletions).as(story).extracting(wc -> wc.status()).containsOnly(WcStatus.SUCCESS);
        assertThat(f.a.endpoint.counters().get(EndpointCounter.TAIL_PROBES_ASKED)).as(story).isZero();
        assertThat(f.a.endpoint.counters().get(EndpointCounter.RETRANSMITS_TAIL_PROBE)).as(story).isPositive();
    }

    /** The responder's ACKs and responses stop for 3 ms from 2 µs from now; returns when the pause has begun. */
    private static void pauseResponderSoon(final TwoNodeFixture f) {
        final long pauseStart = f.wire.now() + 2_000;
        f.wire.link(f.b.node, f.a.node, LinkProfile.builder().pause(pauseStart, pauseStart + 3_000_000).build());
        f.wire.runUntil(pauseStart);
    }

    /** Every work request succeeded, the requester asked at least once and resent nothing; returns the story. */
    private static String assertAskedAndNothingResent(final TwoNodeFixture f) {
        final String story = story(f);
        System.out.println(story);
        assertThat(f.a.sendCompletions).as(story).extracting(wc -> wc.status()).containsOnly(WcStatus.SUCCESS);
        assertThat(f.a.endpoint.counters().get(EndpointCounter.TAIL_PROBES_ASKED)).as(story).isPositive();
        assertThat(f.a.endpoint.counters().retransmits()).as(story).isZero();
        return story;
    }

    /**
     * Posts the second operation, which meets a loss, and runs it to completion: it succeeded after
     * one question, with no RTO expiry and in under a tenth of the RTO; returns the story.
     */
    private static String assertRepairedAfterOneQuestion(final TwoNodeFixture f, final Runnable secondOperation) {
        final long start = f.wire.now();
        secondOperation.run();
        assertThat(f.runUntilCompletions(2, 0)).isTrue();
        final long took = f.wire.now() - start;
        final String story = "took " + took + " ns; " + story(f);
        System.out.println(story);
        assertThat(f.a.sendCompletions).as(story).extracting(wc -> wc.status()).containsOnly(WcStatus.SUCCESS);
        assertThat(f.a.endpoint.counters().get(EndpointCounter.TAIL_PROBES_ASKED)).as(story).isEqualTo(1);
        assertThat(f.a.endpoint.counters().get(EndpointCounter.TIMEOUTS)).as(story).isZero();
        assertThat(took).as(story).isLessThan(QP_TIMEOUT_NS / 10);
        return story;
    }

    private static TwoNodeFixture fixture(final long seed) {
        final TwoNodeFixture f = new TwoNodeFixture(seed, LinkProfile.perfect(),
            new EndpointConfig().minRtoNs(QP_TIMEOUT_NS), QueuePairCapabilities.defaults(), 4096)
            .connect(4096, 7, 7, QP_TIMEOUT_NS);
        for (int i = 0; i < 4 * LENGTH; i++) {
            f.a.mr.buffer().putByte(i, (byte) (i * 7 + 3));
            f.b.mr.buffer().putByte(4 * LENGTH + i, (byte) (i * 13 + 5));
        }
        return f;
    }

    /** WRITE {@code i}: A's bytes [i·LENGTH, +LENGTH) to the same place at B (4 packets). */
    private static void write(final TwoNodeFixture f, final int i) {
        final long offset = (long) i * LENGTH;
        f.a.qp.postSend(new SendRequest(1).wrId(i).opcode(WrOpcode.RDMA_WRITE).sendFlags(SendFlags.SIGNALED)
            .addSge(f.a.address(offset), LENGTH, f.a.mr.lkey()).remoteAddr(f.b.address(offset)).rkey(f.b.mr.rkey()));
    }

    /** READ {@code i}: B's bytes [(4 + i)·LENGTH, +LENGTH) to the same place at A (4 responses). */
    private static void read(final TwoNodeFixture f, final int i) {
        final long offset = (long) (4 + i) * LENGTH;
        f.a.qp.postSend(new SendRequest(1).wrId(i).opcode(WrOpcode.RDMA_READ).sendFlags(SendFlags.SIGNALED)
            .addSge(f.a.address(offset), LENGTH, f.a.mr.lkey()).remoteAddr(f.b.address(offset)).rkey(f.b.mr.rkey()));
    }

    /** The first {@code writes} WRITEs' and {@code reads} READs' bytes are the same at both ends. */
    private static void assertSameBytes(final TwoNodeFixture f, final int writes, final int reads) {
        for (int i = 0; i < writes * LENGTH; i++) {
            assertByte(f, i);
        }
        for (int i = 4 * LENGTH; i < (4 + reads) * LENGTH; i++) {
            assertByte(f, i);
        }
    }

    private static void assertByte(final TwoNodeFixture f, final int i) {
        if (f.a.mr.buffer().getByte(i) != f.b.mr.buffer().getByte(i)) {
            throw new AssertionError("byte " + i + " differs; " + story(f));
        }
    }

    private static String story(final TwoNodeFixture f) {
        return "A " + f.a.endpoint.counters() + " B " + f.b.endpoint.counters();
    }
}
