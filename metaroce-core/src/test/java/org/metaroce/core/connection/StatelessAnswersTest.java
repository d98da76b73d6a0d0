// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.connection;

import static org.assertj.core.api.Assertions.assertThat;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.metaroce.core.SeededRandomSource;
import org.metaroce.core.engine.PeerDirectory;
import org.metaroce.core.engine.TransmitSink;
import org.metaroce.core.wire.BaseHeader;
import org.metaroce.core.wire.Opcode;

/** The manager's header-only answers on their own: rate limit, bounded queue, emission [CM-010, SEC-005, SEC-008]. */
class StatelessAnswersTest {
    private static final long SEED = 5;
    private static final int PORT = 4796;
    private static final long MS = 1_000_000L;

    private final CmCounters counters = new CmCounters();
    private final CmPacketWriter writer = new CmPacketWriter();

    private StatelessAnswers answers(final CmConfig config) {
        final CookieJar cookies = new CookieJar(new SeededRandomSource(SEED), config.secretRotationNs(),
            config.cookieLifetimeSeconds());
        cookies.maintain(0); // the manager does so before every answer: the first secret
        return new StatelessAnswers(config, writer, cookies, PeerDirectory.IDENTITY, counters);
    }

    private static DirectBuffer request(final long transactionId) {
        return Packets.request(77, 20_000, transactionId, null, null);
    }

    @Test
    void answersOneSourceAtItsRateAndCountsTheRest() {
        System.out.println("StatelessAnswersTest seed=" + SEED);
        final StatelessAnswers a = answers(new CmConfig().answerRatePerSource(100));
        for (int i = 0; i < 50; i++) {
            a.rejectIfAllowed(0, request(i), 0, 3, CmReason.NO_LISTENER);
        }
        final CapturingSink sink = new CapturingSink();
        final int sent = a.emit(0, sink, new CmPacketOut(writer, counters, PORT));
        // 100 per second with a burst of a tenth of that: about 10 at one instant.
        assertThat(sent).isBetween(1, 11);
        assertThat(counters.get(CmCounter.REJECTS_SENT)).isEqualTo(sent);
        assertThat(counters.get(CmCounter.ANSWERS_RATE_LIMITED)).isEqualTo(50 - sent);
        assertThat(sink.take()).allSatisfy(s -> {
            assertThat(Packets.reason(s.packet())).isEqualTo(CmReason.NO_LISTENER);
            assertThat(s.peerId()).isEqualTo(3);
            assertThat(s.entropy()).as("from the endpoint port [ENC-003]").isEqualTo(PORT);
            assertThat(s.length()).as("never larger than the request [SEC-005]")
                .isLessThanOrEqualTo(request(1).capacity());
        });
        // Another source has its own budget.
        a.rejectIfAllowed(0, request(99), 0, 4, CmReason.NO_LISTENER);
        assertThat(a.isEmpty()).isFalse();
    }

    @Test
    void aFullQueueDropsAndCountsAndASinkWithoutRoomKeepsTheAnswers() {
        final StatelessAnswers a = answers(new CmConfig().answerQueueCapacity(4));
        for (int i = 0; i < 6; i++) {
            a.challenge(0, request(i), 0, i, new UnsafeBuffer(new byte[] {10, 0, 0, (byte) i}), 4);
        }
        assertThat(counters.get(CmCounter.CHALLENGES_SENT)).isEqualTo(4);
        assertThat(counters.get(CmCounter.ANSWERS_QUEUE_FULL)).isEqualTo(2);

        final CmPacketOut out = new CmPacketOut(writer, counters, PORT);
        assertThat(a.emit(MS, new NoRoom(), out)).isZero();
        assertThat(a.isEmpty()).as("kept for the next poll").isFalse();
        final CapturingSink sink = new CapturingSink();
        assertThat(a.emit(MS, sink, out)).isEqualTo(4);
        assertThat(a.isEmpty()).isTrue();
        assertThat(counters.get(CmCounter.PACKETS_OUT)).isEqualTo(4);
        assertThat(sink.take()).allSatisfy(s -> assertThat(Opcode.of(BaseHeader.opcode(s.packet(), 0)))
            .isEqualTo(Opcode.CONNECT_CHALLENGE)).extracting(CapturingSink.Sent::peerId).containsExactly(0, 1, 2, 3);
    }

    /** A sink that never has room. */
    private static final class NoRoom implements TransmitSink {
        private final UnsafeBuffer buffer = new UnsafeBuffer(new byte[64]);

        @Override
        public MutableDirectBuffer buffer() {
            return buffer;
        }

        @Override
        public int claim(final int maxLength) {
            return NO_ROOM;
        }

        @Override
        public void commit(final int offset, final int length, final int peerId, final int entropy) {
            throw new AssertionError("nothing was claimed");
        }
    }
}
