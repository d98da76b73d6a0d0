// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteOrder;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.metaroce.core.multipath.PathSelector;
import org.metaroce.core.verbs.CompletionQueue;
import org.metaroce.core.verbs.ProtectionDomain;
import org.metaroce.core.verbs.QpState;
import org.metaroce.core.wire.BaseHeader;
import org.metaroce.core.wire.NackReason;

/** {@link RequestAnswers} on its own, with a real {@link AckScheduler} and a stub queue pair. */
class RequestAnswersTest {
    private final EndpointCounters counters = new EndpointCounters();
    private final AckScheduler acks = new AckScheduler(new EndpointConfig());
    private final FatalNack fatalNack = new FatalNack();
    private final StubQp qp = new StubQp();
    private final RequestAnswers answers = new RequestAnswers(qp, acks, fatalNack, counters);
    private final UnsafeBuffer packet = new UnsafeBuffer(new byte[64]);

    private void psn(final int psn) {
        packet.putInt(BaseHeader.PSN_OFFSET, psn, ByteOrder.BIG_ENDIAN);
    }

    @Test
    void anAnswerHasThePacketAsTriggerAndItsArrivalForAckDelay() {
        // [REL-015, REL-066]
        psn(42);
        answers.arrived(1_234);
        answers.rnr(42, packet, 0, false);
        assertThat(acks.hasOwn()).isTrue();
        assertThat(acks.ownReason()).isEqualTo(NackReason.RNR.code());
        assertThat(acks.ownNackPsn()).isEqualTo(42);
        assertThat(acks.ownTriggerPsn()).isEqualTo(42);
        assertThat(acks.ownArrivalNs()).isEqualTo(1_234);
        assertThat(acks.ownRnrUnits()).as("MIN_RNR_TIMER 120 us in 10 us units").isEqualTo(12);
        assertThat(counters.get(EndpointCounter.RNR_NACKS_OUT)).isEqualTo(1);
    }

    @Test
    void goBackNNacksASequenceGapOncePerExpectedPsn() {
        // [REL-053]
        psn(12);
        answers.sequenceGap(10, packet, 0, false);
        answers.sequenceGap(10, packet, 0, false);
        assertThat(counters.get(EndpointCounter.SEQUENCE_GAP)).isEqualTo(2);
        assertThat(counters.get(EndpointCounter.NACKS_OUT_SEQUENCE_GAP)).isEqualTo(1);
        answers.sequenceGap(11, packet, 0, false);
        assertThat(counters.get(EndpointCounter.NACKS_OUT_SEQUENCE_GAP)).isEqualTo(2);
        answers.reset();
        answers.sequenceGap(11, packet, 0, false);
        assertThat(counters.get(EndpointCounter.NACKS_OUT_SEQUENCE_GAP)).as("after RESET").isEqualTo(3);
    }

    @Test
    void aFatalNackFailsTheQueuePairAndAnswersItsRetransmissionsInError() {
        // [REL-007, REL-052]
        psn(7);
        answers.fatal(NackReason.REMOTE_ACCESS, 7, packet, 0, false);
        assertThat(qp.failedWith).isEqualTo(AsyncEventType.QP_ACCESS_ERR);
        assertThat(qp.reason).contains("NACK REMOTE_ACCESS");
        assertThat(counters.get(EndpointCounter.NACKS_OUT_REMOTE_ACCESS)).isEqualTo(1);
        acks.ownSent();
        answers.inError(packet, 0);
        assertThat(acks.ownReason()).as("the same NACK again").isEqualTo(NackReason.REMOTE_ACCESS.code());
        acks.ownSent();
        psn(8);
        answers.inError(packet, 0);
        assertThat(acks.hasOwn()).as("another request in ERR is dropped").isFalse();
        assertThat(counters.get(EndpointCounter.INVALID_QP_STATE)).isEqualTo(1);
    }

    /** The queue pair: its MIN_RNR_TIMER and how it fails; nothing else is asked. */
    private static final class StubQp implements ResponderContext {
        String reason;
        AsyncEventType failedWith;

        @Override
        public long minRnrTimerNs() {
            return 120_000;
        }

        @Override
        public void recordFailure(final String reason) {
            this.reason = reason;
        }

        @Override
        public void enterError(final AsyncEventType cause) {
            failedWith = cause;
        }

        @Override
        public int qpn() {
            throw new AssertionError("not used");
        }

        @Override
        public int destQpn() {
            throw new AssertionError("not used");
        }

        @Override
        public int destQpnOrZero() {
            throw new AssertionError("not used");
        }

        @Override
        public QpState state() {
            throw new AssertionError("not used");
        }

        @Override
        public int pathMtu() {
            throw new AssertionError("not used");
        }

        @Override
        public int accessFlags() {
            throw new AssertionError("not used");
        }

        @Override
        public int capabilities() {
            throw new AssertionError("not used");
        }

        @Override
        public ProtectionDomain pd() {
            throw new AssertionError("not used");
        }

        @Override
        public CompletionQueue recvCq() {
            throw new AssertionError("not used");
        }

        @Override
        public boolean isGoBackN() {
            throw new AssertionError("not used");
        }

        @Override
        public PathSelector paths() {
            throw new AssertionError("not used");
        }

        @Override
        public PacketWriter writer() {
            throw new AssertionError("not used");
        }

        @Override
        public int creditToGrant(final long nowNs, final int window) {
            throw new AssertionError("not used");
        }

        @Override
        public int senderCountToAdvertise(final long nowNs) {
            throw new AssertionError("not used");
        }

        @Override
        public void commit(final TransmitSink sink, final int offset, final int length, final int entropy) {
            throw new AssertionError("not used");
        }

        @Override
        public void onCompletionQueueOverflow(final CompletionQueue cq) {
            throw new AssertionError("not used");
        }
    }
}
